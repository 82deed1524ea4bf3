"""Our optimizers on COCO's 24-function ``bbob`` suite, with pycma's BIPOP-CMA-ES beside them.

The rule (docs/benchmarks/coco.md):

- Every problem of ``cocoex.Suite("bbob")`` (functions f1-f24, the chosen dimensions and
  instances) is run by every algorithm through COCO's Observer, one result folder per algorithm
  under ``--out``. An algorithm may spend ``K * dimension`` evaluations per problem (``K`` is
  ``--budget-multiplier``) and stops at the first evaluation that reaches COCO's final target
  (f - f_opt < 1e-8); the evaluation past the budget is refused, so no run spends more.
- Restarts as COCO's example experiment does them: while budget remains, the solver starts
  again from ``problem.initial_solution_proposal()`` (the origin first, then uniform in
  [-4, 4]^d). Our CMA_ES and SEP_CMA_ES run BIPOP restarts of their own
  (``"restarts": {"kind": "bipop"}``); a method without a stopping rule runs on to the budget,
  and one that diverges (FloatingPointError, LinAlgError) restarts with the next seed. Our
  optimizers start at the proposal with their spread option (sigma, stdev_init) at 2 and their
  other defaults; they maximize, so they are told -f. ``--set KEY=VALUE`` changes a field of
  every one of our optimizer sections (``--set active=true``); their algorithm names then carry
  the settings (``CMA_ES-active=true``), so one run can hold a method with and without them.
- The reference, pycma's ``cma.fmin2(..., restarts=9, bipop=True)`` with sigma0 2 and pycma's
  default options, runs by the same rule (``--reference``, on by default).
  ``--pycma-options JSON`` changes pycma's options (a JSON object of ``cma.CMAOptions`` keys,
  e.g. ``{"CMA_active": false}``), to measure what one of them does; the options this script
  sets itself (seed, maxfevals, verbosity) are refused.
- The summary: for each dimension and algorithm, read back with cocopp's ``DataSetList`` and
  ``detEvals``, the runtime ECDF of (function, instance, target) triples over cocopp's 51 bbob
  targets 10^2 ... 10^-8 without simulated restarts. ``solved`` is its value at the budget (the
  fraction of triples reached); ``area`` is its area over log10(evaluations / dimension) in
  [0, log10 K], divided by log10 K (1: every target at the first evaluation; a target reached in
  fewer than d evaluations counts at 0), and ``ratio`` is an algorithm's area over the
  reference's in the same run. The same figures by function group follow.
- Then cocopp's report (ECDF and aRT pages, with the best-2009 reference data cocopp ships)
  is written to ``--out``/report (``--no-report``: skipped).

Usage: python scripts/bench_coco.py --optimizers CMA_ES,SNES --dimensions 2,5,10
    --budget-multiplier 100 --out coco [--instances 1-5] [--functions 1-24] [--no-reference]
    [--pycma-options '{"CMA_active": false}'] [--set active=true]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import io
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.config.overrides import parse_value
from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations, Optimizer
from neuro_evolution.support.errors import UserError

EXIT_USAGE = 2
REFERENCE = "pycma-BIPOP"
SIGMA0 = 2.0  # COCO's example experiment and Hansen's BBOB-2009 BIPOP runs: sigma0 = 2
RESERVED_PYCMA = ("seed", "maxfevals", "verbose", "verb_log", "verb_disp")  # set by run_pycma
SPREAD_FIELDS = ("sigma", "stdev_init")  # our optimizers' initial per-gene spread options
DIMENSIONS = (2, 3, 5, 10, 20, 40)  # those of the bbob suite
TARGETS = 10.0 ** np.linspace(2, -8, 51)  # cocopp's runtime ECDF targets on bbob
GROUPS = {  # the bbob function groups of cocopp's reports
    "separable": range(1, 6),
    "moderate": range(6, 10),
    "ill-conditioned": range(10, 15),
    "multimodal": range(15, 20),
    "weakly-structured": range(20, 25),
}
QD_DESCRIPTORS = [  # a quality-diversity optimizer's descriptors here: genes 0 and 1
    {"name": f"gene{i}", "source": "observation", "index": i, "low": -5.0, "high": 5.0, "bins": 10}
    for i in range(2)
]
Objective = Callable[[np.ndarray], float]


class BudgetSpent(Exception):
    """The problem's budget is spent or its final target reached: the run ends here."""


@dataclasses.dataclass
class Budget:
    """``problem`` evaluated until ``limit`` evaluations or COCO's final target."""

    problem: Any  # cocoex.Problem, observed
    limit: int

    @property
    def spent(self) -> bool:
        return self.problem.evaluations >= self.limit or bool(self.problem.final_target_hit)

    def __call__(self, x: np.ndarray) -> float:
        """f(x); BudgetSpent instead of an evaluation past the budget or the target."""
        if self.spent:
            raise BudgetSpent
        return float(self.problem(np.asarray(x, dtype=np.float64)))


# --- algorithms ------------------------------------------------------------------------------
def optimizer_section(name: str) -> dict[str, Any]:
    """The optimizer section of ``name`` here: BIPOP restarts where it has them, spread 2."""
    config_cls, _ = OPTIMIZERS.get(name)
    fields = {field.name for field in dataclasses.fields(config_cls)}
    section: dict[str, Any] = {"type": name}
    spread = next((field for field in SPREAD_FIELDS if field in fields), None)
    if spread is not None:
        section[spread] = SIGMA0
    if "restarts" in fields:
        section["restarts"] = {"kind": "bipop"}
    if "descriptors" in fields:
        section["descriptors"] = QD_DESCRIPTORS
    return section


def run_ours(section: dict[str, Any], budget: Budget, x0: np.ndarray, seed: int) -> None:
    """One run of our optimizer ``section`` from ``x0`` (it searches y and is scored at x0 + y)
    until the budget is spent or it diverges."""
    dimension, name = len(x0), section["type"]
    config = OPTIMIZERS.parse_config(section, "optimizer")
    optimizer = make_optimizer(config, dimension, seed)
    hall_of_fame, generation = HallOfFame(1, dimension), 0
    try:
        while True:
            genomes = optimizer.ask()
            values = np.array([budget(x0 + genome) for genome in genomes])
            tell(optimizer, hall_of_fame, genomes, values, generation)
            generation += 1
    except (FloatingPointError, np.linalg.LinAlgError) as error:
        print(f"{name} {budget.problem.id}: {error}; restarting", file=sys.stderr)


def tell(
    optimizer: Optimizer,
    hall_of_fame: HallOfFame,
    genomes: np.ndarray,
    values: np.ndarray,
    generation: int,
) -> None:
    """Tell ``optimizer`` -f (it maximizes), with genes 0 and 1 as a QD optimizer's measures."""
    hall_of_fame.update(genomes, -values, generation)
    measures = genomes[:, :2] if optimizer.measure_configs() else None
    seeds = np.zeros(len(genomes), dtype=np.int64)
    optimizer.tell(Evaluations(-values, hall_of_fame, measures, seeds, generation))


def run_pycma(budget: Budget, x0: np.ndarray, seed: int, extra: dict[str, Any]) -> None:
    """One call of pycma's BIPOP ``fmin2`` from ``x0`` (it ends itself, or on the budget), with
    the ``extra`` options (--pycma-options) over pycma's defaults."""
    import cma

    options = {**extra, "seed": seed + 1, "verbose": -9, "verb_log": 0, "verb_disp": 0,
               "maxfevals": budget.limit - budget.problem.evaluations}  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cma.fmin2(budget, x0, SIGMA0, options, restarts=9, bipop=True)


def solve(algorithm: str, problem: Any, limit: int, seed: int, args: argparse.Namespace) -> None:
    """Run ``algorithm`` on ``problem`` by the rule: restart from the next proposal while
    budget remains."""
    budget = Budget(problem, limit)
    run = 0
    with contextlib.suppress(BudgetSpent):
        while not budget.spent:
            x0 = problem.initial_solution_proposal()
            run_seed = seed + 1000 * problem.index + run
            if algorithm == REFERENCE:
                run_pycma(budget, x0, run_seed, args.pycma_options)
            else:
                run_ours(args.sections[algorithm], budget, x0, run_seed)
            run += 1


def benchmark(algorithm: str, args: argparse.Namespace) -> Path:
    """Every problem of the suite solved by ``algorithm`` under COCO's observer; its folder."""
    import cocoex

    cocoex.log_level("warning")
    suite = cocoex.Suite("bbob", "", suite_options(args))
    observer = cocoex.Observer(
        "bbob",
        f"outer_folder: {args.out.resolve()} result_folder: {algorithm} "
        f"algorithm_name: {algorithm}",
    )
    started = time.perf_counter()
    for problem in suite:
        problem.observe_with(observer)
        limit = args.budget_multiplier * problem.dimension
        solve(algorithm, problem, limit, args.seed, args)
        problem.free()
    print(f"{algorithm}: {len(suite)} problems in {time.perf_counter() - started:.1f} s",
          file=sys.stderr)  # fmt: skip
    return args.out / algorithm


def suite_options(args: argparse.Namespace) -> str:
    """cocoex's suite options for the chosen functions, dimensions and instances."""
    options = f"dimensions: {','.join(map(str, args.dimensions))}"
    if args.functions:
        options += f" function_indices: {args.functions}"
    if args.instances:
        options += f" instance_indices: {args.instances}"
    return options


# --- summary ---------------------------------------------------------------------------------
def runtimes(folder: Path) -> dict[tuple[int, int], np.ndarray]:
    """(dimension, function) -> (runs, targets) evaluations to each target (nan: not reached),
    read with cocopp's DataSetList."""
    import cocopp

    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data_sets = cocopp.pproc.DataSetList(str(folder))
    return {
        (int(data.dim), int(data.funcId)): np.array(data.detEvals(list(TARGETS))).T
        for data in data_sets
    }


def ecdf(evaluations: np.ndarray, dimension: int, multiplier: int) -> tuple[float, float]:
    """(area, solved) of the runtime ECDF of these triples, as the module docstring defines."""
    if evaluations.size == 0:
        return math.nan, math.nan
    horizon = math.log10(multiplier)
    reached = np.isfinite(evaluations) & (evaluations <= multiplier * dimension)
    scaled = np.log10(np.maximum(np.where(reached, evaluations, 1.0) / dimension, 1.0))
    area = np.where(reached, 1.0 - scaled / horizon, 0.0)
    return float(area.mean()), float(reached.mean())


def summary_lines(
    results: dict[str, dict[tuple[int, int], np.ndarray]], dimensions: list[int], multiplier: int
) -> Iterator[str]:
    """Per dimension, one line per algorithm (area, solved, ratio to the reference), then the
    same per function group."""
    groups = {"all": range(1, 25), **GROUPS}
    for dimension in dimensions:
        for group, functions in groups.items():
            areas = {}
            for algorithm, data in results.items():
                rows = [data[(dimension, f)] for f in functions if (dimension, f) in data]
                if rows:
                    areas[algorithm] = ecdf(np.concatenate(rows), dimension, multiplier)
            reference = areas.get(REFERENCE, (math.nan, math.nan))[0]
            for algorithm, (area, solved) in areas.items():
                ratio = area / reference if reference > 0 else math.nan
                yield (
                    f"coco d={dimension} group={group} algorithm={algorithm} area={area:.4f} "
                    f"solved={solved:.4f} ratio={ratio:.3f}"
                )


def report(folders: list[Path], out: Path) -> Path:
    """cocopp's HTML report of ``folders`` under ``out``/report; its log beside it."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    import cocopp

    target = out / "report"
    target.mkdir(parents=True, exist_ok=True)
    with (
        (target / "cocopp.log").open("w") as log,
        contextlib.redirect_stdout(log),
        contextlib.redirect_stderr(log),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        cocopp.main(["-o", str(target), *map(str, folders)])
    return target / "index.html"


# --- command line ----------------------------------------------------------------------------
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--optimizers", default="CMA_ES", help="registered type names, comma-separated"
    )
    parser.add_argument("--dimensions", default="2,5,10", help=f"comma-separated, of {DIMENSIONS}")
    parser.add_argument("--budget-multiplier", type=int, default=100,
                        help="K: K * dimension evaluations per problem")  # fmt: skip
    parser.add_argument("--out", type=Path, required=True, help="results and report go here")
    parser.add_argument("--instances", default="1-5", help="instance indices ('': the suite's 15)")
    parser.add_argument("--functions", default="", help="function indices ('': all 24)")
    parser.add_argument("--reference", action=argparse.BooleanOptionalAction, default=True,
                        help=f"run pycma's BIPOP-CMA-ES as {REFERENCE}")  # fmt: skip
    parser.add_argument("--report", action=argparse.BooleanOptionalAction, default=True,
                        help="write cocopp's report under OUT/report")  # fmt: skip
    parser.add_argument("--pycma-options", default="{}",
                        help="JSON object of cma.CMAOptions for the reference")  # fmt: skip
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a field of each of our optimizer sections (repeatable)")  # fmt: skip
    args = parser.parse_args(argv)
    args.optimizers = [name.strip() for name in args.optimizers.split(",") if name.strip()]
    return args


def check_args(args: argparse.Namespace) -> None:
    """A UserError naming the first unusable argument."""
    for name in args.optimizers:
        try:
            OPTIMIZERS.get(name)
        except KeyError as error:
            raise UserError(f"--optimizers: {error.args[0]}") from None
    args.dimensions = dimensions(args.dimensions)
    unknown = [d for d in args.dimensions if d not in DIMENSIONS]
    if unknown:
        raise UserError(f"--dimensions: {unknown} not in the bbob suite's {list(DIMENSIONS)}")
    if args.budget_multiplier < 2:
        raise UserError(f"--budget-multiplier must be >= 2, got {args.budget_multiplier}")
    args.pycma_options = pycma_options(args.pycma_options)
    args.sections = our_sections(args.optimizers, args.set)
    for algorithm in algorithms(args):
        if (args.out / algorithm).exists():
            raise UserError(f"{args.out / algorithm} exists: choose another --out or remove it")


def dimensions(text: str) -> list[int]:
    """--dimensions as integers; a UserError naming one that is not."""
    try:
        return [int(d) for d in text.split(",")]
    except ValueError:
        raise UserError(
            f"--dimensions: comma-separated integers of {list(DIMENSIONS)}, got {text!r}"
        ) from None


def pycma_options(text: str) -> dict[str, Any]:
    """--pycma-options as a dict of pycma option names; a UserError naming a bad one."""
    try:
        options = json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(f"--pycma-options: not JSON ({error}): {text!r}") from None
    if not isinstance(options, dict):
        raise UserError(f"--pycma-options: a JSON object of pycma options, got {text!r}")
    import cma

    known = list(cma.CMAOptions())
    for key in options:
        if key in RESERVED_PYCMA:
            raise UserError(f"--pycma-options: {key!r} is set by this script; leave it out")
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise UserError(f"--pycma-options: {key!r} is not a pycma option.{hint}")
    return options


def our_sections(names: list[str], settings: list[str]) -> dict[str, dict[str, Any]]:
    """Algorithm name -> optimizer section: each of ``names`` with the ``--set`` settings; a
    UserError naming a setting that is not ``KEY=VALUE`` or that a section refuses."""
    chosen: dict[str, Any] = {}
    for text in settings:
        key, equals, value = text.partition("=")
        if not equals or not key.strip():
            raise UserError(f"--set: expected KEY=VALUE (e.g. active=true), got {text!r}")
        chosen[key.strip()] = parse_value(value)
    suffix = "".join(f"-{key}={settings_text(value)}" for key, value in chosen.items())
    sections = {}
    for name in names:
        section = {**optimizer_section(name), **chosen}
        try:
            OPTIMIZERS.parse_config(section, "optimizer")
        except ConfigError as error:
            raise UserError(f"--set: {error}") from None
        sections[name + suffix] = section
    return sections


def settings_text(value: Any) -> str:
    """A --set value as it appears in an algorithm name (JSON: true, 0.5, "x")."""
    return json.dumps(value, separators=(",", ":"))


def algorithms(args: argparse.Namespace) -> list[str]:
    return [*args.sections, *([REFERENCE] if args.reference else [])]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        check_args(args)
    except UserError as error:
        print(f"bench_coco: {error}", file=sys.stderr)
        return EXIT_USAGE
    args.out.mkdir(parents=True, exist_ok=True)
    if args.reference and args.pycma_options:
        print(f"reference: {REFERENCE} options={json.dumps(args.pycma_options, sort_keys=True)}")
    folders = [benchmark(algorithm, args) for algorithm in algorithms(args)]
    results = {folder.name: runtimes(folder) for folder in folders}
    for line in summary_lines(results, args.dimensions, args.budget_multiplier):
        print(line)
    if args.report:
        print(f"report: {report(folders, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
