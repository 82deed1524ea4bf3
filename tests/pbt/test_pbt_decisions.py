"""A PBT's decisions on real runs: each bottom run copies a donor drawn uniformly from the top
quantile, an explored value stays inside its range, every run starts on its own seed, and the
generator a decision drew from is saved with the state."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import pbt_config_data, without_time, write_json

from neuro_evolution.pbt import cli as pbt_cli
from neuro_evolution.pbt.lineage import generator_from_state, generator_state
from neuro_evolution.pbt.loop import PbtSetup, decide_copies, initial_state
from neuro_evolution.run.directory import read_log

RUNS = 8
LOW, HIGH = 0.05, 1.0


def top_runs(scores: dict[str, float | None], count: int) -> list[str]:
    """The ``count`` best runs of ``scores`` (ties: the lower run first)."""
    names = list(scores)
    return sorted(names, key=lambda n: (-(scores[n] or -np.inf), names.index(n)))[:count]


@pytest.fixture(scope="module")
def pbt(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], PbtSetup]:
    """(folder, final pbt_state.json, setup) of 8 runs x 2 intervals, quantile 0.5, factors
    0.2 / 5 (so explored values leave the range and are clipped)."""
    tmp = tmp_path_factory.mktemp("pbt_decisions")
    data = pbt_config_data(
        number_generations=4,
        pbt_runs=RUNS,
        pbt_quantile=0.5,
        pbt_perturb_factors=[0.2, 5.0],
        pbt_explore={"optimizer.max_speed": {"range": [LOW, HIGH], "log": True}},
    )
    config = write_json(tmp / "pbt.json", data)
    argv = [str(config), "--out", str(tmp / "out"), "--handler", "sequential", "--quiet"]
    assert pbt_cli.main(argv) == 0
    setup = pbt_cli.setup_from_arguments(pbt_cli.build_parser().parse_args(argv))
    state = json.loads((tmp / "out" / "pbt_state.json").read_text())
    return tmp / "out", state, setup


def copies_of(state: dict[str, Any]) -> list[dict[str, Any]]:
    """Every copy of the lineage, with the name of the run that made it."""
    return [
        {**copy, "run": name} for name, run in state["lineage"].items() for copy in run["copies"]
    ]


def test_every_donor_is_a_top_quantile_run_and_more_than_one_is_drawn(pbt) -> None:
    """The 4 bottom runs each copy one of the 4 best runs at the interval's end, and the
    donors are not all the same run."""
    _, state, _ = pbt
    scores = state["history"][0]["scores"]
    top = top_runs(scores, RUNS // 2)
    copies = copies_of(state)
    assert len(copies) == RUNS // 2
    assert {copy["copied"] for copy in copies} <= set(top)
    assert {copy["run"] for copy in copies}.isdisjoint(top)
    assert len({copy["copied"] for copy in copies}) > 1


def test_a_donor_is_drawn_uniformly_from_the_top_quantile(pbt) -> None:
    """Decisions drawn 2,000 times on the real interval's scores: each of the 4 top runs is
    the donor of about a quarter of the 8,000 copies (chi-square, 3 degrees of freedom, well
    under its 0.1% point 16.3), and no other run ever is."""
    _, state, setup = pbt
    scores = state["history"][0]["scores"]
    start = initial_state(setup)
    rng = np.random.default_rng(0)
    donors = Counter(
        copy["donor"]
        for _ in range(2000)
        for copy in decide_copies(setup, start, scores, rng, setup.section.interval)
    )
    assert set(donors) == set(top_runs(scores, RUNS // 2))
    expected = sum(donors.values()) / len(donors)
    chi_square = sum((count - expected) ** 2 / expected for count in donors.values())
    assert chi_square < 16.3, donors


def test_an_explored_value_is_clipped_into_its_range(pbt) -> None:
    """Factors 0.2 and 5 push a donor's max_speed out of [0.05, 1]: every copy's value, and
    every run's config, lies in the range, and some copy sits on an end of it."""
    folder, state, _ = pbt
    values = [copy["settings"]["optimizer.max_speed"]["now"] for copy in copies_of(state)]
    assert all(LOW <= value <= HIGH for value in values), values
    assert any(value in (LOW, HIGH) for value in values), values
    for run_dir in (folder / "runs").iterdir():
        config = json.loads((run_dir / "config.json").read_text())
        assert LOW <= config["optimizer"]["max_speed"] <= HIGH


def test_every_run_starts_on_its_own_seed(pbt) -> None:
    """Run i starts on the config's random_seed + i, so no two runs share episode seeds, and
    their first generations differ."""
    folder, state, setup = pbt
    base = int(setup.experiment["random_seed"])
    seeds = [state["lineage"][name]["seed"] for name in setup.names]
    assert seeds == [base + index for index in range(RUNS)]
    first_rows = [
        without_time(read_log(folder / "runs" / name / "log.csv"))[0]
        for name in setup.names
        if not state["lineage"][name]["copies"]
    ]
    assert len(first_rows) > 1
    assert all(row != first_rows[0] for row in first_rows[1:])


def test_the_state_holds_the_generator_each_decision_drew_from(pbt) -> None:
    """The decision at the first interval's end, replayed from the start state's generator on
    the recorded scores, gives the lineage's copies, and the generator saved with the state is
    the one after those draws (not the one before them)."""
    _, state, setup = pbt
    start = initial_state(setup)
    rng = generator_from_state(start.generator)
    decided = decide_copies(setup, start, state["history"][0]["scores"], rng, 2)
    assert [(c["run"], c["donor"]) for c in decided] == [
        (c["run"], c["copied"]) for c in copies_of(state)
    ]
    assert state["generator"] == generator_state(rng)
    assert state["generator"] != start.generator
