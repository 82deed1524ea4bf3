"""The sweep loop: many runs advance on one shared pool, each as soon as its work is back.

Every run is an ordinary :class:`~neuro_evolution.run.experiment.Experiment` with its own run
directory and checkpoints; its generations run as :meth:`Experiment.generation_work`, the code
``train`` runs, so a run's files equal those of ``train`` on its config alone (wall time aside).
Every run passes its start-up checks (:mod:`~neuro_evolution.sweep.start_up`) before it starts.
Up to ``parallel_runs`` runs are open at once; whenever a run's request completes, its
coroutine is sent the results at once and its next request is queued, without waiting for
other runs.

Stop and restart: when ``should_stop`` turns true no new run opens, and every open run stops at
its next generation boundary with a checkpoint (its Checkpointer raises TrainingStopped). On
the next session, a run directory with a checkpoint is resumed (or skipped when done), one
without is started again.

Failure: with ``keep_going`` (the sweep command), a run whose own generation code raises (an
optimizer that diverged, say; a user's error aside) checkpoints its last completed generation,
writes ``failure.txt`` (:mod:`~neuro_evolution.run.failure`) and leaves; the other runs go on,
and a later session retries it. Without it (PBT, whose intervals need every run) the error ends
the sweep. An error that comes back from the pool (an env that raised, workers that keep dying,
a lost scheduler) ends it either way.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neuro_evolution.config.tree import config_to_dict
from neuro_evolution.evaluation.pools.pool_handler import PooledRun
from neuro_evolution.evaluation.pools.run_pool import RunPool
from neuro_evolution.run.checkpoint import TrainingStopped
from neuro_evolution.run.directory import LogRow
from neuro_evolution.run.experiment import Experiment, GenerationWork
from neuro_evolution.run.failure import (
    clear_failure,
    failure_line,
    record_failure,
    save_last_completed,
)
from neuro_evolution.run.lock import RunLock
from neuro_evolution.run.resume import changed_keys, read_run_config, resume_experiment
from neuro_evolution.run.status import STATUS_FILE
from neuro_evolution.support.errors import USER_ERRORS, UserError
from neuro_evolution.sweep.grid import RunPlan
from neuro_evolution.sweep.start_up import StartUpChecks

WAIT_SECONDS = 0.25  # how often the loop looks at a stop request while chunks are out
PLOT_SECONDS = 30.0  # a run's fitness.png is redrawn at most this often (and at its end)


@dataclasses.dataclass
class OpenRun:
    """A run being trained: its experiment, its handler on the pool, its current generation."""

    plan: RunPlan
    experiment: Experiment
    handler: PooledRun
    work: GenerationWork | None = None


@dataclasses.dataclass(frozen=True)
class FailedRun:
    """A run whose generation raised: its name, the one-line report, where its traceback is."""

    name: str
    line: str
    details: Path | None


@dataclasses.dataclass
class SweepSummary:
    """What a sweep session did."""

    finished: list[str] = dataclasses.field(default_factory=list)  # ran to their end now
    skipped: list[str] = dataclasses.field(default_factory=list)  # had ended before
    stopped: list[str] = dataclasses.field(default_factory=list)  # checkpointed on a stop
    solved: list[str] = dataclasses.field(default_factory=list)  # reached validation.target
    failed: list[FailedRun] = dataclasses.field(default_factory=list)  # keep_going: raised
    best_validation: float | None = None
    wall_time: float = 0.0
    busy_seconds: float = 0.0  # summed over workers, measured inside them
    slots: int = 1

    @property
    def busy_fraction(self) -> float:
        """Share of the workers' time spent evaluating during the session."""
        return self.busy_seconds / (self.slots * self.wall_time) if self.wall_time else 0.0


class Sweep:
    """Runs ``plans`` under ``directory`` on ``pool`` (which it does not close)."""

    def __init__(
        self,
        plans: list[RunPlan],
        directory: Path,
        pool: RunPool,
        parallel_runs: int,
        should_stop: Callable[[], bool] | None = None,
        on_progress: Callable[[Sweep], None] | None = None,
        train_past_target: bool = False,
        checks: StartUpChecks | None = None,
        keep_going: bool = False,
    ) -> None:
        self.plans = plans
        self.directory = Path(directory)
        self.pool = pool
        self.parallel_runs = max(1, parallel_runs)
        self.should_stop = should_stop or (lambda: False)
        self.on_progress = on_progress or (lambda sweep: None)
        # True: a run that reached validation.target trains on to number_generations (PBT)
        self.train_past_target = train_past_target
        # every run's start-up checks, before it starts (the new runs: checked before, too)
        self.checks = checks or StartUpChecks("neuro_evolution.sweep", self.parallel_runs)
        # True: a run whose generation raises is recorded as failed, and the others go on
        self.keep_going = keep_going
        self.summary = SweepSummary(slots=pool.slots)
        self.open: dict[int, OpenRun] = {}  # ticket of its request in flight -> run
        self.closing: list[tuple[OpenRun, list[str]]] = []  # ended, not yet closed
        self.waiting: deque[RunPlan] = deque()

    # --- opening runs -------------------------------------------------------------------------
    def run_directory(self, plan: RunPlan) -> Path:
        return self.directory / plan.name

    def open_run(self, plan: RunPlan) -> OpenRun | None:
        """A started run of ``plan`` (new or resumed), or None when it had ended before."""
        run_dir = self.run_directory(plan)
        lock = RunLock.acquire(run_dir, "neuro_evolution.sweep")  # before anything is read
        try:
            return self.open_locked(plan, run_dir)
        finally:
            lock.release()  # the experiment holds its own share while it runs

    def open_locked(self, plan: RunPlan, run_dir: Path) -> OpenRun | None:
        """:meth:`open_run` once ``run_dir`` is locked by this process."""
        handler = PooledRun(self.pool, plan.name)
        if (run_dir / STATUS_FILE).is_file():
            self.check_same_config(plan, run_dir)
            experiment = resume_experiment(
                run_dir,
                number_generations=plan.config.number_generations,
                handler=handler,
                should_stop=self.should_stop,
                max_env_steps=plan.config.max_env_steps,
                max_evaluations=plan.config.max_evaluations,
            )
            experiment.train_past_target = self.train_past_target
            if experiment.done:
                experiment.close()
                self.note_end(plan, experiment, self.summary.skipped)
                return None
            try:
                self.checks.check(plan, experiment)
            except BaseException:
                experiment.close()
                raise
            experiment.start()
            clear_failure(run_dir)  # a failure of this session is written anew
        else:
            experiment = Experiment(plan.config, handler=handler)
            experiment.train_past_target = self.train_past_target
            try:
                self.checks.check(plan, experiment)
                experiment.start()
                # overwrite: an earlier session stopped it before its first checkpoint
                experiment.attach_run_directory(
                    run_dir, overwrite=True, should_stop=self.should_stop
                )
                clear_failure(run_dir)  # it failed before its first checkpoint
            except BaseException:
                experiment.close()
                handler.close()
                raise
        assert experiment.run_directory is not None
        experiment.run_directory.plot_every = PLOT_SECONDS  # many runs draw at once
        return OpenRun(plan, experiment, handler)

    def check_same_config(self, plan: RunPlan, run_dir: Path) -> None:
        """Refuse to resume a run directory that holds another config than the sweep's."""
        changed = changed_keys(read_run_config(run_dir), config_to_dict(plan.config))
        if changed:
            raise UserError(
                f"{run_dir}: holds a run of another config ({', '.join(changed)} differ from "
                "this sweep's); give the sweep another --out directory"
            )

    # --- the loop -----------------------------------------------------------------------------
    def run(self) -> SweepSummary:
        """Train every plan to its end (or until stopped); closes the runs it opened."""
        start = time.perf_counter()
        busy_before = self.pool.busy_seconds
        self.waiting = deque(self.plans)
        try:
            while True:
                while (
                    self.waiting and len(self.open) < self.parallel_runs and not self.should_stop()
                ):
                    run = self.open_run(self.waiting.popleft())
                    if run is not None:
                        self.advance(run)
                    self.on_progress(self)
                if not self.open:
                    break
                for ticket, results in self.pool.wait(WAIT_SECONDS):
                    self.advance(self.open.pop(ticket), results)
                    self.on_progress(self)
                self.end_closing_runs()
        finally:
            for run in self.open.values():
                run.experiment.close()
                run.handler.close()
            self.open.clear()
            self.end_closing_runs()
            self.summary.wall_time = time.perf_counter() - start
            self.summary.busy_seconds = self.pool.busy_seconds - busy_before
        return self.summary

    def advance(self, run: OpenRun, results: Any = None) -> None:
        """Send ``results`` to the run's generation (a new one when None) and queue what it asks
        for next; a finished generation starts the next one, a finished run closes."""
        while True:
            try:
                if results is None:
                    run.work = run.experiment.generation_work()
                    request = next(run.work)
                else:
                    assert run.work is not None
                    request = run.work.send(results)
            except StopIteration:
                self.note_rows(run.experiment.log[-1:])
                if run.experiment.done:
                    self.close_run(run, self.summary.finished)
                    return
                results = None
                continue
            except TrainingStopped:
                self.close_run(run, self.summary.stopped)
                return
            except Exception as error:
                if not self.keep_going or isinstance(error, USER_ERRORS):  # a user's: one line
                    run.experiment.close()
                    run.handler.close()
                    raise
                self.fail_run(run, error)
                return
            except BaseException:
                run.experiment.close()
                run.handler.close()
                raise
            ticket = self.pool.submit(
                run.plan.name, request.genomes, request.seeds, request.context
            )
            self.open[ticket] = run
            return

    def fail_run(self, run: OpenRun, error: Exception) -> None:
        """Record that the run's generation raised: checkpoint its last completed generation,
        write its failure file, close it; the other runs go on."""
        line = failure_line(len(run.experiment.log), error)
        why = save_last_completed(run.experiment)
        if why is not None:
            line += f"; could not save that generation ({why})"
        run.handler.close()
        run.experiment.close()
        details = record_failure(self.run_directory(run.plan), line, error)
        self.summary.failed.append(FailedRun(run.plan.name, line, details))

    def close_run(self, run: OpenRun, into: list[str]) -> None:
        """Leave the pool now; the run closes (and draws its last plot) in end_closing_runs."""
        run.handler.close()
        self.closing.append((run, into))

    def end_closing_runs(self) -> None:
        """Close the runs that ended, once the other runs' next requests are out: drawing their
        plots then overlaps the workers' evaluations instead of idling them."""
        closing, self.closing = self.closing, []
        for run, into in closing:
            run.experiment.close()
            self.note_end(run.plan, run.experiment, into)
            self.on_progress(self)

    def note_end(self, plan: RunPlan, experiment: Experiment, into: list[str]) -> None:
        into.append(plan.name)
        if experiment.solved is not None:
            self.summary.solved.append(plan.name)
        self.note_rows(experiment.log)

    def note_rows(self, rows: list[LogRow]) -> None:
        """Keep the best validation mean seen in any run."""
        for row in rows:
            mean = row.validation_mean
            if mean is not None and not math.isnan(mean):
                best = self.summary.best_validation
                self.summary.best_validation = mean if best is None else max(best, mean)

    @property
    def done(self) -> int:
        """Runs that reached their end (in this session or before)."""
        return len(self.summary.finished) + len(self.summary.skipped)
