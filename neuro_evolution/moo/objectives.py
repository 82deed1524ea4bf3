"""Objectives of a multi-objective run: per-episode measures, each maximized or minimized.

An objective is a :class:`~neuro_evolution.measures.base.MeasureConfig` with a ``sense``; the
useful sources are ``reward`` with ``reduce: sum`` (the return, or a component of a vector
reward by ``index``), ``info`` with a ``key`` and ``sum`` (e.g. MuJoCo's ``reward_ctrl``), or a
``function`` of the episode's trajectory (e.g.
:func:`neuro_evolution.measures.functions.lunar_lander_fuel`).

Hypervolume (:func:`front_hypervolume`) is measured against a reference point given in the
objectives' raw units, fixed for the run: for a maximized objective a value below what should
count, for a minimized one a value above it; a front member adds volume only where it is
strictly better than the reference in every objective.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from neuro_evolution.core.normalization import ObservationScaler
from neuro_evolution.core.schema import ConfigError, config_class, join, option
from neuro_evolution.measures.base import MeasureConfig, check_measures
from neuro_evolution.moo.pareto import hypervolume, to_maximization


@config_class
class ObjectiveConfig(MeasureConfig):
    """One objective: a per-episode measure and whether larger or smaller is better."""

    sense: Literal["maximize", "minimize"] = option(
        "maximize", doc="maximize or minimize the measure"
    )

    def validate(self, path: str) -> None:
        MeasureConfig.validate(self, path)  # (slotted dataclass: no zero-argument super)


def check_objectives(
    objectives: Sequence[ObjectiveConfig],
    reference_point: Sequence[float] | None,
    candidate_objective: int,
    path: str,
) -> None:
    """Distinct names; with objectives a reference point of one finite value each and a
    candidate objective among them; without, neither (one-line ConfigErrors)."""
    where = join(path, "objectives")
    check_measures(objectives, where)
    if not objectives:
        if reference_point is not None:
            raise ConfigError(
                join(path, "reference_point"), "is only used with objectives: set it to null"
            )
        if candidate_objective != 0:
            raise ConfigError(
                join(path, "candidate_objective"), "is only used with objectives: remove it"
            )
        return
    count = len(objectives)
    if reference_point is None:
        example = [0.0] * count
        raise ConfigError(
            join(path, "reference_point"),
            f"objectives need a reference point in raw units, one value per objective (e.g. "
            f"{example}): below what should count of a maximized objective, above it of a "
            "minimized one",
        )
    if len(reference_point) != count:
        raise ConfigError(
            join(path, "reference_point"),
            f"needs {count} values (one per objective), got {len(reference_point)}",
        )
    if not all(np.isfinite(value) for value in reference_point):
        raise ConfigError(
            join(path, "reference_point"), f"must be finite, got {list(reference_point)}"
        )
    if not 0 <= candidate_objective < count:
        raise ConfigError(
            join(path, "candidate_objective"),
            f"must name one of the {count} objectives (0..{count - 1}), got {candidate_objective}",
        )


def senses(objectives: Sequence[ObjectiveConfig]) -> tuple[str, ...]:
    """The sense of each objective, in order."""
    return tuple(objective.sense for objective in objectives)


def raw_values(maximized: np.ndarray, objective_senses: Sequence[str]) -> np.ndarray:
    """Raw objective values back from a maximization matrix (minimized columns negated)."""
    return to_maximization(maximized, objective_senses)  # negation is its own inverse


def front_hypervolume(
    maximized: np.ndarray, reference_point: Sequence[float], objective_senses: Sequence[str]
) -> float:
    """Hypervolume of ``maximized`` (a front in maximization coordinates) against the raw
    ``reference_point`` (see the module docstring)."""
    reference = to_maximization(np.array([reference_point], dtype=np.float64), objective_senses)
    if len(maximized) == 0:
        return 0.0
    return hypervolume(maximized, reference[0])


def survivor_records(
    count: int,
    observation_size: int,
    seeds: np.ndarray | None = None,
    generation: int = 0,
    scaler: ObservationScaler | None = None,
) -> dict[str, np.ndarray]:
    """What NSGA2 keeps per survivor so a front member can be replayed: the episode base seed
    and generation of its evaluation and (``observation_size`` > 0) its observation scaler."""
    records: dict[str, np.ndarray] = {
        "seeds": np.zeros(count, dtype=np.int64)
        if seeds is None
        else np.asarray(seeds, dtype=np.int64).reshape(count).copy(),
        "generations": np.full(count, generation, dtype=np.int64),
    }
    if observation_size:
        records["observation_mean"] = np.zeros((count, observation_size))
        records["observation_scale"] = np.zeros((count, observation_size))
        records["observation_clip"] = np.zeros(count)
        if scaler is not None:
            records["observation_mean"][:] = scaler.mean
            records["observation_scale"][:] = scaler.scale
            records["observation_clip"][:] = scaler.clip
    return records


def record_scaler(records: dict[str, np.ndarray], row: int) -> ObservationScaler | None:
    """The observation scaler of row ``row`` of :func:`survivor_records` (None: not kept)."""
    if "observation_mean" not in records:
        return None
    return ObservationScaler(
        mean=records["observation_mean"][row].copy(),
        scale=records["observation_scale"][row].copy(),
        clip=float(records["observation_clip"][row]),
    )
