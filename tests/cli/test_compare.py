"""``python -m neuro_evolution.compare``: groups a sweep's runs by settings; its table's numbers
are recomputed here from the runs' log.csv files; the plot is a PNG with every panel."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from helpers import nsga2_config, qd_config, small_config

from neuro_evolution import compare
from neuro_evolution.run.directory import read_log
from neuro_evolution.sweep import cli as sweep_cli

TARGET = 30.0


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory) -> Path:
    """2 sigmas x 4 seeds of a small CMA-ES CartPole whose validation target some runs reach."""
    tmp = tmp_path_factory.mktemp("compare")
    data = small_config(
        number_generations=6,
        optimizer={"type": "CMA_ES", "population_size": 8, "sigma": 0.3},
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 60},
        validation={"every_generations": 1, "episodes": 3, "target": TARGET},
    )
    config = tmp / "c.json"
    config.write_text(json.dumps(data))
    out = tmp / "sweep"
    args = [str(config), "--seeds", "1-4", "--set", "optimizer.sigma=0.05,0.8", "--out", str(out)]
    assert sweep_cli.main([*args, "--handler", "sequential", "--quiet"]) == 0
    assert compare.main([str(out)]) == 0
    return out


def table_rows(md: str) -> dict[str, list[str]]:
    rows = {}
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| optimizer.sigma="):
            rows[cells[0]] = cells[1:]
    return rows


def median_of(text: str) -> float:
    return float(text.split(" ")[0])


def interval_of(text: str) -> tuple[float, float]:
    low, high = re.search(r"\[(.*), (.*)\]", text).groups()
    return float(low), float(high)


def printed(value: float) -> float:
    """``value`` as the table prints it (6 significant digits, compare.interval_text): an
    interval bound equal to the smallest or largest value may print just outside it."""
    return float(f"{value:.6g}")


@pytest.mark.parametrize("sigma", ["0.05", "0.8"])
def test_table_numbers_are_those_of_the_logs(sweep_dir, sigma):
    """Per group: run count, median final validation mean, runs that reached the target, and
    the median wall time and env steps of the first validation at or above the target."""
    rows = table_rows((sweep_dir / "comparison.md").read_text())
    cells = rows[f"optimizer.sigma={sigma}"]
    logs = [
        read_log(p / "log.csv") for p in sorted((sweep_dir / f"optimizer.sigma={sigma}").iterdir())
    ]
    assert len(logs) == 4 and cells[0] == "4"
    finals = [
        [r for r in log if r["validation_mean"] is not None][-1]["validation_mean"] for log in logs
    ]
    assert median_of(cells[1]) == pytest.approx(np.median(finals), rel=1e-5)
    low, high = interval_of(cells[1])
    assert printed(min(finals)) <= low <= printed(np.median(finals)) <= high <= printed(max(finals))
    assert cells[2] == f"{TARGET:g}"
    firsts = [next((r for r in log if (r["validation_mean"] or 0) >= TARGET), None) for log in logs]
    reached = [r for r in firsts if r is not None]
    assert cells[3] == f"{len(reached)}/4"
    if reached:
        assert median_of(cells[4]) == pytest.approx(
            np.median([r["wall_time"] for r in reached]), rel=1e-5
        )
        steps = [r["env_steps_total"] for r in reached]
        assert median_of(cells[5]) == pytest.approx(np.median(steps), rel=1e-5)
    else:
        assert cells[4] == cells[5] == "-"


def test_the_sweep_has_runs_that_reached_the_target_and_runs_that_did_not(sweep_dir):
    """The fixture is informative: the counts and medians cover both kinds of run."""
    rows = table_rows((sweep_dir / "comparison.md").read_text())
    reached = [int(cells[3].split("/")[0]) for cells in rows.values()]
    assert sum(reached) > 0 and min(reached) < 4


def test_plot_is_a_png_with_six_panels_and_a_legend(sweep_dir):
    from matplotlib.image import imread

    image = imread(sweep_dir / "comparison.png")
    assert image.shape[1] == 1500 and image.shape[0] > 900
    groups = compare.group_runs(compare.find_runs([sweep_dir]))
    assert [g.label for g in groups] == ["optimizer.sigma=0.05", "optimizer.sigma=0.8"]
    assert all(len(g.runs) == 4 for g in groups)


def test_the_run_list_names_run_directories_relative_to_the_comparison(sweep_dir, tmp_path):
    """comparison.md lists ``optimizer.sigma=0.05/seed-1``, not this machine's absolute path;
    with ``--out`` elsewhere the names climb out of it (``../``) and still lead to the runs."""
    listed = (sweep_dir / "comparison.md").read_text().split("## Runs", 1)[1]
    names = re.findall(r"`([^`]+)`", listed)
    assert len(names) == 8 and "optimizer.sigma=0.05/seed-1" in names
    assert not any(Path(name).is_absolute() for name in names)
    assert all((sweep_dir / name / "log.csv").is_file() for name in names)
    elsewhere = tmp_path / "report"
    assert compare.main([str(sweep_dir), "--out", str(elsewhere)]) == 0
    listed = (elsewhere / "comparison.md").read_text().split("## Runs", 1)[1]
    names = re.findall(r"`([^`]+)`", listed)
    assert len(names) == 8 and all(name.startswith("../") for name in names)
    assert all((elsewhere / name / "log.csv").is_file() for name in names)


def test_bootstrap_median_interval():
    assert compare.bootstrap_median([]) is None
    assert compare.bootstrap_median([3.0, 3.0, 3.0]) == (3.0, 3.0, 3.0)
    median, low, high = compare.bootstrap_median(list(range(21)))
    assert median == 10 and low < 10 < high and low >= 0 and high <= 20
    # a slow, obviously-correct reference with the same draws
    rng = np.random.default_rng(0)
    data = np.arange(21.0)
    draws = rng.integers(0, 21, (compare.BOOTSTRAP_RESAMPLES, 21))
    medians = sorted(float(np.median(data[row])) for row in draws)
    assert (low, high) == tuple(np.percentile(medians, [2.5, 97.5]))


def test_step_values_keep_the_last_value_after_a_run_ended():
    values = compare.step_values(np.array([1.0, 3.0]), np.array([5.0, 7.0]), np.arange(5.0))
    assert np.isnan(values[0]) and list(values[1:]) == [5.0, 5.0, 7.0, 7.0]


@pytest.mark.parametrize("offset", [0.0, -1e-9])
def test_time_to_target_counts_a_mean_exactly_at_the_target(offset: float) -> None:
    """A validation mean equal to the target reached it; one just below did not."""
    target = 0.1 + 0.2  # not a round number: the comparison is exact, not approximate
    log = [
        {"validation_mean": None, "wall_time": 1.0, "env_steps_total": 10},
        {"validation_mean": target + offset, "wall_time": 2.0, "env_steps_total": 20},
    ]
    run = compare.Run(Path("run"), {"validation": {"target": target}}, log)
    assert run.reached() == (log[1] if offset == 0.0 else None)


def test_a_qd_sweep_gets_rows_for_its_qd_score_and_coverage(tmp_path) -> None:
    """A sweep of QD runs (MAP_ELITES, 3 seeds) draws two more rows, QD score and coverage,
    whose medians are those of the runs' log.csv."""
    from matplotlib.image import imread

    data = qd_config(validation={"every_generations": 1, "episodes": 2})
    config = tmp_path / "qd.json"
    config.write_text(json.dumps(data))
    out = tmp_path / "sweep"
    args = [str(config), "--seeds", "1-3", "--out", str(out), "--handler", "sequential"]
    assert sweep_cli.main([*args, "--quiet"]) == 0
    assert compare.main([str(out)]) == 0
    assert imread(out / "comparison.png").shape[0] > 1700  # four rows of panels, not two
    (group,) = compare.group_runs(compare.find_runs([out]))
    for key in ("qd_score", "coverage"):
        grid, median, _, _ = compare.band(group, "generation", key)
        logged = [read_log(run.path / "log.csv")[-1][key] for run in group.runs]
        assert median[-1] == np.median(logged)


def test_an_nsga2_sweep_gets_a_row_for_its_hypervolume(tmp_path) -> None:
    """A sweep of NSGA2 runs with objectives (2 seeds) draws one more row, the front's
    hypervolume, whose median is that of the runs' log.csv."""
    from matplotlib.image import imread

    config = tmp_path / "nsga2.json"
    config.write_text(json.dumps(nsga2_config()))
    out = tmp_path / "sweep"
    args = [str(config), "--seeds", "1-2", "--out", str(out), "--handler", "sequential"]
    assert sweep_cli.main([*args, "--quiet"]) == 0
    assert compare.main([str(out)]) == 0
    assert imread(out / "comparison.png").shape[0] > 1200  # three rows of panels, not two
    (group,) = compare.group_runs(compare.find_runs([out]))
    grid, median, _, _ = compare.band(group, "generation", "hypervolume")
    logged = [read_log(run.path / "log.csv")[-1]["hypervolume"] for run in group.runs]
    assert median[-1] == np.median(logged)


def test_groups_of_different_optimizer_types_are_labelled_by_type() -> None:
    """Where optimizer.type differs, a key of the optimizer section is named only where it
    also differs between groups of the same type: PGPE's max_speed against SNES's absence of
    it is no label; two PGPE max_speeds are."""
    from neuro_evolution.compare import label_keys

    settings = [
        {"optimizer.type": "PGPE", "optimizer.max_speed": 0.3, "optimizer.stdev_init": None},
        {"optimizer.type": "PGPE", "optimizer.max_speed": 0.15, "optimizer.stdev_init": None},
        {"optimizer.type": "SNES", "optimizer.max_speed": None, "optimizer.stdev_init": 1.0},
    ]
    differing = ["optimizer.max_speed", "optimizer.stdev_init", "optimizer.type"]
    assert label_keys(differing, settings) == ["optimizer.max_speed", "optimizer.type"]
    assert label_keys(differing, settings[1:]) == ["optimizer.type"]
    assert label_keys(["optimizer.max_speed"], settings[:2]) == ["optimizer.max_speed"]
