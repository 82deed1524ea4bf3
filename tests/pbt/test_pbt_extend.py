"""A PBT folder continues when the setup is the same, compared as resolved configs:
``--generations N`` extends a finished PBT to one identical to a PBT given N from the start;
what cannot be extended exactly (more runs, a shorter run, another config) is refused in one
line that says what may change; a folder of an earlier release (a field added since, at its
default) continues; ``--set`` works as on train."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import pbt_config_data, pbt_run_files, write_json

from neuro_evolution.pbt import cli as pbt_cli
from neuro_evolution.pbt.lineage import STATE_FILE, setup_hash

LATER_FIELD = ("episode_runner", "training_reward_shift")  # a field an earlier release lacked


def pbt(config: Path, out: Path, *more: str) -> int:
    with contextlib.redirect_stdout(io.StringIO()):
        return pbt_cli.main([str(config), "--out", str(out), "--quiet", "--handler", "sequential"]
                            + list(more))  # fmt: skip


def state_of(folder: Path) -> dict[str, Any]:
    return json.loads((folder / STATE_FILE).read_text())


@pytest.fixture(scope="module")
def straight(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny PBT (4 runs x 3 intervals of 2) run straight through."""
    folder = tmp_path_factory.mktemp("pbt")
    config = write_json(folder / "pbt.json", pbt_config_data())
    assert pbt(config, folder / "straight") == 0
    return folder / "straight"


@pytest.fixture
def short(tmp_path: Path) -> tuple[Path, Path]:
    """(config, folder) of the same PBT finished after 2 intervals (number_generations 4)."""
    config = write_json(tmp_path / "pbt.json", pbt_config_data(number_generations=4))
    assert pbt(config, tmp_path / "short") == 0
    return config, tmp_path / "short"


def test_more_generations_extend_a_finished_pbt_to_the_longer_pbt(
    short: tuple[Path, Path], straight: Path
) -> None:
    """Ended after 2 intervals, then --generations 6: the copies after interval 2 are made as
    the 6-generation PBT made them; lineage, logs, configs, optimizer state and pbt_state.json
    equal that PBT's. The command again (without --generations) keeps the longer length."""
    config, folder = short
    assert pbt(config, folder, "--generations", "6") == 0
    assert pbt_run_files(folder) == pbt_run_files(straight)
    assert state_of(folder) == state_of(straight)
    assert pbt(config, folder) == 0
    assert state_of(folder) == state_of(straight)


@pytest.mark.parametrize(
    ("more", "message"),
    [
        (
            ["--runs", "6", "--generations", "6"],
            "--runs 6: {folder} holds a PBT of 4 runs, and that number cannot change (the start "
            "values and every copy so far were drawn for 4 runs); give another --out for a new "
            "PBT, or --generations N (a multiple of 2 above 4) to train every run on",
        ),
        (
            ["--set", "optimizer.radius_init=2.0"],
            "{folder}: holds a PBT whose config differs in optimizer.radius_init; only "
            "--generations may grow",
        ),
        (["--set", "pbt.quantile=0.5"], "{folder}: holds a PBT of another pbt section"),
    ],
)
def test_what_cannot_be_extended_exactly_is_refused_and_nothing_is_written(
    short: tuple[Path, Path], more: list[str], message: str, capsys: Any
) -> None:
    """More runs, another experiment key or pbt section: one line saying
    what may change, exit 2, the folder's files unchanged."""
    config, folder = short
    before = {path: path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    capsys.readouterr()
    assert pbt(config, folder, *more) == 2
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 1 and message.format(folder=folder) in errors[0], errors
    assert {path: path.read_bytes() for path in folder.rglob("*") if path.is_file()} == before


def test_fewer_generations_are_refused_and_the_command_without_them_keeps_the_length(
    straight: Path, capsys: Any
) -> None:
    """A PBT of 6 generations is not cut to 4 (one line, exit 2, nothing written)."""
    config = straight.parent / "pbt.json"
    before = (straight / STATE_FILE).read_bytes()
    capsys.readouterr()
    assert pbt(config, straight, "--generations", "4") == 2
    assert capsys.readouterr().err.splitlines() == [
        f"neuro_evolution.pbt: error: number_generations 4: {straight} holds a PBT of 6 "
        "generations; it can be extended (--generations N, a multiple of 2 above 6), not "
        "shortened; without --generations it keeps its length"
    ]
    assert (straight / STATE_FILE).read_bytes() == before


def as_earlier_release(folder: Path) -> None:
    """Rewrite pbt_state.json as a release without LATER_FIELD wrote it: every stored config
    without the field, the setup hash over the experiment without it."""
    state = state_of(folder)
    section, key = LATER_FIELD
    for data in state["configs"].values():
        del data[section][key]
    experiment = json.loads(json.dumps(next(iter(state["configs"].values()))))
    experiment["random_seed"] = state["lineage"]["run-0"]["seed"]
    experiment["optimizer"]["max_speed"] = 0.3  # the file's values of the explored keys
    experiment["optimizer"]["population_size"] = 8
    pbt_section = {"interval": 2, "explore": pbt_config_data()["pbt"]["explore"], "runs": 4}
    pbt_section |= {"quantile": 0.25, "perturb_factors": [0.8, 1.2], "seed": 0}
    state["setup"] = setup_hash(experiment, pbt_section)
    (folder / STATE_FILE).write_text(json.dumps(state))


def test_a_folder_of_an_earlier_release_continues(short: tuple[Path, Path], straight: Path) -> None:
    """A field added since, at its default, is no change: the same command continues the
    folder (it has ended: nothing to do), and --generations extends it as above."""
    config, folder = short
    as_earlier_release(folder)
    assert state_of(folder)["setup"] != state_of(straight)["setup"]
    assert pbt(config, folder) == 0  # the same command: nothing left to do
    as_earlier_release(folder)
    assert pbt(config, folder, "--generations", "6") == 0
    assert pbt_run_files(folder) == pbt_run_files(straight)
    assert state_of(folder) == state_of(straight)


def test_set_on_pbt_applies_to_every_run_and_a_type_switch_drops_keys(
    tmp_path: Path, capsys: Any
) -> None:
    """--set optimizer.radius_init=2.0 reaches every run's config; --set optimizer.type=SNES
    refuses the explore key SNES lacks in one line alone; without that key, the switch drops
    the PGPE keys in one warning line and runs."""
    config = write_json(tmp_path / "pbt.json", pbt_config_data(number_generations=4))
    assert pbt(config, tmp_path / "set", "--set", "optimizer.radius_init=2.0") == 0
    for data in state_of(tmp_path / "set")["configs"].values():
        assert data["optimizer"]["radius_init"] == 2.0
    capsys.readouterr()
    assert pbt(config, tmp_path / "snes", "--set", "optimizer.type=SNES") == 2
    (line,) = capsys.readouterr().err.splitlines()  # no warning beside a one-line error
    assert line.startswith("neuro_evolution.pbt: error: pbt.explore.optimizer.max_speed")
    explore = pbt_config_data(number_generations=4)
    explore["pbt"]["explore"] = {
        key: value
        for key, value in explore["pbt"]["explore"].items()
        if key != "optimizer.max_speed"
    }
    switched = write_json(tmp_path / "switched.json", explore)
    capsys.readouterr()
    assert pbt(switched, tmp_path / "snes2", "--set", "optimizer.type=SNES") == 0
    assert (
        "neuro_evolution.pbt: warning: optimizer.type=SNES: dropped radius_init (PGPE keys that "
        "SNES does not take)" in capsys.readouterr().err.splitlines()
    )
    assert not (tmp_path / "snes").exists()
