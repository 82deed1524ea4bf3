"""Set-up checks in one place: everything that needs only the config, the env's spaces, the
brain template, the optimizer (a copy: its state untouched) and this machine.

* :func:`dry_run`, at the construction of an
  :class:`~neuro_evolution.run.experiment.Experiment` (after the config, the template and the
  optimizer were built): the per-episode measures fit the env, and a brain steps the env once.
* :func:`start_up_warnings` and :func:`check_start_up`, run by :meth:`Experiment.check` with the
  run's state as it is then (a resumed run's restored optimizer): what is legal but most likely
  not meant, one ``warning:`` line each (the template's own warnings, a lockstep run that falls
  back to one individual at a time), then what cannot work, one ``ConfigError`` line (the JAX
  path's requirements, a lockstep wave that cannot fit in memory).

Every entry point runs them before any worker starts and before any run directory exists:
``train`` (a new run, and a resumed one that has generations left), ``sweep`` and ``pbt`` (the
new runs all before the first starts, a resumed one when it opens), and library use
(``Experiment(config, run_dir)``, :meth:`Experiment.attach_run_directory` or the first
:meth:`Experiment.step`). What needs started workers (a Dask cluster reached, its workers'
modules, a worker that cannot make its env) is checked when they start.
"""

from __future__ import annotations

import copy

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.config.tree import ExperimentConfig
from neuro_evolution.evaluation.episodes.runner import RunnerSpec
from neuro_evolution.evaluation.lockstep.handler import fallback_line
from neuro_evolution.evaluation.lockstep.wave_check import (
    check_planned_waves,
    lockstep_chunks,
    lockstep_fallback,
    runs_in_lockstep,
)
from neuro_evolution.evaluation.pools.options import EvaluationConfig
from neuro_evolution.measures.results import check_measures_fit, check_step_measures
from neuro_evolution.optimizers.base import Optimizer
from neuro_evolution.support.console import warning

WarningLine = tuple[str, str]  # (program, text), printed as ``program: warning: text``
LIBRARY = "neuro_evolution"  # the prefix of the lines the library prints by itself


def dry_run(template: BrainTemplate, spec: RunnerSpec, measures_path: str) -> None:
    """Make the run's env once: its per-episode measures (``measures_path`` names them) must
    fit it, and a brain of ``template`` must step it."""
    runner = spec.make()
    try:
        if spec.measures:
            check_measures_fit(spec.measures, runner.env, measures_path)
        runner.dry_run(template)
        if spec.measures:
            check_step_measures(spec.measures, runner.env, measures_path)
    finally:
        runner.close()


def start_up_warnings(
    config: ExperimentConfig,
    template: BrainTemplate,
    spec: RunnerSpec,
    evaluation: EvaluationConfig | None,
    program: str = LIBRARY,
) -> list[WarningLine]:
    """What is legal but most likely not meant: the template's own warnings (``program``'s
    lines) and, for a lockstep ``evaluation``, a fallback to one individual at a time (the
    library's line, as the handlers printed it)."""
    lines = [(program, line) for line in template.start_up_warnings(config.environment.label)]
    reason = "" if evaluation is None else lockstep_fallback(template, spec, evaluation)
    if reason:
        lines.append((LIBRARY, fallback_line(reason)))
    return lines


def say_warnings(lines: list[WarningLine]) -> None:
    """Print each line once, in order."""
    for program, text in dict.fromkeys(lines):
        warning(text, program)


def planned_batch(config: ExperimentConfig, optimizer: Optimizer) -> int:
    """Genomes of the largest evaluation request of a generation: what the optimizer asks for
    now (asked of a copy, so the run's state is untouched), or its configured ``asked_size``."""
    asked = len(copy.deepcopy(optimizer).ask())
    return max(asked, int(getattr(config.optimizer, "asked_size", 0)))


def check_start_up(
    config: ExperimentConfig,
    template: BrainTemplate,
    spec: RunnerSpec,
    optimizer: Optimizer,
    evaluation: EvaluationConfig | None,
    parallel_runs: int = 1,
) -> None:
    """Refuse in one line what the handler ``evaluation`` names cannot do with this run (None:
    a handler not made from a section, whose needs are its own): the JAX path without its
    extra, precision, recorded behaviour or brain form (a Dask worker's whole JAX state is made
    once here); a lockstep wave that cannot fit in memory, for ``parallel_runs`` runs sharing
    the workers."""
    if evaluation is None:
        return
    if evaluation.handler == "jax":
        from neuro_evolution.evaluation.jax.handler import check_jax_run

        check_jax_run(template, spec, evaluation.precision)
    elif evaluation.handler == "dask" and evaluation.vectorize == "jax":
        from neuro_evolution.evaluation.pools.worker import make_worker_state

        make_worker_state(template, spec, "jax", evaluation.precision).close()
    if not runs_in_lockstep(evaluation):
        return
    planned = spec.max_lanes is None and lockstep_chunks(evaluation, parallel_runs) is not None
    batch = planned_batch(config, optimizer) if planned else 0
    episodes = config.validation.episodes if config.validation is not None else 0
    check_planned_waves(template, spec, evaluation, batch, episodes, parallel_runs)
