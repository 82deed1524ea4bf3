"""Lockstep evaluation at start-up: refuse a wave that cannot fit in memory, and say why a run
falls back to the per-individual loop.

Without ``evaluation.max_lanes`` a lockstep evaluation runs one wave per batch: ``runs x P``
lanes for the vectorized handler (a generation's P genomes, ``number_fitness_runs`` episodes
each), ``runs x ceil(P / chunks)`` in each mp or Dask worker with ``vectorize`` (one chunk per
worker for one run; a sweep's requests go out in fewer chunks while many runs are open), and one
lane per held-out episode for validation. A configured ``max_lanes`` is the wave. All of that
follows from the config, the env and the machine, so the wave is measured and refused here,
before any worker starts or any run directory exists, with the same one-line ``ConfigError``
the worker would raise.
"""

from __future__ import annotations

import math

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episodes.runner import RunnerSpec
from neuro_evolution.evaluation.lockstep.handler import VectorizedWorkerState, fallback_reason
from neuro_evolution.evaluation.lockstep.lane_memory import PROBE_LANES, check_wave_memory
from neuro_evolution.evaluation.pools.options import EvaluationConfig


def runs_in_lockstep(evaluation: EvaluationConfig) -> bool:
    """Whether ``evaluation`` names numpy lockstep: the vectorized handler, or mp or Dask
    workers with ``vectorize`` true."""
    if evaluation.handler == "vectorized":
        return True
    return evaluation.handler in ("mp", "dask") and evaluation.vectorize is True


def lockstep_chunks(evaluation: EvaluationConfig, parallel_runs: int = 1) -> int | None:
    """The fewest chunks a request is cut into for lockstep evaluation (one per worker for a
    run alone; ``ceil(workers / parallel_runs)``, at least one, for the runs of a sweep), or
    None when nothing runs in numpy lockstep (or the worker count is not known here)."""
    if not runs_in_lockstep(evaluation):
        return None
    if evaluation.handler == "vectorized":
        return 1
    if evaluation.handler == "dask" and evaluation.scheduler is not None:
        return None  # an existing cluster: its workers are counted when it is reached
    return max(1, -(-evaluation.worker_count // max(1, parallel_runs)))


def lockstep_fallback(
    template: BrainTemplate, spec: RunnerSpec, evaluation: EvaluationConfig
) -> str:
    """Why a lockstep evaluation of ``evaluation`` runs one individual at a time ("" when it
    does not, or when nothing runs in lockstep)."""
    return fallback_reason(template, spec) if runs_in_lockstep(evaluation) else ""


def planned_waves(
    spec: RunnerSpec,
    evaluation: EvaluationConfig,
    batch_size: int,
    validation_episodes: int,
    parallel_runs: int = 1,
) -> list[tuple[int, str]]:
    """(lanes, where they come from) of the largest training and validation wave a worker will
    run in lockstep: ``max_lanes`` when it is configured; empty when nothing runs in lockstep."""
    if spec.max_lanes is not None:
        if not runs_in_lockstep(evaluation):
            return []
        return [(spec.max_lanes, f"max_lanes {spec.max_lanes:,}")]
    chunks = lockstep_chunks(evaluation, parallel_runs)
    if chunks is None:
        return []
    runs = spec.episode_runner.number_fitness_runs
    per_chunk = math.ceil(batch_size / chunks)
    waves = [(runs * per_chunk, f"{runs} episodes x {per_chunk:,} individuals")]
    if validation_episodes:
        per_chunk = math.ceil(validation_episodes / chunks)
        waves.append((per_chunk, f"1 episode x {per_chunk:,} validation copies"))
    return waves


def check_planned_waves(
    template: BrainTemplate,
    spec: RunnerSpec,
    evaluation: EvaluationConfig,
    batch_size: int,
    validation_episodes: int,
    parallel_runs: int = 1,
) -> None:
    """Refuse (ConfigError on ``evaluation.max_lanes``) a planned wave that cannot fit; a lane
    is measured (:func:`~neuro_evolution.evaluation.lockstep.lane_memory.measure_lane_bytes`)
    only when a wave is larger than the probe, and not at all for a run that falls back."""
    waves = [
        wave
        for wave in planned_waves(spec, evaluation, batch_size, validation_episodes, parallel_runs)
        if wave[0] > PROBE_LANES
    ]
    if not waves or fallback_reason(template, spec):
        return
    state = VectorizedWorkerState(template, spec, announce=False)
    try:
        lane_bytes = state.lane_bytes()
    finally:
        state.close()
    for lanes, what in waves:
        check_wave_memory(lanes, lane_bytes, what)
