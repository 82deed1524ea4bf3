"""neuro_evolution: evolve small recurrent networks with evolution strategies on Gymnasium."""

__version__ = "0.1.0"

from neuro_evolution.console import ignore_known_noise

ignore_known_noise()  # third-party warnings no user can act on (see console.KNOWN_NOISE)
