"""Running observation normalization that keeps results identical across handlers.

A brain sees ``clip((observation - mean) / sqrt(var + epsilon), -clip, clip)`` element-wise, with
``mean``/``var`` the statistics of every observation seen by training episodes of *earlier*
generations. Per generation:

1. whoever runs an evaluation (sequential runner, mp/Dask worker, vectorized or jax handler)
   counts the raw observations its episodes show the brain -- count, sum and sum of squares,
   added step by step in the episode's order (:class:`ObservationRecorder`, :func:`record_batch`;
   the recorder every episode loop calls is
   :class:`~neuro_evolution.measures.observations.ObservationStats`) -- and returns them in the
   :class:`~neuro_evolution.evaluation.episodes.runner.EvaluationResult`;
2. the main process adds the per-evaluation totals into :class:`ObservationStatistics` in
   submission order (so the float sums do not depend on how genomes were chunked or which worker
   ran them);
3. the statistics are frozen into an :class:`ObservationScaler` that travels with the next
   generation's work.

Evaluations therefore stay a pure function of (template, genome, seeds, frozen scaler), and the
same config and seed give bit-identical logs whichever handler, worker count or resume point.
The first generation has no statistics yet: its scaler is the identity (no clipping). This is
the running observation normalization of OpenAI-ES implementations (Salimans et al. 2017) and
EvoTorch, with a merge whose order does not depend on the workers.
"""

from __future__ import annotations

import numpy as np

from neuro_evolution.core.schema import ConfigBase, config_class, option
from neuro_evolution.support.frozen import ReadOnlyRecord, frozen_dataclass


@config_class
class ObservationNormalizationConfig(ConfigBase):
    """Running mean/std normalization of observations (statistics frozen per generation)."""

    clip: float = option(5.0, doc="normalized observations are clipped to [-clip, clip]", gt=0)
    epsilon: float = option(
        1e-8, doc="added to the variance before the square root (constant features)", gt=0
    )


@frozen_dataclass(eq=False)
class ObservationScaler(ReadOnlyRecord):
    """Frozen statistics of one generation: what every evaluation of it applies."""

    mean: np.ndarray
    scale: np.ndarray  # 1 / sqrt(var + epsilon)
    clip: float

    def apply(self, observation: np.ndarray) -> np.ndarray:
        """Normalized, clipped float64 observation(s) (any leading batch shape)."""
        normalized = (np.asarray(observation, dtype=np.float64) - self.mean) * self.scale
        return np.clip(normalized, -self.clip, self.clip, out=normalized)


class ObservationRecorder:
    """Count, sum and sum of squares of the raw observations of one evaluation (worker side)."""

    __slots__ = ("count", "total", "squares")

    def __init__(self, size: int):
        self.count = 0
        self.total = np.zeros(size)
        self.squares = np.zeros(size)

    def add(self, observation: np.ndarray) -> None:
        """Count one observation (flattened to the recorder's size)."""
        values = np.asarray(observation, dtype=np.float64).reshape(-1)
        self.count += 1
        self.total += values
        self.squares += values * values

    def as_array(self) -> np.ndarray:
        """``[count, total..., squares...]``: what an EvaluationResult carries."""
        return np.concatenate([[float(self.count)], self.total, self.squares])


def record_batch(
    stats: np.ndarray, observations: np.ndarray, active: np.ndarray | None = None
) -> None:
    """Add one lockstep step to per-individual stats ``(P, 1 + 2D)`` (rows where ``active``).

    Each row receives exactly the additions :meth:`ObservationRecorder.add` would make, in the
    same order, so both paths give bit-identical totals.
    """
    values = np.asarray(observations, dtype=np.float64).reshape(len(stats), -1)
    size = values.shape[1]
    where = True if active is None else active[:, None]
    np.add(stats[:, :1], 1.0, out=stats[:, :1], where=where)
    np.add(stats[:, 1 : 1 + size], values, out=stats[:, 1 : 1 + size], where=where)
    np.add(stats[:, 1 + size :], values * values, out=stats[:, 1 + size :], where=where)


class ObservationStatistics:
    """The run's running totals (main process); merged in submission order, saved in checkpoints."""

    def __init__(self, config: ObservationNormalizationConfig, size: int):
        self.config = config
        self.size = size
        self.count = 0.0
        self.total = np.zeros(size)
        self.squares = np.zeros(size)

    def merge(self, per_evaluation: list[np.ndarray | None]) -> None:
        """Add the ``[count, total, squares]`` arrays of one generation's results, in order."""
        for stats in per_evaluation:
            if stats is None:
                raise ValueError("an evaluation result carries no observation statistics")
            stats = np.asarray(stats, dtype=np.float64)
            if stats.shape != (1 + 2 * self.size,):
                raise ValueError(
                    f"observation statistics of shape {stats.shape}, expected "
                    f"({1 + 2 * self.size},)"
                )
            self.count += stats[0]
            self.total += stats[1 : 1 + self.size]
            self.squares += stats[1 + self.size :]

    def mean_and_variance(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean and (population) variance of every observation element seen so far."""
        mean = self.total / self.count
        variance = np.maximum(self.squares / self.count - mean * mean, 0.0)
        return mean, variance

    def scaler(self) -> ObservationScaler:
        """The frozen scaler for the next generation (the identity before any observation)."""
        if self.count == 0:
            return ObservationScaler(
                mean=np.zeros(self.size), scale=np.ones(self.size), clip=float("inf")
            )
        mean, variance = self.mean_and_variance()
        scale = 1.0 / np.sqrt(variance + self.config.epsilon)
        return ObservationScaler(mean=mean, scale=scale, clip=self.config.clip)

    def state(self) -> dict[str, np.ndarray | float]:
        """Arrays and scalars for checkpoints."""
        return {"count": self.count, "total": self.total.copy(), "squares": self.squares.copy()}

    def load_state(self, state: dict) -> None:
        """Continue from :meth:`state`."""
        total = np.array(state["total"], dtype=np.float64)
        squares = np.array(state["squares"], dtype=np.float64)
        if total.shape != (self.size,) or squares.shape != (self.size,):
            raise ValueError(
                f"observation statistics of size {total.shape}, this run observes {self.size}"
            )
        self.count = float(np.asarray(state["count"]).item())
        self.total, self.squares = total, squares


def scaler_arrays(scaler: ObservationScaler | None, prefix: str = "observation_") -> dict:
    """The arrays that store ``scaler`` in a run-directory file (empty when None)."""
    if scaler is None:
        return {}
    return {
        f"{prefix}mean": scaler.mean,
        f"{prefix}scale": scaler.scale,
        f"{prefix}clip": np.float64(scaler.clip),
    }


def scaler_from_arrays(data: dict, prefix: str = "observation_") -> ObservationScaler | None:
    """The scaler :func:`scaler_arrays` stored, or None."""
    if f"{prefix}mean" not in data:
        return None
    return ObservationScaler(
        mean=np.array(data[f"{prefix}mean"], dtype=np.float64),
        scale=np.array(data[f"{prefix}scale"], dtype=np.float64),
        clip=float(np.asarray(data[f"{prefix}clip"]).item()),
    )
