"""The recorder contract: every recorder (observation statistics, novelty's behaviour, the
measures, the trace, a user's own) runs in the scalar, lockstep and JAX episode loops alike, and
a form it lacks is refused in one line naming the recorder and the method."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from examples.action_counts import ActionCounts
from helpers import installed, require

from neuro_evolution.brains.base import parse_brain_config
from neuro_evolution.core.normalization import ObservationNormalizationConfig
from neuro_evolution.core.schema import ConfigError, parse
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.runner import (
    EpisodeRunnerConfig,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
    template_shapes,
)
from neuro_evolution.evaluation.episodes.trace import Trace
from neuro_evolution.evaluation.lockstep.handler import VectorizedWorkerState
from neuro_evolution.evaluation.pools.base import WorkerState
from neuro_evolution.measures.base import MeasureConfig
from neuro_evolution.measures.recorder import RESULT_FIELDS
from neuro_evolution.measures.recording import Measures
from neuro_evolution.optimizers.novelty import NoveltyConfig
from neuro_evolution.run.experiment import template_for_env

BRAIN = {"type": "CTRNN", "number_neurons": 4, "delta_t": 0.5}
MEASURES = (
    {"name": "x_last", "source": "observation", "index": 0, "reduce": "last"},
    {"name": "angle_min", "source": "observation", "index": 2, "reduce": "min"},
    {"name": "speed_max", "source": "observation", "index": 1, "reduce": "max"},
    {"name": "action_mean", "source": "action", "reduce": "mean"},
    {"name": "return", "source": "reward", "reduce": "sum"},
    {"name": "first_lean", "source": "observation", "index": 3, "reduce": "first_event",
     "event": [2], "fallback": "last"},
)  # fmt: skip


def novelty(source: str) -> NoveltyConfig:
    options = {"behavior_source": source, "behavioral_interval": 3, "behavioral_max_length": 12}
    return parse(NoveltyConfig, options, "novelty")


# every recorder that has a lockstep form, as the RunnerSpec fields that turn it on
CASES: dict[str, dict[str, Any]] = {
    "observation_stats": {
        "observation_normalization": parse(ObservationNormalizationConfig, {}, "o")
    },
    "behavior_observation": {"novelty": novelty("observation")},
    "behavior_action": {"novelty": novelty("action")},
    "measures": {"measures": tuple(parse(MeasureConfig, m, "m") for m in MEASURES)},
    "user_action_counts": {"extra_recorders": (ActionCounts(2),)},
}
ALL = {**CASES["observation_stats"], **CASES["behavior_action"], **CASES["measures"]}
ALL.update(CASES["user_action_counts"])


def spec_for(backend: str, **fields: Any) -> RunnerSpec:
    environment = {"id": "CartPole-v1", "backend": backend}
    return RunnerSpec(
        environment=parse(EnvironmentConfig, environment, "environment"),
        episode_runner=parse(EpisodeRunnerConfig, {"number_fitness_runs": 3}, "episode_runner"),
        **fields,
    )


def setup(spec: RunnerSpec) -> tuple[Any, np.ndarray, np.ndarray]:
    template = template_for_env(
        spec.environment, parse_brain_config(BRAIN, "brain"), np.random.default_rng(1)
    )
    genomes = np.random.default_rng(2).normal(0.0, 1.0, (6, template.genome_size))
    return template, genomes, np.array([5, 5, 6, 7, 8, 9])


def recorded(result: EvaluationResult) -> dict[str, Any]:
    """Every recorder's value in ``result``, by recorder name."""
    values = {name: getattr(result, name) for name in RESULT_FIELDS}
    values.update(result.records or {})
    return {name: value for name, value in values.items() if value is not None}


def assert_recorded(spec: RunnerSpec, results: list[EvaluationResult]) -> None:
    """Each result holds exactly the spec's recorders' values, not all of them zero."""
    names = {recorder.name for recorder in spec.recorders()}
    for result in results:
        assert set(recorded(result)) == names
    for name in names:
        assert any(np.any(recorded(r)[name]) for r in results), name


@pytest.mark.parametrize("case", [*CASES, "all"])
def test_every_recorder_gives_the_scalar_loops_bits_in_lockstep(case: str) -> None:
    """The lockstep loop (CartPole's native vector env) calls the recorder as the scalar loop
    does: each evaluation's value has the scalar loop's bits; validation records nothing."""
    spec = spec_for("gymnasium", **(ALL if case == "all" else CASES[case]))
    template, genomes, seeds = setup(spec)
    scalar, lockstep = WorkerState(template, spec), VectorizedWorkerState(template, spec)
    try:
        assert lockstep.fallback is None and lockstep.mode == "native"
        expected = scalar.evaluate(genomes, seeds)
        got = lockstep.evaluate(genomes, seeds)
        validation = lockstep.evaluate(genomes, seeds, EvaluationContext(validation=True))
    finally:
        scalar.close()
        lockstep.close()
    assert_recorded(spec, expected)
    assert_recorded(spec, got)
    for a, b in zip(got, expected):
        assert (a.fitness, a.steps) == (b.fitness, b.steps)
        for name, value in recorded(b).items():
            assert recorded(a)[name].tobytes() == value.tobytes(), name
    assert all(recorded(r) == {} for r in validation)


JAX_CASES = {  # each is one compiled program
    "observation_stats+behavior_action+user": ALL | {"measures": ()},
    "behavior_observation": CASES["behavior_observation"],
}


@pytest.mark.parametrize("case", JAX_CASES)
def test_every_recorder_with_a_jax_form_gives_the_scalar_loops_values_in_jax(case: str) -> None:
    """The JAX program (float64) calls each recorder's JAX form as the scalar loop calls its
    scalar form: the values agree to float64 rounding on the same gymnax env."""
    require("jax")
    import jax

    from neuro_evolution.evaluation.jax.handler import JaxWorkerState

    spec = spec_for("gymnax", **JAX_CASES[case])
    template, genomes, seeds = setup(spec)
    with jax.enable_x64(True):
        scalar = WorkerState(template, spec)
        expected = scalar.evaluate(genomes, seeds)
        scalar.close()
        got = JaxWorkerState(template, spec, "float64").evaluate(genomes, seeds)
    assert_recorded(spec, expected)
    assert_recorded(spec, got)
    for a, b in zip(got, expected):
        assert a.steps == b.steps
        for name, value in recorded(b).items():
            np.testing.assert_allclose(recorded(a)[name], value, rtol=1e-9, atol=1e-12)


def test_the_trace_is_a_scalar_recorder_and_lockstep_falls_back_to_it() -> None:
    """The trace has no lockstep form: a spec with it falls back to the scalar loop, whose
    results (the trace's arrays in ``records``) are the sequential ones."""
    spec = spec_for("gymnasium", extra_recorders=(Trace(),))
    template, genomes, seeds = setup(spec)
    scalar, lockstep = (
        WorkerState(template, spec),
        VectorizedWorkerState(template, spec, announce=False),
    )
    try:
        assert lockstep.fallback is not None
        assert "recorder 'trace' has no lockstep form" in lockstep.fallback_reason
        expected, got = scalar.evaluate(genomes, seeds), lockstep.evaluate(genomes, seeds)
    finally:
        scalar.close()
        lockstep.close()
    for a, b in zip(got, expected):
        assert a.records is not None and b.records is not None
        trace = a.records["trace"]
        assert len(trace["rewards"]) == a.steps and trace["observations"].shape == (a.steps, 4)
        for name, array in b.records["trace"].items():
            assert trace[name].tobytes() == array.tobytes()


MISSING = [  # recorder, method, what the one line says
    (Trace(), "lanes", "extra_recorders: recorder 'trace' has no lockstep form; write "
     "Trace.lanes() (see docs/measurements.md) to record it in the lockstep loop"),
    (Trace(), "jax_form", "extra_recorders: recorder 'trace' has no JAX form; write "
     "Trace.jax_form() (see docs/measurements.md) to record it in the jax handler"),
    (novelty("state").behavior(), "lanes", "recorder 'behavior' has no lockstep form "
     "(env.unwrapped.state needs the env object); write Behavior.lanes()"),
    (novelty("state").behavior(), "jax_form", "novelty.behavior_source: the JAX path records "
     "the action or the observation, not env.unwrapped.state (recorder 'behavior': "
     "Behavior.jax_form())"),
    (Measures((parse(MeasureConfig, {"name": "i", "source": "info", "key": "k"}, "m"),)),
     "lanes", "recorder 'measures' has no lockstep form (lockstep evaluation does not compute "
     "info measures); write Measures.lanes()"),
    (Measures(CASES["measures"]["measures"]), "jax_form", "the JAX path computes no per-episode"
     " measures (QD descriptors): recorder 'measures' has no Measures.jax_form()"),
]  # fmt: skip


@pytest.mark.parametrize(("recorder", "method", "says"), MISSING)
def test_a_missing_form_is_refused_in_one_line_naming_recorder_and_method(
    recorder, method, says
) -> None:
    """As a brain type's missing form: a ConfigError of one line that names the recorder and
    the method to write (the lockstep loop falls back on it, the jax handler refuses)."""
    shapes = template_shapes(setup(spec_for("gymnasium"))[0])
    error = recorder.missing_form(method, shapes)
    assert isinstance(error, ConfigError)
    assert says in str(error) and "\n" not in str(error)
    if method == "jax_form" and installed("jax"):
        with pytest.raises(
            ConfigError, match="^" + str(error).replace("(", r"\(").replace(")", r"\)")
        ):
            recorder.jax_form(shapes)


def test_a_user_recorder_needs_a_name_of_its_own() -> None:
    """A user's recorder named like a built-in one (or another) is refused in one line."""
    taken = dataclasses.make_dataclass("Taken", [], bases=(ActionCounts,), frozen=True)
    taken.name = "behavior"
    with pytest.raises(ConfigError, match=r"^extra_recorders\[0\]: recorder name 'behavior'"):
        spec_for("gymnasium", extra_recorders=(taken(),))


def test_the_measurements_page_shows_the_user_recorder_verbatim() -> None:
    """docs/measurements.md's example and tests/examples/action_counts.py cannot drift apart."""
    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "measurements.md").read_text()
    marker = "<!-- example: tests/examples/action_counts.py -->\n```python\n"
    shown = page.split(marker, 1)[1].split("```", 1)[0]
    assert shown == (root / "tests" / "examples" / "action_counts.py").read_text()
