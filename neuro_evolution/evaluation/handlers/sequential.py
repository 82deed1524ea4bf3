"""The sequential handler: one runner and one reused brain in the calling process."""

from __future__ import annotations

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episode import (
    TRAINING,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
)
from neuro_evolution.evaluation.handlers.base import (
    EvaluationHandler,
    WorkerState,
    register_handler,
)


@register_handler("sequential")
class SequentialHandler(EvaluationHandler):
    """Evaluates genomes one after another in this process."""

    def __init__(self) -> None:
        self._worker: WorkerState | None = None

    def start(self, template: BrainTemplate, spec: RunnerSpec) -> None:
        self._worker = WorkerState(template, spec)

    def batch_evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        if self._worker is None:
            raise RuntimeError("SequentialHandler.start() was not called")
        return self._worker.evaluate(genomes, seeds, context)

    def describe(self) -> str:
        """The handler line."""
        return "sequential: one env in this process"

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None
