"""A paper's table, run with shipped configs and printed beside the paper's figures.

    python scripts/reproduce.py TABLE [--cases LIST] [--seeds LIST] [--out DIR] [--handler H]

Each case of a table is one shipped config (with the case's changes) run on every seed as a
sweep (``python -m neuro_evolution.sweep``): on the handler given (default: the config's own),
resumed when the command is run again, the ended runs skipped. A case's count is what the paper
counts until its criterion: training evaluations (genomes scored) or training episodes
(evaluations x episodes per evaluation), up to and including the generation whose held-out
validation first reached the config's target; a run that never did counts as ``inf``. The
generation's validation is what "solved" means here; the paper's own criterion stands beside it
in the table's notes, under its name. Prints one line per case,

    CASE: mean M, median N [min, max] k/n solved

over all n seeds whose runs ended (so the mean is inf when a seed failed, the median when half
did; the solved runs' own mean follows in brackets), then the paper's figure with its table. A
run that has not ended (running, or stopped before its target, budget and last generation) is
left out and named. A case
with ``generalization`` also scores each solved run's genome on the 625 start states of the
double pole's generalization test (Gruau et al. 1996; 1000 steps each) and prints the mean
number balanced; the score is saved as ``generalization.json`` in the run directory.

``--report`` prints the table from what is on disk without training. Tables: ``ars`` (Mania,
Guy & Recht 2018) and ``cosyne`` (Gomez, Schmidhuber & Miikkulainen 2008);
docs/benchmarks/reproductions.md gives each table's protocol, its differences from the paper
and the figures measured.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.cli import EXIT_FAILED
from neuro_evolution.compare import Run, find_runs
from neuro_evolution.config.tree import parse_run_config
from neuro_evolution.evaluation.episodes.runner import EvaluationContext, RunnerSpec
from neuro_evolution.evaluation.episodes.validation import reached
from neuro_evolution.evaluation.pools.factory import make_handler
from neuro_evolution.run.directory import CANDIDATE_FILE, load_candidate
from neuro_evolution.run.failure import read_failure
from neuro_evolution.support.atomic import atomic_write_text
from neuro_evolution.support.errors import UserError
from neuro_evolution.support.seeds import validation_seeds
from neuro_evolution.sweep.grid import parse_seeds, set_dotted

ROOT = Path(__file__).resolve().parents[1]
GENERALIZATION_FILE = "generalization.json"
GRID_STARTS = 625


@dataclasses.dataclass(frozen=True)
class Case:
    """One row of a paper's table: a shipped config, changed by ``changes`` (dotted keys)."""

    name: str
    config: str  # relative to the repository
    paper: str  # the paper's figure, with its table and page
    changes: tuple[tuple[str, Any], ...] = ()
    count: str = "evaluations"  # or "episodes"
    generalization: bool = False


@dataclasses.dataclass(frozen=True)
class Table:
    title: str
    seeds: str  # the default seeds
    cases: tuple[Case, ...]


MARKOV = "configs/double_pole_markov_cosyne.json"
NON_MARKOV = "configs/double_pole_nonmarkov_cosyne.json"
STANDARD_FITNESS = (
    ("environment.kwargs.fitness", "standard"),
    ("environment.kwargs.max_steps", 100_000),
)
# SNES with restarts as configs/double_pole_nonmarkov_snes.json runs it (its network too)
SNES_OPTIMIZER = {
    "type": "SNES",
    "population_size": 16,
    "stdev_init": 0.3,
    "restart_every_generations": 150,
}
SNES_NETWORK = {
    "type": "CTRNN",
    "number_neurons": 4,
    "delta_t": 1.0,
    "neuron_activation_inplace": True,
    "normalize_input": True,
    "normalize_input_target": 20.0,
}
SNES = (("optimizer", SNES_OPTIMIZER),)
GOMEZ = "Gomez, Schmidhuber & Miikkulainen 2008, JMLR 9"

MANIA = "Mania, Guy & Recht 2018, arXiv 1803.07055"
# task: (reward threshold, ARS V2-t's episodes to reach it), as Table 1 gives them
ARS_TASKS = {
    "swimmer": (325, 427),
    "hopper": (3120, 1973),
    "halfcheetah": (3430, 1707),
    "walker2d": (4390, 24000),
    "ant": (3580, 20800),
}
# the same linear policy, trained by other methods (not in the paper)
ARS_PEERS = {
    "snes": {"type": "SNES", "stdev_init": 0.1},
    "cma-es": {"type": "CMA_ES", "sigma": 0.1, "restarts": {"kind": "ipop"}},
}


# one difference from the paper's protocol at a time (docs/benchmarks/reproductions.md)
ARS_ABLATIONS = {
    "swimmer": (
        (
            "no-normalization",
            "ablation: no state normalization (ARS V1-t, as RL Zoo's Swimmer config trains)",
            (("observation_normalization", None),),
        ),
    ),
}


def ars_cases() -> tuple[Case, ...]:
    """ARS V2-t on each task, its ablations, then each peer method on the task's config."""
    cases = []
    for task, (threshold, episodes) in ARS_TASKS.items():
        config = f"configs/ars_{task}.json"
        paper = f"ARS V2-t {episodes:,} episodes to reach {threshold:,} (Table 1)"
        cases.append(Case(task, config, paper, count="episodes"))
        for suffix, note, changes in ARS_ABLATIONS.get(task, ()):
            cases.append(Case(f"{task}-{suffix}", config, f"{note}; {paper}", changes, "episodes"))
        for peer, optimizer in ARS_PEERS.items():
            changes = (("optimizer", optimizer),)
            note = f"not in the paper; {paper}"
            cases.append(Case(f"{task}-{peer}", config, note, changes, count="episodes"))
    return tuple(cases)


TABLES = {
    "ars": Table(
        title=f"{MANIA}: MuJoCo v5, training episodes until 100 held-out episodes average the "
        "threshold",
        seeds="1-5",
        cases=ars_cases(),
    ),
    "cosyne": Table(
        title=f"{GOMEZ}: the double pole, evaluations until the 100,000-step test passes",
        seeds="1-50",
        cases=(
            Case(
                "markov",
                MARKOV,
                "CoSyNE 954 evaluations, CMA-ES 895 (Table 3)",
                generalization=True,
            ),
            Case(
                "nonmarkov-standard",
                NON_MARKOV,
                "CoSyNE 1,249 evaluations, CMA-ES 3,521 (Table 4, standard fitness)",
                changes=STANDARD_FITNESS,
                generalization=True,
            ),
            Case(
                "nonmarkov-damping",
                NON_MARKOV,
                "CoSyNE 3,416 evaluations, CMA-ES 6,061, NEAT 6,929 (Table 4, damping fitness)",
                generalization=True,
            ),
            # one difference from the paper's reading at a time (docs/benchmarks/reproductions.md)
            Case(
                "markov-offspring-mutation",
                MARKOV,
                "ablation: only the offspring's genes mutate",
                changes=(("optimizer.mutation_scope", "offspring"),),
            ),
            Case(
                "markov-genome-crossover",
                MARKOV,
                "ablation: one cut over the whole genome",
                changes=(("optimizer.crossover", "genome"),),
            ),
            Case(
                "markov-fitness-marking",
                MARKOV,
                "ablation: survivors marked by fitness, p = 1 - u^(1/n)",
                changes=(("optimizer.marking", "fitness"),),
            ),
            Case(
                "markov-small-genes",
                MARKOV,
                "ablation: first genes from [-1, 1]",
                changes=(("optimizer.initial_gene_range", [-1.0, 1.0]),),
            ),
            Case(
                "markov-snes",
                MARKOV,
                "no SNES in the paper; CMA-ES 895 (Table 3)",
                changes=SNES,
                generalization=True,
            ),
            Case(
                "nonmarkov-damping-snes",
                NON_MARKOV,
                "no SNES in the paper; CMA-ES 6,061 (Table 4)",
                changes=(*SNES, ("brain", SNES_NETWORK)),
                generalization=True,
            ),
        ),
    ),
}


def case_config(case: Case) -> dict[str, Any]:
    """The shipped config with the case's changes."""
    data = json.loads((ROOT / case.config).read_text())
    for key, value in case.changes:
        set_dotted(data, key, value)
    return data


def run_case(
    case: Case, seeds: list[int], folder: Path, handler: str | None, workers: int | None
) -> None:
    """Sweep the case's config over ``seeds`` into ``folder`` (ended runs are skipped)."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder.parent / f"{case.name}.json"
    atomic_write_text(config, json.dumps(case_config(case), indent=2) + "\n")
    command = [sys.executable, "-m", "neuro_evolution.sweep", str(config), "--seeds",
               ",".join(map(str, seeds)), "--out", str(folder), "--quiet"]  # fmt: skip
    if handler is not None:
        command += ["--handler", handler]
    if workers is not None:
        command += ["--workers", str(workers)]
    done = subprocess.run(command, check=False, env={**os.environ, "MPLBACKEND": "Agg"})
    if done.returncode not in (0, EXIT_FAILED):  # 3: runs failed; read with the others
        raise UserError(f"{case.name}: the sweep exited with {done.returncode}")


def counted(case: Case, run: Run) -> float:
    """What the paper counts, up to the first validation that reached the target; inf if none."""
    per_evaluation = 1
    if case.count == "episodes":
        per_evaluation = int(run.config["episode_runner"]["number_fitness_runs"])
    total = 0
    for row in run.log:
        total += row["evaluations"] * per_evaluation
        if reached(row["validation_mean"], run.target):
            return float(total)
    return math.inf


def ended(run: Run) -> bool:
    """Whether the run's count can no longer change: it reached its target, spent a budget
    (``max_evaluations``, ``max_env_steps``) or trained its last generation."""
    config, log = run.config, run.log
    if any(reached(row["validation_mean"], run.target) for row in log):
        return True
    evaluations = sum(row["evaluations"] for row in log)
    budgets = (
        (config.get("max_evaluations"), evaluations),
        (config.get("max_env_steps"), log[-1]["env_steps_total"]),
    )
    spent = any(budget is not None and used >= budget for budget, used in budgets)
    return spent or log[-1]["generation"] + 1 >= int(config["number_generations"])


def generalization(run: Run) -> int:
    """Of the 625 generalization start states, how many the run's candidate balances for 1000
    steps (computed once, then read from the run's ``generalization.json``)."""
    saved = run.path / GENERALIZATION_FILE
    if saved.is_file():
        return int(json.loads(saved.read_text())["balanced"])
    candidate, template = load_candidate(run.path / CANDIDATE_FILE)
    environment = run.config["environment"]
    kwargs = {**environment.get("kwargs", {}), "validation": "generalization"}
    config = parse_run_config({**run.config, "environment": {**environment, "kwargs": kwargs}})
    spec = RunnerSpec(environment=config.environment, episode_runner=config.episode_runner)
    handler = make_handler("vectorized")  # the double pole's native vector env: 625 lanes
    handler.start(template, spec)
    try:
        genomes = np.repeat(candidate.genome[None, :], GRID_STARTS, axis=0)
        seeds = validation_seeds(config.random_seed, GRID_STARTS)
        context = EvaluationContext(observation_scaler=candidate.scaler, validation=True)
        results = handler.batch_evaluate(genomes, seeds, context)
    finally:
        handler.close()
    balanced = sum(result.fitness for result in results)
    result = {"balanced": round(balanced), "of": GRID_STARTS, "generation": candidate.generation}
    atomic_write_text(saved, json.dumps(result) + "\n")
    return result["balanced"]


def number(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:,.0f}"


def case_lines(case: Case, folder: Path, seeds: list[int]) -> list[str]:
    """The case's line, the paper's figure, and the runs left out or failed."""
    try:
        runs = {int(run.config["random_seed"]): run for run in find_runs([folder])}
    except UserError:
        runs = {}
    running = [seed for seed in seeds if seed in runs and not ended(runs[seed])]
    runs = {seed: run for seed, run in runs.items() if seed not in running}
    missing = [seed for seed in seeds if seed not in runs and seed not in running]
    scores = {seed: counted(case, runs[seed]) for seed in seeds if seed in runs}
    values = list(scores.values())
    lines = []
    if values:
        solved = [v for v in values if not math.isinf(v)]
        solved_mean = f"; solved runs' mean {number(statistics.mean(solved))}" if solved else ""
        lines.append(
            f"{case.name}: mean {number(statistics.mean(values))}, median "
            f"{number(statistics.median_low(values))} [{number(min(values))}, "
            f"{number(max(values))}] {len(solved)}/{len(values)} solved ({case.count}"
            f"{solved_mean})"
        )
    else:
        lines.append(f"{case.name}: no run yet")
    lines.append(f"    paper: {case.paper}")
    if case.generalization and values:
        balanced = [generalization(runs[s]) for s, v in scores.items() if not math.isinf(v)]
        if balanced:
            lines.append(
                f"    generalization: {np.mean(balanced):.1f} of {GRID_STARTS} starts balanced "
                f"(mean of {len(balanced)} solved runs; min {min(balanced)}, max {max(balanced)})"
            )
    for seed in scores:
        failure = read_failure(runs[seed].path)
        if failure is not None:
            lines.append(f"    seed {seed} failed: {failure}")
    if running:
        lines.append(f"    not ended (running, or stopped): seeds {','.join(map(str, running))}")
    if missing:
        lines.append(f"    not run: seeds {','.join(map(str, missing))}")
    return lines


def selected_cases(table: Table, text: str | None) -> list[Case]:
    names = [case.name for case in table.cases]
    if text is None:
        return list(table.cases)
    wanted = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in names]
    if unknown:
        raise UserError(f"--cases: unknown {', '.join(unknown)}; this table has {', '.join(names)}")
    return [case for case in table.cases if case.name in wanted]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", choices=sorted(TABLES))
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument("--seeds", help="e.g. 1-50 or 1,2,5 (default: the table's)")
    parser.add_argument("--out", type=Path, default=Path("reproductions"), help="results folder")
    parser.add_argument("--handler", help="evaluation handler (default: each config's own)")
    parser.add_argument("--workers", type=int, help="the sweep's worker slots (default: its own)")
    parser.add_argument("--report", action="store_true", help="print from disk, train nothing")
    args = parser.parse_args(argv)
    table = TABLES[args.table]
    try:
        cases = selected_cases(table, args.cases)
        seeds = parse_seeds(args.seeds or table.seeds)
        for case in cases:
            folder = args.out / args.table / case.name
            if not args.report:
                run_case(case, seeds, folder, args.handler, args.workers)
        print(table.title)
        for case in cases:
            print("\n".join(case_lines(case, args.out / args.table / case.name, seeds)))
    except UserError as error:
        print(f"reproduce: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
