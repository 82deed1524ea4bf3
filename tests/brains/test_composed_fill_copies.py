"""Copy-then-fill holds for composed brains even when a user's part keeps what it is handed.

The design's fast path promises that a brain owns its weights: a later change to the genome
array (the optimizer's own, which it rewrites every generation) never reaches a brain. The built-in
parts copy their slice anyway, so the contract is held where it is made, in the composed
``fill``: here with a user part that keeps the array it is handed as its weights.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from neuro_evolution.brains import Brain, BrainConfig, BrainTemplate, make_template
from neuro_evolution.brains.base import BRAINS, BatchBrain, parse_brain_config
from neuro_evolution.brains.spaces import SpaceAdapter
from neuro_evolution.core.schema import config_class
from neuro_evolution.support.frozen import frozen_dataclass

OBSERVATION = gym.spaces.Box(-1.0, 1.0, (4,), dtype=np.float64)
ACTION = gym.spaces.Box(-1.0, 1.0, (2,), dtype=np.float64)


@config_class
class KeeperConfig(BrainConfig):
    """Options of the test's ``KeeperOfSlices`` brain (none)."""


class KeeperBrain(Brain):
    """A linear layer whose weights are whatever array ``fill`` was handed (no copy)."""

    __slots__ = ("io", "weights")

    def __init__(self, io: SpaceAdapter):
        self.io = io
        self.weights = np.zeros(io.output_size * io.input_size)

    def reset(self, rng: np.random.Generator) -> None:
        """Stateless."""

    def step(self, observation: Any) -> Any:
        matrix = self.weights.reshape(self.io.output_size, self.io.input_size)
        return self.io.decode(np.tanh(matrix @ self.io.encode(observation)))


class KeeperBatchBrain(BatchBrain):
    """P linear layers whose weights are the (P, G) array ``batch_brain`` was handed."""

    __slots__ = ("io", "weights")

    def __init__(self, io: SpaceAdapter, weights: np.ndarray):
        self.io = io
        self.weights = weights

    def reset(self, rngs: list[np.random.Generator]) -> None:
        """Stateless."""

    def step(self, observations: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
        matrices = self.weights.reshape(-1, self.io.output_size, self.io.input_size)
        inputs = self.io.encode_batch(observations)
        return self.io.decode_batch(np.tanh(np.einsum("poi,pi->po", matrices, inputs)))


@frozen_dataclass(eq=False)
class KeeperTemplate(BrainTemplate):
    """A user's template whose ``fill`` keeps the genome it is handed: legal for a part, as the
    composed template hands it a copy of its own slice."""

    config: KeeperConfig
    io: SpaceAdapter
    genome_size: int

    @classmethod
    def from_config(cls, config, observation_space, action_space, rng) -> KeeperTemplate:
        io = SpaceAdapter.from_spaces(observation_space, action_space)
        return cls(config=config, io=io, genome_size=io.output_size * io.input_size)

    def new_brain(self) -> KeeperBrain:
        return KeeperBrain(self.io)

    def fill(self, brain: KeeperBrain, genome: np.ndarray) -> None:
        brain.weights = genome  # keeps what it is handed

    def batch_brain(self, genomes: np.ndarray) -> KeeperBatchBrain:
        return KeeperBatchBrain(self.io, genomes)  # keeps what it is handed


@pytest.fixture(autouse=True)
def keeper_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The user part is registered for this module's tests only: it breaks the rule on purpose,
    so the checks that tests/brains/test_brains.py runs over every registered type must not see
    it."""
    monkeypatch.setitem(BRAINS._entries, "KeeperOfSlices", (KeeperConfig, KeeperTemplate))


def composed_template() -> BrainTemplate:
    section = {
        "type": "composed",
        "parts": [{"type": "FFNN", "hidden_layers": [5]}, {"type": "KeeperOfSlices"}],
        "sizes": [3],
    }
    config = parse_brain_config(section, "brain")
    return make_template(config, OBSERVATION, ACTION, np.random.default_rng(0))


def actions(brain: Brain, observations: np.ndarray) -> np.ndarray:
    brain.reset(np.random.default_rng(1))
    return np.array([brain.step(observation) for observation in observations])


def test_a_part_that_keeps_its_slice_shares_no_memory_with_the_genome() -> None:
    """Rule (design, copy-then-fill): the composed ``fill`` hands each part a copy of its slice,
    so a part that keeps what it is handed still owns its weights: rewriting the genome array
    afterwards (as an optimizer does with its next ask) changes nothing the brain does."""
    template = composed_template()
    rng = np.random.default_rng(2)
    genome, other = rng.normal(0.0, 0.7, (2, template.genome_size))
    observations = rng.uniform(-1.0, 1.0, (25, 4))
    expected = actions(template.build(genome.copy()), observations)
    for brain in (template.build(genome), template.new_brain()):
        template.fill(brain, genome)
        keeper = brain.parts[1]
        assert not np.shares_memory(keeper.weights, genome)
        genome_before = genome.copy()
        genome[:] = other  # the optimizer reuses its array
        np.testing.assert_array_equal(actions(brain, observations), expected)
        genome[:] = genome_before


def test_a_batch_part_that_keeps_its_slice_shares_no_memory_with_the_genomes() -> None:
    """The same rule for the batch brain of the lockstep handlers: ``batch_brain`` hands each
    part a copy of its columns, so rewriting the (P, G) genome array changes nothing."""
    template = composed_template()
    assert template.supports_batch
    rng = np.random.default_rng(3)
    genomes, others = rng.normal(0.0, 0.7, (2, 5, template.genome_size))
    observations = rng.uniform(-1.0, 1.0, (20, 5, 4))
    expected_brain = template.batch_brain(genomes.copy())
    expected_brain.reset([np.random.default_rng(i) for i in range(5)])
    expected = [expected_brain.step(observation) for observation in observations]
    brain = template.batch_brain(genomes)
    assert not np.shares_memory(brain.parts[1].weights, genomes)
    genomes[:] = others
    brain.reset([np.random.default_rng(i) for i in range(5)])
    for observation, want in zip(observations, expected, strict=True):
        np.testing.assert_array_equal(brain.step(observation), want)
