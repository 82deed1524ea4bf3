"""The PBT loop: train every run to the interval's end on one pool, rank, copy, explore, repeat.

Each interval is one sweep session (:class:`~neuro_evolution.sweep.scheduler.Sweep`) over the
run directories, with ``number_generations`` set to the interval's end; a stopped session
resumes exactly. At the end of an interval every run is scored by its **held-out validation
mean at that generation** (never a training maximum); runs are ranked by it (ties: the lower run
index first). The bottom ``quantile`` of runs each copy a run drawn uniformly from the top
``quantile`` (:func:`~neuro_evolution.pbt.transfer.copy_run`: the donor's checkpoint, config and
seed, so the copy continues exactly as the donor would) and explore the donor's settings. No
copy follows the last interval.

The decisions are written to ``pbt_state.json`` before any file is copied, and copying again
gives the same files, so a PBT killed at any moment (mid-interval, while copying) continues to
the same result.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.config.tree import ExperimentConfig, parse_config
from neuro_evolution.evaluation.pools.run_pool import RunPool
from neuro_evolution.pbt.lineage import (
    RUNS_DIR,
    PbtState,
    generator_from_state,
    generator_state,
    setup_hash,
)
from neuro_evolution.pbt.plot import plot_pbt
from neuro_evolution.pbt.section import PbtConfig, section_data
from neuro_evolution.pbt.space import (
    ExploredSetting,
    current_values,
    explored_values,
    start_values,
    with_values,
)
from neuro_evolution.pbt.transfer import SeededEntries, copy_run
from neuro_evolution.run.directory import LOG_FILE, read_log
from neuro_evolution.support.console import score_text
from neuro_evolution.sweep.grid import RunPlan
from neuro_evolution.sweep.scheduler import Sweep, SweepSummary
from neuro_evolution.sweep.start_up import StartUpChecks

PLOT_FILE = "pbt.png"
PLOT_SECONDS = 30.0  # pbt.png is redrawn at an interval's end at most this often, and at the end


@dataclasses.dataclass(frozen=True)
class PbtSetup:
    """Everything a PBT is made of, checked at start-up."""

    experiment: dict[str, Any]  # the resolved experiment every run starts from
    section: PbtConfig
    space: tuple[ExploredSetting, ...]
    seeded: SeededEntries  # state entries the explored settings set (see transfer)

    @property
    def intervals(self) -> int:
        return int(self.experiment["number_generations"]) // self.section.interval

    @property
    def names(self) -> list[str]:
        width = len(str(self.section.runs - 1))
        return [f"run-{index:0{width}d}" for index in range(self.section.runs)]

    @property
    def hash(self) -> str:
        return setup_hash(self.experiment, section_data(self.section))

    def run_config(self, data: dict[str, Any], generations: int) -> ExperimentConfig:
        """A run's config ``data`` for training to ``generations``, on this setup's pool."""
        shared = {key: self.experiment[key] for key in ("evaluation", "observers")}
        return parse_config({**data, **shared, "number_generations": generations})


def initial_state(setup: PbtSetup) -> PbtState:
    """The state before the first interval: every run's start values, drawn in run order."""
    rng = np.random.default_rng(setup.section.seed)
    configs, lineage = {}, {}
    for index, name in enumerate(setup.names):
        values = start_values(setup.space, rng)
        data = with_values(setup.experiment, values)
        data["random_seed"] = int(setup.experiment["random_seed"]) + index
        parse_config(data)  # a seed past the range is refused here
        configs[name] = data
        lineage[name] = {"seed": data["random_seed"], "start": values, "copies": []}
    return PbtState(setup.hash, 0, generator_state(rng), configs, lineage=lineage)


def end_of_interval(setup: PbtSetup, state: PbtState) -> int:
    """The generation the current interval of ``state`` ends at."""
    return (state.intervals_done + 1) * setup.section.interval


def interval_plans(setup: PbtSetup, state: PbtState, end: int) -> list[RunPlan]:
    """The sweep plans of every run of ``state``, trained to generation ``end``."""
    return [
        RunPlan(name, (), int(data["random_seed"]), setup.run_config(data, end))
        for name, data in state.configs.items()
    ]


def score_key(score: float | None) -> float:
    """A score to rank by (no validation, or NaN, ranks last)."""
    return -math.inf if score is None or math.isnan(score) else score


def decide_copies(
    setup: PbtSetup,
    state: PbtState,
    scores: dict[str, float | None],
    rng: np.random.Generator,
    end: int,
) -> list[dict[str, Any]]:
    """The copies of an interval's end: the bottom runs, each with a donor from the top, and
    the donor's settings explored (draws from ``rng``)."""
    names = list(state.configs)
    ranked = sorted(names, key=lambda name: (-score_key(scores[name]), names.index(name)))
    count = max(1, int(len(names) * setup.section.quantile))
    top, bottom = ranked[:count], ranked[-count:]
    copies = []
    for name in sorted(bottom, key=names.index):
        donor = top[int(rng.integers(count))]
        donor_values = current_values(setup.space, state.configs[donor])
        values = explored_values(setup.space, donor_values, rng, setup.section.perturb_factors)
        data = with_values(state.configs[donor], values)
        setup.run_config(data, end)  # a refused explored value stops here, nothing copied
        copies.append(
            {
                "run": name,
                "donor": donor,
                "generation": end,
                "score": scores[name],
                "donor_score": scores[donor],
                "before": current_values(setup.space, state.configs[name]),
                "donor_values": donor_values,
                "values": values,
                "config": data,
            }
        )
    return copies


def text(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


class PbtLoop:
    """Runs the PBT of ``setup`` in ``folder`` from ``state`` on ``pool`` (not closed here)."""

    def __init__(
        self,
        setup: PbtSetup,
        folder: Path,
        state: PbtState,
        pool: RunPool,
        parallel_runs: int,
        should_stop: Callable[[], bool],
        say: Callable[[str], None],
        progress: Callable[[int], Callable[[Sweep], None]] | None = None,
        checks: StartUpChecks | None = None,
    ) -> None:
        self.setup = setup
        self.folder = Path(folder)
        self.state = state
        self.pool = pool
        self.parallel_runs = parallel_runs
        self.should_stop = should_stop
        self.say = say
        self.progress = progress
        self.checks = checks  # the runs' start-up checks (None: each sweep session's own)
        self.busy_seconds = 0.0
        self.wall_time = 0.0
        self.finished = False
        self._plotted = (time.monotonic(), 0)  # (when, intervals drawn)

    @property
    def end(self) -> int:
        """The generation the current interval ends at."""
        return end_of_interval(self.setup, self.state)

    def run(self) -> bool:
        """Train to the end (True) or until a stop is requested (False, state saved); the
        answer is also :attr:`finished`."""
        self.finished = self.advance()
        self.plot(due=True)
        return self.finished

    def plot(self, due: bool = False) -> None:
        """Draw ``pbt.png`` when intervals ended since the last drawing, and ``due`` or
        :data:`PLOT_SECONDS` passed since then."""
        when, drawn = self._plotted
        history = self.state.history
        if len(history) > drawn and (due or time.monotonic() - when >= PLOT_SECONDS):
            plot_pbt(self.folder / PLOT_FILE, history, self.state.lineage, self.setup.space)
            self._plotted = (time.monotonic(), len(history))

    def advance(self) -> bool:
        while self.state.intervals_done < self.setup.intervals:
            if self.should_stop():
                return False
            if self.state.pending is None:
                if not self.train_interval():
                    return False
                self.end_interval()
            if self.state.pending is not None:
                self.make_copies()
        return True

    def train_interval(self) -> bool:
        """One sweep session: every run to the interval's end; False when it was stopped."""
        plans = interval_plans(self.setup, self.state, self.end)
        on_progress = self.progress(len(plans)) if self.progress else None
        sweep = Sweep(
            plans,
            self.folder / RUNS_DIR,
            self.pool,
            self.parallel_runs,
            self.should_stop,
            on_progress,
            train_past_target=True,
            checks=self.checks,
        )
        summary: SweepSummary = sweep.run()
        close = getattr(on_progress, "close", None)
        if close is not None:
            close()
        self.busy_seconds += summary.busy_seconds
        self.wall_time += summary.wall_time
        return len(summary.finished) + len(summary.skipped) == len(plans)

    def score(self, name: str, end: int) -> float | None:
        """Run ``name``'s held-out validation mean after generation ``end``."""
        log = read_log(self.folder / RUNS_DIR / name / LOG_FILE)
        row = next((row for row in log if row["generation"] == end - 1), None)
        if row is None:
            raise RuntimeError(f"{name}: log.csv has no row for generation {end - 1}")
        mean = row["validation_mean"]
        return None if mean is None else float(mean)

    def end_interval(self) -> None:
        """Record the interval's scores and settings; decide the copies (none after the last)."""
        state, end = self.state, self.end
        scores = {name: self.score(name, end) for name in state.configs}
        settings = {
            name: current_values(self.setup.space, data) for name, data in state.configs.items()
        }
        state.history.append({"generation": end, "scores": scores, "settings": settings})
        shown = ", ".join(f"{name} {score_text(score)}" for name, score in scores.items())
        self.say(
            f"pbt: interval {state.intervals_done + 1}/{self.setup.intervals} ended at "
            f"generation {end}; validation: {shown}"
        )
        if state.intervals_done + 1 < self.setup.intervals:
            rng = generator_from_state(state.generator)
            state.pending = self.decide(scores, rng, end)
            state.generator = generator_state(rng)
        else:
            state.intervals_done += 1
        state.write(self.folder)
        self.plot()

    def decide(
        self, scores: dict[str, float | None], rng: np.random.Generator, end: int
    ) -> list[dict[str, Any]]:
        """The copies of this interval's end (:func:`decide_copies`)."""
        return decide_copies(self.setup, self.state, scores, rng, end)

    def make_copies(self) -> None:
        """Make the pending copies, record them in the lineage, start the next interval."""
        state = self.state
        assert state.pending is not None
        for copy in state.pending:
            name, donor, end = copy["run"], copy["donor"], copy["generation"]
            runs = self.folder / RUNS_DIR
            config = self.setup.run_config(copy["config"], end)
            source, copied_at = copy_run(runs / donor, runs / name, config, self.setup.seeded)
            state.configs[name] = copy["config"]
            changes = {
                key: {"donor": copy["donor_values"][key], "now": value}
                for key, value in copy["values"].items()
            }
            entry = {
                "generation": end,
                "copied": donor,
                "checkpoint": source.relative_to(self.folder).as_posix(),
                "score": copy["score"],
                "donor_score": copy["donor_score"],
                "seed": copy["config"]["random_seed"],
                "before": copy["before"],
                "settings": changes,
            }
            older = ""
            if copied_at != end:  # the donor's later checkpoints could not be read
                entry["checkpoint_generation"] = copied_at
                older = f" (its checkpoint of generation {copied_at}: later ones are unreadable)"
            state.lineage[name]["copies"].append(entry)
            moved = ", ".join(
                f"{key} {text(change['donor'])} -> {text(change['now'])}"
                for key, change in changes.items()
            )
            self.say(
                f"pbt: {name} ({score_text(copy['score'])}) copies {donor} "
                f"({score_text(copy['donor_score'])}) at generation {end}{older}: {moved}"
            )
        state.pending = None
        state.intervals_done += 1
        state.write(self.folder)
