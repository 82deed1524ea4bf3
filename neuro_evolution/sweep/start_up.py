"""The start-up checks of a sweep's runs (:mod:`neuro_evolution.run.start_up`), each distinct
warning printed once for the whole sweep.

The new runs are all checked before the sweep folder, a run directory or a worker exists
(:meth:`StartUpChecks.check_new_runs`); every run is checked again when it opens, with its state
then (a resumed run's restored optimizer), on the evaluation section of the shared pool.
"""

from __future__ import annotations

from pathlib import Path

from neuro_evolution.run.experiment import Experiment
from neuro_evolution.run.start_up import WarningLine, say_warnings
from neuro_evolution.run.status import STATUS_FILE
from neuro_evolution.sweep.grid import RunPlan


class StartUpChecks:
    """The checks of runs sharing one pool (``parallel_runs`` open at once); ``program``
    prefixes the warnings."""

    def __init__(self, program: str, parallel_runs: int) -> None:
        self.program = program
        self.parallel_runs = max(1, parallel_runs)
        self.warned: set[WarningLine] = set()

    def check(self, plan: RunPlan, experiment: Experiment) -> None:
        """Check ``experiment``, the run of ``plan``; print the warnings not printed yet."""
        lines = experiment.check(
            self.program,
            warn=False,
            evaluation=plan.config.evaluation,
            parallel_runs=self.parallel_runs,
        )
        say_warnings([line for line in lines if line not in self.warned])
        self.warned.update(lines)

    def check_new_runs(self, plans: list[RunPlan], directory: Path) -> None:
        """Check every plan whose run directory under ``directory`` holds no run yet (those are
        the directories a sweep makes), before anything is made."""
        for plan in plans:
            if (directory / plan.name / STATUS_FILE).is_file():
                continue  # resumed (or skipped) when it opens, and checked then
            experiment = Experiment(plan.config)
            try:
                self.check(plan, experiment)
            finally:
                experiment.close()
