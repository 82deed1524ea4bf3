"""Behaviour every registered brain type shares, plus CTRNN- and LSTM-specific rules."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from helpers import CTRNN_CASES

from neuro_evolution.brains import BrainTemplate, brain_types, make_template
from neuro_evolution.brains.base import parse_brain_config
from neuro_evolution.support.errors import ConfigError, UnsupportedSpaceError

# Small networks with the options that make brains stateful and noisy switched on.
OPTIONS: dict[str, dict[str, Any]] = {
    "CTRNN": {
        "number_neurons": 6,
        "parameter_perturbations": 0.05,
        "optimize_y0": True,
        "optimize_state_boundaries": "per_neuron",
        "v_mask": "random",
        "v_mask_param": 0.6,
    },
    "LSTM": {"hidden_size": 4, "number_layers": 2},
    "FFNN": {"hidden_layers": [5]},
    "conv": {"layers": [{"channels": 3, "kernel": 3, "padding": 1}]},  # pooling: test_conv.py
    "composed": {
        "parts": [
            {"type": "conv", "layers": [{"channels": 2, "kernel": 2, "stride": 2, "padding": 1}]},
            {"type": "CTRNN", "number_neurons": 4, "parameter_perturbations": 0.05},
            {"type": "LSTM", "hidden_size": 3},
        ],
        "sizes": [0, 4],
    },
}
BOX_OBSERVATIONS = gym.spaces.Box(-3.0, 3.0, (5,), dtype=np.float32)
BOX_ACTIONS = gym.spaces.Box(-1.0, 1.0, (3,), dtype=np.float64)
# every type that can stand alone; egocentric, a weightless front end that only a composed
# brain's first part can be, has its own tests (test_egocentric.py)
TYPES = [name for name in brain_types() if name != "egocentric"]


def template_for(
    brain_type: str,
    observation_space: gym.Space = BOX_OBSERVATIONS,
    action_space: gym.Space = BOX_ACTIONS,
    seed: int = 0,
    base: dict[str, Any] | None = None,
    **changes: Any,
) -> BrainTemplate:
    """A template of ``base`` options (default: ``OPTIONS[brain_type]``) updated by ``changes``."""
    base = OPTIONS.get(brain_type, {}) if base is None else base
    config = parse_brain_config({"type": brain_type, **base, **changes}, "")
    return make_template(config, observation_space, action_space, np.random.default_rng(seed))


def genomes_for(template: BrainTemplate, count: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, 1.0, (count, template.genome_size))


def observations(count: int, steps: int, seed: int = 2) -> np.ndarray:
    """(steps, count, 5) observations with magnitudes that exercise saturation and clipping."""
    return np.random.default_rng(seed).normal(0.0, 1.5, (steps, count, 5)).astype(np.float32)


def run(brain: Any, inputs: np.ndarray, seed: int = 3) -> np.ndarray:
    """Actions of a single brain over (steps, 5) inputs after ``reset(default_rng(seed))``."""
    brain.reset(np.random.default_rng(seed))
    return np.array([brain.step(observation) for observation in inputs])


def arrays_of(obj: Any) -> list[np.ndarray]:
    """Every ndarray held by a (possibly nested) dataclass or slotted object."""
    found = []
    names = [f.name for f in dataclasses.fields(obj)] if dataclasses.is_dataclass(obj) else []
    for cls in type(obj).__mro__:
        names += [n for n in getattr(cls, "__slots__", ()) if n not in names]
    for name in names:
        value = getattr(obj, name, None)
        if isinstance(value, np.ndarray):
            found.append(value)
        elif isinstance(value, list | tuple):
            found += [v for item in value for v in (item if isinstance(item, tuple) else (item,))
                      if isinstance(v, np.ndarray)]  # fmt: skip
        elif dataclasses.is_dataclass(value):
            found += arrays_of(value)
    return found


@pytest.mark.parametrize("brain_type", TYPES)
def test_build_fill_and_restored_template_behave_identically(brain_type: str, tmp_path: Path):
    """build, fill of a used brain, and a template restored from its npz state act identically."""
    template = template_for(brain_type)
    genome, other = genomes_for(template, 2)
    inputs = observations(1, 200)[:, 0]
    expected = run(template.build(genome), inputs)
    reused = template.build(other)
    run(reused, inputs[:50])
    template.fill(reused, genome)
    np.savez(tmp_path / "template.npz", **template.to_state())
    with np.load(tmp_path / "template.npz", allow_pickle=False) as saved:
        restored = BrainTemplate.from_state(dict(saved))
    assert restored.genome_size == template.genome_size
    np.testing.assert_array_equal(run(reused, inputs), expected)
    np.testing.assert_array_equal(run(restored.build(genome), inputs), expected)


@pytest.mark.parametrize("brain_type", TYPES)
@pytest.mark.parametrize("protocol", [4, 5])
def test_template_survives_pickle_with_every_array_read_only(brain_type: str, protocol: int):
    """A pickled template (as shipped to workers) keeps its arrays read-only and its behaviour."""
    template = template_for(brain_type)
    copy = pickle.loads(pickle.dumps(template, protocol=protocol))
    arrays = arrays_of(copy)
    assert all(not array.flags.writeable for array in arrays)
    for key, value in template.to_state().items():
        np.testing.assert_array_equal(copy.to_state()[key], value)
    genome = genomes_for(template, 1)[0]
    inputs = observations(1, 50)[:, 0]
    np.testing.assert_array_equal(
        run(copy.build(genome), inputs), run(template.build(genome), inputs)
    )


@pytest.mark.parametrize("brain_type", TYPES)
def test_brain_never_shares_memory_with_its_genome(brain_type: str) -> None:
    """Changing a genome after build or fill does not change the brain."""
    template = template_for(brain_type)
    genome = genomes_for(template, 1)[0]
    inputs = observations(1, 60)[:, 0]
    expected = run(template.build(genome.copy()), inputs)
    built = template.build(genome)
    filled = template.new_brain()
    template.fill(filled, genome)
    for brain in (built, filled):
        assert not any(np.shares_memory(array, genome) for array in arrays_of(brain))
    genome[:] = genomes_for(template, 1, seed=9)[0]
    np.testing.assert_array_equal(run(built, inputs), expected)
    np.testing.assert_array_equal(run(filled, inputs), expected)


def batch_types() -> list[str]:
    return [name for name in TYPES if template_for(name).supports_batch]


@pytest.mark.parametrize("brain_type", batch_types())
def test_batch_brain_equals_single_brains(brain_type: str) -> None:
    """Brain i of a batch acts exactly (bit for bit) like a single brain of genome i, noise from
    rngs[i] included, over 500 steps: the vectorized handler relies on this equality."""
    count, steps = 5, 500
    template = template_for(brain_type)
    genomes = genomes_for(template, count)
    inputs = observations(count, steps)
    batch = template.batch_brain(genomes)
    batch.reset([np.random.default_rng(10 + i) for i in range(count)])
    actions = np.array([batch.step(inputs[t]) for t in range(steps)])
    for i in range(count):
        single = run(template.build(genomes[i]), inputs[:, i], seed=10 + i)
        assert np.max(np.abs(actions[:, i] - single)) <= 1e-12
        np.testing.assert_array_equal(actions[:, i], single)


@pytest.mark.parametrize("brain_type", batch_types())
def test_batch_brain_skips_inactive_rows(brain_type: str) -> None:
    """With ``active`` given, an active row acts exactly like a single brain stepped only when its
    row was active (rows drop out, come back, and fall below half so rows are compacted)."""
    count, steps = 8, 120
    template = template_for(brain_type)
    genomes = genomes_for(template, count)
    inputs = observations(count, steps)
    rng = np.random.default_rng(4)
    masks = [np.ones(count, bool)] * 10
    masks += [rng.random(count) < p for p in np.linspace(0.9, 0.1, steps - 20)]
    masks += [np.ones(count, bool)] * 10
    singles = [template.build(g) for g in genomes]
    for i, brain in enumerate(singles):
        brain.reset(np.random.default_rng(20 + i))
    batch = template.batch_brain(genomes)
    batch.reset([np.random.default_rng(20 + i) for i in range(count)])
    computed = []
    for t, active in enumerate(masks):
        actions = batch.step(inputs[t], active)
        for i in np.flatnonzero(active):
            np.testing.assert_array_equal(actions[i], singles[i].step(inputs[t, i]))
        if hasattr(batch, "selection"):
            computed.append(batch.selection.computed)
    assert not computed or min(computed) < count // 2  # few active rows: fewer rows computed


# The CTRNN cases run on two bases: the noisy per-neuron-bounds brain of OPTIONS, and the
# defaults (fixed clipping to [clipping_range_min, clipping_range_max], no noise, no y0).
CTRNN_BASES: dict[str, dict[str, Any]] = {
    "noisy_per_neuron": OPTIONS["CTRNN"],
    "defaults": {"number_neurons": 6},
}


@pytest.mark.parametrize("base", sorted(CTRNN_BASES))
@pytest.mark.parametrize("options", CTRNN_CASES, ids=range(len(CTRNN_CASES)))
def test_ctrnn_batch_brain_equals_single_brains_for_every_option(
    options: dict[str, Any], base: str
) -> None:
    """Batch == single to the bit for the CTRNN option combinations of the reference tests, on
    top of the noisy per-neuron brain and of the defaults (fixed clipping, which the states
    reach: the bounds are exercised)."""
    count, steps = 4, 150
    template = template_for("CTRNN", base=CTRNN_BASES[base], **options)
    genomes = genomes_for(template, count)
    inputs = observations(count, steps)
    batch = template.batch_brain(genomes)
    batch.reset([np.random.default_rng(30 + i) for i in range(count)])
    actions, states = [], []
    for t in range(steps):
        actions.append(batch.step(inputs[t]))
        states.append(batch.y.copy())
    actions_array = np.array(actions)
    for i in range(count):
        single = run(template.build(genomes[i]), inputs[:, i], seed=30 + i)
        np.testing.assert_array_equal(actions_array[:, i], single)
    if template.config.optimize_state_boundaries == "fixed":
        config = template.config
        reached = np.array(states)
        assert np.any(reached == config.clipping_range_max)  # the upper bound clipped
        assert np.any(reached == config.clipping_range_min)  # the lower bound clipped


def test_ctrnn_genome_layout_puts_each_value_where_the_docstring_says() -> None:
    """A genome of distinct markers decodes to the documented fields: V, W, T (row-major over
    their masks), then b, then y0, then the lower and upper bounds (as -|g| and |g|)."""
    N, n_in, n_out, dt = 4, 5, 3, 0.25
    for v_mask in ("dense", "random"):
        template = template_for(
            "CTRNN", base={}, number_neurons=N, delta_t=dt, v_mask=v_mask, v_mask_param=0.5,
            optimize_y0=True, optimize_state_boundaries="per_neuron",
        )  # fmt: skip
        genome = np.arange(1.0, template.genome_size + 1.0)
        genome[1::2] *= -1.0  # signs too, so |.| of the bounds is visible
        values = iter(genome.tolist())
        V = np.zeros((n_in, N))
        V[template.v_mask] = [next(values) for _ in range(int(template.v_mask.sum()))]
        W = np.array([[next(values) for _ in range(N)] for _ in range(N)])
        T = np.array([[next(values) for _ in range(n_out)] for _ in range(N)])
        b, y0, low, high = ([next(values) for _ in range(N)] for _ in range(4))
        assert next(values, None) is None
        brain = template.build(genome)
        np.testing.assert_array_equal(brain.M, dt * np.vstack([V, W, [b]]))
        np.testing.assert_array_equal(brain.T, T)
        np.testing.assert_array_equal(brain.y0, y0)
        np.testing.assert_array_equal(brain.low, -np.abs(low))
        np.testing.assert_array_equal(brain.high, np.abs(high))
        brain.reset(np.random.default_rng(0))
        np.testing.assert_array_equal(brain.y, y0)


ACTION_SPACES = {
    "discrete": gym.spaces.Discrete(3, start=2),
    "box": gym.spaces.Box(np.array([[-2, 0], [1, -5]]), np.array([[3, 1], [4, 5]]), dtype="f4"),
    "unbounded_box": gym.spaces.Box(-np.inf, np.inf, (2,), dtype=np.float64),
    "multibinary": gym.spaces.MultiBinary(4),
    "multibinary_2d": gym.spaces.MultiBinary([2, 3]),
    "multidiscrete": gym.spaces.MultiDiscrete([3, 2, 4], start=[1, 0, -2]),
}  # fmt: skip


@pytest.mark.parametrize("brain_type", TYPES)
@pytest.mark.parametrize("space_name", sorted(ACTION_SPACES))
def test_actions_belong_to_the_action_space(brain_type: str, space_name: str) -> None:
    """Single and batch brains produce actions that ``action_space.contains``."""
    space = ACTION_SPACES[space_name]
    template = template_for(brain_type, action_space=space)
    genomes = 3.0 * genomes_for(template, 3)  # large weights: saturated outputs at the bounds
    inputs = observations(3, 20)
    for i, genome in enumerate(genomes):
        for action in run(template.build(genome), inputs[:, i]):
            assert space.contains(
                action.astype(space.dtype) if space_name == "discrete" else action
            )
    if template.supports_batch:
        batch = template.batch_brain(genomes)
        batch.reset([np.random.default_rng(i) for i in range(3)])
        for t in range(20):
            assert all(space.contains(action) for action in batch.step(inputs[t]))


@pytest.mark.parametrize("brain_type", TYPES)
@pytest.mark.parametrize("env_id", ["FrozenLake-v1", "Taxi-v4"])  # Taxi-v3 is deprecated
def test_discrete_observation_envs_run(brain_type: str, env_id: str) -> None:
    """Envs with Discrete observations (one-hot inputs) run with every brain type."""
    env = gym.make(env_id)
    try:
        template = make_template(
            parse_brain_config({"type": brain_type, **OPTIONS.get(brain_type, {})}, "brain"),
            env.observation_space, env.action_space, np.random.default_rng(0),
        )  # fmt: skip
        brain = template.build(genomes_for(template, 1)[0])
        observation, _ = env.reset(seed=0)
        brain.reset(np.random.default_rng(0))
        for _ in range(30):
            action = brain.step(observation)
            assert env.action_space.contains(action)
            observation, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                observation, _ = env.reset()
    finally:
        env.close()


@pytest.mark.parametrize("brain_type", TYPES)
@pytest.mark.parametrize(
    "space",
    [
        gym.spaces.Dict({"a": gym.spaces.Box(-1, 1, (2,))}),
        gym.spaces.Tuple((gym.spaces.Discrete(2), gym.spaces.Discrete(3))),
    ],
)
def test_unsupported_observation_space_is_a_clear_error(brain_type: str, space: gym.Space):
    """A Dict or Tuple observation gives one error naming the space and the way out."""
    with pytest.raises(UnsupportedSpaceError, match="observation space .* FlattenObservation"):
        template_for(brain_type, observation_space=space)


BAD_CONFIGS = [
    ({"type": "CTRNN", "number_neurons": -3}, "brain.number_neurons", "integer >= 1"),
    ({"type": "CTRNN", "number_neurons": "ten"}, "brain.number_neurons", "integer"),
    ({"type": "CTRNN", "delta_t": 0}, "brain.delta_t", "> 0"),
    ({"type": "CTRNN", "v_mask": "sparse"}, "brain.v_mask", "one of"),
    ({"type": "CTRNN", "w_mask": "randm"}, "brain.w_mask", "Did you mean `random`"),
    ({"type": "CTRNN", "use_bias": "yes"}, "brain.use_bias", "true or false"),
    ({"type": "CTRNN", "clipping_range_min": 2.0}, "brain.clipping_range_min", "below"),
    ({"type": "CTRNN", "t_mask": "logarithmic"}, "brain.t_mask_param", ">= 1.05"),
    ({"type": "CTRNN", "v_mask": "random", "v_mask_param": 1.5}, "brain.v_mask_param", "density"),
    ({"type": "CTRNN", "w_mask": "learned", "w_mask_param": 101}, "brain.w_mask_param",
     "percentile"),
    ({"type": "CTRNN", "parameter_perturbations": -0.1}, "brain.parameter_perturbations", ">= 0"),
    ({"type": "CTRNN", "number_neuron": 5}, "brain.number_neuron", "Did you mean `number_neurons`"),
    ({"type": "LSTM", "hidden_size": 0}, "brain.hidden_size", "integer >= 1"),
    ({"type": "LSTM", "number_layers": 1.5}, "brain.number_layers", "integer"),
    ({"type": "CTNN"}, "brain.type", "Did you mean `CTRNN`"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "field", "message"), BAD_CONFIGS)
def test_bad_brain_configs_name_the_field(data: dict, field: str, message: str) -> None:
    """A bad brain option fails when the config is parsed, with one line naming the field."""
    with pytest.raises(ConfigError) as error:
        parse_brain_config(data, "brain")
    text = str(error.value)
    assert text.startswith(field + ":") and message in text and "\n" not in text


def test_normalize_input_needs_a_box_observation_space() -> None:
    """normalize_input on a Discrete observation space is refused, naming the option."""
    with pytest.raises(ConfigError, match="brain.normalize_input: needs a Box"):
        template_for("CTRNN", observation_space=gym.spaces.Discrete(4), normalize_input=True)


@pytest.mark.parametrize("brain_type", TYPES)
def test_wrong_genome_shapes_are_refused(brain_type: str) -> None:
    """build and batch_brain name the shape they need."""
    template = template_for(brain_type)
    with pytest.raises(ValueError, match=f"\\({template.genome_size},\\)"):
        template.build(np.zeros(template.genome_size + 1))
    if template.supports_batch:
        with pytest.raises(ValueError, match=str(template.genome_size)):
            template.batch_brain(np.zeros((2, template.genome_size - 1)))


def test_ctrnn_noise_comes_from_the_reset_generator() -> None:
    """The same genome and seed repeat an episode exactly; another seed gives other noise."""
    template = template_for("CTRNN")
    genome = genomes_for(template, 1)[0]
    inputs = observations(1, 50)[:, 0]
    brain = template.build(genome)
    first = run(brain, inputs, seed=5)
    np.testing.assert_array_equal(run(brain, inputs, seed=5), first)
    assert not np.array_equal(run(brain, inputs, seed=6), first)
    quiet = template_for("CTRNN", parameter_perturbations=0.0)
    np.testing.assert_array_equal(
        run(quiet.build(genome), inputs, seed=5), run(quiet.build(genome), inputs, seed=6)
    )


def test_ctrnn_masks_come_from_the_template_rng_and_are_saved() -> None:
    """Random masks are drawn from from_config's rng once; the state restores them exactly."""
    random_masks = {"v_mask": "random", "w_mask": "random", "t_mask": "random", "w_mask_param": 0.4}
    first = template_for("CTRNN", seed=1, **random_masks)
    again = template_for("CTRNN", seed=1, **random_masks)
    other = template_for("CTRNN", seed=2, **random_masks)
    restored = BrainTemplate.from_state(first.to_state())
    for name in ("v_mask", "w_mask", "t_mask"):
        np.testing.assert_array_equal(getattr(again, name), getattr(first, name))
        np.testing.assert_array_equal(getattr(restored, name), getattr(first, name))
        assert getattr(restored, name).dtype == bool
    assert not np.array_equal(other.w_mask, first.w_mask)
    assert first.genome_size != template_for("CTRNN").genome_size


def test_ctrnn_genome_size_follows_the_documented_layout() -> None:
    """Masked V, W, T entries + bias + y0 + bounds, per the module docstring."""
    n, inputs, outputs = 6, 5, 3
    dense = template_for("CTRNN", v_mask="dense", optimize_state_boundaries="fixed")
    assert dense.genome_size == inputs * n + n * n + n * outputs + n + n
    for mode, extra in (("per_neuron", 2 * n), ("global", 2), ("fixed", 0)):
        template = template_for("CTRNN", v_mask="dense", optimize_state_boundaries=mode)
        assert template.genome_size == dense.genome_size + extra
