"""Composed brains: the genome layout, fill without views, the state round trip, batch and JAX
paths against single brains, config errors, a user's brain as a part, and whole runs (sequential
== vectorized, and a replay) on CartPole and on a tiny image env defined here."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from helpers import assert_identical, require, run_straight, small_config, without_time

from neuro_evolution import replay, train
from neuro_evolution.brains import BrainTemplate, make_template
from neuro_evolution.brains.base import parse_brain_config
from neuro_evolution.config.tree import parse_config
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.support.atomic import load_npz
from neuro_evolution.support.errors import ConfigError

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "writing-a-brain.md"
IMAGE = gym.spaces.Box(0, 255, (10, 9, 3), dtype=np.uint8)
RAW = gym.spaces.Box(-1.0, 1.0, (2,), dtype=np.float64)  # action == raw output
FRONT = {"type": "conv", "input_scale": 1 / 255,
         "layers": [{"channels": 3, "kernel": 3, "stride": 2, "pool": "max"}]}  # fmt: skip
CONV_CTRNN = {
    "type": "composed",
    "parts": [FRONT, {"type": "CTRNN", "number_neurons": 4, "parameter_perturbations": 0.05}],
}
FFNN_CTRNN = {
    "type": "composed",
    "parts": [{"type": "FFNN", "hidden_layers": [5]}, {"type": "CTRNN", "number_neurons": 4}],
    "sizes": [3],
}


def template_for(brain: dict[str, Any], space: gym.Space = IMAGE, action: gym.Space = RAW):
    config = parse_brain_config(brain, "brain")
    return make_template(config, space, action, np.random.default_rng(0))


def genomes_for(template: BrainTemplate, count: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, 0.5, (count, template.genome_size))


def images(steps: int, count: int, seed: int = 2) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (steps, count, *IMAGE.shape), np.uint8)


def run(brain: Any, observations: np.ndarray, seed: int = 3) -> np.ndarray:
    brain.reset(np.random.default_rng(seed))
    return np.array([brain.step(observation) for observation in observations])


def test_genome_is_the_parts_genomes_in_order_and_each_slice_drives_its_part() -> None:
    """offsets are the running sum of the parts' genome sizes; the composed brain acts like the
    parts' own brains built from their slices and chained by hand (outputs passed raw)."""
    template = template_for(CONV_CTRNN)
    conv, ctrnn = template.parts
    assert conv.io.output_size == ctrnn.io.input_size == 3 * 2 * 2  # 10x9 -> 4x4 -> pool 2x2
    assert template.offsets == (0, conv.genome_size, conv.genome_size + ctrnn.genome_size)
    assert template.genome_size == template.offsets[-1]
    genome = genomes_for(template, 1)[0]
    observations = images(30, 1)[:, 0]
    first = conv.build(genome[: conv.genome_size])
    second = ctrnn.build(genome[conv.genome_size :])
    second.reset(np.random.default_rng(3))
    by_hand = [second.step(first.step(observation)) for observation in observations]
    np.testing.assert_array_equal(run(template.build(genome), observations), by_hand)


def test_a_conv_part_given_a_size_maps_its_features_through_a_dense_tanh_layer() -> None:
    """sizes[0] > 0 for a conv part: its 12 features go through a dense tanh layer to 5 values
    (genome: + (12 + 1) x 5), which are what the CTRNN part sees."""
    template = template_for({**CONV_CTRNN, "sizes": [5]})
    conv, ctrnn = template.parts
    assert conv.head and conv.io.output_size == ctrnn.io.input_size == 5
    assert conv.genome_size == template_for(CONV_CTRNN).parts[0].genome_size + (12 + 1) * 5
    front = conv.build(genomes_for(conv, 1)[0] * 4.0)
    outputs = np.array([front.step(image) for image in images(5, 1)[:, 0]])
    assert outputs.shape == (5, 5) and np.all(np.abs(outputs) <= 1.0)


def brain_arrays(brain: Any) -> list[np.ndarray]:
    """Every ndarray a brain (or a part of it) holds, in slots and dicts."""
    found, names = [], []
    for cls in type(brain).__mro__:
        names += [n for n in getattr(cls, "__slots__", ()) if n not in names]
    for name in names:
        value = getattr(brain, name, None)
        values = list(value.values()) if isinstance(value, dict) else [value]
        values = value if isinstance(value, list) else values
        for item in values:
            if isinstance(item, np.ndarray):
                found.append(item)
            elif hasattr(item, "__slots__") and not isinstance(item, type):
                found += brain_arrays(item)
    return found


def test_fill_copies_every_slice_so_a_later_genome_change_does_not_reach_the_brain() -> None:
    template = template_for(CONV_CTRNN)
    genome, other = genomes_for(template, 2)
    observations = images(40, 1)[:, 0]
    expected = run(template.build(genome.copy()), observations)
    brain = template.build(other)
    run(brain, observations[:10])
    template.fill(brain, genome)
    arrays = brain_arrays(brain)
    assert len(arrays) > 6 and not any(np.shares_memory(a, genome) for a in arrays)
    genome[:] = other
    np.testing.assert_array_equal(run(brain, observations), expected)


@pytest.mark.parametrize("brain", [CONV_CTRNN, FFNN_CTRNN], ids=["conv-ctrnn", "ffnn-ctrnn"])
def test_state_round_trips_through_npz_without_pickle(brain: dict, tmp_path: Path) -> None:
    """to_state is plain arrays and scalars; an npz of it (no pickle) restores a template with
    the same state, parts and behaviour; a composed part inside a composed brain works too."""
    nested = {"type": "composed", "parts": [brain, {"type": "FFNN", "hidden_layers": []}],
              "sizes": [3]}  # fmt: skip
    space = IMAGE if brain is CONV_CTRNN else gym.spaces.Box(-2, 2, (4,), dtype=np.float64)
    for config in (brain, nested):
        template = template_for(config, space=space)
        np.savez(tmp_path / "state.npz", **template.to_state())
        with np.load(tmp_path / "state.npz", allow_pickle=False) as saved:
            restored = BrainTemplate.from_state(dict(saved))
        assert set(restored.to_state()) == set(template.to_state())
        for key, value in template.to_state().items():
            np.testing.assert_array_equal(restored.to_state()[key], value)
        genome = genomes_for(template, 1)[0]
        inputs = np.random.default_rng(4).integers(0, 256, (30, *space.shape)).astype(space.dtype)
        np.testing.assert_array_equal(run(restored.build(genome), inputs),
                                      run(template.build(genome), inputs))  # fmt: skip


def test_batch_brain_on_images_equals_single_brains_bit_for_bit() -> None:
    """A conv -> noisy CTRNN batch: row i is single brain i (noise from rngs[i]), rows active
    or not."""
    count, steps = 6, 80
    template = template_for(CONV_CTRNN)
    genomes = genomes_for(template, count)
    observations = images(steps, count)
    masks = np.random.default_rng(5).random((steps, count)) < 0.7
    batch = template.batch_brain(genomes)
    batch.reset([np.random.default_rng(10 + i) for i in range(count)])
    singles = [template.build(g) for g in genomes]
    for i, brain in enumerate(singles):
        brain.reset(np.random.default_rng(10 + i))
    for t in range(steps):
        actions = batch.step(observations[t], masks[t])
        for i in np.flatnonzero(masks[t]):
            np.testing.assert_array_equal(actions[i], singles[i].step(observations[t, i]))


def test_internal_state_names_every_part_state() -> None:
    template = template_for(
        {
            **CONV_CTRNN,
            "parts": [*CONV_CTRNN["parts"], {"type": "LSTM", "hidden_size": 2}],
            "sizes": [0, 3],
        }  # fmt: skip
    )
    brain = template.build(genomes_for(template, 1)[0])
    run(brain, images(3, 1)[:, 0])
    state = brain.internal_state()
    assert {k: v.shape for k, v in state.items()} == {
        "part1.neuron_state": (4,), "part2.hidden_state": (1, 2), "part2.cell_state": (1, 2)
    }  # fmt: skip


@pytest.mark.parametrize("brain", [CONV_CTRNN, FFNN_CTRNN], ids=["conv-ctrnn", "ffnn-ctrnn"])
def test_jax_composed_brain_equals_the_numpy_brains(brain: dict) -> None:
    """float64: the JAX chain of the parts' JAX brains (fed the numpy noise draws) gives the
    numpy single brains' actions to 1e-9."""
    require("jax")
    import jax
    import jax.numpy as jnp

    from neuro_evolution.brains.jax_brains import encode_inputs

    count, steps = 3, 60
    space = IMAGE if brain is CONV_CTRNN else gym.spaces.Box(-2, 2, (4,), dtype=np.float64)
    template = template_for(brain, space=space)
    genomes = genomes_for(template, count)
    shape = (steps, count, *space.shape)
    observations = np.random.default_rng(6).integers(0, 256, shape).astype(space.dtype)
    singles = [template.build(g) for g in genomes]
    for i, single in enumerate(singles):
        single.reset(np.random.default_rng([7, i]))
    noise_rngs = [np.random.default_rng([7, i]) for i in range(count)]
    expected = np.array([[b.step(o) for b, o in zip(singles, row)] for row in observations])
    with jax.enable_x64(True):
        jb = template.jax_brain()
        params = jb.params(genomes, jnp.float64)
        state = jb.initial_state(params)
        step = jax.jit(jb.step)
        got = []
        for row in observations:
            noise = None
            if jb.noise_size:
                noise = jnp.asarray(
                    np.stack([r.standard_normal(jb.noise_size) for r in noise_rngs])
                )
            inputs = encode_inputs(template.io, jnp.asarray(row), jnp.float64)
            state, outputs = step(params, state, inputs, noise)
            got.append(np.asarray(outputs))
    assert np.max(np.abs(np.array(got) - expected)) <= 1e-9


BAD = [
    ({"parts": []}, "brain.parts", "at least one"),
    ({"parts": [{"type": "FFNN"}, {"type": "CTRN"}]}, "brain.parts[1].type", "Did you mean"),
    ({"parts": [{"type": "FFNN"}, {"type": "CTRNN", "number_neurons": 0}], "sizes": [3]},
     "brain.parts[1].number_neurons", "integer >= 1"),
    ({"parts": [{"type": "FFNN"}, {"type": "CTRNN"}]}, "brain.sizes", "part 0 (FFNN) needs"),
    ({"parts": [{"type": "FFNN"}, {"type": "CTRNN"}], "sizes": [3, 4]}, "brain.sizes",
     "one size per part but the last (1), got 2"),
    ({"parts": [{"type": "FFNN"}, {"type": "conv"}], "sizes": [4]}, "brain.parts[1].type",
     "a conv part takes the observation image, so it can only be the first part"),
    ({"parts": [{"type": "conv", "layers": [{"kernel": 30}]}, {"type": "CTRNN"}]},
     "brain.parts[0].layers[0].kernel", "does not fit the 10x9"),
    ({"parts": [{"type": "CTRNN", "normalize_input": True}, {"type": "FFNN"}], "sizes": [3]},
     "brain.parts[0].normalize_input", "needs a Box"),
]  # fmt: skip


@pytest.mark.parametrize(("options", "field", "message"), BAD)
def test_bad_composed_configs_name_the_field(options: dict, field: str, message: str) -> None:
    """Parse-time and start-up (template) errors name the part's field, in one line."""
    discrete = "normalize_input" in json.dumps(options)  # refused on a Discrete observation
    space = gym.spaces.Discrete(5) if discrete else IMAGE
    with pytest.raises(ConfigError) as error:
        template_for({"type": "composed", **options}, space=space)
    text = str(error.value)
    assert text.startswith(field + ":") and message in text and "\n" not in text


def guide_json(marker: str) -> dict[str, Any]:
    """The first json block after ``marker`` in docs/writing-a-brain.md."""
    text = GUIDE.read_text()
    match = re.compile(r"```json\n(.*?)```", re.S).search(text, text.index(marker))
    assert match, f"no json block after {marker!r}"
    return json.loads(match.group(1))


def test_the_guides_composed_user_brain_steps_restores_and_trains() -> None:
    """The guide's composed config: a built-in FFNN layer into the user's Elman brain (registered
    by importing tests/examples/elman_brain.py), as a template that chains both, restores from
    its state, chains the parts' batch brains (brain i acting as the single brain), and trains
    two generations through ``imports``."""
    snippet = guide_json("## Composing brains")
    assert [p["type"] for p in snippet["brain"]["parts"]] == ["FFNN", "Elman"]
    data = small_config(imports=["examples.elman_brain"], brain=snippet["brain"],
                        number_generations=2)  # fmt: skip
    experiment = Experiment(parse_config(data))
    template = experiment.template
    ffnn, elman = template.parts
    assert elman.config.type_name() == "Elman" and elman.io.input_size == ffnn.io.output_size
    genome = genomes_for(template, 1)[0]
    inputs = np.random.default_rng(8).normal(size=(40, 4))
    restored = BrainTemplate.from_state(template.to_state())
    np.testing.assert_array_equal(run(restored.build(genome), inputs),
                                  run(template.build(genome), inputs))  # fmt: skip
    genomes = genomes_for(template, 3)
    batch = template.batch_brain(genomes)
    batch.reset([np.random.default_rng(0)] * 3)
    actions = np.array([batch.step(np.repeat(x[None], 3, axis=0)) for x in inputs])
    for i, genome in enumerate(genomes):
        np.testing.assert_array_equal(actions[:, i], run(template.build(genome), inputs))
    assert experiment.run().generations == 2


class BlinkEnv(gym.Env):
    """A tiny deterministic image env: a bright pixel in an 8x8x2 frame; the agent earns a point
    for each step it answers which half of the frame the pixel is in (20 steps)."""

    metadata: dict[str, Any] = {"render_modes": []}
    observation_space = gym.spaces.Box(0, 255, (8, 8, 2), dtype=np.uint8)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.position = int(self.np_random.integers(0, 64))
        self.t = 0
        return self._frame(), {}

    def _frame(self) -> np.ndarray:
        frame = np.zeros((8, 8, 2), dtype=np.uint8)
        frame[self.position // 8, self.position % 8, self.t % 2] = 255
        return frame

    def step(self, action: Any):
        reward = float(int(action) == int(self.position % 8 >= 4))
        self.position = (self.position * 5 + 3 + int(action)) % 64
        self.t += 1
        return self._frame(), reward, False, self.t >= 20, {}


@pytest.mark.parametrize(
    ("brain", "environment"),
    [(FFNN_CTRNN, {"id": "CartPole-v1"}),
     ({**CONV_CTRNN, "parts": [{**FRONT, "layers": [{"channels": 2, "kernel": 3}]},
                               CONV_CTRNN["parts"][1]]},
      {"entry_point": "test_composed:BlinkEnv"})],
    ids=["cartpole-ffnn-ctrnn", "image-conv-ctrnn"],
)  # fmt: skip
def test_runs_are_identical_sequential_and_vectorized_and_replay(brain, environment, tmp_path):
    """Two generations: the vectorized handler's log equals the sequential one's; the run
    replays, recording every part's state."""
    logs = []
    for handler in ("sequential", "vectorized"):
        data = small_config(brain=brain, environment=environment, number_generations=2,
                            evaluation={"handler": handler})  # fmt: skip
        experiment = Experiment(parse_config(data), run_dir=tmp_path / handler)
        experiment.run()
        logs.append(without_time(experiment.log))
    assert logs[0] == logs[1]
    folder = tmp_path / "state"
    returns = replay.replay(tmp_path / "vectorized", episodes=1, seed=2, brain_state=folder)
    arrays = load_npz(folder / "episode-0.npz")
    assert arrays["rewards"].sum() == pytest.approx(returns[0])
    assert arrays["state.part1.neuron_state"].shape == (len(arrays["rewards"]), 4)


def test_a_composed_run_resumes_exactly_on_a_process_pool(tmp_path: Path) -> None:
    """3 generations of an FFNN -> CTRNN run, resumed from its checkpoint to 6 on an mp pool
    (templates pickled to the workers), equal 6 straight generations."""
    data = small_config(
        brain=FFNN_CTRNN,
        number_generations=6,
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 50},
        checkpoint={"every_generations": 1, "keep": 2},
    )
    config = tmp_path / "composed.json"
    config.write_text(json.dumps(data))
    straight = run_straight(config, tmp_path / "straight")
    run_dir = tmp_path / "short"
    assert train.main([str(config), "--out", str(run_dir), "--generations", "3", "--quiet"]) == 0
    argv = ["--resume", str(run_dir), "--generations", "6", "--handler", "mp", "--workers", "2"]
    assert train.main([*argv, "--quiet"]) == 0
    assert_identical(run_dir, straight, extended_from=3)


def test_the_jax_handler_runs_a_composed_brain_as_the_sequential_handler_does() -> None:
    """gymnax CartPole, float64: an FFNN -> noise-free CTRNN composed brain scores what the
    sequential handler scores (fitness to 1e-9, the same steps)."""
    require("jax")
    import jax

    from neuro_evolution.core.schema import parse
    from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
    from neuro_evolution.evaluation.episodes.runner import EpisodeRunnerConfig, RunnerSpec
    from neuro_evolution.evaluation.jax.handler import JaxHandler
    from neuro_evolution.evaluation.pools.sequential import SequentialHandler

    environment = parse(EnvironmentConfig, {"id": "CartPole-v1", "backend": "gymnax"}, "e")
    rules = parse(EpisodeRunnerConfig, {"number_fitness_runs": 2, "max_steps_per_run": 80}, "r")
    spec = RunnerSpec(environment=environment, episode_runner=rules)
    env = environment.make()
    template = template_for(FFNN_CTRNN, env.observation_space, env.action_space)
    genomes = genomes_for(template, 6, seed=3) * 2.0
    seeds = np.arange(6) + 20
    with jax.enable_x64(True), SequentialHandler() as sequential, JaxHandler("float64") as fast:
        sequential.start(template, spec)
        fast.start(template, spec)
        expected = sequential.batch_evaluate(genomes, seeds)
        got = fast.batch_evaluate(genomes, seeds)
    assert [r.steps for r in got] == [r.steps for r in expected]
    assert len({r.steps for r in got}) > 1
    for a, b in zip(got, expected):
        assert a.fitness == pytest.approx(b.fitness, abs=1e-9)
