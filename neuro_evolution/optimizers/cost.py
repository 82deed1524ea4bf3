"""What an optimizer costs as genomes grow: memory checked at start-up, slow tells warned about.

Every optimizer declares ``state_bytes(config, genome_size)`` (peak bytes, computed without
allocating). ``make_optimizer`` calls :func:`check_memory`, so a config whose optimizer cannot
fit (full CMA-ES on a large genome: an n x n covariance) is one line on ``optimizer.type``
naming the memory it needs and the optimizers that fit, before a run directory exists.
:func:`optimizer_cost_warning` turns the first generation's measured tell and evaluation times
into a one-line warning when the optimizer would dominate the generation.
"""

from __future__ import annotations

import os
from pathlib import Path

from neuro_evolution.core.schema import ConfigError
from neuro_evolution.optimizers.base import OPTIMIZERS, OptimizerConfig

SECTION = "optimizer"  # the experiment config's optimizer section
# state_bytes(10 n) / state_bytes(n) at most this counts as growing linearly (quadratic: 100).
LINEAR_GROWTH_LIMIT = 20.0
TELL_SHARE_LIMIT = 0.1  # warn when a tell takes more than this share of an evaluation
TELL_FLOOR_SECONDS = 0.05  # ... and at least this long: a shorter tell costs nobody anything


def available_memory_bytes() -> int:
    """Memory this process can still use: MemAvailable, capped by a cgroup v2 limit if set."""
    available = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                available = int(line.split()[1]) * 1024
                break
    except OSError:
        pass
    if available is None:
        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = int(Path("/sys/fs/cgroup/memory.current").read_text())
        if limit != "max":
            available = min(available, int(limit) - used)
    except (OSError, ValueError):
        pass
    return max(available, 0)


def format_bytes(count: float) -> str:
    """``count`` bytes in the largest binary unit that keeps it >= 1, e.g. ``988 GiB``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if count < 1024 or unit == "TiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.3g} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


def default_config(name: str) -> OptimizerConfig:
    """The config of optimizer ``name`` with every option at its default."""
    return OPTIMIZERS.parse_config({"type": name}, SECTION)


def interchangeable_names() -> list[str]:
    """Registered optimizers that run with every option at its default, and so can be suggested
    in place of another (a QD optimizer needs its descriptors: it is not suggested)."""
    names = []
    for name in OPTIMIZERS.names():
        try:
            default_config(name)
        except ConfigError:
            continue
        names.append(name)
    return names


def state_bytes(config: OptimizerConfig, genome_size: int) -> int:
    """Peak bytes of the optimizer of ``config`` for ``genome_size`` genes."""
    _, optimizer_cls = OPTIMIZERS.get(config.type_name())
    return int(optimizer_cls.state_bytes(config, genome_size))


def grows_linearly(name: str, genome_size: int) -> bool:
    """Whether optimizer ``name``'s memory (default options) grows at most ~linearly from
    ``genome_size`` to ten times that."""
    config = default_config(name)
    ratio = state_bytes(config, 10 * genome_size) / state_bytes(config, genome_size)
    return ratio <= LINEAR_GROWTH_LIMIT


def linear_optimizers(genome_size: int) -> list[str]:
    """Registered optimizers whose memory grows at most linearly around ``genome_size``."""
    return [name for name in interchangeable_names() if grows_linearly(name, genome_size)]


def optimizers_that_fit(genome_size: int, available: int) -> list[str]:
    """Registered optimizers whose default config fits in ``available`` bytes."""
    return [
        name
        for name in interchangeable_names()
        if state_bytes(default_config(name), genome_size) <= available
    ]


def check_memory(config: OptimizerConfig, genome_size: int, available: int | None = None) -> None:
    """Refuse ``config`` (ConfigError on ``optimizer.type``) when its optimizer cannot fit in
    ``available`` bytes (default: what the machine has available now)."""
    available = available_memory_bytes() if available is None else available
    needed = state_bytes(config, genome_size)
    if needed <= available:
        return
    name = config.type_name()
    fit = [other for other in optimizers_that_fit(genome_size, available) if other != name]
    advice = f"use one that fits: {', '.join(fit)}" if fit else "no registered optimizer fits"
    raise ConfigError(
        f"{SECTION}.type",
        f"{name} needs {format_bytes(needed)} of memory for a genome of {genome_size:,} genes,"
        f" but this machine has {format_bytes(available)} available; {advice}",
    )


def optimizer_cost_warning(
    optimizer_type: str, genome_size: int, tell_seconds: float, evaluation_seconds: float
) -> str | None:
    """A one-line warning when one measured tell takes more than ``TELL_SHARE_LIMIT`` of the
    same generation's evaluation (workers idle meanwhile) and at least ``TELL_FLOOR_SECONDS``,
    naming the optimizers whose cost grows linearly with the genome; ``None`` otherwise."""
    if tell_seconds < TELL_FLOOR_SECONDS or tell_seconds <= TELL_SHARE_LIMIT * evaluation_seconds:
        return None
    others = [name for name in linear_optimizers(genome_size) if name != optimizer_type]
    advice = (
        f"optimizers whose cost grows linearly with the genome: {', '.join(others)}"
        if others
        else "no registered optimizer grows linearly with the genome"
    )
    return (
        f"{SECTION}.type: {optimizer_type}'s tell took {tell_seconds * 1e3:.0f} ms,"
        f" {tell_seconds / evaluation_seconds:.0%} of the first generation's evaluation"
        f" ({evaluation_seconds * 1e3:.0f} ms) for a genome of {genome_size:,} genes, and the"
        f" workers wait meanwhile; {advice}"
    )
