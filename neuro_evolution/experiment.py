"""The training loop as a library: ``Experiment(config).run()``, one generation per ``step()``.

Data flow of one generation: optimizer.ask() -> genomes -> handler.batch_evaluate(genomes, seeds)
-> raw fitness -> hall of fame -> optimizer.tell(selection fitness) -> log / run directory.
Everything random derives from ``config.random_seed`` (every stream is listed in
:mod:`neuro_evolution.seeds`); evaluations depend only on (template, genome, episode seeds), so
the log is identical whichever handler runs it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.brains.base import BrainConfig, BrainTemplate, make_template
from neuro_evolution.config import ExperimentConfig, config_to_dict
from neuro_evolution.evaluation.environment import EnvironmentConfig
from neuro_evolution.evaluation.episode import EvaluationResult, RunnerSpec
from neuro_evolution.evaluation.handlers import handler_from_config
from neuro_evolution.evaluation.handlers.base import EvaluationHandler
from neuro_evolution.hall_of_fame import HallOfFame
from neuro_evolution.novelty import NoveltyArchive
from neuro_evolution.optimizers.base import Optimizer, make_optimizer
from neuro_evolution.results import LogRow, RunDirectory
from neuro_evolution.seeds import generation_seeds, optimizer_seed, template_rng


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


class Experiment:
    """One training run. Checks everything it can at construction (dry run included)."""

    def __init__(
        self,
        config: ExperimentConfig,
        run_dir: str | Path | None = None,
        handler: EvaluationHandler | None = None,
        quiet: bool = True,
    ):
        self.config = config
        self.quiet = quiet
        self.template = build_template(config)
        self.spec = RunnerSpec(
            environment=config.environment,
            episode_runner=config.episode_runner,
            novelty=config.novelty,
        )
        runner = self.spec.make()
        try:
            runner.dry_run(self.template)
        finally:
            runner.close()
        self.optimizer: Optimizer = make_optimizer(
            config.optimizer,
            self.template.genome_size,
            optimizer_seed(config.random_seed),
        )
        self.hall_of_fame = HallOfFame(config.hall_of_fame_size, self.template.genome_size)
        self.novelty = NoveltyArchive(config.novelty) if config.novelty is not None else None
        self.generation = 0
        self.log: list[dict[str, Any]] = []
        self.elapsed_before = 0.0  # wall time of earlier sessions of this run (resume)
        self._owns_handler = handler is None
        self.handler = handler if handler is not None else handler_from_config(config.evaluation)
        self._started = False
        self._clock_start = 0.0
        self.run_directory: RunDirectory | None = None
        if run_dir is not None:
            self.attach_run_directory(run_dir)
        self.after_generation: list[Callable[[Experiment], None]] = []

    def attach_run_directory(self, run_dir: str | Path) -> None:
        """Write results into ``run_dir`` from now on (the resolved config at once)."""
        self.run_directory = RunDirectory(Path(run_dir), title=self.config.environment.id)
        self.run_directory.write_config(config_to_dict(self.config))

    @property
    def done(self) -> bool:
        """Whether ``number_generations`` generations have run."""
        return self.generation >= self.config.number_generations

    def start(self) -> None:
        """Start the handler's workers (done by the first ``step`` if not called)."""
        if not self._started:
            self.handler.start(self.template, self.spec)
            self._started = True
            self._clock_start = time.perf_counter()

    @property
    def wall_time(self) -> float:
        """Seconds this run has trained, over all sessions."""
        return self.elapsed_before + (time.perf_counter() - self._clock_start)

    def evaluate(self, genomes: np.ndarray) -> list[EvaluationResult]:
        """Evaluate genomes with this generation's episode seeds."""
        seeds = generation_seeds(
            self.config.random_seed,
            self.generation,
            len(genomes),
            self.config.episode_runner.fix_seed_for_generation,
        )
        results = self.handler.batch_evaluate(genomes, seeds)
        if len(results) != len(genomes):
            raise RuntimeError(
                f"handler returned {len(results)} results for {len(genomes)} genomes"
            )
        return results

    def selection_fitness(self, fitness: np.ndarray, results: list[EvaluationResult]) -> np.ndarray:
        """What the optimizer selects on: raw fitness, or its combination with novelty."""
        if self.novelty is None:
            return fitness
        behaviors = np.stack([r.behavior for r in results])
        return self.novelty.selection_fitness(fitness, behaviors)

    def step(self) -> dict[str, Any]:
        """Run one generation and return its log row."""
        self.start()
        genomes = self.optimizer.ask()
        results = self.evaluate(genomes)
        fitness = np.array([r.fitness for r in results], dtype=np.float64)
        self.hall_of_fame.update(genomes, fitness, self.generation)
        self.optimizer.tell(self.selection_fitness(fitness, results), self.hall_of_fame)
        row = LogRow(
            generation=self.generation,
            evaluations=len(results),
            env_steps=int(sum(r.steps for r in results)),
            fitness_min=float(fitness.min()),
            fitness_mean=float(fitness.mean()),
            fitness_max=float(fitness.max()),
            fitness_std=float(fitness.std()),
            best_so_far=self.hall_of_fame.best_fitness,
            wall_time=round(self.wall_time, 4),
        ).to_dict()
        self.log.append(row)
        self.generation += 1
        if self.run_directory is not None:
            self.run_directory.write_generation(
                self.log, self.hall_of_fame, self.template, final=self.done
            )
        for hook in self.after_generation:
            hook(self)
        return row

    def run(self, progress: bool | None = None) -> dict[str, Any]:
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
        try:
            while not self.done:
                row = self.step()
                bar.set_postfix(best=f"{row['best_so_far']:.4g}", mean=f"{row['fitness_mean']:.4g}")
                bar.update(1)
        finally:
            bar.close()
            self.close()
        return self.summary()

    def summary(self) -> dict[str, Any]:
        """Generations run, best fitness, env steps and where results are."""
        return {
            "generations": self.generation,
            "best_fitness": self.hall_of_fame.best_fitness,
            "env_steps": int(sum(row["env_steps"] for row in self.log)),
            "wall_time": self.wall_time if self._started else self.elapsed_before,
            "run_dir": str(self.run_directory.path) if self.run_directory else None,
        }

    def close(self) -> None:
        """Close the handler if this experiment made it."""
        if self._owns_handler:
            self.handler.close()
