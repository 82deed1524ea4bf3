"""Which genes a template's ``fill`` reads, found from the outside (nothing asked of a brain type).

A gene is read when its value reaches the filled brain's state: the float arrays and floats held by
the brain, its parts and their containers. Two probes, cheapest first:

- every gene gets its own value (``FIRST_VALUE + index``); a gene whose value is found in the
  brain's state is read (a fill that copies genes, in any order or layout);
- a gene not found that way (a fill that transforms its genes: ``exp``, a clip, a mask) is set to
  NaN, which every arithmetic transform carries into the state; blocks of such genes are halved
  until each gene is read (a NaN appears) or the whole block is not (none appears).

A fill that raises on a probe is taken to read the probed genes: the check refuses only genes it
saw unread.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from neuro_evolution.brains.base import BrainTemplate

FIRST_VALUE = 1000.25  # gene i gets FIRST_VALUE + i: exact in float32 up to about 8M genes
MAX_FILLS = 4096  # NaN probes at most per check (each is one fill)
MAX_DEPTH = 8  # how deep the brain's objects are searched for state


@dataclass(frozen=True)
class GenomeReads:
    """What a check found: ``unread`` genes seen unread; ``complete`` is False when the NaN
    probes ran out before every gene was decided (then more genes may be unread)."""

    genome_size: int
    unread: np.ndarray
    complete: bool

    @property
    def read_at_most(self) -> int:
        """Genes that may be read: all but those seen unread."""
        return self.genome_size - self.unread.size


def state_values(obj: Any) -> np.ndarray:
    """Every float held by ``obj`` and the objects it holds, as one float64 vector."""
    parts = [np.asarray(value, dtype=np.float64).ravel() for value in _floats(obj, set(), 0)]
    return np.concatenate(parts) if parts else np.zeros(0)


def _floats(obj: Any, seen: set[int], depth: int) -> Iterator[Any]:
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind == "f":
            yield obj
        return
    if isinstance(obj, float | np.floating):
        yield obj
        return
    if depth > MAX_DEPTH or id(obj) in seen or isinstance(obj, _NOT_STATE):
        return
    seen.add(id(obj))
    if isinstance(obj, list | tuple | set | frozenset):
        children: Any = list(obj)
    elif isinstance(obj, dict):
        children = list(obj.values())
    else:
        children = [getattr(obj, name) for name in _attribute_names(obj) if hasattr(obj, name)]
    for child in children:
        yield from _floats(child, seen, depth + 1)


_NOT_STATE = (str, bytes, int, bool, type(None), type, BrainTemplate)


def _attribute_names(obj: Any) -> list[str]:
    names = list(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    return [name for name in dict.fromkeys(names) if not name.startswith("__")]


def found_genes(values: np.ndarray, size: int) -> np.ndarray:
    """Which of ``size`` genes have their distinct value (``FIRST_VALUE + index``) in ``values``."""
    index = values - FIRST_VALUE
    whole = np.isfinite(index) & (index >= 0) & (index < size)
    index = index[whole]
    index = index[index == np.floor(index)].astype(np.int64)
    found = np.zeros(size, dtype=bool)
    found[index] = True
    return found


def genome_reads(template: BrainTemplate) -> GenomeReads | None:
    """The genes ``template.fill`` leaves unread, or None when a fill of distinct values raises
    (then nothing can be said)."""
    size = template.genome_size
    distinct = FIRST_VALUE + np.arange(size, dtype=np.float64)
    brain = template.new_brain()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            template.fill(brain, distinct.copy())
        except Exception:  # noqa: BLE001 - a fill that refuses these values cannot be probed
            return None
        baseline = state_values(brain)
        unfound = np.flatnonzero(~found_genes(baseline, size))
        if unfound.size == 0:
            return GenomeReads(size, unfound, complete=True)
        probe = _NanProbe(template, brain, distinct, int(np.isnan(baseline).sum()))
        unread: list[np.ndarray] = []
        complete = probe.split(unfound, unread)
    return GenomeReads(size, np.sort(np.concatenate(unread)) if unread else unfound[:0], complete)


class _NanProbe:
    """Fills ``brain`` with the distinct genome but NaN at some genes, and says whether a NaN
    more than the baseline's reached the state."""

    def __init__(
        self, template: BrainTemplate, brain: Any, distinct: np.ndarray, baseline_nans: int
    ):
        self.template, self.brain, self.distinct = template, brain, distinct
        self.baseline_nans = baseline_nans
        self.fills_left = MAX_FILLS

    def reaches_state(self, genes: np.ndarray) -> bool:
        self.fills_left -= 1
        genome = self.distinct.copy()
        genome[genes] = np.nan
        try:
            self.template.fill(self.brain, genome)
        except Exception:  # noqa: BLE001 - a fill that raises on NaN read at least one of them
            return True
        return int(np.isnan(state_values(self.brain)).sum()) > self.baseline_nans

    def split(self, genes: np.ndarray, unread: list[np.ndarray]) -> bool:
        """Append to ``unread`` the genes of ``genes`` that no NaN probe sees read; False when the
        fills ran out first."""
        if self.fills_left <= 0:
            return False
        if not self.reaches_state(genes):
            unread.append(genes)
            return True
        if genes.size == 1:
            return True
        half = genes.size // 2
        return self.split(genes[:half], unread) and self.split(genes[half:], unread)


def describe_genes(genes: np.ndarray, limit: int = 3) -> str:
    """``genes`` as ranges, e.g. ``"12, 40-47"`` (at most ``limit`` ranges, then "...")."""
    ranges: list[str] = []
    start = previous = int(genes[0])
    for gene in [*map(int, genes[1:]), None]:
        if gene is not None and gene == previous + 1:
            previous = gene
            continue
        ranges.append(str(start) if start == previous else f"{start}-{previous}")
        if gene is not None:
            start = previous = gene
    return ", ".join(ranges[:limit]) + (", ..." if len(ranges) > limit else "")


def unread_genes_problem(template: BrainTemplate) -> str | None:
    """What is wrong when ``template.fill`` leaves genes unread (None when nothing is seen): the
    number it reads of ``genome_size`` and the genes it never reads."""
    reads = genome_reads(template)
    if reads is None or reads.unread.size == 0:
        return None
    size = reads.genome_size
    count = f"{reads.read_at_most:,}" if reads.complete else f"at most {reads.read_at_most:,}"
    return (
        f"a {template.config.type_name()} brain's fill reads {count} of its genome_size "
        f"{size:,} genes (never gene {describe_genes(reads.unread)}): the template's genome_size "
        "must be the number of genes its fill reads"
    )
