"""Partial observation wrappers (``ObservationIndices``, ``ObservationNoise``): one-line errors
naming the field, the sliced observation space, noise drawn from the episode seed alone, and
identical results on the sequential, mp and vectorized handlers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from helpers import (
    as_tuples,
    config_setup,
    sequential_results,
    small_config,
    start_up_error,
)

from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.schema import ConfigError, parse
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
from neuro_evolution.evaluation.pools.process_pool import MultiprocessingHandler
from neuro_evolution.support.seeds import observation_noise_rng

INDICES = "ObservationIndices"
NOISE = "ObservationNoise"
VELOCITIES = [1, 3]  # CartPole-v1: cart velocity and pole angular velocity


def cartpole(*wrappers: dict[str, Any]) -> dict[str, Any]:
    return {"id": "CartPole-v1", "wrappers": list(wrappers)}


def make_env(environment: dict[str, Any]) -> gym.Env:
    return parse(EnvironmentConfig, environment, "environment").make()


def noisy_observations(env: gym.Env, seed: int, steps: int = 5) -> np.ndarray:
    """The observations of one episode from ``reset(seed=seed)``, always pushing left."""
    observation, _ = env.reset(seed=seed)
    seen = [observation]
    for _ in range(steps):
        observation, *_ = env.step(0)
        seen.append(observation)
    return np.array(seen)


BAD = {
    "index out of range": (
        cartpole({"name": INDICES, "kwargs": {"keep": [0, 4]}}),
        "environment.wrappers[0].kwargs.keep: index 4 is out of range: the observation has 4 "
        "elements, indices 0..3",
    ),
    "out of range after an earlier wrapper": (
        cartpole(
            {"name": INDICES, "kwargs": {"drop": VELOCITIES}},
            {"name": INDICES, "kwargs": {"keep": [2]}},
        ),
        "environment.wrappers[1].kwargs.keep: index 2 is out of range: the observation has 2 "
        "elements, indices 0..1",
    ),
    "negative index": (
        cartpole({"name": INDICES, "kwargs": {"drop": [-1]}}),
        "environment.wrappers[0].kwargs.drop: indices are integers 0, 1, ... (size - 1), got -1",
    ),
    "duplicate index": (
        cartpole({"name": INDICES, "kwargs": {"drop": [1, 1]}}),
        "environment.wrappers[0].kwargs.drop: index 1 is listed twice",
    ),
    "both keep and drop": (
        cartpole({"name": INDICES, "kwargs": {"keep": [0], "drop": [1]}}),
        "environment.wrappers[0].kwargs: give exactly one of keep (the indices shown) and drop",
    ),
    "every index dropped": (
        cartpole({"name": INDICES, "kwargs": {"drop": [0, 1, 2, 3]}}),
        "environment.wrappers[0].kwargs.drop: drops all 4 elements of the observation",
    ),
    "not a Box observation": (
        {"id": "FrozenLake-v1", "wrappers": [{"name": INDICES, "kwargs": {"keep": [0]}}]},
        "environment.wrappers[0]: ObservationIndices needs a 1-D Box observation, this env's is "
        "Discrete(16); list FlattenObservation before it",
    ),
    "noise std of the wrong length": (
        cartpole({"name": NOISE, "kwargs": {"std": [0.1, 0.1]}}),
        "environment.wrappers[0].kwargs.std: has 2 values, but the observation has 4 elements",
    ),
    "negative noise std": (
        cartpole({"name": NOISE, "kwargs": {"std": -0.1}}),
        "environment.wrappers[0].kwargs.std: standard deviations are finite numbers >= 0",
    ),
    "noise on a Discrete observation": (
        {"id": "FrozenLake-v1", "wrappers": [{"name": NOISE, "kwargs": {"std": 0.1}}]},
        "environment.wrappers[0]: ObservationNoise needs a Box observation",
    ),
}


@pytest.mark.parametrize("case", BAD)
def test_a_bad_argument_is_one_line_naming_the_field_and_nothing_is_written(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """train refuses at start-up: exit 2, one stderr line with the field and the valid range."""
    environment, words = BAD[case]
    monkeypatch.chdir(tmp_path)
    err = start_up_error(environment, tmp_path, capsys)
    assert err.startswith(f"neuro_evolution.train: error: {words}")


def test_arguments_that_need_no_env_are_refused_when_the_config_is_read() -> None:
    """Both keep and drop, a duplicate, a negative std: ConfigError from parsing alone."""
    for case in ("both keep and drop", "duplicate index", "negative index", "negative noise std"):
        environment, words = BAD[case]
        with pytest.raises(ConfigError) as raised:
            parse_config(small_config(environment=environment))
        assert str(raised.value).startswith(words)


def test_the_short_and_the_full_name_are_the_same_wrapper() -> None:
    """``ObservationIndices`` and ``neuro_evolution.evaluation.episodes.observation_wrappers:...``
    name the same wrapper."""
    full = "neuro_evolution.evaluation.episodes.observation_wrappers:ObservationIndices"
    short = make_env(cartpole({"name": INDICES, "kwargs": {"keep": [0]}}))
    long = make_env(cartpole({"name": full, "kwargs": {"keep": [0]}}))
    assert type(short) is type(long)


def test_drop_and_keep_slice_the_space_and_every_observation() -> None:
    """The space's low/high/dtype are the kept elements' and each observation is obs[kept];
    keep shows the indices in the order given."""
    bare = make_env(cartpole())
    dropped = make_env(cartpole({"name": INDICES, "kwargs": {"drop": VELOCITIES}}))
    kept = make_env(cartpole({"name": INDICES, "kwargs": {"keep": [2, 0]}}))
    full_space = bare.observation_space
    for env, indices in ((dropped, [0, 2]), (kept, [2, 0])):
        space = env.observation_space
        assert isinstance(space, gym.spaces.Box) and space.shape == (2,)
        assert space.dtype == full_space.dtype
        np.testing.assert_array_equal(space.low, full_space.low[indices])
        np.testing.assert_array_equal(space.high, full_space.high[indices])
        np.testing.assert_array_equal(
            noisy_observations(env, 3), noisy_observations(bare, 3)[:, indices]
        )


def test_noise_is_a_function_of_the_episode_seed_alone() -> None:
    """Noise = std * the draws of ``observation_noise_rng(reset seed)``: the same for a fresh env
    and one that ran other episodes before, whatever numpy's global state; another seed gives
    other noise; an element with std 0 stays exact."""
    std = [0.5, 0.0, 0.1, 0.2]
    bare = make_env(cartpole())
    noisy = make_env(cartpole({"name": NOISE, "kwargs": {"std": std}}))
    clean = noisy_observations(bare, 21)
    np.random.seed(1)
    first = noisy_observations(noisy, 21)
    noisy_observations(noisy, 5)  # another episode in between
    np.random.seed(2)
    again = noisy_observations(noisy, 21)
    np.testing.assert_array_equal(first, again)
    expected = clean + np.array(std) * observation_noise_rng(21).standard_normal(clean.shape)
    np.testing.assert_array_equal(first, expected.astype(np.float32))
    np.testing.assert_array_equal(first[:, 1], clean[:, 1])
    assert not np.array_equal(first, clean)
    other = noisy_observations(noisy, 22) - noisy_observations(bare, 22)
    assert not np.allclose(other, first - clean)
    assert first.dtype == noisy.observation_space.dtype == np.float32


HANDLERS = ["mp-forkserver", "mp-forkserver-vectorized", "vectorized"]


@pytest.mark.parametrize("case", HANDLERS)
def test_cartpole_without_velocities_and_with_noise_is_identical_on_every_handler(
    case: str,
) -> None:
    """CartPole-v1 with the velocities dropped and noise added: mp (2 workers, plain or
    vectorized) and vectorized (SyncVectorEnv sub-envs reset with per-lane seeds) match the
    sequential handler exactly, and the noise really changes the results."""
    partial = cartpole(
        {"name": INDICES, "kwargs": {"drop": VELOCITIES}},
        {"name": NOISE, "kwargs": {"std": [0.05, 0.02]}},
    )
    setup = config_setup(small_config(environment=partial))
    reference = sequential_results(setup)
    assert setup.template.io.input_size == 2
    without_noise = config_setup(small_config(environment=cartpole(partial["wrappers"][0])))
    assert sequential_results(without_noise) != reference
    if case == "vectorized":
        handler: VectorizedHandler | MultiprocessingHandler = VectorizedHandler()
    else:
        handler = MultiprocessingHandler(
            workers=2, start_method="forkserver", vectorize=case.endswith("vectorized")
        )
    with handler:
        handler.start(setup.template, setup.spec)
        assert as_tuples(handler.batch_evaluate(setup.genomes, setup.seeds)) == reference
