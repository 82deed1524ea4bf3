"""Exploit: a run that copies another's checkpoint continues exactly as the donor would, with its
own explored settings; a setting that sets state at the start (sigma) changes only those state
entries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from helpers import pbt_config_data, small_config, without_time, write_json

from neuro_evolution.config.tree import config_to_dict, parse_config
from neuro_evolution.pbt import cli as pbt_cli
from neuro_evolution.pbt.space import ExploredSetting, with_values
from neuro_evolution.pbt.transfer import copy_run, seeded_entries
from neuro_evolution.run.directory import read_log
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.run.resume import resume_experiment
from neuro_evolution.support.atomic import load_npz


def tiny(optimizer: dict[str, Any]) -> dict[str, Any]:
    """A resolved tiny CartPole config of 2 generations with ``optimizer``."""
    data = small_config(
        number_generations=2,
        optimizer=optimizer,
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 40},
        validation={"every_generations": 2, "episodes": 2},
    )
    return config_to_dict(parse_config(data))


def trained(data: dict[str, Any], run_dir: Path) -> Path:
    Experiment(parse_config(data), run_dir=run_dir).run()
    return run_dir


def extended(run_dir: Path, generations: int) -> list[dict[str, Any]]:
    """The run continued to ``generations``; its log without wall time."""
    resume_experiment(run_dir, number_generations=generations).run()
    return without_time(read_log(run_dir / "log.csv"))


def optimizer_state(run_dir: Path) -> dict[str, np.ndarray]:
    status = json.loads((run_dir / "training_status.json").read_text())
    arrays = load_npz(run_dir / status["latest_checkpoint"])
    meta = json.loads(str(arrays["meta"]))
    state = {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith("optimizer/")}
    state.update({k: np.asarray(v) for k, v in meta["scalars"]["optimizer"].items()})
    return state


def test_a_run_that_copies_a_donor_without_changes_continues_as_the_donor(tmp_path):
    """Copy the donor after generation 2 with the same settings: trained on to generation 5,
    the copy's log equals the donor's row for row (wall time aside), and so does its state."""
    data = tiny({"type": "PGPE", "population_size": 8, "radius_init": 3.0})
    donor = trained(data, tmp_path / "donor")
    other = dict(data, random_seed=99)  # the recipient had a run of its own
    recipient = trained(other, tmp_path / "recipient")
    copy_run(donor, recipient, parse_config(data), {})
    assert json.loads((recipient / "config.json").read_text())["random_seed"] == data["random_seed"]
    assert extended(recipient, 5) == extended(donor, 5)
    a, b = optimizer_state(recipient), optimizer_state(donor)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_a_copy_with_a_changed_sigma_holds_the_donors_state_but_the_sigma(tmp_path):
    """OPENAI_ES's sigma sets its stdev at the start; CMA_ES's its step size (and the sigma0 its
    stopping tests use). A copy with a new sigma holds the donor's optimizer state exactly, but
    for those entries, which hold the new value; it then trains on."""
    for optimizer, entries in (
        ({"type": "OPENAI_ES", "population_size": 8, "sigma": 0.1}, ("stdev",)),
        ({"type": "CMA_ES", "population_size": 8, "sigma": 0.3}, ("sigma", "sigma0")),
    ):
        data = tiny(optimizer)
        setting = ExploredSetting("optimizer.sigma", low=0.05, high=0.5)
        seeded = seeded_entries(setting, data)
        assert seeded == {"optimizer": entries}
        name = optimizer["type"]
        donor = trained(data, tmp_path / f"donor-{name}")
        recipient = tmp_path / f"recipient-{name}"
        recipient.mkdir()
        changed = with_values(data, {"optimizer.sigma": 0.25})
        copy_run(donor, recipient, parse_config(changed), seeded)
        a, b = optimizer_state(recipient), optimizer_state(donor)
        assert a.keys() == b.keys()
        differing = sorted(k for k in a if not np.array_equal(a[k], b[k]))
        assert differing == sorted(entries), name
        for entry in entries:
            assert np.all(a[entry] == 0.25), (name, entry)
        assert len(extended(recipient, 4)) == 4


def test_in_a_pbt_a_copy_that_explores_nothing_logs_what_its_donor_logs(tmp_path, capsys):
    """2 runs x 2 intervals, quantile 0.5, perturb factor 1 and one population size: the run
    that copies at generation 2 takes the donor's checkpoint, config and seed, so its whole log
    (wall time aside) equals the donor's, rows after the copy included."""
    data = pbt_config_data(
        number_generations=4,
        pbt_runs=2,
        pbt_quantile=0.5,
        pbt_perturb_factors=[1.0],
        pbt_explore={
            "optimizer.max_speed": {"range": [0.1, 1.0]},
            "optimizer.population_size": {"values": [8]},
        },
    )
    config = write_json(tmp_path / "pbt.json", data)
    out = tmp_path / "out"
    assert pbt_cli.main([str(config), "--out", str(out), "--handler", "sequential", "--quiet"]) == 0
    lineage = json.loads((out / "lineage.json").read_text())
    (copier,) = [name for name, run in lineage.items() if run["copies"]]
    donor = lineage[copier]["copies"][0]["copied"]
    logs = {name: without_time(read_log(out / "runs" / name / "log.csv")) for name in lineage}
    assert len(logs[donor]) == 4 and logs[copier] == logs[donor]
