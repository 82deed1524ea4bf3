"""Command line: ``python -m neuro_evolution.compare RUN_OR_SWEEP_DIR... [--out DIR]``.

Finds every run directory (``config.json`` + ``log.csv``) under the paths given, groups the runs
by their settings -- the resolved config minus :data:`GROUP_IGNORES` (the seed, and what does
not change results) -- and writes into ``--out`` (default: the first path):

- ``comparison.png``: per group (one colour each), the median and interquartile band over its
  runs of the best-so-far training fitness and of the held-out validation mean, against
  generations, env steps and wall time. A run that ended early (it reached the validation
  target) keeps its last values to the right of its end. QD runs add rows for the QD score and
  the archive coverage (log.csv's ``qd_score`` and ``coverage``), NSGA2 runs with objectives
  one for the front's hypervolume.
- ``comparison.md``: per group, the final validation mean, and the wall time and env steps until
  validation first reached ``validation.target``, each as the median over runs with a bootstrap
  95% interval, and how many runs reached the target. A bootstrap of one value says nothing
  about the spread: a number over fewer than :data:`MIN_INTERVAL_RUNS` runs is shown alone,
  marked as such, and the command says so in one line.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.cli import run_cli
from neuro_evolution.config.tree import config_to_dict, parse_run_config
from neuro_evolution.core.schema import flatten
from neuro_evolution.evaluation.episodes.validation import reached
from neuro_evolution.run.directory import CONFIG_FILE, LOG_FILE, read_log
from neuro_evolution.run.kernel_checks import mixed_kernels_line
from neuro_evolution.support.atomic import atomic_write_bytes, atomic_write_text
from neuro_evolution.support.console import warning
from neuro_evolution.support.errors import UserError

PROGRAM = "neuro_evolution.compare"
GROUP_IGNORES = ("random_seed", "evaluation", "observers", "checkpoint")
BOOTSTRAP_RESAMPLES = 10_000
MIN_INTERVAL_RUNS = 2  # fewer values give no bootstrap interval
SINGLE = "(1 run: no interval)"
PBT_STATE = "pbt_state.json"  # what marks a PBT folder (pbt.lineage.STATE_FILE, a layer above)
GRID_POINTS = 200
# Rows drawn when a run of the comparison is a QD run (its log.csv has these columns).
QD_ROWS = (("qd_score", "QD score (archive)"), ("coverage", "archive coverage"))
FRONT_ROWS = (("hypervolume", "hypervolume (Pareto front)"),)  # NSGA2 runs with objectives
AXES = (
    ("generation", "generation"),
    ("env_steps_total", "env steps"),
    ("wall_time", "wall time [s]"),
)


@dataclass
class Run:
    """One run directory, read back."""

    path: Path
    config: dict[str, Any]  # resolved
    log: list[dict[str, Any]]

    @property
    def target(self) -> float | None:
        validation = self.config.get("validation") or {}
        return validation.get("target")

    def validated(self) -> list[dict[str, Any]]:
        return [r for r in self.log if r["validation_mean"] is not None]

    def final_score(self) -> float | None:
        """The last held-out validation mean (None: never validated)."""
        rows = self.validated()
        return rows[-1]["validation_mean"] if rows else None

    def reached(self) -> dict[str, Any] | None:
        """The first row whose validation mean reached the target."""
        target = self.target
        return next((r for r in self.log if reached(r["validation_mean"], target)), None)


@dataclass
class Group:
    label: str
    runs: list[Run]


def find_runs(paths: list[Path]) -> list[Run]:
    """Every run directory at or under ``paths`` (sorted, each once)."""
    found: dict[Path, None] = {}
    for path in paths:
        if not path.is_dir():
            raise UserError(f"{path}: no such directory")
        candidates = [path] + sorted(p.parent for p in path.rglob(LOG_FILE))
        for candidate in candidates:
            if (candidate / CONFIG_FILE).is_file() and (candidate / LOG_FILE).is_file():
                found[candidate.resolve()] = None
    runs = []
    for path in found:
        config = config_to_dict(parse_run_config(json.loads((path / CONFIG_FILE).read_text())))
        log = read_log(path / LOG_FILE)
        if log:
            runs.append(Run(path, config, log))
    if not runs:
        raise UserError(
            f"no run directory (config.json + log.csv) under {', '.join(map(str, paths))}"
        )
    return runs


def settings(run: Run) -> dict[str, Any]:
    """The dotted settings that define a run's group."""
    kept = {k: v for k, v in run.config.items() if k not in GROUP_IGNORES}
    return flatten(kept)


def group_runs(runs: list[Run]) -> list[Group]:
    """Runs with equal settings form a group, labelled by the settings that differ."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        groups.setdefault(json.dumps(settings(run), sort_keys=True, default=str), []).append(run)
    all_settings = [settings(members[0]) for members in groups.values()]
    keys = sorted({k for s in all_settings for k in s})
    differing = label_keys(
        [k for k in keys if len({json.dumps(s.get(k)) for s in all_settings}) > 1], all_settings
    )
    shown = {key: label_values([values.get(key) for values in all_settings]) for key in differing}
    result = []
    for index, (members, values) in enumerate(zip(groups.values(), all_settings)):
        if differing:
            label = ", ".join(f"{k}={shown[k][index]}" for k in differing)
        else:
            label = f"{values.get('environment.id')}, {values.get('optimizer.type')}"
        result.append(Group(label, members))
    return sorted(result, key=lambda g: g.label)


def label_values(values: list[Any]) -> list[str]:
    """The label text of one setting's values across the groups: JSON, floats with the fewest
    significant digits (at least 4) that keep distinct values distinct."""
    raw = [json.dumps(value) for value in values]
    if not all(isinstance(value, float) for value in values):
        return raw
    distinct = len(set(raw))
    for digits in range(4, 18):
        shown = [f"{value:.{digits}g}" for value in values]
        if len(set(shown)) == distinct:
            return shown
    return raw


def label_keys(differing: list[str], all_settings: list[dict[str, Any]]) -> list[str]:
    """The differing keys a label names. Where a section's ``type`` differs (``optimizer.type``:
    PGPE, SNES), its other keys differ by type alone; such a key is named only where it also
    differs between groups of the same type."""
    sections = [k.removesuffix("type") for k in differing if k.endswith(".type")]

    def named(key: str) -> bool:
        section = next((p for p in sections if key.startswith(p) and key != f"{p}type"), None)
        if section is None:
            return True
        by_type: dict[str, set[str]] = {}
        for values in all_settings:
            kind = json.dumps(values.get(f"{section}type"))
            by_type.setdefault(kind, set()).add(json.dumps(values.get(key)))
        return any(len(seen) > 1 for seen in by_type.values())

    return [key for key in differing if named(key)]


def bootstrap_median(
    values: list[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0
) -> tuple[float, float, float] | None:
    """(median, low, high): the median and its percentile-bootstrap 95% interval; low and
    high are NaN for fewer than :data:`MIN_INTERVAL_RUNS` values (no interval)."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return None
    if data.size < MIN_INTERVAL_RUNS:
        return float(np.median(data)), math.nan, math.nan
    rng = np.random.default_rng(seed)
    medians = np.median(data[rng.integers(0, data.size, (resamples, data.size))], axis=1)
    low, high = np.percentile(medians, [2.5, 97.5])
    return float(np.median(data)), float(low), float(high)


def step_values(xs: np.ndarray, ys: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The last y at or before each grid x (NaN before the first), kept after the last."""
    index = np.searchsorted(xs, grid, side="right") - 1
    values = np.where(index >= 0, ys[np.clip(index, 0, None)], np.nan)
    return values


def curve(run: Run, x_key: str, y_key: str) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of a run where y was logged; x ``generation`` counts generations done."""
    rows = [r for r in run.log if r.get(y_key) is not None and not math.isnan(r[y_key])]
    xs = np.array([r[x_key] + (1 if x_key == "generation" else 0) for r in rows], dtype=float)
    return xs, np.array([r[y_key] for r in rows], dtype=float)


def band(group: Group, x_key: str, y_key: str) -> tuple[np.ndarray, ...] | None:
    """(grid, median, q25, q75) over the group's runs, from where every run has a value (a
    median over whichever runs happen to have started would jump as they come in)."""
    curves = [curve(run, x_key, y_key) for run in group.runs]
    curves = [(x, y) for x, y in curves if len(x)]
    if not curves:
        return None
    end = max(x[-1] for x, _ in curves)
    if x_key == "generation":
        grid = np.arange(1, int(end) + 1, dtype=float)
    else:
        grid = np.linspace(0, end, GRID_POINTS)
    values = np.array([step_values(x, y, grid) for x, y in curves])
    present = ~np.isnan(values).any(axis=0)
    grid, values = grid[present], values[:, present]
    q25, median, q75 = np.percentile(values, [25, 50, 75], axis=0)
    return grid, median, q25, q75


def plot(groups: list[Group]) -> bytes:
    """comparison.png: rows best-so-far / validation, columns generations / env steps / time."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    rows = [("best_so_far", "best so far (training seeds)")]
    if any(run.validated() for group in groups for run in group.runs):
        rows.append(("validation_mean", "validation mean (held-out)"))
    if any(run.log and "qd_score" in run.log[0] for group in groups for run in group.runs):
        rows += [(key, label) for key, label in QD_ROWS]
    if any(run.log and "hypervolume" in run.log[0] for group in groups for run in group.runs):
        rows += [(key, label) for key, label in FRONT_ROWS]
    figure = Figure(figsize=(15, 4.2 * len(rows) + 1.2), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    grid_axes = figure.subplots(len(rows), len(AXES), squeeze=False)
    colours = [f"C{i % 10}" for i in range(len(groups))]
    targets = {run.target for group in groups for run in group.runs if run.target is not None}
    for r, (y_key, y_label) in enumerate(rows):
        for c, (x_key, x_label) in enumerate(AXES):
            axes = grid_axes[r][c]
            for group, colour in zip(groups, colours):
                result = band(group, x_key, y_key)
                if result is None:
                    continue
                grid, median, q25, q75 = result
                axes.fill_between(grid, q25, q75, color=colour, alpha=0.2, lw=0, step="post")
                label = f"{group.label} (n={len(group.runs)})"
                axes.plot(grid, median, color=colour, label=label, drawstyle="steps-post")
            if y_key == "validation_mean":
                for target in sorted(targets):
                    axes.axhline(target, color="k", linestyle=":", label=f"target {target:g}")
            axes.set_xlabel(x_label)
            axes.set_ylabel(y_label)
            axes.grid(alpha=0.3)
            if x_key == "generation":
                axes.xaxis.set_major_locator(MaxNLocator(integer=True))
            if x_key == "env_steps_total":
                axes.ticklabel_format(axis="x", style="sci", scilimits=(0, 3))
    handles, labels = grid_axes[-1][0].get_legend_handles_labels()
    figure.legend(
        handles,
        labels,
        loc="outside upper center",
        ncols=min(len(labels), 3),
        title="median over runs, band: interquartile range",
    )
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def interval_text(stats: tuple[float, float, float] | None, digits: int = 6) -> str:
    """``median [low, high]``, ``median (1 run: no interval)`` or ``-``."""
    if stats is None:
        return "-"
    median, low, high = stats
    if math.isnan(low):
        return f"{median:.{digits}g} {SINGLE}"
    return f"{median:.{digits}g} [{low:.{digits}g}, {high:.{digits}g}]"


def single_run_line(groups: list[Group], pbt: bool = False) -> str | None:
    """The note for groups whose numbers come from a single run (None: every group has more);
    ``pbt``: the runs are a PBT's, each with settings of its own, so more seeds of one group
    mean more PBTs."""
    single = [group.label for group in groups if len(group.runs) < MIN_INTERVAL_RUNS]
    if not single:
        return None
    return (
        f"note: {len(single)} of {len(groups)} groups have a single run ({single[0]}"
        f"{', ...' if len(single) > 1 else ''}), so their medians have no bootstrap interval; "
        + (
            "run the PBT again with another random_seed (another --out) and compare the folders"
            if pbt
            else "run more seeds (sweep --seeds 1-5) for one"
        )
    )


def group_numbers(group: Group) -> dict[str, Any]:
    """The numbers of a group's table row."""
    finals = [s for s in (run.final_score() for run in group.runs) if s is not None]
    reached = [r for r in (run.reached() for run in group.runs) if r is not None]
    targets = {run.target for run in group.runs}
    return {
        "runs": len(group.runs),
        "final": bootstrap_median(finals),
        "target": targets.pop() if len(targets) == 1 else None,
        "reached": len(reached),
        "time": bootstrap_median([r["wall_time"] for r in reached]),
        "env_steps": bootstrap_median([float(r["env_steps_total"]) for r in reached]),
    }


def table(groups: list[Group], folder: Path | None = None) -> str:
    """comparison.md; its run list names each run directory relative to ``folder`` (the
    comparison's own folder), so the file reads the same on every machine."""
    runs = sum(len(g.runs) for g in groups)
    lines = [
        "# Comparison",
        "",
        f"{runs} runs in {len(groups)} groups (runs grouped by their config without "
        f"{', '.join(GROUP_IGNORES)}). Each cell: median over runs [bootstrap 95% interval, "
        f"{BOOTSTRAP_RESAMPLES:,} resamples; none over a single run]; time and env steps count "
        "only runs that reached the target. Wall times of a sweep's runs were measured while "
        "they shared the workers.",
        "",
        "| group | runs | final validation mean | target | reached target | time to target [s] "
        "| env steps to target |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for group in groups:
        n = group_numbers(group)
        target = "-" if n["target"] is None else f"{n['target']:g}"
        lines.append(
            f"| {group.label} | {n['runs']} | {interval_text(n['final'])} | {target} | "
            f"{n['reached']}/{n['runs']} | {interval_text(n['time'])} | "
            f"{interval_text(n['env_steps'])} |"
        )
    lines += ["", "## Runs", ""]
    for group in groups:
        names = [run_name(run.path, folder) for run in group.runs]
        lines.append(f"- {group.label}: " + ", ".join(f"`{name}`" for name in names))
    return "\n".join(lines) + "\n"


def run_name(path: Path, folder: Path | None) -> str:
    """``path`` relative to ``folder`` (``../`` where it lies outside), with ``/``."""
    if folder is None:
        return path.as_posix()
    return Path(os.path.relpath(path.resolve(), folder.resolve())).as_posix()


def compare(paths: list[Path], out: Path) -> tuple[Path, Path]:
    """Write comparison.png and comparison.md for the runs under ``paths`` into ``out``; print
    the single-run note (if any)."""
    runs = find_runs(paths)
    groups = group_runs(runs)
    mixed = mixed_kernels_line(run.path for run in runs)
    if mixed is not None:
        warning(mixed, PROGRAM)
    out.mkdir(parents=True, exist_ok=True)
    png, md = out / "comparison.png", out / "comparison.md"
    atomic_write_bytes(png, plot(groups))
    atomic_write_text(md, table(groups, out))
    note = single_run_line(groups, any((path / PBT_STATE).is_file() for path in paths))
    if note is not None:
        print(note)
    return png, md


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {PROGRAM}", description=__doc__.splitlines()[0].split(": ", 1)[-1]
    )
    parser.add_argument("paths", type=Path, nargs="+", help="run or sweep directories")
    parser.add_argument("--out", type=Path, help="output directory (default: the first path)")
    args = parser.parse_args(argv)

    def run() -> int:
        png, md = compare(args.paths, args.out or args.paths[0])
        print(f"wrote {png} and {md}")
        return 0

    return run_cli(run, PROGRAM)


if __name__ == "__main__":
    sys.exit(main())
