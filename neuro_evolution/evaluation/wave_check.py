"""Refuse at start-up a lockstep wave that cannot fit in memory.

Without ``evaluation.max_lanes`` a lockstep evaluation runs one wave per batch: ``runs x P``
lanes for the vectorized handler (a generation's P genomes, ``number_fitness_runs`` episodes
each), ``runs x ceil(P / workers)`` in each mp or Dask worker with ``vectorize`` (one chunk per
worker), and one lane per held-out episode for validation. All of that follows from the config,
the env and the machine, so the wave is measured and refused here, before any worker starts or
any run directory exists, with the same one-line ``ConfigError`` the handler would raise at
generation 0. (A configured ``max_lanes`` is refused when the handler starts, also before.)
"""

from __future__ import annotations

import math

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episode import RunnerSpec
from neuro_evolution.evaluation.handlers.options import EvaluationConfig
from neuro_evolution.evaluation.handlers.vectorized import VectorizedWorkerState, fallback_reason
from neuro_evolution.evaluation.lane_memory import PROBE_LANES, check_wave_memory


def lockstep_chunks(evaluation: EvaluationConfig) -> int | None:
    """How many chunks a generation is cut into for lockstep evaluation (one per worker), or
    None when nothing runs in numpy lockstep (or the worker count is not known here)."""
    if evaluation.handler == "vectorized":
        return 1
    if evaluation.handler in ("mp", "dask") and evaluation.vectorize is True:
        if evaluation.handler == "dask" and evaluation.scheduler is not None:
            return None  # an existing cluster: its workers are counted when it is reached
        return evaluation.worker_count
    return None


def planned_waves(
    spec: RunnerSpec, evaluation: EvaluationConfig, batch_size: int, validation_episodes: int
) -> list[tuple[int, str]]:
    """(lanes, where they come from) of the largest training and validation wave a worker will
    run, for a lockstep evaluation without ``max_lanes``; empty otherwise."""
    chunks = lockstep_chunks(evaluation)
    if chunks is None or spec.max_lanes is not None:
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
) -> None:
    """Refuse (ConfigError on ``evaluation.max_lanes``) a planned wave that cannot fit; a lane
    is measured (:func:`~neuro_evolution.evaluation.lane_memory.measure_lane_bytes`) only when a
    wave is larger than the probe."""
    waves = [
        wave
        for wave in planned_waves(spec, evaluation, batch_size, validation_episodes)
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
