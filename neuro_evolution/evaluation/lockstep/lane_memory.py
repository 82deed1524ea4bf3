"""How much memory one lockstep lane takes, and the refusal of a wave that cannot fit.

A lane (one episode of one individual in the vectorized handler) holds one env copy and one row
of the batch brain. :func:`measure_lane_bytes` estimates its bytes by making ``PROBE_LANES``
lanes in this process -- the lockstep env (reset, stepped ``PROBE_STEPS`` times) and a batch brain
(reset, stepped once) -- and dividing the larger of the resident-memory growth and the peak of
tracemalloc's traced allocations by the lane count. The first sees C/C++ allocations tracemalloc
misses (Box2D worlds); the second sees memory the allocator took from blocks it already held.
It does not count what an episode allocates later, the per-step temporaries of the whole wave,
or what other processes (other workers) take meanwhile: an estimate to refuse hopeless configs,
not a promise that a smaller one fits.
"""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.lockstep.base import LockstepEnv
from neuro_evolution.evaluation.pools.options import option_path
from neuro_evolution.optimizers.cost import available_memory_bytes, format_bytes
from neuro_evolution.support.errors import ConfigError

PROBE_LANES = 32  # lanes made to measure one lane; a wave this small is never refused
PROBE_STEPS = 3


def resident_bytes() -> int:
    """This process's resident memory now (Linux; 0 where /proc is missing)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def measure_lane_bytes(
    template: BrainTemplate,
    make_envs: Callable[[int], LockstepEnv],
    neutral_actions: np.ndarray,
) -> int:
    """Bytes one lane takes, measured on ``PROBE_LANES`` lanes (see the module docstring).

    ``make_envs(count)`` makes a lockstep env of ``count`` copies; ``neutral_actions`` is a valid
    action batch for ``PROBE_LANES`` copies.
    """
    count = PROBE_LANES
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    traced_before, _ = tracemalloc.get_traced_memory()
    resident_before = resident_bytes()
    envs = make_envs(count)
    try:
        observations = envs.reset(list(range(count)))
        active = np.ones(count, dtype=bool)
        for _ in range(PROBE_STEPS):
            envs.step(neutral_actions, active)
        brain = template.batch_brain(np.zeros((count, template.genome_size)))
        brain.reset([np.random.default_rng(seed) for seed in range(count)])
        brain.step(np.asarray(observations, dtype=np.float64).reshape(count, -1), None)
        _, traced_peak = tracemalloc.get_traced_memory()
        resident_after = resident_bytes()
    finally:
        envs.close()
        if not was_tracing:
            tracemalloc.stop()
    grown = max(resident_after - resident_before, traced_peak - traced_before, 0)
    return max(grown // count, 1)


def check_wave_memory(lanes: int, lane_bytes: int, what: str, available: int | None = None) -> None:
    """Refuse (ConfigError on ``evaluation.max_lanes``) a wave of ``lanes`` lanes of
    ``lane_bytes`` each that exceeds ``available`` bytes (default: available now); ``what``
    says where the wave comes from, e.g. ``"5 episodes x 20,000 individuals"``."""
    if lanes <= PROBE_LANES:
        return
    available = available_memory_bytes() if available is None else available
    needed = lanes * lane_bytes
    if needed <= available:
        return
    fit = max(available // lane_bytes, 1)
    raise ConfigError(
        option_path("max_lanes"),
        f"a lockstep wave of {lanes:,} lanes ({what}) needs about {format_bytes(needed)}"
        f" ({format_bytes(lane_bytes)} per lane, measured), but this machine has"
        f" {format_bytes(available)} available; set max_lanes to at most {fit:,}",
    )
