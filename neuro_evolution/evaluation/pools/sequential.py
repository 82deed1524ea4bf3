"""The sequential handler: one runner and one reused brain in the calling process."""

from __future__ import annotations

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.evaluation.episodes.runner import RunnerSpec
from neuro_evolution.evaluation.pools.base import WorkerState, register_handler
from neuro_evolution.evaluation.pools.in_process import InProcessHandler


@register_handler("sequential")
class SequentialHandler(InProcessHandler):
    """Evaluates genomes one after another in this process (a sweep's runs take turns)."""

    def make_state(self, template: BrainTemplate, spec: RunnerSpec) -> WorkerState:
        return WorkerState(template, spec)

    def pool_label(self) -> str:
        return self.describe()

    def describe(self) -> str:
        """The handler line."""
        return "sequential: one env in this process"
