"""The end-of-run summary as records: what ``Experiment.run`` returns and ``train`` prints."""

from __future__ import annotations

import dataclasses

from neuro_evolution.evaluation.pools.base import HandlerStatistics
from neuro_evolution.run.directory import LogRow


def spent_budget(
    max_env_steps: int | None,
    max_evaluations: int | None,
    env_steps_total: int,
    evaluations_total: int,
) -> str | None:
    """The budget that the training so far reaches (``"max_env_steps"`` first, then
    ``"max_evaluations"``), or None; a budget of None is never reached."""
    if max_env_steps is not None and env_steps_total >= max_env_steps:
        return "max_env_steps"
    if max_evaluations is not None and evaluations_total >= max_evaluations:
        return "max_evaluations"
    return None


@dataclasses.dataclass(frozen=True)
class ValidatedGeneration:
    """A generation that ended with a held-out validation: its score, and the run's wall time
    and training env steps up to it."""

    generation: int  # generations completed (counted from 1)
    mean: float
    std: float
    min: float
    wall_time: float
    env_steps: int  # training env steps of the run so far (``env_steps_total``)

    @classmethod
    def from_row(cls, row: LogRow) -> ValidatedGeneration:
        """The validation of a log row that has one."""
        mean, std, low = row.validation_mean, row.validation_std, row.validation_min
        if mean is None or std is None or low is None:
            raise ValueError(f"generation {row.generation} has no validation")
        return cls(
            generation=row.generation + 1,
            mean=mean,
            std=std,
            min=low,
            wall_time=row.wall_time,
            env_steps=row.env_steps_total,
        )


@dataclasses.dataclass(frozen=True)
class RunSummary:
    """Generations run, the last validation, time and env steps to the target, results."""

    generations: int
    best_fitness: float
    env_steps: int  # training env steps of all generations
    wall_time: float
    run_dir: str | None
    validation: ValidatedGeneration | None  # the last validation
    episodes: int  # held-out episodes per validation (0: no validation)
    target: float | None  # validation.target
    handler_statistics: HandlerStatistics  # e.g. the jax handler's compilations
    solved: ValidatedGeneration | None  # the first validation that reached the target
    # the optimizer's own log columns of the last generation (QD: coverage, qd_score, qd_best)
    metrics: tuple[tuple[str, float], ...] = ()
    budget: int | None = None  # max_env_steps
    evaluations: int = 0  # training evaluations (genomes scored) of all generations
    evaluation_budget: int | None = None  # max_evaluations

    @property
    def spent_budget(self) -> str | None:
        """The budget the run's training reached: "max_env_steps", "max_evaluations" or None."""
        return spent_budget(self.budget, self.evaluation_budget, self.env_steps, self.evaluations)

    @property
    def budget_spent(self) -> bool:
        """Whether the run's training reached its ``max_env_steps`` or ``max_evaluations``."""
        return self.spent_budget is not None
