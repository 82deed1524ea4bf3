"""The evaluation handler interface and the per-worker state every handler shares.

``batch_evaluate(genomes, seeds)`` returns one :class:`EvaluationResult` per genome, in
submission order. How the work gets to a runner is the handler's strategy; what a worker does
with it is :class:`WorkerState.evaluate`, the same code for every handler, so results are
bit-identical whichever handler runs them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
from abc import abstractmethod
from collections.abc import Iterator
from typing import Any, Protocol

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episodes.runner import (
    TRAINING,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
)
from neuro_evolution.evaluation.pools.options import HANDLERS, EvaluationConfig, option_path
from neuro_evolution.support.errors import ConfigError
from neuro_evolution.support.frozen import FrozenABCMeta
from neuro_evolution.support.signals import signals_handled_by


class WorkerState:
    """What a worker keeps for the whole run: the template, one runner (env) and one brain."""

    def __init__(self, template: BrainTemplate, spec: RunnerSpec):
        self.template = template
        self.runner = spec.make()
        self.brain = template.new_brain()

    def evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        """Evaluate a chunk of genomes, refilling the worker's one brain for each."""
        results = []
        for genome, seed in zip(genomes, seeds):
            self.template.fill(self.brain, genome)
            results.append(self.runner.run(self.brain, int(seed), context))
        return results

    def close(self) -> None:
        """Close the runner's env."""
        self.runner.close()


class ChunkEvaluator(Protocol):
    """What a worker keeps: ``WorkerState`` or ``VectorizedWorkerState`` (same API)."""

    def evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]: ...

    def close(self) -> None: ...


@dataclasses.dataclass(frozen=True)
class HandlerStatistics:
    """What a handler measured over its session, for the end-of-run summary.

    This base record (what :meth:`EvaluationHandler.statistics` returns by default) reports
    nothing; a handler that measures something returns a subclass that writes its own lines.
    """

    def summary_lines(self) -> list[str]:
        """The summary lines that report these statistics (none for the base record)."""
        return []


class EvaluationHandler(metaclass=FrozenABCMeta):
    """Evaluates populations; set up once per run with :meth:`start`, ended with :meth:`close`."""

    @classmethod
    def from_config(cls, section: EvaluationConfig) -> EvaluationHandler:
        """The handler for a validated ``evaluation`` section; override to use its options."""
        return cls()

    @abstractmethod
    def start(self, template: BrainTemplate, spec: RunnerSpec) -> None:
        """Set up long-lived per-worker state (template, runner with its env)."""

    @abstractmethod
    def batch_evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        """One result per row of ``genomes`` (episode base seed ``seeds[i]``), in order.

        ``context`` (frozen observation normalization, validation mode) is the same for every
        genome of the batch and must reach every worker unchanged.
        """

    def close(self) -> None:
        """Release workers and envs."""

    def statistics(self) -> HandlerStatistics:
        """What this handler measured over its session (kept after :meth:`close`, for the
        summary); by default nothing."""
        return HandlerStatistics()

    def describe(self) -> str:
        """The handler line for the console, ``NAME: how it evaluates`` (e.g. where a dashboard
        is); by default the registered name and the class."""
        return f"{registered_name(type(self))}: {type(self).__name__}"

    def __enter__(self) -> EvaluationHandler:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT while worker processes are started inside the block.

    A terminal's Ctrl-C reaches the whole process group; only the parent should react to it
    (finish the generation, write a checkpoint). Processes started here inherit the ignored
    disposition, and Python keeps a SIGINT that its parent ignored ignored.
    """
    with signals_handled_by(signal.SIG_IGN, [signal.SIGINT]):
        yield


def check_parallel_options(workers: int, chunks_per_worker: int) -> None:
    """The options every parallel handler shares: at least one worker and one chunk per worker."""
    if not isinstance(workers, int) or workers < 1:
        raise ConfigError(option_path("workers"), f"must be an integer >= 1, got {workers!r}")
    if chunks_per_worker < 1:
        raise ValueError(f"chunks_per_worker must be >= 1, got {chunks_per_worker!r}")


def chunks_per_worker_for(vectorize: bool | str) -> int:
    """Chunks a parallel handler cuts per worker and request: 4 for the per-individual loop (a
    slow episode in one chunk is balanced by the others), 1 for lockstep (a chunk takes as long
    as its longest episode however many lanes it has, so fewer, wider chunks are faster; figures
    in docs/measurements.md)."""
    return 1 if vectorize else 4


def check_batch(
    genomes: np.ndarray, seeds: np.ndarray, genome_size: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``genomes`` as a float64 (P, G) array and ``seeds`` one per genome, or a ValueError."""
    genomes = np.asarray(genomes, dtype=np.float64)
    seeds = np.asarray(seeds)
    width = "genome_size" if genome_size is None else str(genome_size)
    if genomes.ndim != 2 or genome_size not in (None, genomes.shape[1]):
        raise ValueError(f"genomes have shape {genomes.shape}; expected (P, {width})")
    if seeds.shape != (genomes.shape[0],):
        raise ValueError(
            f"seeds have shape {seeds.shape}; expected one per genome ({len(genomes)},)"
        )
    return genomes, seeds


def split_chunks(count: int, chunks: int) -> list[slice]:
    """Split ``range(count)`` into at most ``chunks`` contiguous, nearly equal slices."""
    chunks = max(1, min(chunks, count))
    bounds = np.linspace(0, count, chunks + 1).round().astype(int)
    return [slice(int(a), int(b)) for a, b in zip(bounds, bounds[1:]) if b > a]


# HANDLERS (options.py, the section that names a handler) registers and lists the handlers:
register_handler = HANDLERS.register
handler_names = HANDLERS.names


def handler_class(name: str) -> type[EvaluationHandler]:
    """The class registered as ``name`` (a built-in one is imported now); KeyError if unknown."""
    return HANDLERS.get(name)[1]


def registered_name(cls: type) -> str:
    """The name ``cls`` is registered under (its class name when it is not registered)."""
    return HANDLERS.impl_name(cls) or cls.__name__
