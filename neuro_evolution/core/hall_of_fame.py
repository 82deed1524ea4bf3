"""The hall of fame: the best genomes ever evaluated, ranked by raw fitness across generations."""

from __future__ import annotations

import numpy as np

from neuro_evolution.core.normalization import ObservationScaler

_SCALER_KEYS = ("observation_mean", "observation_scale", "observation_clip")


class HallOfFame:
    """Keeps the ``size`` best (genome, raw fitness) pairs seen so far; identical genomes once.

    Ties keep the earlier entry first, so the ranking is deterministic. With
    ``observation_size`` > 0 (observation normalization on) every entry also keeps the frozen
    :class:`ObservationScaler` it was evaluated with, so a replay sees what training saw.
    """

    def __init__(self, size: int, genome_size: int, observation_size: int = 0):
        self.size = size
        self.observation_size = observation_size
        self.genomes = np.zeros((0, genome_size))
        self.fitness = np.zeros(0)
        self.generations = np.zeros(0, dtype=np.int64)
        self.observation_mean = np.zeros((0, observation_size))
        self.observation_scale = np.zeros((0, observation_size))
        self.observation_clip = np.zeros(0)
        self.changes = 0  # updates that changed the entries (a writer skips unchanged ones)

    def __len__(self) -> int:
        return len(self.fitness)

    def update(
        self,
        genomes: np.ndarray,
        fitness: np.ndarray,
        generation: int,
        scaler: ObservationScaler | None = None,
    ) -> None:
        """Offer a generation's evaluated genomes with their raw fitness (and shared scaler)."""
        count = len(fitness)
        all_genomes = np.concatenate([self.genomes, np.asarray(genomes, dtype=np.float64)])
        all_fitness = np.concatenate([self.fitness, np.asarray(fitness, dtype=np.float64)])
        all_generations = np.concatenate(
            [self.generations, np.full(count, generation, dtype=np.int64)]
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
        if keep != list(range(len(self.fitness))):
            self.changes += 1
        self.genomes = all_genomes[keep]
        self.fitness = all_fitness[keep]
        self.generations = all_generations[keep]
        if self.observation_size:
            if scaler is None:
                raise ValueError("this hall of fame keeps observation scalers: pass the scaler")
            width = self.observation_size
            self.observation_mean = np.concatenate(
                [self.observation_mean, np.broadcast_to(scaler.mean, (count, width))]
            )[keep]
            self.observation_scale = np.concatenate(
                [self.observation_scale, np.broadcast_to(scaler.scale, (count, width))]
            )[keep]
            self.observation_clip = np.concatenate(
                [self.observation_clip, np.full(count, scaler.clip)]
            )[keep]

    @property
    def best_fitness(self) -> float:
        """Raw fitness of the best genome (-inf when empty)."""
        return float(self.fitness[0]) if len(self) else float("-inf")

    def scaler(self, rank: int) -> ObservationScaler | None:
        """The observation scaler the genome at ``rank`` was evaluated with (None: off)."""
        if not self.observation_size:
            return None
        return ObservationScaler(
            mean=self.observation_mean[rank].copy(),
            scale=self.observation_scale[rank].copy(),
            clip=float(self.observation_clip[rank]),
        )

    def state(self) -> dict[str, np.ndarray]:
        """Arrays for checkpoints and the run directory."""
        state = {
            "genomes": self.genomes,
            "fitness": self.fitness,
            "generations": self.generations,
        }
        if self.observation_size:
            state.update(
                observation_mean=self.observation_mean,
                observation_scale=self.observation_scale,
                observation_clip=self.observation_clip,
            )
        return state

    def load_state(self, state: dict[str, np.ndarray]) -> None:
        """Restore what :meth:`state` returned."""
        has_scalers = all(key in state for key in _SCALER_KEYS)
        if has_scalers != bool(self.observation_size):
            raise ValueError(
                "hall of fame state and this run disagree on observation normalization"
            )
        self.genomes = np.array(state["genomes"], dtype=np.float64)
        self.fitness = np.array(state["fitness"], dtype=np.float64)
        self.generations = np.array(state["generations"], dtype=np.int64)
        if has_scalers:
            self.observation_mean = np.array(state["observation_mean"], dtype=np.float64)
            self.observation_scale = np.array(state["observation_scale"], dtype=np.float64)
            self.observation_clip = np.array(state["observation_clip"], dtype=np.float64)

    @staticmethod
    def observation_size_of(state: dict[str, np.ndarray]) -> int:
        """The ``observation_size`` of the hall of fame that wrote ``state``."""
        mean = state.get("observation_mean")
        return 0 if mean is None else int(np.asarray(mean).shape[1])
