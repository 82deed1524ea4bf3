"""A look inside a brain: ``replay --brain-state DIR`` records what each brain type carries."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import small_config

from neuro_evolution import replay
from neuro_evolution.config.tree import parse_config
from neuro_evolution.run.directory import load_candidate
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.support.atomic import load_npz

BRAINS = {
    "CTRNN": ({"type": "CTRNN", "number_neurons": 5}, {"state.neuron_state": (5,)}),
    "LSTM": (
        {"type": "LSTM", "hidden_size": 3, "number_layers": 2},
        {"state.hidden_state": (2, 3), "state.cell_state": (2, 3)},
    ),
    "FFNN": ({"type": "FFNN", "hidden_layers": [4]}, {}),
    "composed": (
        {"type": "composed", "sizes": [3],
         "parts": [{"type": "FFNN", "hidden_layers": []}, {"type": "CTRNN", "number_neurons": 4}]},
        {"state.part1.neuron_state": (4,)},
    ),
}  # fmt: skip


def trained_run(tmp_path, brain: dict, normalize: bool = True):
    """A two-generation CartPole run directory of ``brain`` (normalized observations)."""
    extra = {"observation_normalization": {}} if normalize else {}
    config = small_config(number_generations=2, brain=brain, **extra)
    out = tmp_path / "run"
    Experiment(parse_config(config), run_dir=out).run()
    return out


@pytest.mark.parametrize("name", sorted(BRAINS))
def test_brain_state_arrays_are_aligned_and_reproduce_the_brain_step_by_step(
    tmp_path, capsys, name
):
    """Row t of every array is step t, and re-stepping a fresh brain on the recorded (raw,
    then scaled) observations gives the recorded actions and states: the file shows what the
    network carried, not something computed beside it."""
    brain_config, state_shapes = BRAINS[name]
    run = trained_run(tmp_path, brain_config)
    folder = tmp_path / "state"
    returns = replay.replay(run, episodes=2, seed=5, brain_state=folder)
    printed = capsys.readouterr().out
    candidate, template = load_candidate(run / "candidate.npz")
    for episode in range(2):
        arrays = load_npz(folder / f"episode-{episode}.npz")
        assert (folder / f"episode-{episode}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        steps = len(arrays["rewards"])
        assert set(arrays) == {"observations", "actions", "rewards", *state_shapes}
        assert arrays["rewards"].sum() == pytest.approx(returns[episode])
        assert arrays["observations"].shape == (steps, 4)
        assert arrays["actions"].shape == (steps,)
        for key, shape in state_shapes.items():
            assert arrays[key].shape == (steps, *shape)
        brain = template.build(candidate.genome)
        brain.reset(np.random.default_rng(5 + episode))
        for t in range(steps):
            action = brain.step(candidate.scaler.apply(arrays["observations"][t]))
            assert action == arrays["actions"][t]
            for key, value in brain.internal_state().items():
                np.testing.assert_array_equal(value, arrays["state." + key][t])
    assert ("no internal state" in printed) == (not state_shapes)


def test_a_stateless_brain_says_so_and_still_records_observations_actions_rewards(tmp_path, capsys):
    run = trained_run(tmp_path, BRAINS["FFNN"][0], normalize=False)
    assert replay.main([str(run), "--episodes", "1", "--brain-state", str(tmp_path / "s")]) == 0
    printed = capsys.readouterr().out
    assert "brain FFNN keeps no internal state" in printed
    assert set(load_npz(tmp_path / "s" / "episode-0.npz")) == {"observations", "actions", "rewards"}


@pytest.mark.parametrize("name", ["CTRNN", "LSTM"])
def test_internal_state_is_a_copy_the_caller_cannot_change_the_brain_through(tmp_path, name):
    run = trained_run(tmp_path, BRAINS[name][0], normalize=False)
    candidate, template = load_candidate(run / "candidate.npz")
    brain = template.build(candidate.genome)
    brain.reset(np.random.default_rng(0))
    brain.step(np.full(4, 0.1))
    before = {key: value.copy() for key, value in brain.internal_state().items()}
    for value in brain.internal_state().values():
        value[...] = 99.0
    for key, value in brain.internal_state().items():
        np.testing.assert_array_equal(value, before[key])
