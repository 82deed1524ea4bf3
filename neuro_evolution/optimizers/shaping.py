"""Fitness shaping: replace raw fitness values by a function of their ranks.

Centered ranks (as in OpenAI-ES / evosax) map a batch of fitness values to [-0.5, 0.5] by rank,
so one outlier episode cannot dominate and the scale of the reward does not matter. Equal
fitness values get equal shaped values (their average rank), so shaping never orders a tie.

Shaping is relative to the batch it is computed over: comparing values shaped over different
batches is meaningless, so an optimizer must shape every set of candidates it compares at once.

A :class:`ShapingStep` is a run-level step between the evaluations and the optimizer: the run
tells the optimizer ``step.shaped(fitness, results)`` instead of the raw fitness (novelty
search: :class:`~neuro_evolution.optimizers.novelty.NoveltyShaping`); its state goes into
checkpoints.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

FitnessShaping = Literal["none", "centered_ranks"]


class ShapingStep(ABC):
    """What the optimizer is told instead of the raw fitness of one generation's results."""

    @abstractmethod
    def shaped(self, fitness: np.ndarray, results: Sequence[Any]) -> np.ndarray:
        """The (P,) fitness to tell, from the raw ``fitness`` and the evaluation results (in ask
        order; a step reads the fields its recorders fill, e.g. ``behavior``)."""

    @abstractmethod
    def state(self) -> dict[str, np.ndarray]:
        """What a checkpoint stores."""

    @abstractmethod
    def load_state(self, state: dict[str, np.ndarray]) -> None:
        """Continue from :meth:`state`."""


def mean_ranks(fitness: np.ndarray) -> np.ndarray:
    """0-based ranks of ``fitness`` (lowest 0) as float64; ties share their mean rank."""
    values = np.asarray(fitness, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"fitness must be one-dimensional, got shape {values.shape}")
    count = len(values)
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    # Start index of each run of equal values, and the run each sorted position belongs to.
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    ends = np.r_[starts[1:], count]
    mean_rank_of_run = (starts + ends - 1) / 2.0
    run_of_position = np.repeat(np.arange(len(starts)), ends - starts)
    ranks = np.empty(count)
    ranks[order] = mean_rank_of_run[run_of_position]
    return ranks


def centered_ranks(fitness: np.ndarray) -> np.ndarray:
    """Ranks of ``fitness`` scaled to [-0.5, 0.5] (lowest -0.5); ties share their mean rank."""
    ranks = mean_ranks(fitness)
    if len(ranks) <= 1:
        return np.zeros(len(ranks))
    return ranks / (len(ranks) - 1) - 0.5


def unit_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks scaled to [0, 1] (lowest 0; ties share their mean rank); 0.5 for a single value.
    Novelty search combines these; not the same numbers as ``centered_ranks + 0.5``."""
    ranks = mean_ranks(values)
    if len(ranks) <= 1:
        return np.full(len(ranks), 0.5)
    return ranks / (len(ranks) - 1)


def shape_fitness(kind: FitnessShaping, fitness: np.ndarray) -> np.ndarray:
    """``fitness`` shaped by ``kind`` (``none`` returns a float64 copy)."""
    if kind == "none":
        return np.array(fitness, dtype=np.float64)
    if kind == "centered_ranks":
        return centered_ranks(fitness)
    raise ValueError(f"fitness_shaping: unknown kind {kind!r}, use 'none' or 'centered_ranks'")


def checked_fitness(fitness: np.ndarray, count: int) -> np.ndarray:
    """Fitness told to an optimizer as float64 of shape (count,); NaN is refused (unrankable)."""
    values = np.array(fitness, dtype=np.float64)
    if values.shape != (count,):
        several = "; several objectives are told as a (P, M) measures matrix" * (values.ndim == 2)
        raise ValueError(
            f"fitness: expected {count} values (one per genome of the last ask), got shape "
            f"{values.shape}{several}"
        )
    if np.isnan(values).any():
        raise ValueError(
            f"fitness: NaN at index {int(np.flatnonzero(np.isnan(values))[0])}; NaN cannot be "
            "ranked, make the fitness function return a number"
        )
    return values


def nes_utilities(fitness: np.ndarray) -> np.ndarray:
    """NES rank-based utilities (Wierstra et al. 2014, JMLR, Sec. 3.1, "fitness shaping").

    The k-th best of lambda samples gets max(0, ln(lambda/2 + 1) - ln k), normalised to sum 1,
    minus 1/lambda: the better half share positive weight, every sample pays 1/lambda, and the
    utilities sum to 0. Tied fitness values share the mean utility of their ranks.
    """
    values = np.asarray(fitness, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"fitness must be one-dimensional, got shape {values.shape}")
    count = len(values)
    if count == 0:
        return np.zeros(0)
    raw = np.maximum(0.0, np.log(count / 2 + 1) - np.log(np.arange(1, count + 1)))
    by_rank = raw / raw.sum() - 1.0 / count  # by_rank[0] belongs to the best
    order = np.argsort(-values, kind="stable")
    sorted_values = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    ends = np.r_[starts[1:], count]
    run_means = np.add.reduceat(by_rank, starts) / (ends - starts)
    utilities = np.empty(count)
    utilities[order] = np.repeat(run_means, ends - starts)
    return utilities
