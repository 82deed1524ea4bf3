"""POPGym (the ``popgym`` extra) through ``module:EnvId``: a run on a forkserver pool, handler
identity on Discrete, Tuple and MultiDiscrete observations, and the one-line refusal of an
observation space no brain takes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    assert_handler_matches_sequential,
    config_setup,
    require,
    small_config,
    without_time,
)

from neuro_evolution import train
from neuro_evolution.config.tree import parse_config
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.run.experiment import Experiment

require("popgym")

REPEAT_PREVIOUS = "popgym:popgym-RepeatPreviousEasy-v0"  # Discrete(4) observations and actions


def popgym_config(environment: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A tiny PGPE + CTRNN run on a POPGym env (episodes end by the env: 51 steps here)."""
    data = small_config(
        environment=environment,
        optimizer={"type": "PGPE", "population_size": 8, "radius_init": 3.0},
        brain={"type": "CTRNN", "number_neurons": 4, "delta_t": 1.0},
        episode_runner={"number_fitness_runs": 2},
        number_generations=2,
    )
    data.update(changes)
    return data


def test_a_popgym_run_on_a_forkserver_pool_matches_sequential() -> None:
    """Two generations on 2 forkserver workers, which import popgym themselves for the
    ``popgym:`` id: the log and hall of fame equal the sequential run's."""
    mp = {"handler": "mp", "workers": 2, "start_method": "forkserver"}
    data = popgym_config({"id": REPEAT_PREVIOUS}, evaluation=mp)
    pooled = Experiment(parse_config(data))
    try:
        pooled.run()
    finally:
        pooled.close()
    assert len(pooled.log) == 2 and pooled.log[-1].env_steps_total == 2 * 8 * 2 * 51
    assert -1.0 <= pooled.log[-1].fitness_max <= 1.0  # POPGym's own returns, not reshaped
    reference = Experiment(parse_config(data), handler=SequentialHandler())
    try:
        reference.run()
    finally:
        reference.close()
    assert without_time(pooled.log) == without_time(reference.log)
    assert (pooled.hall_of_fame.genomes == reference.hall_of_fame.genomes).all()


ENVS = {
    "Discrete": {"id": REPEAT_PREVIOUS},
    "Tuple": {"id": "popgym:popgym-AutoencodeEasy-v0", "wrappers": ["FlattenObservation"]},
    "MultiDiscrete": {"id": "popgym:popgym-CountRecallEasy-v0", "wrappers": ["FlattenObservation"]},
}
INPUTS = {"Discrete": 4, "Tuple": 2 + 4, "MultiDiscrete": 2 + 2}  # one-hot blocks


@pytest.mark.parametrize("space", ENVS)
@pytest.mark.parametrize("case", ["mp-forkserver", "vectorized"])
def test_popgym_results_are_identical_on_every_handler(space: str, case: str) -> None:
    """A Discrete observation (one-hot), a Tuple and a MultiDiscrete one (one-hot blocks by
    FlattenObservation): mp and vectorized (a SyncVectorEnv of POPGym envs) match sequential."""
    setup = config_setup(popgym_config(ENVS[space]), count=12)
    assert setup.template.io.input_size == INPUTS[space]
    assert_handler_matches_sequential(setup, case)


@pytest.mark.parametrize("space", ["Tuple", "MultiDiscrete"])
def test_an_unwrapped_tuple_or_multidiscrete_observation_is_one_line_naming_the_wrapper(
    space: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """Without FlattenObservation: exit 2, one line naming the space and the wrapper."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(popgym_config({"id": ENVS[space]["id"]})))
    assert train.main([str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"observation space {space}(" in err and "list FlattenObservation in" in err
    assert not (tmp_path / "runs").exists()
