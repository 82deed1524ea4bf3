"""Inline JSON objects in ``--set`` name their run directories by what tells them apart (their
``type``, else the leaves that differ), not by their escaped JSON text; a sweep folder an earlier
release named by that text is resumed in place."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from neuro_evolution.config.overrides import MAX_NAME, object_names
from neuro_evolution.sweep import cli as sweep_cli
from neuro_evolution.sweep.grid import expand_grid, parse_setting, settings_name

CARTPOLE = Path(__file__).resolve().parents[2] / "configs" / "cartpole.json"
PGPE = {"type": "PGPE", "population_size": 8, "radius_init": 3.0, "max_speed": 0.3}
SNES = {"type": "SNES", "population_size": 8, "stdev_init": 0.5}


def test_objects_of_distinct_types_are_named_by_their_type() -> None:
    setting = parse_setting(f"optimizer={json.dumps(PGPE)},{json.dumps(SNES)}")
    assert [setting.name(0), setting.name(1)] == ["PGPE", "SNES"]


def test_objects_of_one_type_are_named_by_the_leaves_that_differ() -> None:
    """Nested leaves by dotted path, ``type`` first where it differs, ``unset`` where one
    object lacks a leaf the other has."""
    first = {"type": "SNES", "stdev_init": 0.5, "bounds": {"low": -1, "high": 1}}
    second = {"type": "SNES", "stdev_init": 0.5, "bounds": {"low": -2, "high": 1}}
    third = {"type": "SNES", "stdev_init": 0.3}
    assert object_names((first, second, third)) == (
        "bounds.high=1+bounds.low=-1+stdev_init=0.5",
        "bounds.high=1+bounds.low=-2+stdev_init=0.5",
        "bounds.high=unset+bounds.low=unset+stdev_init=0.3",
    )
    assert object_names(({"type": "SNES"}, {"type": "SNES", "sigma": 0.1})) == (
        "sigma=unset",
        "sigma=0.1",
    )


def test_a_long_name_is_cut_and_keeps_a_hash_of_its_value() -> None:
    long = [{"type": "SNES", "note": "x" * 100 + str(k)} for k in (1, 2)]
    names = object_names(tuple(long))
    assert all(len(name) == MAX_NAME for name in names) and names[0] != names[1]
    assert names[0][: MAX_NAME - 9] == names[1][: MAX_NAME - 9]


def test_values_that_are_not_all_objects_keep_their_json_text() -> None:
    setting = parse_setting("brain.hidden=[4,4],[8]")
    assert [setting.name(0), setting.name(1)] == ["[4,4]", "[8]"]
    mixed = parse_setting('optimizer.bounds={"low":-1,"high":1},null')
    assert mixed.name(1) == "null" and mixed.name(0) == '{"low":-1,"high":1}'


def test_the_grid_names_each_run_by_the_short_name() -> None:
    data = json.loads(CARTPOLE.read_text())
    setting = parse_setting(f"optimizer={json.dumps(PGPE)},{json.dumps(SNES)}")
    plans = expand_grid(data, [setting], [1])
    assert [plan.name for plan in plans] == ["optimizer=PGPE/seed-1", "optimizer=SNES/seed-1"]
    old = settings_name((("optimizer", json.dumps(PGPE, separators=(",", ":"))),))
    assert plans[0].legacy_name == f"{old}/seed-1" and "__type__" in old


@pytest.fixture
def in_tmp(tmp_path: Path) -> Path:
    before = Path.cwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(before)


def test_a_sweep_of_inline_objects_runs_in_the_short_directories_and_resumes_old_ones(
    in_tmp: Path,
) -> None:
    """A real sweep over two inline optimizer sections: the PGPE run goes to ``optimizer=PGPE``;
    a SNES run an earlier release had put under its JSON text is found there and resumed (it
    trains its second generation there; no new directory is made for it)."""
    value = f"optimizer={json.dumps(PGPE)},{json.dumps(SNES)}"
    plans = expand_grid(json.loads(CARTPOLE.read_text()), [parse_setting(value)], [1])
    old_snes = in_tmp / "sweep" / plans[1].legacy_name
    base = ["--set", value, "--seeds", "1", "--handler", "sequential", "--out", "sweep", "--quiet"]
    assert sweep_cli.main([str(CARTPOLE), *base, "--generations", "1"]) == 0
    old_snes.parent.mkdir()  # as the earlier release had named it
    (in_tmp / "sweep" / plans[1].name).rename(old_snes)
    (in_tmp / "sweep" / plans[1].name).parent.rmdir()
    assert sweep_cli.main([str(CARTPOLE), *base, "--generations", "2"]) == 0
    assert sorted(p.name for p in (in_tmp / "sweep").iterdir() if p.is_dir()) == sorted(
        ["optimizer=PGPE", old_snes.parent.name]
    )
    status = json.loads((old_snes / "training_status.json").read_text())
    assert status["generation"] == 2, status
