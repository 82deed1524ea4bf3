"""neuro_evolution: evolve small recurrent networks with evolution strategies on Gymnasium."""

__version__ = "0.1.0"
