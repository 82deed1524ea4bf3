"""The ``jax`` handler: a whole generation as one compiled XLA program on the device JAX finds.

``--handler jax`` needs a JAX env (``environment.backend`` gymnax or brax) and a brain type with a
JAX batch brain (CTRNN, FFNN, LSTM); anything else is refused at start-up in one line, and so is
a run without the ``jax`` extra. The program (:mod:`neuro_evolution.evaluation.jax.program`) is
compiled once per input shape -- once for the population and once for the validation batch of a
run -- and reused every generation; :meth:`JaxHandler.describe` and the summary report how many
compilations took how long, and ``evaluation_seconds`` excludes them, so steps/s do too.

Results are a pure function of (template, genome, seeds, context) on a given device and JAX
version; checkpoints and resume are the run's, as for every handler. Each Dask or mp worker can
run the same state (``evaluation.vectorize: "jax"``): :class:`JaxWorkerState`.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.core.importing import import_extra
from neuro_evolution.evaluation.episodes.runner import (
    TRAINING,
    EpisodeOutcome,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
    recorded_fields,
    template_shapes,
)
from neuro_evolution.evaluation.pools.base import (
    HandlerStatistics,
    check_batch,
    register_handler,
)
from neuro_evolution.evaluation.pools.in_process import InProcessHandler
from neuro_evolution.evaluation.pools.options import (
    EvaluationConfig,
    option_path,
)
from neuro_evolution.support.errors import ConfigError
from neuro_evolution.support.seeds import episode_seeds

PRECISIONS = ("float32", "float64")


def check_jax_run(template: BrainTemplate, spec: RunnerSpec, precision: str) -> Any:
    """The ``jax`` module, once what a run on the JAX path needs from the config and the
    machine is there (one-line errors): the jax extra, a precision, a JAX form of every
    recorder of the spec (novelty's behaviour, the measures) and of the brain type."""
    jax = import_extra("jax", "jax", option_path("handler"))
    if precision not in PRECISIONS:
        raise ConfigError(
            option_path("precision"), f"must be float32 or float64, got {precision!r}"
        )
    shapes = template_shapes(template)
    for recorder in spec.recorders():  # novelty's behaviour, the measures, a user's recorders
        lacking = recorder.missing_form("jax_form", shapes)
        if lacking is not None:
            raise lacking
    missing = template.missing_form("jax_brain")
    if missing is not None:
        raise missing
    return jax


class JaxWorkerState:
    """A worker's long-lived JAX state: env, brain functions, compiled programs (the API of
    :class:`~neuro_evolution.evaluation.pools.base.WorkerState`)."""

    def __init__(self, template: BrainTemplate, spec: RunnerSpec, precision: str = "float32"):
        self.jax = check_jax_run(template, spec, precision)
        from neuro_evolution.evaluation.jax.envs import reset_keys
        from neuro_evolution.evaluation.jax.program import GenerationProgram

        self.template, self.spec, self.precision = template, spec, precision
        self._reset_keys = reset_keys
        self.recorders = spec.recorders()
        shapes = template_shapes(template)
        # each recorder's JAX form, or its one-line ConfigError
        recordings = tuple(recorder.jax_form(shapes) for recorder in self.recorders)
        with self._precision():
            env = spec.environment.make_jax_env()
            brain = template.jax_brain()  # its type's JAX form, or a one-line ConfigError
            dtype = self.jax.numpy.float64 if precision == "float64" else self.jax.numpy.float32
            self.program = GenerationProgram(
                template, brain, env, spec.episode_runner, dtype, recordings
            )
        self.device = str(self.jax.devices()[0])
        self.evaluation_seconds = 0.0  # wall time of evaluations, compilations excluded
        self.env_steps = 0  # env steps of those evaluations (validation included)

    def _precision(self) -> Any:
        return self.jax.enable_x64(self.precision == "float64")

    def evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        """One result per genome: the episodes of EpisodeRunner.run's rules, on the device."""
        genomes, seeds = check_batch(genomes, seeds, self.template.genome_size)
        if genomes.shape[0] == 0:
            return []
        start = time.perf_counter()
        compiling = self.program.compile_seconds
        rules = self.spec.episode_runner
        if context.validation:
            keys = self._reset_keys(seeds)[None]
        else:
            runs = range(rules.number_fitness_runs)
            fixed = rules.training_reset_seeds
            keys = np.stack(
                [self._reset_keys(np.array(episode_seeds(seeds, k, fixed))) for k in runs]
            )
        scaler = context.observation_scaler
        record = not context.validation
        with self._precision():
            params = self.program.brain.params(genomes, self.program.dtype)
            output = self.program.run(
                params,
                keys,
                None if scaler is None else (scaler.mean, scaler.scale, scaler.clip),
                record,
            )
        run = output.episodes
        episodes = [
            EpisodeOutcome(
                episode_return=run.episode_return[k].astype(np.float64),
                steps=run.steps[k].astype(np.int64),
                terminated=run.terminated[k],
                truncated=run.truncated[k],
                cut=run.cut[k],
            )
            for k in range(keys.shape[0])
        ]
        score = rules.score(episodes, training=not context.validation)
        values = [
            recording.finish(out, run.steps)
            for recording, out in zip(self.program.recordings, output.records)
        ]
        results = [
            EvaluationResult(
                fitness=float(score.fitness[i]),
                steps=int(score.steps[i]),
                terminated=int(score.terminated[i]),
                truncated=int(score.truncated[i]),
                **recorded_fields(self.recorders, [value[i].copy() for value in values]),
            )
            for i in range(len(genomes))
        ]
        self.env_steps += int(np.sum(score.steps))
        elapsed = time.perf_counter() - start
        self.evaluation_seconds += elapsed - (self.program.compile_seconds - compiling)
        return results

    def describe(self) -> str:
        program = self.program
        return (
            f"{program.env.name} on {self.device} ({self.precision}), {program.compilations} "
            f"compilations in {program.compile_seconds:.1f} s"
        )

    def close(self) -> None:
        """Nothing to release: compiled programs go with the object."""


@dataclasses.dataclass(frozen=True)
class JaxStatistics(HandlerStatistics):
    """A JAX session: its compilations and their seconds, and the evaluation seconds without
    them with their env steps (validation included), so steps/s exclude compiling."""

    compilations: int
    compile_seconds: float
    evaluation_seconds: float
    env_steps: int

    def summary_lines(self) -> list[str]:
        seconds, steps = self.evaluation_seconds, self.env_steps
        rate = f" = {steps / seconds:.4g} env steps/s" if seconds > 0 else ""
        return [
            f"jax: {self.compilations} compilations in {self.compile_seconds:.1f} s; "
            f"evaluation without them: {steps} env steps (validation included) in "
            f"{seconds:.1f} s{rate} (this session)"
        ]


@register_handler("jax")
class JaxHandler(InProcessHandler):
    """Evaluates the whole batch in this process as one compiled program (CPU, GPU or TPU); a
    sweep's runs take turns, each with its own compiled programs."""

    def __init__(self, precision: str = "float32") -> None:
        super().__init__()
        self.precision = precision
        self._statistics = HandlerStatistics()  # kept after close, for the summary

    @classmethod
    def from_config(cls, section: EvaluationConfig) -> JaxHandler:
        return cls(precision=section.precision)

    def make_state(self, template: BrainTemplate, spec: RunnerSpec) -> JaxWorkerState:
        return JaxWorkerState(template, spec, self.precision)

    def pool_label(self) -> str:
        return f"jax: one compiled program per request in this process ({self.precision})"

    def start(self, template: BrainTemplate, spec: RunnerSpec) -> None:
        """Register the run (replacing the last one, whose statistics are kept until then)."""
        self._statistics = self.statistics()
        super().start(template, spec)

    def close(self) -> None:
        self._statistics = self.statistics()
        super().close()

    def statistics(self) -> HandlerStatistics:
        """This session's :class:`JaxStatistics` (the last session's after :meth:`close`; the
        empty base record before the first :meth:`start`)."""
        state = self.state
        if not isinstance(state, JaxWorkerState):
            return self._statistics
        program = state.program
        return JaxStatistics(
            compilations=program.compilations,
            compile_seconds=round(program.compile_seconds, 3),
            evaluation_seconds=round(state.evaluation_seconds, 3),
            env_steps=state.env_steps,
        )

    def describe(self) -> str:
        state = self.state
        if not isinstance(state, JaxWorkerState):
            return "JaxHandler (not started)"
        return f"JaxHandler: {state.describe()}"
