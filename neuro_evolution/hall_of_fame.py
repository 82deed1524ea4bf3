"""The hall of fame: the best genomes ever evaluated, ranked by raw fitness across generations."""

from __future__ import annotations

import numpy as np


class HallOfFame:
    """Keeps the ``size`` best (genome, raw fitness) pairs seen so far; identical genomes once.

    Ties keep the earlier entry first, so the ranking is deterministic.
    """

    def __init__(self, size: int, genome_size: int):
        self.size = size
        self.genomes = np.zeros((0, genome_size))
        self.fitness = np.zeros(0)
        self.generations = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.fitness)

    def update(self, genomes: np.ndarray, fitness: np.ndarray, generation: int) -> None:
        """Offer a generation's evaluated genomes with their raw fitness."""
        all_genomes = np.concatenate([self.genomes, np.asarray(genomes, dtype=np.float64)])
        all_fitness = np.concatenate([self.fitness, np.asarray(fitness, dtype=np.float64)])
        all_generations = np.concatenate(
            [self.generations, np.full(len(fitness), generation, dtype=np.int64)]
        )
        order = np.argsort(-all_fitness, kind="stable")
        keep: list[int] = []
        seen: set[bytes] = set()
        for index in order:
            key = all_genomes[index].tobytes()
            if key in seen:
                continue
            seen.add(key)
            keep.append(int(index))
            if len(keep) == self.size:
                break
        self.genomes = all_genomes[keep]
        self.fitness = all_fitness[keep]
        self.generations = all_generations[keep]

    @property
    def best_fitness(self) -> float:
        """Raw fitness of the best genome (-inf when empty)."""
        return float(self.fitness[0]) if len(self) else float("-inf")

    def state(self) -> dict[str, np.ndarray]:
        """Arrays for checkpoints and the run directory."""
        return {
            "genomes": self.genomes,
            "fitness": self.fitness,
            "generations": self.generations,
        }

    def load_state(self, state: dict[str, np.ndarray]) -> None:
        """Restore what :meth:`state` returned."""
        self.genomes = np.array(state["genomes"], dtype=np.float64)
        self.fitness = np.array(state["fitness"], dtype=np.float64)
        self.generations = np.array(state["generations"], dtype=np.int64)
