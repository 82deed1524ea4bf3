"""PSO: particle swarm optimization with an inertia weight.

Kennedy & Eberhart (1995), "Particle Swarm Optimization" (Proc. ICNN), and Shi & Eberhart
(1998), "A Modified Particle Swarm Optimizer" (Proc. IEEE ICEC), Eq. (1)-(2) with the inertia
weight w; the default coefficients from Eberhart & Shi (2000), "Comparing inertia weights and
constriction factors in particle swarm optimization" (Proc. CEC). Reference implementation:
evosax's ``PSO``.
"""

from __future__ import annotations

import numpy as np

from neuro_evolution.core.schema import config_class, option
from neuro_evolution.optimizers.base import OPTIMIZERS, Evaluations, OptimizerConfig
from neuro_evolution.optimizers.declared_state import Array
from neuro_evolution.optimizers.population import (
    POPULATION_ROWS,
    PopulationSearch,
    check_initial_range,
    initial_range_option,
)

NAME = "PSO"


@config_class
class PsoConfig(OptimizerConfig):
    """Options of the ``PSO`` optimizer. Defaults: w, c1, c2 of Eberhart & Shi (2000), the
    inertia weights equivalent to Clerc's constriction, which converge without Vmax; Shi &
    Eberhart (1998) pair c1 = c2 = 2 with w near 1 and a Vmax clamp; population 20 as theirs."""

    population_size: int = option(20, doc="particles, genomes per generation", ge=2)
    inertia: float = option(0.7298, doc="w, the share of the velocity a particle keeps", ge=0)
    cognitive: float = option(1.49618, doc="c1, pull towards the particle's own best", ge=0)
    social: float = option(1.49618, doc="c2, pull towards the swarm's best", ge=0)
    max_velocity: float | None = option(
        None, doc="Vmax: every velocity gene is clamped to [-Vmax, Vmax] (null: no clamp)", gt=0
    )
    initial_gene_range: tuple[float, float] = initial_range_option()

    def validate(self, path: str) -> None:
        check_initial_range(self.initial_gene_range, path)


def velocity_update(
    velocity: np.ndarray,
    positions: np.ndarray,
    personal_best: np.ndarray,
    global_best: np.ndarray,
    r1: np.ndarray,
    r2: np.ndarray,
    config: PsoConfig,
) -> np.ndarray:
    """Shi & Eberhart Eq. (1): v <- w v + c1 r1 (p - x) + c2 r2 (p_g - x), r1, r2 uniform in
    [0, 1) per particle and gene; clamped to [-Vmax, Vmax] when Vmax is set."""
    new = (
        config.inertia * velocity
        + config.cognitive * r1 * (personal_best - positions)
        + config.social * r2 * (global_best - positions)
    )
    if config.max_velocity is not None:
        new = np.clip(new, -config.max_velocity, config.max_velocity)
    return new


@OPTIMIZERS.register(NAME, config=PsoConfig)
class ParticleSwarm(PopulationSearch):
    """Global-best PSO with inertia (Shi & Eberhart 1998) over float64 genomes.

    Generation 1 asks the particles' positions uniform in ``initial_gene_range`` with zero
    velocity. After each tell, a particle's best p_i becomes its told position when that
    scores strictly better than p_i did; p_g is the best of all p_i. The next ask moves each
    particle: v <- w v + c1 r1 (p_i - x) + c2 r2 (p_g - x) (Eq. 1, r1 and r2 uniform per gene,
    as in Kennedy & Eberhart's per-dimension rand()), x <- x + v (Eq. 2). With bounds, the
    particle sits at the repaired position it was evaluated at; its velocity is as computed.

    Deviations of evosax's ``PSO``, where this follows the papers: evosax draws one r1 and one
    r2 per particle (shared by all genes), replaces a personal best on ties and has no Vmax.

    The bests keep the fitness of one evaluation each (a lucky draw under noisy episode
    fitness), so ``center()`` is the best position of the latest generation, freshly evaluated,
    not the swarm's best.
    """

    NAME = NAME
    STATE = (
        *PopulationSearch.STATE,
        Array("_positions", POPULATION_ROWS),
        Array("_velocity", ("_positions", "genome_size")),
        Array("_best", ("_positions", "genome_size")),
        Array("_best_fitness", ("_positions",)),
        Array("_pending_velocity", ("population_size", "genome_size")),
    )

    def __init__(self, config: PsoConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed, config.population_size)
        empty = np.zeros((0, genome_size))
        self._positions, self._velocity = empty, empty
        self._best, self._best_fitness = empty, np.zeros(0)
        self._pending_velocity = np.zeros((config.population_size, genome_size))

    @classmethod
    def state_bytes(cls, config: PsoConfig, genome_size: int) -> int:
        """Positions, velocities, bests, the pending positions and velocities, r1 and r2."""
        return 8 * config.population_size * (8 * genome_size + 1)

    def _draw(self, rows: np.ndarray) -> np.ndarray:
        """Generation 1: uniform positions, zero velocity; then Eq. (1)-(2) for ``rows``."""
        if len(self._best_fitness) == 0:
            self._pending_velocity[rows] = 0.0
            return self.uniform_initial(len(rows))
        global_best = self._best[int(np.argmax(self._best_fitness))]
        r1 = self._rng.random((len(rows), self.genome_size))
        r2 = self._rng.random((len(rows), self.genome_size))
        positions = self._positions[rows]
        velocity = velocity_update(
            self._velocity[rows], positions, self._best[rows], global_best, r1, r2, self.config
        )
        self._pending_velocity[rows] = velocity
        return positions + velocity  # Eq. (2)

    def _tell(self, fitness: np.ndarray, evaluations: Evaluations) -> None:
        """The particles move to the told positions; strictly better ones become their bests."""
        positions = self.take_pending(fitness)
        self._positions, self._velocity = positions, self._pending_velocity.copy()
        if len(self._best_fitness) == 0:
            self._best, self._best_fitness = positions.copy(), fitness.copy()
            return
        better = fitness > self._best_fitness
        self._best[better] = positions[better]
        self._best_fitness[better] = fitness[better]

    def swarm(self) -> dict[str, np.ndarray]:
        """Positions, velocities, personal bests and their fitness after the last tell."""
        return {
            "positions": self._positions.copy(),
            "velocity": self._velocity.copy(),
            "best": self._best.copy(),
            "best_fitness": self._best_fitness.copy(),
        }
