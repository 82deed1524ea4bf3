"""Which genes a template's fill reads, found by filling brains with probe genomes: every built-in
brain reads its whole genome_size (so none is refused), and a fill that leaves genes unread is
caught whether it copies its genes or transforms them."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from helpers import CTRNN_CASES

from neuro_evolution.brains import BrainTemplate, brain_types, get_brain_type, make_template
from neuro_evolution.brains.base import parse_brain_config
from neuro_evolution.brains.genome_reads import describe_genes, genome_reads, unread_genes_problem

IMAGE = gym.spaces.Box(0, 255, (12, 12, 3), dtype=np.uint8)
BOX = gym.spaces.Box(-3.0, 3.0, (5,), dtype=np.float32)
ACTIONS = gym.spaces.Box(-1.0, 1.0, (3,), dtype=np.float64)
# Every built-in type with the options that make brains stateful and noisy switched on.
OPTIONS: dict[str, dict[str, Any]] = {
    "CTRNN": {"number_neurons": 6, "parameter_perturbations": 0.05, "optimize_y0": True,
              "optimize_state_boundaries": "per_neuron", "v_mask": "random", "v_mask_param": 0.6},
    "LSTM": {"hidden_size": 4, "number_layers": 2},
    "FFNN": {"hidden_layers": [5]},
    "conv": {"layers": [{"channels": 3, "kernel": 3, "padding": 1}]},
    "composed": {
        "parts": [
            {"type": "conv", "layers": [{"channels": 2, "kernel": 2, "stride": 2, "padding": 1}]},
            {"type": "CTRNN", "number_neurons": 4, "parameter_perturbations": 0.05},
            {"type": "LSTM", "hidden_size": 3},
        ],
        "sizes": [0, 4],
    },
    "egocentric": {  # a weightless front end: the first part of a composed brain, on images
        "type": "composed",
        "parts": [{"type": "egocentric", "size": 3}, {"type": "FFNN", "hidden_layers": [4]}],
    },
}  # fmt: skip
IMAGES_ONLY = {"egocentric"}


def template_for(
    brain_type: str, observation_space: gym.Space = BOX, **changes: Any
) -> BrainTemplate:
    config = parse_brain_config({"type": brain_type, **OPTIONS[brain_type], **changes}, "")
    return make_template(config, observation_space, ACTIONS, np.random.default_rng(0))


@pytest.mark.parametrize("brain_type", sorted(OPTIONS))
def test_every_built_in_brain_type_reads_its_whole_genome(brain_type: str) -> None:
    """Every gene of a built-in template reaches its brain (on vector and image observations)."""
    for space in (IMAGE,) if brain_type in IMAGES_ONLY else (None, IMAGE):
        template = template_for(
            brain_type, **({} if space is None else {"observation_space": space})
        )
        reads = genome_reads(template)
        assert reads is not None and reads.complete and reads.unread.size == 0, brain_type
        assert unread_genes_problem(template) is None


def test_every_built_in_brain_type_is_checked_here() -> None:
    """OPTIONS names every built-in brain type (a new one must be added)."""
    built_in = {
        name
        for name in brain_types()
        if get_brain_type(name)[1].__module__.startswith("neuro_evolution.")
    }
    assert built_in == set(OPTIONS)


@pytest.mark.parametrize("options", CTRNN_CASES, ids=range(len(CTRNN_CASES)))
def test_every_ctrnn_option_reads_its_whole_genome(options: dict) -> None:
    """Masks, learned masks, state boundaries, y0 and input normalization: no gene is unread."""
    template = template_for("CTRNN", **options)
    reads = genome_reads(template)
    assert reads is not None and reads.complete and reads.unread.size == 0


def elman(name: str) -> Any:
    """A 3-unit template of the user brain ``name`` (tests/examples/bad_brains.py, imported here
    rather than at collection, so that the registry other test modules parametrize over at
    collection holds only built-in types) on 4 inputs and 2 discrete actions: 30 genes read."""
    from examples import bad_brains

    observations = gym.spaces.Box(-1.0, 1.0, (4,), dtype=np.float32)
    config = bad_brains.OversizedConfig(hidden_size=3)
    template_cls = getattr(bad_brains, name)
    return template_cls.from_config(config, observations, gym.spaces.Discrete(2), None)


@pytest.mark.parametrize(
    ("template_name", "extra"), [("OversizedTemplate", 2), ("SquashedOversizedTemplate", 3)]
)
def test_the_genes_a_fill_never_reads_are_found(template_name: str, extra: int) -> None:
    """A fill that copies genes (found by their values) and one that stores tanh of them (found by
    NaN probes) leave exactly the trailing genes past 30 unread."""
    template = elman(template_name)
    reads = genome_reads(template)
    assert reads is not None and reads.complete
    assert reads.unread.tolist() == list(range(30, 30 + extra))
    assert reads.read_at_most == 30
    problem = unread_genes_problem(template)
    assert problem is not None
    assert f"fill reads 30 of its genome_size {30 + extra} genes" in problem


def test_a_correct_user_brain_is_not_refused() -> None:
    """The guide's Elman brain reads all of its genome_size."""
    assert unread_genes_problem(elman("ElmanTemplate")) is None


def test_unread_genes_are_described_as_ranges() -> None:
    """Runs of genes are ranges; past three ranges the rest is an ellipsis."""
    assert describe_genes(np.array([5])) == "5"
    assert describe_genes(np.array([1, 2, 3, 7, 9, 10])) == "1-3, 7, 9-10"
    assert describe_genes(np.array([1, 3, 5, 7])) == "1, 3, 5, ..."
