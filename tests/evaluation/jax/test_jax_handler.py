"""The jax handler: EpisodeRunner's rules in one compiled program, a gymnax CartPole run that
solves, exact resume, Dask workers on the JAX path, and one-line refusals."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import assert_identical, kill_then_resume, novelty_run, require, small_config

require("jax")
import jax  # noqa: E402

from neuro_evolution import train  # noqa: E402
from neuro_evolution.brains import make_template  # noqa: E402
from neuro_evolution.brains.base import parse_brain_config  # noqa: E402
from neuro_evolution.config.tree import parse_config  # noqa: E402
from neuro_evolution.core.normalization import (  # noqa: E402
    ObservationNormalizationConfig,
    ObservationScaler,
)
from neuro_evolution.core.schema import ConfigError, parse  # noqa: E402
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig  # noqa: E402
from neuro_evolution.evaluation.episodes.runner import (  # noqa: E402
    EpisodeRunnerConfig,
    EvaluationContext,
    RunnerSpec,
)
from neuro_evolution.evaluation.jax.handler import JaxHandler  # noqa: E402
from neuro_evolution.evaluation.pools.dask_handler import DaskHandler  # noqa: E402
from neuro_evolution.evaluation.pools.sequential import SequentialHandler  # noqa: E402
from neuro_evolution.optimizers.novelty import NoveltyConfig  # noqa: E402
from neuro_evolution.run.experiment import Experiment  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def spec_for(env_id: str, **rules: Any) -> RunnerSpec:
    environment = parse(EnvironmentConfig, {"id": env_id, "backend": "gymnax"}, "environment")
    return RunnerSpec(
        environment=environment,
        episode_runner=parse(EpisodeRunnerConfig, rules, "episode_runner"),
        observation_normalization=parse(ObservationNormalizationConfig, {}, "o"),
    )


def template_for(spec: RunnerSpec, brain: dict[str, Any]):
    env = spec.environment.make()
    config = parse_brain_config(brain, "brain")
    return make_template(config, env.observation_space, env.action_space, np.random.default_rng(1))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env_id", "brain", "cut_at", "ending"),
    [  # episodes end by termination / by the env's time limit / by max_steps_per_run
        ("CartPole-v1", {"type": "CTRNN", "number_neurons": 5, "delta_t": 0.5}, 120, "term"),
        ("Pendulum-v1", {"type": "FFNN", "hidden_layers": [4]}, 0, "limit"),
        ("Acrobot-v1", {"type": "LSTM", "hidden_size": 3}, 120, "cut"),
    ],
)
def test_jax_handler_follows_the_runners_episode_rules_in_float64(
    env_id, brain, cut_at, ending
) -> None:
    """Fitness (cut penalty included), steps, terminated/truncated counts and observation
    statistics equal the sequential runner's on the same env in float64 -- training episodes,
    a frozen scaler, and validation episodes alike; twice the same seeds give the same bits."""
    spec = spec_for(env_id, number_fitness_runs=2, max_steps_per_run=cut_at, max_steps_penalty=7.5)
    template = template_for(spec, brain)
    genomes = np.random.default_rng(2).normal(0.0, 1.0, (6, template.genome_size))
    seeds = np.array([11, 11, 12, 13, 14, 15])
    size = template.io.input_size
    scaler = ObservationScaler(mean=np.full(size, 0.1), scale=np.full(size, 2.0), clip=1.5)
    contexts = [
        EvaluationContext(),
        EvaluationContext(observation_scaler=scaler),
        EvaluationContext(validation=True),
    ]
    with jax.enable_x64(True), SequentialHandler() as sequential, JaxHandler("float64") as fast:
        sequential.start(template, spec)
        fast.start(template, spec)
        for context in contexts:
            expected = sequential.batch_evaluate(genomes, seeds, context)
            got = fast.batch_evaluate(genomes, seeds, context)
            again = fast.batch_evaluate(genomes, seeds, context)
            assert list(map(as_tuple, got)) == list(map(as_tuple, again))
            for a, b in zip(got, expected):
                assert (a.steps, a.terminated, a.truncated) == (b.steps, b.terminated, b.truncated)
                assert a.fitness == pytest.approx(b.fitness, abs=1e-9)
                if context.validation:
                    assert a.observation_stats is None and b.observation_stats is None
                else:
                    np.testing.assert_allclose(a.observation_stats, b.observation_stats, 1e-9)
        assert fast.statistics().compilations == 3  # training, with scaler, validation
        steps = sum(r.steps for r in got)
        if ending == "term":
            assert sum(r.terminated for r in got) > 0
        else:
            assert sum(r.truncated for r in got) == len(got)
            assert steps == len(got) * (cut_at or 200)


def test_jax_handler_resets_training_episodes_with_the_named_seeds() -> None:
    """With ``training_reset_seeds`` every genome's episode k resets with the k-th seed: the
    training results equal the validation episodes of those seeds, and the sequential runner's
    training results."""
    named = (52, 7)
    spec = spec_for("CartPole-v1", number_fitness_runs=2, training_reset_seeds=named)
    template = template_for(spec, {"type": "FFNN", "hidden_layers": [3]})
    genomes = np.random.default_rng(4).normal(0.0, 1.0, (5, template.genome_size))
    seeds = np.arange(5)
    with jax.enable_x64(True), SequentialHandler() as sequential, JaxHandler("float64") as fast:
        sequential.start(template, spec)
        fast.start(template, spec)
        got = fast.batch_evaluate(genomes, seeds)
        expected = sequential.batch_evaluate(genomes, seeds)
        validation = EvaluationContext(validation=True)
        per_seed = [fast.batch_evaluate(genomes, np.full(5, s), validation) for s in named]
    for a, b, first, second in zip(got, expected, *per_seed):
        assert a.steps == b.steps == first.steps + second.steps
        assert a.fitness == pytest.approx(b.fitness, abs=1e-9)
        assert a.fitness == pytest.approx((first.fitness + second.fitness) / 2, abs=1e-9)
    assert len({r.steps for r in got}) > 1  # the genomes really differ


def test_an_episode_scores_the_same_whichever_lane_plays_it() -> None:
    """The P x R episodes are a queue that lanes take as theirs end: each genome's result in a
    population -- a noisy CTRNN, three episodes, observation statistics -- has the very bits
    of the same genome evaluated alone, where one lane plays its episodes one after another."""
    spec = spec_for("CartPole-v1", number_fitness_runs=3)
    brain = {"type": "CTRNN", "number_neurons": 4, "parameter_perturbations": 0.05}
    template = template_for(spec, brain)
    genomes = np.random.default_rng(5).normal(0.0, 1.0, (7, template.genome_size))
    seeds = np.arange(7) + 30
    with JaxHandler() as fast:
        fast.start(template, spec)
        together = fast.batch_evaluate(genomes, seeds)
        alone = [fast.batch_evaluate(g[None], s[None])[0] for g, s in zip(genomes, seeds)]
    assert list(map(as_tuple, together)) == list(map(as_tuple, alone))
    assert len({r.steps for r in together}) > 3  # episodes of many lengths: lanes refilled


def as_tuple(result) -> tuple:
    stats = result.observation_stats
    return (result.fitness, result.steps, result.terminated, result.truncated,
            None if stats is None else stats.tobytes())  # fmt: skip


def jax_config(**changes: Any) -> dict[str, Any]:
    return small_config(
        environment={"id": "CartPole-v1", "backend": "gymnax"},
        evaluation={"handler": "jax"},
        **changes,
    )


@pytest.mark.slow
def test_gymnax_cartpole_run_solves() -> None:
    """CMA-ES + CTRNN on gymnax CartPole reaches the validation target on the jax handler,
    compiling twice in the whole run (population and validation batch)."""
    data = json.loads((ROOT / "configs" / "cartpole_jax.json").read_text())
    experiment = Experiment(parse_config(data))
    summary = experiment.run(progress=False)
    assert summary.solved is not None, summary
    assert summary.validation is not None and summary.validation.mean >= 475
    assert summary.handler_statistics.compilations == 2


@pytest.mark.slow
def test_jax_handler_resumes_exactly_after_sigkill(tmp_path: Path) -> None:
    """SIGKILL after generation 4 (checkpoint at 3), resume: identical to the straight run."""
    data = jax_config(
        number_generations=6,
        optimizer={"type": "CMA_ES", "population_size": 8, "sigma": 0.5},
        episode_runner={"number_fitness_runs": 2, "max_steps_per_run": 50},
        checkpoint={"every_generations": 3, "keep": 2},
        validation={"every_generations": 2, "episodes": 3},
    )
    config = tmp_path / "jax.json"
    config.write_text(json.dumps(data))
    straight = tmp_path / "straight"
    assert train.main([str(config), "--out", str(straight), "--quiet"]) == 0
    run_dir = tmp_path / "killed"
    kill_then_resume(config, run_dir, tmp_path)
    assert_identical(run_dir, straight)


@pytest.mark.slow
def test_dask_workers_on_the_jax_path_give_the_jax_handlers_results() -> None:
    """``DaskHandler(vectorize="jax")``: each worker runs its chunk as a JAX program; the
    results are those of the in-process jax handler."""
    spec = spec_for("CartPole-v1", number_fitness_runs=2, max_steps_per_run=200)
    template = template_for(spec, {"type": "CTRNN", "number_neurons": 4})
    genomes = np.random.default_rng(3).normal(0.0, 1.0, (8, template.genome_size))
    seeds = np.arange(8) + 100
    with JaxHandler() as fast:
        fast.start(template, spec)
        expected = fast.batch_evaluate(genomes, seeds)
    with DaskHandler(workers=2, vectorize="jax", chunks_per_worker=1) as dask:
        dask.start(template, spec)
        got = dask.batch_evaluate(genomes, seeds)
    assert [r.steps for r in got] == [r.steps for r in expected]
    assert [r.fitness for r in got] == [r.fitness for r in expected]


def test_jax_handler_refuses_a_gymnasium_env_and_a_state_behaviour_in_one_line() -> None:
    """What the JAX path cannot run is a ConfigError naming the field, at start."""
    gym_spec = RunnerSpec(
        environment=parse(EnvironmentConfig, {"id": "CartPole-v1"}, "environment"),
        episode_runner=EpisodeRunnerConfig(),
    )
    template = template_for(spec_for("CartPole-v1"), {"type": "FFNN"})
    with pytest.raises(ConfigError, match=r"^environment\.backend: CartPole-v1 is a Gymnasium"):
        JaxHandler().start(template, gym_spec)
    novelty = RunnerSpec(
        environment=spec_for("CartPole-v1").environment,
        episode_runner=EpisodeRunnerConfig(),
        novelty=parse(NoveltyConfig, {"behavior_source": "state"}, "novelty"),
    )
    with pytest.raises(ConfigError, match=r"^novelty\.behavior_source: the JAX path records "):
        JaxHandler().start(template, novelty)


@pytest.mark.parametrize(
    ("env_id", "source", "interval", "cap"),
    [  # the cap reached within the first episode / across episodes / never (zero padding)
        ("CartPole-v1", "observation", 1, 6),
        ("CartPole-v1", "action", 3, 40),
        ("Breakout-MinAtar", "observation", 2, 12),
        ("Pendulum-v1", "action", 50, 10),
    ],
)
def test_jax_handler_records_the_sequential_runners_behaviours(
    env_id: str, source: str, interval: int, cap: int
) -> None:
    """With novelty on, each training evaluation's behaviour (samples every ``interval`` steps
    over its episodes in order, at most ``cap``, zero-padded) equals the sequential runner's in
    float64; validation records none."""
    novelty = {"behavior_source": source, "behavioral_interval": interval,
               "behavioral_max_length": cap}  # fmt: skip
    spec = dataclasses.replace(
        spec_for(env_id, number_fitness_runs=3, max_steps_per_run=60),
        observation_normalization=None,
        novelty=parse(NoveltyConfig, novelty, "novelty"),
    )
    brain: dict[str, Any] = {"type": "CTRNN", "number_neurons": 4, "delta_t": 0.5}
    if env_id.endswith("MinAtar"):
        conv = {"type": "conv", "layers": [{"channels": 2, "kernel": 3, "pool": "max"}]}
        brain = {"type": "composed", "parts": [conv, brain]}
    template = template_for(spec, brain)
    genomes = np.random.default_rng(6).normal(0.0, 1.0, (7, template.genome_size))
    seeds = np.arange(7) + 30
    with jax.enable_x64(True), SequentialHandler() as sequential, JaxHandler("float64") as fast:
        sequential.start(template, spec)
        fast.start(template, spec)
        expected = sequential.batch_evaluate(genomes, seeds)
        got = fast.batch_evaluate(genomes, seeds)
        validation = fast.batch_evaluate(genomes, seeds, EvaluationContext(validation=True))
    assert [r.steps for r in got] == [r.steps for r in expected]
    for a, b in zip(got, expected):
        assert a.behavior is not None and b.behavior is not None
        assert a.behavior.shape == b.behavior.shape
        np.testing.assert_allclose(a.behavior, b.behavior, rtol=1e-9, atol=1e-12)
    assert all(r.behavior is None for r in validation)
    lengths = [len(r.behavior) for r in got]
    assert len(set(lengths)) == 1 and lengths[0] % cap == 0


def test_a_novelty_run_on_the_jax_handler_is_the_sequential_run() -> None:
    """configs/cartpole_jax.json with novelty on actions, 3 generations: the jax handler's log
    (selection on fitness and novelty ranks) and archive are the sequential handler's, float64."""
    from neuro_evolution.evaluation.pools import make_handler

    data = json.loads((ROOT / "configs" / "cartpole_jax.json").read_text())
    data.update(number_generations=3, validation=None)
    data["optimizer"]["population_size"] = 12
    data["episode_runner"]["number_fitness_runs"] = 2
    data["novelty"] = {
        "novelty_weight": 0.6,
        "behavior_source": "action",
        "behavioral_max_length": 30,
        "recorded_behaviors_per_generation": 3,
    }
    with jax.enable_x64(True):
        expected_log, expected_archive = novelty_run(data, make_handler("sequential"))
        log, archive = novelty_run(data, JaxHandler("float64"))
    assert log == expected_log
    assert np.array_equal(archive, expected_archive) and len(archive) == 9


BLOCK_JAX = textwrap.dedent(
    """
    import sys
    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("jax", "jaxlib", "gymnax", "brax"):
                raise ImportError(f"No module named {name!r} (blocked by the test)")
    sys.meta_path.insert(0, Block())
    from neuro_evolution import train
    sys.exit(train.main(sys.argv[1:]))
    """
)


@pytest.mark.parametrize("case", ["gymnax-backend", "jax-handler"])
def test_missing_jax_extra_is_one_line_and_exit_2(tmp_path: Path, case: str) -> None:
    """Without jax installed (imports blocked), a gymnax env or the jax handler is one line
    naming the field and the extra to install, exit code 2, and no run directory."""
    if case == "gymnax-backend":
        data = jax_config()
        field = "environment.backend"
    else:
        data = small_config(evaluation={"handler": "jax"})
        field = "evaluation.handler"
    config = tmp_path / "c.json"
    config.write_text(json.dumps(data))
    out = tmp_path / "run"
    process = subprocess.run(
        [sys.executable, "-c", BLOCK_JAX, str(config), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 2, process.stderr
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1, process.stderr
    assert lines[0].startswith(f"neuro_evolution.train: error: {field}: needs the")
    assert "pip install 'neuro_evolution[jax]'" in lines[0]
    assert not out.exists()


@pytest.mark.slow
def test_brax_hopper_trains_on_the_jax_handler() -> None:
    """A Brax locomotion env (hopper, spring backend) runs generations and validation on the
    jax handler; its template sees Brax's observation and action sizes."""
    require("brax")
    data = {
        "environment": {"id": "hopper", "backend": "brax"},
        "evaluation": {"handler": "jax"},
        "random_seed": 1,
        "number_generations": 2,
        "optimizer": {"type": "PGPE", "population_size": 8},
        "brain": {"type": "CTRNN", "number_neurons": 4},
        "episode_runner": {"number_fitness_runs": 1, "max_steps_per_run": 50},
        "validation": {"every_generations": 2, "episodes": 2},
    }
    experiment = Experiment(parse_config(data))
    assert (experiment.template.io.input_size, experiment.template.io.output_size) == (11, 3)
    summary = experiment.run(progress=False)
    assert summary.generations == 2
    assert summary.handler_statistics.compilations == 2
    assert summary.validation is not None and np.isfinite(summary.validation.mean)
