"""The optimizer matrix: every registered optimizer on the same tasks and seeds, ranked.

Cells (one optimizer on one task, seeds 1-3 by default):

- BBOB f1 sphere, f2 ellipsoid, f3 Rastrigin and f8 Rosenbrock at d = 10 and 40, from COCO's
  ``bbob`` suite (cocoex, the ``coco`` extra; instance = seed): evaluations until COCO's final
  target (f - f_opt < 1e-8) is reached, within 5,000 d evaluations, counted by cocoex. These run
  in this process (an ask/tell loop from the origin, no episodes); the genes 0 and 1 are a
  measured optimizer's descriptors.
- CartPole-v1: training env steps until held-out validation reaches 475.
- LunarLanderContinuous-v3: training env steps until held-out validation (10 episodes, after
  every generation) reaches 200.
- the double pole without velocities: evaluations until held-out validation (625 episodes, the
  generalization test) reaches 0.32.
- POPGym RepeatFirstEasy: the held-out validation mean (100 episodes, every 10 generations)
  last measured within 1M training env steps (40 genomes x 2 episodes x 51 steps reach it
  at generation 245 of 250).
- Breakout-MinAtar on the jax handler: the held-out validation mean (30 episodes, every 50
  generations) last measured within 20M training env steps.

A run of a cell whose budget is in env steps ends with the generation that spends it
(``max_env_steps``), whatever its generation cap.

An episode task's cell is a sweep (``python -m neuro_evolution.sweep``) of the task's shipped
config with its optimizer section replaced: it runs on the handler the sweep is given (the
config's own for the jax task), resumes when the command is run again, and skips the runs that
ended. A BBOB cell's seed is written to ``coco/<cell>/<OPTIMIZER>/seed-<s>.json`` when it ends,
and skipped after. Each optimizer gets the task's population size and initial spread where its
config has those fields (``SPREAD_FIELDS``), the settings of ``TUNED`` where a row names it, and
its own defaults otherwise, so a user's registered optimizer appears with its defaults. An
optimizer that needs per-episode measures (QD) is left out of the episode tasks, which define
none.

Prints one table: per optimizer and task the (lower) median over seeds with a bootstrap 95%
interval and how many seeds reached the target (a seed that did not counts as infinitely slow:
``inf``, so a median is finite only when at least half the seeds reached it), and each
optimizer's mean rank over the tasks (1: the best median on a task; ties share their rank). An
episode run whose score can still change (short of the target, the budget and its last
generation: running, or stopped early) is left out of its cell and named on stderr; one whose
last session failed (its ``failure.txt``: the method diverged, say) is scored on what it logged
and named on stderr with its error.
Writes ``matrix.md`` and ``matrix.png`` (the ranks as a heatmap, medians written in) to ``--out``.

Usage: python scripts/bench_matrix.py [--out matrix] [--tasks bbob,cartpole] [--optimizers
SNES,CMA_ES] [--seeds 1-3] [--handler mp] [--workers 0] [--report]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.cli import EXIT_FAILED
from neuro_evolution.compare import Run, find_runs
from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.run.failure import read_failure
from neuro_evolution.support.atomic import atomic_write_text
from neuro_evolution.support.errors import UserError
from neuro_evolution.sweep.grid import parse_seeds

ROOT = Path(__file__).resolve().parent.parent
BBOB_EVALUATIONS_PER_GENE = 5_000
BBOB_FUNCTIONS = {"sphere": 1, "ellipsoid": 2, "rastrigin": 3, "rosenbrock": 8}  # COCO's f ids
MEASURED_DESCRIPTORS = [  # a QD optimizer's descriptors on BBOB: genes 0 and 1
    {"name": f"gene{i}", "source": "observation", "index": i, "low": -5.0, "high": 5.0, "bins": 10}
    for i in range(2)
]
# An optimizer's field for its initial per-gene spread, and how the task's per-gene standard
# deviation maps to it (PGPE's radius is the norm of the stdev vector).
SPREAD_FIELDS = {
    "sigma": lambda spread, genes: spread,
    "stdev_init": lambda spread, genes: spread,
    "radius_init": lambda spread, genes: spread * math.sqrt(genes),
}
POPULATION_FIELDS = ("population_size",)
# Settings that beat the defaults on a task, by optimizer (the shipped configs' own), and those
# the task's population needs.
TUNED: dict[tuple[str, str], dict[str, Any]] = {
    ("PGPE", "cartpole"): {"max_speed": 0.3},
    ("PGPE", "lunarlander"): {
        "max_speed": 0.3,
        "center_learning_rate": 0.15,
        "stdev_learning_rate": 0.1,
        "stdev_max_change": 0.2,
    },
    ("CMA_ES", "double_pole"): {"restart_every_generations": 75},
    ("GA", "double_pole"): {"truncation": 4},  # the default 20 parents exceed 16 genomes
    ("MA_ES", "breakout"): {"sigma": 0.08},  # configs/minatar_breakout_ma_es_jax.json
    ("PGPE", "repeat_first"): {"max_speed": 0.3},
}


@dataclasses.dataclass(frozen=True)
class BbobTask:
    """A COCO bbob function at one dimension; its score is evaluations to COCO's final target
    f - f_opt < 1e-8 (lower is better)."""

    name: str
    function: str
    dimension: int
    family: str = "bbob"
    lower_is_better: bool = True

    @property
    def budget(self) -> int:
        return BBOB_EVALUATIONS_PER_GENE * self.dimension


@dataclasses.dataclass(frozen=True)
class EpisodeTask:
    """A shipped config run through ``sweep``; ``measure`` says what its score is:
    ``steps``/``evaluations`` until validation reaches ``target`` (lower is better), or
    ``score`` (the last validation mean within ``budget`` env steps, higher is better)."""

    name: str
    config: str
    measure: str
    target: float | None
    budget: int  # training env steps (steps, score) or evaluations
    population: int
    spread: float
    generations: int
    handler: str | None = None  # None: the --handler of this script
    validate_every: int | None = None  # None: the shipped config's validation.every_generations
    family: str = "episodes"

    @property
    def lower_is_better(self) -> bool:
        return self.measure != "score"


TASKS: list[BbobTask | EpisodeTask] = [
    *(
        BbobTask(f"{function}-{d}", function, d)
        for function in ("sphere", "ellipsoid", "rastrigin", "rosenbrock")
        for d in (10, 40)
    ),
    EpisodeTask("cartpole", "cartpole.json", "steps", 475, 2_000_000, 20, 1.0, 400),
    EpisodeTask(
        "lunarlander",
        "lunarlander_continuous.json",
        "steps",
        200,
        10_000_000,
        200,
        0.3,
        600,
        validate_every=1,
    ),
    EpisodeTask(
        "double_pole", "double_pole_nonmarkov.json", "evaluations", 0.32, 40_000, 16, 0.3, 2500
    ),  # fmt: skip
    EpisodeTask(
        "repeat_first",
        "popgym_repeat_first.json",
        "score",
        None,
        1_000_000,
        40,
        1.0,
        250,
        validate_every=10,
    ),
    EpisodeTask(
        "breakout",
        "minatar_breakout_jax.json",
        "score",
        None,
        20_000_000,
        64,
        0.05,
        5000,
        handler="jax",
    ),  # fmt: skip
]


def config_fields(name: str) -> set[str]:
    """The option names of optimizer ``name``'s config."""
    config_cls, _ = OPTIMIZERS.get(name)
    return {field.name for field in dataclasses.fields(config_cls)}


def measured(name: str) -> bool:
    """Whether ``name`` needs per-episode measures (a QD optimizer's descriptors)."""
    return "descriptors" in config_fields(name)


def section(name: str, task: BbobTask | EpisodeTask, genes: int) -> dict[str, Any]:
    """The optimizer section of ``name`` on ``task``: population, spread, tuned settings."""
    fields, result = config_fields(name), {"type": name}
    population = task.population if isinstance(task, EpisodeTask) else None
    spread = task.spread if isinstance(task, EpisodeTask) else 2.0  # BBOB: x_opt in [-4, 4]
    for field in POPULATION_FIELDS:
        if field in fields and population is not None:
            result[field] = population
    for field, transform in SPREAD_FIELDS.items():
        if field in fields:  # the first one it has (PGPE has two ways to say it)
            result[field] = transform(spread, genes)
            break
    if "descriptors" in fields:
        result["descriptors"] = MEASURED_DESCRIPTORS
    result.update(TUNED.get((name, task.name), {}))
    return result


# --- BBOB cells ---------------------------------------------------------------------------------
def coco_problem(task: BbobTask, instance: int) -> Any:
    """COCO's bbob problem of ``task`` (its function id, dimension) and ``instance``."""
    try:
        import cocoex
    except ImportError:
        raise UserError('the BBOB cells run on COCO: pip install -e ".[coco]"') from None
    cocoex.log_level("warning")
    options = (f"dimensions: {task.dimension} function_indices: {BBOB_FUNCTIONS[task.function]}"
               f" instance_indices: {instance}")  # fmt: skip
    return next(iter(cocoex.Suite("bbob", "", options)))


def bbob_seed(name: str, task: BbobTask, seed: int) -> dict[str, Any]:
    """Evaluations until COCO's final target is hit (None: not within the budget) on instance
    ``seed``, and the best f seen (COCO's f, f_opt included)."""
    problem = coco_problem(task, seed)
    data = section(name, task, task.dimension)
    optimizer = make_optimizer(OPTIMIZERS.parse_config(data, "optimizer"), task.dimension, seed)
    hall_of_fame, generation = HallOfFame(1, task.dimension), 0
    while problem.evaluations < task.budget:
        genomes = optimizer.ask()
        values = np.empty(len(genomes))
        for row, genome in enumerate(genomes):
            if problem.evaluations >= task.budget:
                break
            values[row] = problem(genome)
            if problem.final_target_hit:
                return {
                    "evaluations": int(problem.evaluations),
                    "best": problem.best_observed_fvalue1,
                }
        else:
            hall_of_fame.update(genomes, -values, generation)
            measures = genomes[:, :2] if optimizer.measure_configs() else None
            seeds = np.zeros(len(genomes), dtype=np.int64)
            optimizer.tell(Evaluations(-values, hall_of_fame, measures, seeds, generation))
            generation += 1
    return {"evaluations": None, "best": problem.best_observed_fvalue1}


def run_bbob(name: str, task: BbobTask, seeds: list[int], out: Path, compute: bool) -> list[float]:
    """The cell's scores by seed (inf: not reached; nan: not run), computing the seeds not yet
    stored when ``compute``."""
    scores = []
    for seed in seeds:
        path = out / "coco" / task.name / name / f"seed-{seed}.json"
        if not path.is_file() and not compute:
            scores.append(math.nan)
            continue
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(bbob_seed(name, task, seed)))
        used = json.loads(path.read_text())["evaluations"]
        scores.append(math.inf if used is None or used > task.budget else float(used))
    return scores


# --- episode cells -----------------------------------------------------------------------------
def cell_config(name: str, task: EpisodeTask, genes: int) -> dict[str, Any]:
    """The task's shipped config with ``name``'s optimizer section, the task's generations and,
    where the budget is in env steps, ``max_env_steps``."""
    data = json.loads((ROOT / "configs" / task.config).read_text())
    data["optimizer"] = section(name, task, genes)
    data["number_generations"] = task.generations
    if task.measure != "evaluations":  # the run ends with the generation that spends the budget
        data["max_env_steps"] = task.budget
    if task.target is not None:
        data["validation"] = {**data.get("validation", {}), "target": task.target}
    if task.validate_every is not None:
        data["validation"] = {**data["validation"], "every_generations": task.validate_every}
    return data


def genome_size(task: EpisodeTask) -> int:
    """Genes of the task's brain (made once from the shipped config)."""
    from neuro_evolution.config.tree import load_config
    from neuro_evolution.run.experiment import build_template

    return build_template(load_config(ROOT / "configs" / task.config)).genome_size


def run_episodes(name: str, task: EpisodeTask, seeds: list[int], args: Any) -> list[float]:
    """Sweep the cell (finished runs are skipped by the sweep), then read its scores."""
    folder = args.out / "episodes" / task.name / name
    folder.mkdir(parents=True, exist_ok=True)
    config = folder.parent / f"{name}.json"
    atomic_write_text(config, json.dumps(cell_config(name, task, genome_size(task)), indent=2))
    if not args.report:
        seed_text = ",".join(map(str, seeds))
        command = [sys.executable, "-m", "neuro_evolution.sweep", str(config), "--seeds",
                   seed_text, "--out", str(folder), "--quiet"]  # fmt: skip
        command += ["--handler", task.handler or args.handler]
        if args.workers is not None and (task.handler or args.handler) in ("mp", "dask"):
            command += ["--workers", str(args.workers)]
        done = subprocess.run(command, check=False, env={**os.environ, "MPLBACKEND": "Agg"})
        if done.returncode not in (0, EXIT_FAILED):  # 3: runs failed, read with the others
            raise subprocess.CalledProcessError(done.returncode, command)
    return episode_scores(task, folder, seeds)


def episode_scores(task: EpisodeTask, folder: Path, seeds: list[int]) -> list[float]:
    """Each seed's score read from its run's log. A missing run, or one whose score can still
    change (:func:`settled`), is nan: left out of the table, and the latter named on stderr. A
    run whose last session failed (its ``failure.txt``: the method diverged, say) is scored on
    what it logged, so short of the target it is inf, and named on stderr with its error."""
    try:
        found = find_runs([folder])
    except UserError:  # nothing ran in this cell yet
        found = []
    runs = {int(run.config["random_seed"]): run for run in found}
    scores, open_seeds = [], []
    for seed in seeds:
        run = runs.get(seed)
        failure = None if run is None else read_failure(run.path)
        if failure is not None:
            print(f"{task.name} {folder.name}: seed {seed} failed ({failure})", file=sys.stderr)
        elif run is not None and not settled(task, run):
            open_seeds.append(seed)
            run = None
        scores.append(math.nan if run is None else episode_score(task, run.log))
    if open_seeds:
        print(
            f"{task.name} {folder.name}: seed(s) {', '.join(map(str, open_seeds))} not ended "
            "(running, or stopped before the target, the budget and the last generation): left out",
            file=sys.stderr,
        )
    return scores


def settled(task: EpisodeTask, run: Run) -> bool:
    """Whether a run's score can no longer change: it ended, as a run does, at its config's
    validation target (the task's target where the task has one), or it spent the task's budget
    or trained its last generation."""
    if run.reached() is not None:
        return True
    if task.measure == "evaluations":
        spent = sum(row["evaluations"] for row in run.log)
    else:
        spent = run.log[-1]["env_steps_total"]
    last = run.log[-1]["generation"] + 1 >= int(run.config["number_generations"])
    return spent >= task.budget or last


def episode_score(task: EpisodeTask, log: list[dict[str, Any]]) -> float:
    """The task's measure on one run's log rows."""
    evaluations = np.cumsum([row["evaluations"] for row in log])
    for row, used in zip(log, evaluations):
        spent = used if task.measure == "evaluations" else row["env_steps_total"]
        if spent > task.budget:
            break
        mean = row["validation_mean"]
        if task.measure != "score" and mean is not None and mean >= (task.target or 0):
            return float(spent)
    if task.measure != "score":
        return math.inf
    within = [r["validation_mean"] for r in log if r["env_steps_total"] <= task.budget]
    within = [value for value in within if value is not None]
    return float(within[-1]) if within else math.nan


# --- the table ---------------------------------------------------------------------------------
def median_interval(scores: list[float], resamples: int = 10_000) -> tuple[float, float, float]:
    """The median and its percentile-bootstrap 95% interval, as ``compare`` reports them, with
    order statistics (no interpolation), so an unreached seed (inf) stays inf, never nan."""
    data = np.asarray(scores, dtype=np.float64)
    rng = np.random.default_rng(0)
    draws = np.sort(data[rng.integers(0, data.size, (resamples, data.size))], axis=1)
    medians = draws[:, (data.size - 1) // 2]  # the lower median: inf only past half the seeds
    low, high = np.percentile(medians, [2.5, 97.5], method="inverted_cdf")
    return float(np.sort(data)[(data.size - 1) // 2]), float(low), float(high)


def cell_text(scores: list[float], task: BbobTask | EpisodeTask) -> str:
    """``median [low, high] k/n`` over the seeds that ran."""
    ran = [s for s in scores if not math.isnan(s)]
    if not ran:
        return "-"
    median, low, high = median_interval(ran)
    reached = sum(math.isfinite(s) for s in ran)
    text = f"{median:.3g} [{low:.3g}, {high:.3g}]" if len(ran) > 1 else f"{median:.3g}"
    return f"{text} {reached}/{len(ran)}" if task.lower_is_better else text


def ranks(medians: dict[str, float], lower_is_better: bool) -> dict[str, float]:
    """Rank 1 for the best median; ties share their mean rank; nan stays unranked."""
    named = {k: v for k, v in medians.items() if not math.isnan(v)}
    ordered = sorted(named.values(), reverse=not lower_is_better)
    return {
        k: float(np.mean([i + 1 for i, value in enumerate(ordered) if value == v]))
        for k, v in named.items()
    }


def report(results: dict[str, dict[str, list[float]]], tasks: list[Any], out: Path) -> str:
    """matrix.md (printed too) and matrix.png."""
    names = sorted(results)
    header = "| optimizer | " + " | ".join(task.name for task in tasks) + " | mean rank |"
    lines = [header, "| --- " * (len(tasks) + 2) + "|"]
    rank_table = np.full((len(names), len(tasks)), np.nan)
    for column, task in enumerate(tasks):
        medians = {}
        for name in names:
            ran = [s for s in results[name].get(task.name, []) if not math.isnan(s)]
            medians[name] = median_interval(ran)[0] if ran else math.nan
        for name, rank in ranks(medians, task.lower_is_better).items():
            rank_table[names.index(name), column] = rank
    for row, name in enumerate(names):
        cells = [cell_text(results[name].get(task.name, []), task) for task in tasks]
        mean_rank = np.nanmean(rank_table[row]) if np.isfinite(rank_table[row]).any() else np.nan
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {mean_rank:.2f} |")
    text = "\n".join(lines) + "\n"
    atomic_write_text(out / "matrix.md", text)
    draw(rank_table, names, tasks, out / "matrix.png")
    return text


def draw(rank_table: np.ndarray, names: list[str], tasks: list[Any], path: Path) -> None:
    """The ranks as a heatmap (1: best, dark), one row per optimizer."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(1.1 * len(tasks) + 2, 0.45 * len(names) + 1.5))
    image = axes.imshow(rank_table, cmap="viridis_r", aspect="auto")
    axes.set_xticks(range(len(tasks)), [task.name for task in tasks], rotation=45, ha="right")
    axes.set_yticks(range(len(names)), names)
    for (row, column), rank in np.ndenumerate(rank_table):
        if np.isfinite(rank):
            axes.text(column, row, f"{rank:g}", ha="center", va="center", color="w", fontsize=8)
    figure.colorbar(image, label="rank on the task (1: best median)")
    axes.set_title("optimizer matrix: rank per task")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def selected(text: str | None, choices: list[str], what: str) -> list[str]:
    """The comma-separated names of ``text`` (all when None); an unknown one is refused."""
    if text is None:
        return choices
    names = [name.strip() for name in text.split(",") if name.strip()]
    families = {"bbob": [t.name for t in TASKS if t.family == "bbob"]} if what == "task" else {}
    expanded = [n for name in names for n in families.get(name, [name])]
    unknown = [name for name in expanded if name not in choices]
    if unknown:
        raise SystemExit(f"--{what}s: unknown {', '.join(unknown)}; known: {', '.join(choices)}")
    return expanded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=Path("matrix"), help="results folder")
    parser.add_argument("--tasks", help="comma-separated task names, or bbob for all eight")
    parser.add_argument("--optimizers", help="comma-separated optimizer types (default: all)")
    parser.add_argument("--seeds", default="1-3", help="run seeds, e.g. 1-3")
    parser.add_argument("--handler", default="mp", help="the sweeps' handler (jax task: jax)")
    parser.add_argument("--workers", type=int, help="mp/dask workers (default: the sweep's)")
    parser.add_argument("--report", action="store_true", help="run nothing: table what ran")
    args = parser.parse_args(argv)
    task_names = selected(args.tasks, [task.name for task in TASKS], "task")
    tasks = [task for task in TASKS if task.name in task_names]
    names = selected(args.optimizers, OPTIMIZERS.names(), "optimizer")
    seeds = parse_seeds(args.seeds)
    results: dict[str, dict[str, list[float]]] = {name: {} for name in names}
    for task in tasks:
        for name in names:
            if isinstance(task, EpisodeTask) and measured(name):
                continue  # QD needs descriptors; the episode tasks define none
            try:
                if isinstance(task, BbobTask):
                    scores = run_bbob(name, task, seeds, args.out, not args.report)
                else:
                    scores = run_episodes(name, task, seeds, args)
            except (ConfigError, subprocess.CalledProcessError) as error:
                print(f"{name} on {task.name}: {error}", file=sys.stderr)
                scores = [math.nan] * len(seeds)
            results[name][task.name] = scores
            print(f"{task.name} {name}: {cell_text(scores, task)}", flush=True)
    print(report(results, tasks, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
