"""Workers shared by runs: requests of any run go out in chunks, completions come back as they
arrive.

A run registers its template and RunnerSpec when it starts (:meth:`RunPool.register`), then
submits its generations' evaluation requests (:meth:`RunPool.submit`), each split into chunks
that queue up with the chunks of the other runs. :meth:`RunPool.wait` returns the requests whose
chunks have all come back, results in submission order, as soon as they complete. So while one
run waits for the slowest episode of its generation, the workers go on with other runs' chunks.
A single run is the case of one registered run (:meth:`RunPool.evaluate`): every handler of
the package is its pool with one run (:mod:`.pool_handler`).

A result depends only on (template, genome, seed, context), not on chunking or worker, so a
pool's results are those of the handler of the same name.
"""

from __future__ import annotations

import dataclasses
import itertools
from abc import ABC, abstractmethod

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episodes.runner import (
    TRAINING,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
)
from neuro_evolution.evaluation.pools.base import check_batch, split_chunks

RUN = ""  # the run id of a handler's one run (unnamed in messages)
TimedResults = tuple[list[EvaluationResult], float]  # a chunk's results, seconds it took


@dataclasses.dataclass(frozen=True, eq=False)
class Chunk:
    """Genomes ``first`` .. ``first + len(genomes) - 1`` of request ``ticket`` of ``run_id``;
    ``number`` is unique in the pool."""

    number: int
    ticket: int
    index: int  # its place among the request's chunks
    run_id: str
    first: int
    genomes: np.ndarray
    seeds: np.ndarray
    context: EvaluationContext


@dataclasses.dataclass
class _Pending:
    """A submitted request: its chunks' results as they come back."""

    run_id: str
    chunks: list[list[EvaluationResult] | None]

    @property
    def complete(self) -> bool:
        return all(chunk is not None for chunk in self.chunks)

    def results(self) -> list[EvaluationResult]:
        return [result for chunk in self.chunks for result in chunk or ()]


class RunPool(ABC):
    """Workers shared by many runs; requests of any run, completions as they arrive.

    How many chunks a request goes out in: :meth:`request_chunks`. A subclass starts chunks
    (:meth:`_submit_chunk`) and hands their results to :meth:`_chunk_done`.
    """

    def __init__(self, slots: int, vectorize: bool | str = False, chunks_per_slot: int = 1) -> None:
        self.slots = slots
        self.vectorize = vectorize
        self.chunks_per_slot = chunks_per_slot
        self.busy_seconds = 0.0  # summed over workers, measured inside them
        self._runs: set[str] = set()  # registered, not yet unregistered
        self._tickets = itertools.count()
        self._chunk_numbers = itertools.count()
        self._pending: dict[int, _Pending] = {}
        self._done: dict[int, list[EvaluationResult]] = {}

    @property
    def runs(self) -> frozenset[str]:
        """The runs registered now."""
        return frozenset(self._runs)

    def register(self, run_id: str, template: BrainTemplate, spec: RunnerSpec) -> None:
        """Make the run known to every worker (before its first request)."""
        self._register(run_id, template, spec)
        self._runs.add(run_id)

    def unregister(self, run_id: str) -> None:
        """Forget the run (its workers' states may go)."""
        self._runs.discard(run_id)
        self._unregister(run_id)

    def request_chunks(self) -> int:
        """Chunks of one request: ``chunks_per_slot`` per slot for per-individual loops. A sweep
        cuts one per slot, as the other runs' chunks fill the slots while a run waits (8 CartPole
        runs, 2 workers: busy 88% with 1 chunk per slot, 79% with 2, 74% with 4, for the same
        wall time). Lockstep: a chunk takes as long as its longest episode however many lanes it
        has, so each request stays whole while enough runs are open to fill the slots, and is
        split only to fill them (the last runs)."""
        chunks = self.slots * self.chunks_per_slot
        if self.vectorize:
            return max(1, -(-chunks // max(1, len(self._runs))))
        return chunks

    @abstractmethod
    def _register(self, run_id: str, template: BrainTemplate, spec: RunnerSpec) -> None:
        """The pool's own registration of a run."""

    @abstractmethod
    def _unregister(self, run_id: str) -> None:
        """The pool's own forgetting of a run."""

    @abstractmethod
    def _submit_chunk(self, chunk: Chunk) -> None:
        """Start evaluating one chunk; its results reach :meth:`_chunk_done` later."""

    @abstractmethod
    def _wait_chunks(self, timeout: float | None) -> None:
        """Block until at least one chunk came back (or ``timeout``) and record it."""

    def _cancel(self, ticket: int) -> None:
        """Forget request ``ticket``; a subclass also stops its chunks still out."""
        self._pending.pop(ticket, None)
        self._done.pop(ticket, None)

    @abstractmethod
    def close(self) -> None:
        """Stop the workers."""

    def describe(self) -> str:
        return f"{type(self).__name__}: {self.slots} slots"

    def submit(
        self,
        run_id: str,
        genomes: np.ndarray,
        seeds: np.ndarray,
        context: EvaluationContext = TRAINING,
    ) -> int:
        """Queue the evaluations of ``run_id`` in chunks; returns the ticket for :meth:`wait`."""
        genomes, seeds = check_batch(genomes, seeds)
        ticket = next(self._tickets)
        slices = split_chunks(len(genomes), self.request_chunks())
        self._pending[ticket] = _Pending(run_id, [None] * len(slices))
        if not slices:
            self._finish(ticket)
        try:
            for index, part in enumerate(slices):
                number = next(self._chunk_numbers)
                chunk = Chunk(
                    number, ticket, index, run_id, part.start, genomes[part], seeds[part], context
                )
                self._submit_chunk(chunk)
        except BaseException:  # an in-process pool evaluates here: forget the request
            self._cancel(ticket)
            raise
        return ticket

    def _chunk_done(self, chunk: Chunk, timed: TimedResults) -> None:
        results, seconds = timed
        self.busy_seconds += seconds
        pending = self._pending[chunk.ticket]
        pending.chunks[chunk.index] = results
        if pending.complete:
            self._finish(chunk.ticket)

    def _finish(self, ticket: int) -> None:
        self._done[ticket] = self._pending.pop(ticket).results()

    def wait(self, timeout: float | None = None) -> list[tuple[int, list[EvaluationResult]]]:
        """(ticket, results) of every request completed since the last call; waits up to
        ``timeout`` seconds for the first one when none is complete yet."""
        if not self._done and self._pending:
            self._wait_chunks(timeout)
        done, self._done = self._done, {}
        return sorted(done.items())

    def evaluate(
        self,
        run_id: str,
        genomes: np.ndarray,
        seeds: np.ndarray,
        context: EvaluationContext = TRAINING,
    ) -> list[EvaluationResult]:
        """Submit the evaluations and wait for them (other requests' results stay for
        :meth:`wait`); an error or interruption stops the request's chunks still out."""
        ticket = self.submit(run_id, genomes, seeds, context)
        try:
            while ticket not in self._done:
                self._wait_chunks(None)
        except BaseException:
            self._cancel(ticket)
            raise
        return self._done.pop(ticket)
