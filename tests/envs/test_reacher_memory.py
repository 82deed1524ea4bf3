"""ReacherMemory-v0 step by step against a plain Reacher-v5 with the same seed and actions."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from helpers import require

require("mujoco")

REACHER_MEMORY = "neuro_evolution.envs:neuro_evolution/ReacherMemory-v0"


def test_phases_match_the_predecessors_step_boundaries():
    """Steps 1..20 show the target, 21.. zero entries 4, 5, 8, 9; steps 1..41 act with zeros;
    steps 1..40 pay 0, 41..90 Reacher's reward; step 90 truncates; the reset is unmasked."""
    env, plain = gym.make(REACHER_MEMORY), gym.make("Reacher-v5").unwrapped
    observation, _ = env.reset(seed=7)
    expected, _ = plain.reset(seed=7)
    np.testing.assert_array_equal(observation, expected)
    actions = np.random.default_rng(0).uniform(-1, 1, size=(90, 2))
    for step, action in enumerate(actions, start=1):
        observation, reward, terminated, truncated, _ = env.step(action)
        expected, plain_reward, *_ = plain.step(action if step >= 42 else np.zeros(2))
        if step > 20:
            expected[[4, 5, 8, 9]] = 0.0
        np.testing.assert_array_equal(observation, expected, err_msg=f"step {step}")
        assert reward == (plain_reward if step >= 41 else 0.0), step
        assert not terminated and truncated == (step == 90), step


def test_the_same_seed_gives_the_same_episode():
    """reset(seed=...) makes an episode a function of its seed."""
    episodes = []
    for _ in range(2):
        env = gym.make(REACHER_MEMORY, observation_frames=2, memory_frames=3, action_frames=4)
        observations = [env.reset(seed=11)[0]]
        truncated = False
        while not truncated:
            observation, _, _, truncated, _ = env.step(np.full(2, 0.5))
            observations.append(observation)
        episodes.append(np.array(observations))
    assert len(episodes[0]) == 10
    np.testing.assert_array_equal(episodes[0], episodes[1])
