"""The ``observers`` section is a list of ``{"type": NAME, ...options}`` entries: a user's
registered observer (``tests/examples/columns_observer.py``, loaded by the config's
``imports``) switches on from JSON; the old object form, an unknown type and a type listed
twice are refused in one line."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import small_config

from neuro_evolution import replay, train
from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.observers.options import stored_observers
from neuro_evolution.run.directory import read_log

PLUGIN = "examples.columns_observer"


def config_file(tmp_path: Path, observers: Any, **changes: Any) -> Path:
    path = tmp_path / "observed.json"
    data = small_config(**{"number_generations": 3, "observers": observers, **changes})
    path.write_text(json.dumps(data))
    return path


def test_a_users_observer_switches_on_from_its_entry_in_the_list(tmp_path: Path) -> None:
    """An entry naming the user's registered type, its other keys its options: the observer
    writes the chosen columns of every generation, and the resolved config.json keeps the
    entry with its type (so a resume makes the same observer)."""
    entry = {"type": "columns", "file": "mirror.csv", "columns": ["generation", "best_so_far"]}
    config = config_file(tmp_path, [entry], imports=[PLUGIN])
    run_dir = tmp_path / "run"
    assert train.main([str(config), "--out", str(run_dir), "--quiet"]) == 0
    with (run_dir / "mirror.csv").open() as file:
        mirrored = list(csv.DictReader(file))
    log = read_log(run_dir / "log.csv")
    assert len(mirrored) == len(log) == 3
    for row, logged in zip(mirrored, log):
        assert int(row["generation"]) == logged["generation"]
        assert float(row["best_so_far"]) == logged["best_so_far"]
    resolved = json.loads((run_dir / "config.json").read_text())
    assert resolved["observers"] == [entry]
    given = json.loads(config.read_text())
    assert parse_config(resolved).observers == parse_config(given).observers


def test_the_object_form_is_refused_in_one_line_that_shows_the_list_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``{"tensorboard": {}, "mlflow": {...}}`` is refused (exit 2, no run directory) by a line
    naming ``observers`` and spelling out the list that means the same."""
    config = config_file(tmp_path, {"tensorboard": {}, "mlflow": {"experiment": "e"}})
    out = tmp_path / "run"
    assert train.main([str(config), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.endswith(
        'observers: must be a list of {"type": NAME, ...options} entries, not an object: write '
        '[{"type": "tensorboard"}, {"type": "mlflow", "experiment": "e"}]'
    )
    assert not out.exists()


def test_a_run_directory_stored_with_the_object_form_replays_and_resumes_unchanged(
    tmp_path: Path,
) -> None:
    """A run written before the list form keeps ``{"tensorboard": null, "mlflow": null}`` in
    its config.json: replay and resume read it as the list it means, so an existing run replays
    to the same returns and extends; a stored object's set entries become list entries."""
    config = config_file(tmp_path, [], number_generations=2)
    run_dir = tmp_path / "run"
    assert train.main([str(config), "--out", str(run_dir), "--quiet"]) == 0
    returns = replay.replay(run_dir, episodes=2, rank=0)
    stored = json.loads((run_dir / "config.json").read_text())
    stored["observers"] = {"tensorboard": None, "mlflow": None}
    (run_dir / "config.json").write_text(json.dumps(stored))
    assert replay.replay(run_dir, episodes=2, rank=0) == returns
    assert train.main(["--resume", str(run_dir), "--generations", "3", "--quiet"]) == 0
    assert len(read_log(run_dir / "log.csv")) == 3
    old = {"tensorboard": {"directory": "tb"}, "mlflow": None}
    assert stored_observers(old) == [{"type": "tensorboard", "directory": "tb"}]


@pytest.mark.parametrize(
    ("observers", "message"),
    [
        (
            [{"type": "tensorbord"}],
            "observers[0].type: unknown observer 'tensorbord'. Did you mean `tensorboard`? Known "
            "observers: tensorboard, mlflow",
        ),
        (
            [{"type": "tensorboard"}, {"type": "tensorboard", "directory": "tb2"}],
            "observers[1].type: 'tensorboard' is listed already (entry 0); list each observer once",
        ),
        ([{"directory": "tb"}], "observers[0].type: is required (one of tensorboard, mlflow"),
        ([{"type": "mlflow", "experimnt": "e"}], "observers[0].experimnt: unknown key for Mlflow"),
    ],
)
def test_a_bad_entry_is_refused_naming_it(observers: Any, message: str) -> None:
    """An unknown type lists the registered ones; a type twice, a missing type and an option the
    observer lacks are refused naming the entry."""
    with pytest.raises(ConfigError) as error:
        parse_config(small_config(observers=observers))
    assert str(error.value).startswith(message)
