"""The training loop as a library: ``Experiment(config).run()``, one generation per ``step()``.

Data flow of one generation: optimizer.ask() -> genomes -> handler.batch_evaluate(genomes, seeds)
-> raw fitness -> hall of fame -> optimizer.tell(Evaluations) -> log / run directory.
Everything random derives from ``config.random_seed`` (every stream is listed in
:mod:`neuro_evolution.support.seeds`); evaluations depend only on (template, genome, episode
seeds), so the log is identical whichever handler runs it.
"""

from __future__ import annotations

import shutil
import time
import warnings
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from neuro_evolution.brains.base import BrainConfig, BrainTemplate, make_template
from neuro_evolution.config.tree import ExperimentConfig, config_to_dict
from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.core.normalization import ObservationScaler, ObservationStatistics
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.runner import (
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
)
from neuro_evolution.evaluation.episodes.validation import ValidationScore, reached
from neuro_evolution.evaluation.pools import handler_from_config
from neuro_evolution.evaluation.pools.base import EvaluationHandler
from neuro_evolution.evaluation.pools.options import EvaluationConfig
from neuro_evolution.measures.base import MeasureConfig
from neuro_evolution.measures.results import result_measures
from neuro_evolution.observers import install_observers
from neuro_evolution.optimizers.base import Evaluations, Optimizer
from neuro_evolution.optimizers.cost import optimizer_cost_warning
from neuro_evolution.optimizers.factory import make_optimizer
from neuro_evolution.optimizers.novelty import NoveltyShaping
from neuro_evolution.run.checkpoint import checkpointer_of, install_checkpoints
from neuro_evolution.run.directory import Candidate, LogRow, RunDirectory
from neuro_evolution.run.lock import LOCK_FILE, RunLock
from neuro_evolution.run.start_up import (
    LIBRARY,
    WarningLine,
    check_start_up,
    dry_run,
    say_warnings,
    start_up_warnings,
)
from neuro_evolution.run.summary import RunSummary, ValidatedGeneration, spent_budget
from neuro_evolution.support.console import score_text
from neuro_evolution.support.errors import PerformanceWarning, UserError
from neuro_evolution.support.seeds import (
    generation_seeds,
    optimizer_seed,
    template_rng,
    validation_seeds,
)


@dataclass(frozen=True)
class EvaluationRequest:
    """Evaluations a generation asks for: one per row of ``genomes``, with a base seed each."""

    genomes: np.ndarray
    seeds: np.ndarray
    context: EvaluationContext


# The optimizer's linear algebra runs on one BLAS thread. OpenBLAS splits e.g. CMA-ES's eigh
# differently for 1 and 2 threads, and the results differ in the last bits, so a run must not
# depend on the machine's thread count. One thread also keeps it from fighting busy workers for
# the cores. What was measured: docs/measurements.md.
_BLAS = ThreadpoolController()


def optimizer_math() -> Any:
    """Context in which this process's BLAS uses one thread."""
    return _BLAS.limit(limits=1, user_api="blas")


GenerationWork = Generator[EvaluationRequest, list[EvaluationResult], LogRow]


def run_generation(
    work: GenerationWork,
    evaluate: Callable[[np.ndarray, np.ndarray, EvaluationContext], list[EvaluationResult]],
) -> LogRow:
    """Drive ``work`` to its end, answering every request with ``evaluate``; its log row."""
    request = next(work)
    while True:
        try:
            request = work.send(evaluate(request.genomes, request.seeds, request.context))
        except StopIteration as stop:
            return stop.value


def template_for_env(
    environment: EnvironmentConfig, brain: BrainConfig, rng: np.random.Generator
) -> BrainTemplate:
    """The template of ``brain`` for the spaces of ``environment`` (an env is made and closed)."""
    env = environment.make()
    try:
        return make_template(brain, env.observation_space, env.action_space, rng)
    finally:
        env.close()


def build_template(config: ExperimentConfig) -> BrainTemplate:
    """The experiment's template: same config and seed -> the same masks."""
    return template_for_env(config.environment, config.brain, template_rng(config.random_seed))


def run_measures(config: ExperimentConfig, optimizer: Optimizer) -> tuple[MeasureConfig, ...]:
    """The per-episode measures the run's evaluations compute (() for most optimizers); an
    optimizer that selects on measures cannot be combined with novelty search."""
    measures = optimizer.measure_configs()
    if measures and config.novelty is not None:
        raise ConfigError(
            "novelty",
            f"optimizer {config.optimizer.type_name()} selects on per-episode measures; "
            "it cannot be combined with novelty search: set novelty to null",
        )
    return measures


def earlier_files(path: Path) -> list[Path]:
    """What ``path`` holds besides its lock file (an earlier run's files)."""
    return [entry for entry in path.iterdir() if entry.name != LOCK_FILE] if path.is_dir() else []


def refuse_or_clear(path: Path, overwrite: bool) -> None:
    """A new run goes into an empty directory: refuse one holding files, or (``overwrite``)
    delete them."""
    files = earlier_files(path)
    if files and not overwrite:
        raise UserError(
            f"{path}: holds an earlier run ({len(files)} files, e.g. {sorted(files)[0].name}); "
            f"continue it with resume_experiment({str(path)!r}) (or python -m "
            f"neuro_evolution.train --resume {path}), pass overwrite=True to replace it, or "
            "choose another run_dir"
        )
    for entry in files:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


class Experiment:
    """One training run. It checks at construction what building it needs (config, template,
    optimizer, a dry run), and with :meth:`check` the rest of the set-up checks
    (:mod:`neuro_evolution.run.start_up`), before a new run directory is attached or the
    handler starts, whichever comes first.

    With ``run_dir`` it writes what ``train`` writes there (config, log, candidate, hall of
    fame, plot, checkpoints and ``training_status.json``), so ``resume_experiment(run_dir)`` and
    ``train --resume`` continue it; a directory that already holds files is refused unless
    ``overwrite`` is true. It holds the directory's lock (:mod:`neuro_evolution.run.lock`) until
    :meth:`close`.
    """

    def __init__(
        self,
        config: ExperimentConfig,
        run_dir: str | Path | None = None,
        handler: EvaluationHandler | None = None,
        quiet: bool = True,
        overwrite: bool = False,
    ):
        self.config = config
        self.quiet = quiet
        self.template = build_template(config)
        self.optimizer: Optimizer = make_optimizer(
            config.optimizer,
            self.template.genome_size,
            optimizer_seed(config.random_seed),
            self.template.gene_units(),
        )
        measures = run_measures(config, self.optimizer)
        self.spec = RunnerSpec(
            environment=config.environment,
            episode_runner=config.episode_runner,
            novelty=config.novelty,
            observation_normalization=config.observation_normalization,
            imports=config.imports,
            max_lanes=config.evaluation.max_lanes,
            measures=measures,
        )
        self.observation_statistics = self._observation_statistics()
        dry_run(self.template, self.spec, f"optimizer.{self.optimizer.MEASURES_FIELD}")
        if measures and self.observation_statistics:
            self.optimizer.keep_scalers(self.observation_statistics.size)
        self.hall_of_fame = HallOfFame(
            config.hall_of_fame_size,
            self.template.genome_size,
            observation_size=self.observation_statistics.size if self.observation_statistics else 0,
        )
        # the fitness-shaping step between evaluations and optimizer (checkpointed as "novelty")
        self.novelty = NoveltyShaping(config.novelty) if config.novelty is not None else None
        self.generation = 0
        self.train_past_target = False  # True: reaching validation.target does not end the run
        self.log: list[LogRow] = []
        self.elapsed_before = 0.0  # wall time of earlier sessions of this run (resume)
        self._owns_handler = handler is None
        self.handler = handler if handler is not None else handler_from_config(config.evaluation)
        # the section the handler runs, for the start-up checks (None: a handler passed in)
        self.handler_section = config.evaluation if handler is None else None
        self.checked = False  # whether check() ran
        self._started = False
        self._cost_checked = False
        self._clock_start = 0.0
        self.after_generation: list[Callable[[Experiment], None]] = []
        self.on_close: list[Callable[[Experiment], None]] = []  # e.g. observers finishing up
        self.run_directory: RunDirectory | None = None
        self.lock: RunLock | None = None
        if run_dir is not None:
            self.attach_run_directory(run_dir, overwrite=overwrite)

    def _observation_statistics(self) -> ObservationStatistics | None:
        """Running statistics when observations are normalized (1-D Box observations only)."""
        section = self.config.observation_normalization
        if section is None:
            return None
        env = self.config.environment.make()
        try:
            space = env.observation_space
        finally:
            env.close()
        shape = getattr(space, "shape", None)
        if type(space).__name__ != "Box" or shape is None or len(shape) != 1:
            raise ConfigError(
                "observation_normalization",
                f"needs a one-dimensional Box observation space; {self.config.environment.id} "
                f"has {space}: set observation_normalization to null, or flatten the "
                "observations first",
            )
        return ObservationStatistics(section, int(shape[0]))

    def attach_run_directory(
        self,
        run_dir: str | Path,
        overwrite: bool = False,
        should_stop: Callable[[], bool] | None = None,
        resumed: list[dict[str, Any]] | None = None,
        lock: RunLock | None = None,
    ) -> None:
        """Write results and checkpoints into ``run_dir`` from now on (the resolved config at
        once), holding its lock (``lock``, or one taken now). A new run needs an empty directory
        (``overwrite``: its files are deleted) and passes :meth:`check` first; ``resumed`` lists
        the checkpoints of the run being continued. ``should_stop`` is polled after each
        generation (see Checkpointer)."""
        if resumed is None and not self.checked:
            self.check()
        path = Path(run_dir)
        lock = lock if lock is not None else RunLock.acquire(path)
        try:
            if resumed is None:
                refuse_or_clear(path, overwrite)
            self._attach(path)
            install_checkpoints(self, resumed, should_stop)
        except BaseException:
            lock.release()
            raise
        self.lock = lock

    def _attach(self, path: Path) -> None:
        self.run_directory = RunDirectory(path, title=self.config.environment.label)
        self.run_directory.write_config(config_to_dict(self.config))
        self.run_directory.writers += self.optimizer.run_files(
            self.run_directory.path, self.template, self.config.environment.label
        )
        if self.config.observers:
            install_observers(self, self.run_directory.path)

    @property
    def done(self) -> bool:
        """Whether ``number_generations`` generations have run, a budget (``max_env_steps``,
        ``max_evaluations``) is spent, or validation reached its target (unless
        ``train_past_target``: a solved run extended with ``--generations``)."""
        solved = self.solved is not None and not self.train_past_target
        spent = self.budget_spent(self.env_steps_total, self.evaluations_total)
        return self.generation >= self.config.number_generations or spent or solved

    @property
    def env_steps_total(self) -> int:
        """Training env steps of the generations logged so far."""
        return self.log[-1].env_steps_total if self.log else 0

    @property
    def evaluations_total(self) -> int:
        """Training evaluations (genomes scored) of the generations logged so far."""
        return sum(row.evaluations for row in self.log)

    def spent_budget(self, env_steps_total: int, evaluations_total: int) -> str | None:
        """The budget that ``env_steps_total`` training env steps and ``evaluations_total``
        training evaluations reach: ``"max_env_steps"``, ``"max_evaluations"`` or None."""
        config = self.config
        return spent_budget(
            config.max_env_steps, config.max_evaluations, env_steps_total, evaluations_total
        )

    def budget_spent(self, env_steps_total: int, evaluations_total: int) -> bool:
        """Whether the training so far reaches ``max_env_steps`` or ``max_evaluations``."""
        return self.spent_budget(env_steps_total, evaluations_total) is not None

    @property
    def solved(self) -> LogRow | None:
        """The log row of the first validation that reached ``validation.target`` (or None)."""
        section = self.config.validation
        if section is None or section.target is None:
            return None
        return next((row for row in self.log if reached(row.validation_mean, section.target)), None)

    def observation_scaler(self) -> ObservationScaler | None:
        """The frozen normalization the next generation's evaluations apply (None: off)."""
        if self.observation_statistics is None:
            return None
        return self.observation_statistics.scaler()

    def candidate(self) -> Candidate:
        """The genome the run stands behind now: the optimizer's center inside the bounds
        (:meth:`Optimizer.center_in_bounds`), else the HoF best."""
        center = self.optimizer.center_in_bounds()
        if center is not None:
            own = self.optimizer.center_scaler()
            return Candidate(
                self.optimizer.CANDIDATE_SOURCE,
                center,
                self.generation,
                own or self.observation_scaler(),
            )
        if len(self.hall_of_fame) == 0:
            raise RuntimeError("no genome evaluated yet: nothing to stand behind")
        return Candidate(
            "hall_of_fame",
            self.hall_of_fame.genomes[0].copy(),
            self.generation,
            self.hall_of_fame.scaler(0),
        )

    def _warn_about_optimizer_cost(self, tell_seconds: float, evaluation_seconds: float) -> None:
        """One PerformanceWarning when the optimizer's tell would dominate each generation."""
        message = optimizer_cost_warning(
            self.config.optimizer.type_name(),
            self.template.genome_size,
            tell_seconds,
            evaluation_seconds,
        )
        if message is not None:
            warnings.warn(message, PerformanceWarning, stacklevel=3)

    def validation_due(self, env_steps_total: int, evaluations_total: int) -> bool:
        """Whether the generation just completed, which brought the training env steps to
        ``env_steps_total`` and the evaluations to ``evaluations_total``, is followed by a
        validation (every ``every_generations``, and the run's last generation)."""
        section = self.config.validation
        if section is None:
            return False
        return (
            self.generation % section.every_generations == 0
            or self.generation >= self.config.number_generations
            or self.budget_spent(env_steps_total, evaluations_total)
        )

    def validation_request(self, candidate: Candidate) -> EvaluationRequest:
        """The held-out episodes that score ``candidate`` (one genome copy per episode)."""
        section = self.config.validation
        assert section is not None
        seeds = validation_seeds(self.config.random_seed, section.episodes)
        genomes = np.repeat(candidate.genome[None, :], len(seeds), axis=0)
        context = EvaluationContext(observation_scaler=candidate.scaler, validation=True)
        return EvaluationRequest(genomes, seeds, context)

    def check(
        self,
        program: str = LIBRARY,
        warn: bool = True,
        evaluation: EvaluationConfig | None = None,
        parallel_runs: int = 1,
    ) -> list[WarningLine]:
        """Run the start-up checks (:mod:`neuro_evolution.run.start_up`) on the run as it is
        now: print (``warn``; ``program`` prefixes the lines) and return the warnings, then
        refuse in one line what cannot work. ``evaluation`` is the section the handler runs
        (default :attr:`handler_section`), shared by ``parallel_runs`` runs. :meth:`start` and
        a new run's :meth:`attach_run_directory` call it when it has not run yet."""
        section = evaluation if evaluation is not None else self.handler_section
        lines = start_up_warnings(self.config, self.template, self.spec, section, program)
        if warn:
            say_warnings(lines)
        check_start_up(
            self.config, self.template, self.spec, self.optimizer, section, parallel_runs
        )
        self.checked = True
        return lines

    def start(self) -> None:
        """Start the handler's workers (done by the first ``step`` if not called), after
        :meth:`check` if it has not run yet."""
        if not self._started:
            if not self.checked:
                self.check()
            self.handler.start(self.template, self.spec)
            self._started = True
            self._clock_start = time.perf_counter()

    @property
    def wall_time(self) -> float:
        """Seconds this run has trained, over all sessions."""
        return self.elapsed_before + (time.perf_counter() - self._clock_start)

    def training_request(
        self, genomes: np.ndarray, scaler: ObservationScaler | None = None
    ) -> EvaluationRequest:
        """Evaluations of ``genomes`` with this generation's episode seeds (and normalization);
        a QD optimizer's ``same_seeds_every_generation`` gives every generation generation 0's."""
        fixed = getattr(self.config.optimizer, "same_seeds_every_generation", False)
        seeds = generation_seeds(
            self.config.random_seed,
            0 if fixed else self.generation,
            len(genomes),
            self.config.episode_runner.fix_seed_for_generation,
        )
        return EvaluationRequest(genomes, seeds, EvaluationContext(observation_scaler=scaler))

    def selection_fitness(self, fitness: np.ndarray, results: list[EvaluationResult]) -> np.ndarray:
        """What the optimizer selects on: raw fitness, or what the shaping step makes of it."""
        if self.novelty is None:
            return fitness
        return self.novelty.shaped(fitness, results)

    def step(self) -> LogRow:
        """Run one generation and return its log row."""
        self.start()
        return run_generation(self.generation_work(), self.handler.batch_evaluate)

    def generation_work(self) -> GenerationWork:
        """One generation as a coroutine: it yields the evaluations it needs (the population,
        then the validation when due), is sent their results, and returns the log row.

        ``step`` answers each request on the run's handler; a sweep answers many runs' requests
        on one shared pool. Both run this same code, so their results are identical.
        """
        with optimizer_math():
            genomes = self.optimizer.ask()
        request = self.training_request(genomes, self.observation_scaler())
        started = time.perf_counter()
        results = yield request
        fitness = self.tell(request, results, time.perf_counter() - started)
        env_steps = int(sum(r.steps for r in results))
        generation = self.generation
        self.generation += 1
        candidate = self.candidate()
        score = None
        evaluations_total = self.evaluations_total + len(genomes)
        if self.validation_due(self.env_steps_total + env_steps, evaluations_total):
            validation = yield self.validation_request(candidate)
            score = ValidationScore.from_results(self.generation, validation)
        row = self.log_row(generation, fitness, env_steps, score)
        self.log.append(row)
        self.write_generation(candidate.with_score(score), score)
        for hook in self.after_generation:
            hook(self)
        return row

    def tell(
        self,
        request: EvaluationRequest,
        results: list[EvaluationResult],
        evaluation_seconds: float,
    ) -> np.ndarray:
        """Record the population's results (hall of fame, optimizer, observation statistics);
        their raw fitness."""
        genomes, scaler = request.genomes, request.context.observation_scaler
        if len(results) != len(genomes):
            raise RuntimeError(
                f"handler returned {len(results)} results for {len(genomes)} genomes"
            )
        fitness = np.array([r.fitness for r in results], dtype=np.float64)
        self.hall_of_fame.update(genomes, fitness, self.generation, scaler)
        told = time.perf_counter()
        measures = self.spec.measures
        evaluations = Evaluations(
            fitness=self.selection_fitness(fitness, results),
            hall_of_fame=self.hall_of_fame,
            measures=result_measures(results, len(measures)) if measures else None,
            seeds=np.asarray(request.seeds, dtype=np.int64),
            generation=self.generation,
            scaler=scaler,
        )
        with optimizer_math():
            self.optimizer.tell(evaluations)
        if not self._cost_checked:  # the first generation of this session measures the cost
            self._cost_checked = True
            self._warn_about_optimizer_cost(time.perf_counter() - told, evaluation_seconds)
        if self.observation_statistics is not None:
            self.observation_statistics.merge([r.observation_stats for r in results])
        return fitness

    def log_row(
        self, generation: int, fitness: np.ndarray, env_steps: int, score: ValidationScore | None
    ) -> LogRow:
        """The log row of ``generation``: fitness statistics, validation, the optimizer's own
        columns."""
        return LogRow(
            generation=generation,
            evaluations=len(fitness),
            env_steps=env_steps,
            env_steps_total=self.env_steps_total + env_steps,
            fitness_min=float(fitness.min()),
            fitness_mean=float(fitness.mean()),
            fitness_max=float(fitness.max()),
            fitness_std=float(fitness.std()),
            best_so_far=self.hall_of_fame.best_fitness,
            validation_mean=None if score is None else score.mean,
            validation_std=None if score is None else score.std,
            validation_min=None if score is None else score.min,
            validation_steps=None if score is None else score.steps,
            wall_time=round(self.wall_time, 4),
            metrics=tuple(
                (name, float(value)) for name, value in self.optimizer.log_metrics().items()
            ),
        )

    def write_generation(self, candidate: Candidate, score: ValidationScore | None) -> None:
        """Write the generation into the run directory (if any). The candidate file keeps the
        last validated candidate (every one when the run does not validate)."""
        if self.run_directory is None:
            return
        keep = score is not None or self.done or self.config.validation is None
        self.run_directory.write_generation(
            self.log, self.hall_of_fame, self.template, candidate if keep else None
        )

    def run(self, progress: bool | None = None) -> RunSummary:
        """Run until ``number_generations``; returns a summary. Closes a handler it made."""
        from tqdm import tqdm

        show = not self.quiet if progress is None else progress
        bar = tqdm(
            total=self.config.number_generations,
            initial=self.generation,
            disable=not show,
            unit="gen",
            dynamic_ncols=True,
        )
        validated = ""
        try:
            while not self.done:
                row = self.step()
                if row.validation_mean is not None:
                    validated = score_text(row.validation_mean)
                postfix = {"mean": f"{row.fitness_mean:.4g}"}
                if validated:
                    postfix["validation"] = validated
                postfix.update((name, f"{value:.4g}") for name, value in row.metrics)
                bar.set_postfix(postfix)
                bar.update(1)
        except BaseException:
            bar.close()
            self.close(failing=True)  # the error that stopped the run goes up, not a save's
            raise
        bar.close()
        self.close()
        return self.summary()

    def _save_completed(self, failing: bool) -> None:
        checkpointer = checkpointer_of(self)
        if checkpointer is None:
            return
        try:
            checkpointer.save_completed()
        except Exception:
            if not failing:
                raise

    def summary(self) -> RunSummary:
        """Generations run, the last validation, time and env steps to the target, results."""
        validated = [row for row in self.log if row.validation_mean is not None]
        last = validated[-1] if validated else None
        solved = self.solved
        section = self.config.validation
        return RunSummary(
            generations=self.generation,
            best_fitness=self.hall_of_fame.best_fitness,
            env_steps=int(sum(row.env_steps for row in self.log)),
            wall_time=self.wall_time if self._started else self.elapsed_before,
            run_dir=str(self.run_directory.path) if self.run_directory else None,
            validation=None if last is None else ValidatedGeneration.from_row(last),
            episodes=section.episodes if section else 0,
            target=section.target if section else None,
            handler_statistics=self.handler.statistics(),
            solved=None if solved is None else ValidatedGeneration.from_row(solved),
            metrics=self.log[-1].metrics if self.log else (),
            budget=self.config.max_env_steps,
            evaluations=self.evaluations_total,
            evaluation_budget=self.config.max_evaluations,
        )

    def close(self, failing: bool = False) -> None:
        """Checkpoint the last completed generation if it is not on disk yet (a library run
        stopped after any ``step`` resumes from there), draw the last plot, run the ``on_close``
        hooks (once), release the run directory, and close the handler if this experiment made
        it. ``failing``: an error is on its way up; a failed save does not replace it."""
        hooks, self.on_close = self.on_close, []
        try:
            self._save_completed(failing)
            if self.run_directory is not None:
                self.run_directory.finish(self.log)
            for hook in hooks:
                hook(self)
        finally:
            if self.lock is not None:
                self.lock.release()
            if self._owns_handler:
                self.handler.close()
