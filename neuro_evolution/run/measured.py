"""What a run does differently for a measured optimizer (QD, NSGA2 with objectives; see
:mod:`neuro_evolution.optimizers.measured`): the measures it asks for, its tell, its candidate,
its log columns and its files. For any other optimizer, and for NSGA2 without objectives, every
function here is a no-op, so those runs are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.config.schema import ConfigError
from neuro_evolution.config.tree import ExperimentConfig
from neuro_evolution.evaluation.episode import EvaluationResult
from neuro_evolution.evaluation.measure_results import result_measures
from neuro_evolution.hall_of_fame import HallOfFame
from neuro_evolution.measures import MeasureConfig
from neuro_evolution.normalization import ObservationScaler
from neuro_evolution.optimizers.base import Optimizer
from neuro_evolution.optimizers.measured import Evaluations, MeasuredOptimizer, measures_of
from neuro_evolution.optimizers.nsga2 import NSGA2
from neuro_evolution.pareto_files import ParetoWriter
from neuro_evolution.qd.base import QdOptimizer
from neuro_evolution.qd.files import ArchiveWriter
from neuro_evolution.run.directory import Candidate, RunDirectory


def run_measures(config: ExperimentConfig, optimizer: Optimizer) -> tuple[MeasureConfig, ...]:
    """The per-episode measures the run's evaluations compute (() for most optimizers); a
    measured optimizer cannot be combined with novelty search (one line on ``novelty``)."""
    measures = measures_of(optimizer)
    if measures and config.novelty is not None:
        raise ConfigError(
            "novelty",
            f"optimizer {config.optimizer.type_name()} selects on per-episode measures; "
            "it cannot be combined with novelty search: set novelty to null",
        )
    return measures


def is_measured(optimizer: Optimizer) -> bool:
    """Whether the run tells ``optimizer`` per-episode measures (it names some); an NSGA2
    without objectives is told its fitness like any other optimizer."""
    return isinstance(optimizer, MeasuredOptimizer) and bool(optimizer.measure_configs())


def measures_path(optimizer: Optimizer) -> str:
    """Where the run's measures are configured (``optimizer.descriptors``, ``.objectives``)."""
    field = getattr(optimizer, "MEASURES_FIELD", "descriptors")
    return f"optimizer.{field}"


def tell_measured(
    optimizer: MeasuredOptimizer,
    fitness: np.ndarray,
    hall_of_fame: HallOfFame,
    results: Sequence[EvaluationResult],
    seeds: np.ndarray,
    generation: int,
    scaler: ObservationScaler | None,
) -> None:
    """The measured optimizer's tell with the generation's measures (submission order)."""
    evaluations = Evaluations(
        measures=result_measures(results, len(optimizer.measure_configs())),
        seeds=np.asarray(seeds, dtype=np.int64),
        generation=generation,
        scaler=scaler,
    )
    optimizer.tell_evaluations(fitness, hall_of_fame, evaluations)


def measured_candidate(
    optimizer: Optimizer, generation: int, scaler: ObservationScaler | None
) -> Candidate | None:
    """A measured optimizer's candidate (QD: the best elite with the scaler it was evaluated
    with); None for other optimizers or before there is one."""
    if not isinstance(optimizer, MeasuredOptimizer):
        return None
    center = optimizer.center()
    if center is None:
        return None
    own = optimizer.center_scaler()
    return Candidate(optimizer.CANDIDATE_SOURCE, center, generation, own or scaler)


def optimizer_metrics(optimizer: Optimizer) -> tuple[tuple[str, float], ...]:
    """A measured optimizer's own log columns (QD: coverage, qd_score, qd_best)."""
    if not isinstance(optimizer, MeasuredOptimizer):
        return ()
    return tuple((name, float(value)) for name, value in optimizer.log_metrics().items())


def attach_optimizer_files(
    optimizer: Optimizer, directory: RunDirectory, template: BrainTemplate, title: str
) -> None:
    """Let the run directory write the optimizer's own files (QD: archive.npz, archive.png;
    NSGA2 with objectives: pareto.npz, pareto.png)."""
    if isinstance(optimizer, QdOptimizer):
        qd = optimizer
        directory.writers.append(ArchiveWriter(directory.path, lambda: qd.archive, template, title))
    elif isinstance(optimizer, NSGA2) and is_measured(optimizer):
        directory.writers.append(ParetoWriter(directory.path, optimizer, template, title))
