"""A PBT's bad inputs are refused at start-up: one line naming the field and the fix, exit code
2, no traceback and no folder."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from helpers import pbt_config_data, write_json

from neuro_evolution import train
from neuro_evolution.pbt import cli as pbt_cli

SIGMA_RANGE = {"range": [0.1, 1.0]}


@pytest.mark.parametrize(
    ("changes", "args", "message"),
    [
        (
            {"pbt_explore": {"optimizer.sigmaa": SIGMA_RANGE}},
            [],
            "pbt.explore.optimizer.sigmaa: the config has no such setting",
        ),
        (
            {"pbt_explore": {"optimizer.population_size": {"values": []}}},
            [],
            "pbt.explore.optimizer.population_size: values must be a non-empty list",
        ),
        (
            {"pbt_explore": {"optimizer.max_speed": {"range": [1.0, 0.1]}}},
            [],
            "pbt.explore.optimizer.max_speed: range must have low < high, got [1.0, 0.1]",
        ),
        (
            {"pbt_explore": {"optimizer.max_speed": {"range": [-1.0, 0.1]}}},
            [],
            "pbt.explore.optimizer.max_speed: the value -1.0 is refused: optimizer.max_speed: must",
        ),
        (
            {"pbt_explore": {"optimizer.population_size": {"range": [4, 16]}}},
            [],
            "holds 8, not a float; explore it with a list",
        ),
        (
            {"pbt_explore": {"random_seed": {"values": [1, 2]}}},
            [],
            "pbt.explore.random_seed: cannot be explored",
        ),
        ({"pbt_explore": {}}, [], "pbt.explore: name at least one setting"),
        (
            {"pbt_interval": 3},
            [],
            "pbt.interval: 3 is not a multiple of validation.every_generations 2",
        ),
        ({"pbt_interval": 1}, [], "pbt.interval: 1 is shorter than validation.every_generations 2"),
        ({"pbt_interval": 4}, [], "number_generations: 6 is not a multiple of pbt.interval 4"),
        ({"pbt_interval": 6}, [], "number_generations: 6 is one interval of 6"),
        ({"validation": None}, [], "validation: a PBT ranks its runs by held-out validation"),
        ({}, ["--runs", "1"], "--runs must be >= 2"),
        ({"pbt_runs": 1}, [], "pbt.runs: must be an integer >= 2, got 1"),
        ({"pbt_quantile": 0.6}, [], "pbt.quantile: must be a number > 0 and <= 0.5, got 0.6"),
        ({"pbt_quantile": 0}, [], "pbt.quantile: must be a number > 0 and <= 0.5, got 0"),
        (
            {"pbt_explore": {"brain.hidden_layers": {"values": [[4], [8]]}}},
            [],
            "pbt.explore.brain.hidden_layers: changes the brain's template",
        ),
        (
            {"pbt_explore": {"optimizer.center_update": {"values": ["clipup", "adam"]}}},
            [],
            "pbt.explore.optimizer.center_update: changes which entries the optimizer state holds",
        ),
        (
            {
                "optimizer": {"type": "MU_ES", "mu": 4, "lambda_": 8},
                "pbt_explore": {"optimizer.mu": {"values": [4, 6]}},
            },
            [],
            "pbt.explore.optimizer.mu: changes the shape of a running optimizer's state "
            "'parent_genomes'",
        ),
    ],
)
def test_a_bad_pbt_input_is_one_line_exit_2_and_no_folder(
    tmp_path: Path, capsys: Any, changes: dict[str, Any], args: list[str], message: str
) -> None:
    """Unknown field, empty list, bad range, a value the config refuses, a range on an integer,
    a shared setting, interval against validation and run length, runs < 2, quantile outside
    (0, 0.5], a setting that changes the template, the state's entries or a running state's shapes:
    each one line."""
    config = write_json(tmp_path / "pbt.json", pbt_config_data(**changes))
    out = tmp_path / "out"
    with contextlib.suppress(SystemExit):
        code = pbt_cli.main([str(config), "--out", str(out), "--handler", "sequential", *args])
        assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert err.startswith("neuro_evolution.pbt: error: ") and "Traceback" not in err
    assert not out.exists()


def test_a_config_without_a_pbt_section_is_refused_naming_it(tmp_path: Path, capsys: Any) -> None:
    data = pbt_config_data()
    del data["pbt"]
    config = write_json(tmp_path / "plain.json", data)
    assert pbt_cli.main([str(config), "--out", str(tmp_path / "out")]) == 2
    assert "pbt: " in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_train_refuses_a_pbt_config_naming_the_pbt_command(tmp_path: Path, capsys: Any) -> None:
    """train runs one experiment: a config with a pbt section gets one line pointing to the
    pbt command, exit 2, no run directory."""
    config = write_json(tmp_path / "pbt.json", pbt_config_data())
    out = tmp_path / "run"
    assert train.main([str(config), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "python -m neuro_evolution.pbt CONFIG" in err, err
    assert not out.exists()
