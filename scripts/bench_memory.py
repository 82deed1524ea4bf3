"""Benchmark: memory tasks -- the double pole without velocities, and POPGym -- per brain type.

Double pole (``neuro_evolution.envs``): episodes (evaluations) until the run is *solved*, over
run seeds 1..N: the genome the run stands behind passes the env's validation (non-Markov: the
625-state generalization test, >= 200 start states balanced for 1,000 steps; Markov: 100,000
steps balanced from the standard start). Training episodes are counted; validation episodes are
not (the literature counts the networks evaluated while searching). A run that is not solved
within the evaluation cap counts as failed. Printed per variant and brain: seeds solved, the
median evaluations over every seed (an unsolved seed counts as more than the cap, so the median is
"> cap" when half or more fail), the median and mean of the solved seeds alone (the published
figures are means), each seed's count, and the
median wall time (validations included), next to the published counts. The published counts'
criterion is another test: the network balances 100,000 steps from the standard start. For the
non-Markov variant, validated on the generalization test, the run's center also faces that test
after every generation until the run stops (when it is solved, or at the cap); the table gives
how many seeds passed it by then and the median evaluations when they first did (a seed that did
not counts as more than the cap).

POPGym (the ``popgym`` extra): the held-out validation mean after a fixed env-step budget, per
task and brain type, median of seeds 1..M (``--budget``; AutoencodeEasy has its own, 40M
steps). The recurrent brains (CTRNN, LSTM) face the FFNN control: a task that needs memory is
one where the control stays near what a policy without memory can score.

Restarts (``--part restarts``): independent CMA-ES searches of the shipped non-Markov config
with its restarts off, each validated after every generation until it passes or reaches
``--cap`` generations; printed per seed, then the expected evaluations until solved under each
restart rule (a fixed period, or a number of generations without a better best), computed from
those searches: a restarted search is a fresh, independent one, so a rule's cost is the mean
generations a search spends before the rule stops it, over the share solved before that.

Every case starts from a shipped config; only the run seed, the stopping rule and, for the LSTM
cases, the brain change (a 3-unit LSTM with the CTRNN's input scaling). Training episodes of
the non-Markov shipped config start from the literature's standard state (the env's
``training_starts`` is "standard").

Usage:
    python scripts/bench_memory.py                      # everything (the double pole alone:
                                                        # about an hour, one process; POPGym's
                                                        # AutoencodeEasy about 30 min)
    python scripts/bench_memory.py --part doublepole --seeds 10
    python scripts/bench_memory.py --part popgym --popgym-seeds 3 --budget 1000000
    python scripts/bench_memory.py --part restarts --first-seed 1001 --seeds 30 --cap 200
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import statistics
import time
from pathlib import Path
from typing import Any, NamedTuple

from neuro_evolution.config.tree import config_to_dict, load_config, parse_config
from neuro_evolution.envs import ENV_KWARGS
from neuro_evolution.evaluation.episodes.runner import RunnerSpec
from neuro_evolution.evaluation.episodes.validation import ValidationScore
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.support.seeds import TRAINING_SEED_LIMIT

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "configs"

# Published PPO + GRU/LSTM POPGym scores (Morad et al. 2023, ICLR, appendix tables) are not
# printed: no stored source held those tables' numbers (only the paper's first pages).

# Gomez, Schmidhuber & Miikkulainen 2008, "Accelerated neural evolution through cooperatively
# coevolved synapses", JMLR 9:937-965: Table 3 (Markov double pole) and Table 4 (non-Markov,
# damping fitness), mean evaluations over 50 runs. Their "solved" for Table 4 is 100,000 steps
# from the standard start, not the 625-state generalization test used here.
PUBLISHED_NON_MARKOV = {"CoSyNE": 3_416, "CMA-ES": 6_061, "NEAT": 6_929, "ESP": 26_342}
PUBLISHED_MARKOV = {"CMA-ES": 895, "CoSyNE": 954, "NEAT": 3_600, "ESP": 3_800}


class DoublePoleCase(NamedTuple):
    name: str
    config: str
    overrides: dict[str, Any]  # top-level config sections that replace the config's own
    cap: int  # training evaluations before the run counts as failed


class PopgymCase(NamedTuple):
    task: str
    config: str  # the task's best recurrent brain
    control: str  # its FFNN control
    other: dict[str, Any]  # the other recurrent brain type, in the config's place
    budget: int | None = None  # training env steps of this task (None: --budget)


LSTM_16 = {"type": "LSTM", "hidden_size": 16}
LSTM_4 = {"type": "LSTM", "hidden_size": 4}


# The LSTM cases scale the inputs as the shipped CTRNNs do (normalize_input, target 20).
LSTM_3 = {
    "brain": {"type": "LSTM", "hidden_size": 3, "normalize_input": True,
              "normalize_input_target": 20.0}
}  # fmt: skip
DOUBLE_POLE = [
    DoublePoleCase("non-Markov CTRNN (shipped)", "double_pole_nonmarkov.json", {}, 20_000),
    DoublePoleCase("non-Markov LSTM", "double_pole_nonmarkov.json", LSTM_3, 20_000),
    DoublePoleCase("non-Markov FFNN control", "double_pole_nonmarkov_ffnn.json", {}, 20_000),
    DoublePoleCase("Markov CTRNN (shipped)", "double_pole_markov.json", {}, 5_000),
    DoublePoleCase("Markov LSTM", "double_pole_markov.json", LSTM_3, 5_000),
    DoublePoleCase("Markov linear control", "double_pole_markov_ffnn.json", {}, 5_000),
]
POPGYM = [
    PopgymCase("PositionOnlyCartPoleEasy", "popgym_stateless_cartpole.json",
               "popgym_stateless_cartpole_ffnn.json", LSTM_4),
    PopgymCase("RepeatPreviousEasy", "popgym_repeat_previous.json",
               "popgym_repeat_previous_ffnn.json", LSTM_16),
    PopgymCase("RepeatFirstEasy", "popgym_repeat_first.json", "popgym_repeat_first_ffnn.json",
               LSTM_16),
    PopgymCase("CountRecallEasy", "popgym_count_recall.json", "popgym_count_recall_ffnn.json",
               LSTM_16),
    # a remembered card is worth 0.029 of return and a guess's luck far more: 64 episodes per
    # evaluation and CMA-ES, 40M steps (the README's "Memory tasks" says why)
    PopgymCase("AutoencodeEasy", "popgym_autoencode.json", "popgym_autoencode_ffnn.json",
               LSTM_4, 40_000_000),
]  # fmt: skip


class Run(NamedTuple):
    """One double-pole run: training evaluations when solved (None: not within the cap), when
    the center first balanced 100,000 steps from the standard start (Gomez et al.'s criterion;
    None: never, or the variant's validation is that test already), wall seconds."""

    solved: int | None
    long_test: int | None
    seconds: float


def validation_test(config: Any) -> str:
    """The double-pole env's validation test ("generalization" or "long") in ``config``."""
    env_id = config.environment.id.split(":")[-1]
    return str({**ENV_KWARGS[env_id], **config.environment.kwargs}["validation"])


class LongTest:
    """Gomez et al. 2008's criterion, for a variant validated on another test: the genome
    balances 100,000 steps from the standard start (they test each generation's best network;
    this tests the run's center, the genome it stands behind)."""

    def __init__(self, config: Any):
        environment = dataclasses.replace(
            config.environment, kwargs={**config.environment.kwargs, "validation": "long"}
        )
        spec = RunnerSpec(environment=environment, episode_runner=config.episode_runner)
        self.runner = spec.make()

    def passes(self, experiment: Experiment) -> bool:
        candidate = experiment.candidate()
        brain = experiment.template.build(candidate.genome)
        result = self.runner.run_episode(brain, TRAINING_SEED_LIMIT, scaler=candidate.scaler)
        return result.fitness >= 1.0

    def close(self) -> None:
        self.runner.close()


def evaluations_to_solve(case: DoublePoleCase, seed: int) -> Run:
    """Run ``case`` with run seed ``seed`` until it is solved or reaches its cap."""
    config = load_config(CONFIGS / case.config)
    if case.overrides:
        config = parse_config({**config_to_dict(config), **case.overrides})
    assert config.validation is not None, f"{case.config} has a validation section"
    # validate every generation, so the count stops at the first generation that is solved
    validation = dataclasses.replace(config.validation, every_generations=1)
    config = dataclasses.replace(
        config, random_seed=seed, number_generations=10**6, validation=validation
    )
    episodes_per = config.episode_runner.number_fitness_runs
    long_test = None if validation_test(config) == "long" else LongTest(config)
    start = time.perf_counter()
    experiment = Experiment(config)
    experiment.start()
    evaluations, long_at = 0, None
    try:
        while not experiment.done and evaluations < case.cap:
            row = experiment.step()
            evaluations += row.evaluations * episodes_per
            if long_test is not None and long_at is None and long_test.passes(experiment):
                long_at = evaluations
    finally:
        experiment.close()
        if long_test is not None:
            long_test.close()
    solved = experiment.summary().solved
    return Run(evaluations if solved else None, long_at, time.perf_counter() - start)


class Search(NamedTuple):
    """One CMA-ES search on the non-Markov double pole without restarts: the generation whose
    center first passed the generalization test (None: not within the cap), and per generation
    up to then the best training fitness and the center's share of the 625 start states
    balanced."""

    solved_at: int | None
    best: list[float]
    validation: list[float]


def one_search(seed: int, cap: int) -> Search:
    """The shipped non-Markov config with its restarts off, run seed ``seed``, validated after
    every generation, until solved or ``cap`` generations."""
    config = load_config(CONFIGS / "double_pole_nonmarkov.json")
    assert config.validation is not None, "the shipped config has a validation section"
    optimizer = dataclasses.replace(config.optimizer, restart_every_generations=None)
    validation = dataclasses.replace(config.validation, every_generations=1)
    config = dataclasses.replace(
        config,
        random_seed=seed,
        number_generations=cap,
        optimizer=optimizer,
        validation=validation,
    )
    experiment = Experiment(config)
    experiment.start()
    best: list[float] = []
    validation: list[float] = []
    try:
        while not experiment.done:
            row = experiment.step()
            best.append(row.fitness_max)
            validation.append(math.nan if row.validation_mean is None else row.validation_mean)
    finally:
        experiment.close()
    solved = experiment.summary().solved
    return Search(len(best) if solved else None, best, validation)


def stagnation_stop(best: list[float], patience: int) -> int | None:
    """The generation after which a search whose best-of-generation fitness has not improved
    on its best for ``patience`` generations would be stopped (None: never, in ``best``)."""
    record, since = -math.inf, 0
    for generation, value in enumerate(best, start=1):
        if value > record:
            record, since = value, 0
        else:
            since += 1
        if since >= patience:
            return generation
    return None


def expected_evaluations(searches: list[Search], stops: list[int | None], cap: int) -> float:
    """Expected training evaluations until solved when independent searches are each stopped
    at their ``stops`` generation (None: the cap) and restarted: the mean generations a search
    spends, over the fraction that is solved before its stop, times the population (16). A
    search that reached the cap unsolved is stopped there, so a stop beyond the cap is
    counted as the cap (the estimate is then optimistic and printed with a >)."""
    spent, solved = 0, 0
    for search, stop in zip(searches, stops):
        limit = cap if stop is None else min(stop, cap)
        if search.solved_at is not None and search.solved_at <= limit:
            spent, solved = spent + search.solved_at, solved + 1
        else:
            spent += limit
    return math.inf if solved == 0 else 16 * spent / solved


def bench_restarts(seeds: list[int], cap: int, record: Path | None) -> None:
    """Independent restart-free searches, then the expected evaluations of each restart rule
    computed from them (searches restarted with fresh draws are independent, so a rule's cost
    follows from how long each search takes and when the rule would stop it)."""
    print(f"\n## Double pole without velocities: {len(seeds)} searches without restarts, cap {cap}")
    searches = []
    for seed in seeds:
        search = one_search(seed, cap)
        searches.append(search)
        print(f"  seed {seed}: solved at generation {search.solved_at}", flush=True)
    if record is not None:
        record.write_text(json.dumps({str(s): x._asdict() for s, x in zip(seeds, searches)}))
    done = sorted(s.solved_at for s in searches if s.solved_at is not None)
    print(f"solved within {cap} generations: {len(done)}/{len(searches)}; generations: {done}")
    print("| rule | expected evaluations until solved |")
    print("| --- | ---: |")
    for every in (25, 40, 50, 60, 75, 100, 150, 200, 300):
        if every <= cap:
            cost = expected_evaluations(searches, [every] * len(searches), cap)
            print(f"| restart every {every} generations | {cost:,.0f} |")
    for patience in (5, 10, 15, 20, 30, 40):
        stops = [stagnation_stop(s.best, patience) for s in searches]
        cost = expected_evaluations(searches, stops, cap)
        # an unsolved search the rule never stopped would have run on past the cap
        bound = (
            "> " if any(s.solved_at is None and t is None for s, t in zip(searches, stops)) else ""
        )
        print(
            f"| restart after {patience} generations without a better best | {bound}{cost:,.0f} |"
        )


def return_at_budget(
    config_name: str, brain: dict[str, Any] | None, seed: int, budget: int
) -> tuple[float, float]:
    """(held-out validation mean after ``budget`` training env steps, wall seconds) of the
    config, with its brain section replaced by ``brain`` when given."""
    config = load_config(CONFIGS / config_name)
    if brain is not None:
        config = parse_config({**config_to_dict(config), "brain": brain})
    assert config.validation is not None, f"{config_name} has a validation section"
    # one validation, at the budget (none on the way: they would cost time, not change training)
    validation = dataclasses.replace(config.validation, target=None, every_generations=10**9)
    config = dataclasses.replace(
        config, random_seed=seed, number_generations=10**6, validation=validation
    )
    start = time.perf_counter()
    experiment = Experiment(config)
    experiment.start()
    try:
        while experiment.step().env_steps_total < budget:
            pass
        # the candidate at the budget, on the run's held-out validation episodes
        request = experiment.validation_request(experiment.candidate())
        results = experiment.handler.batch_evaluate(request.genomes, request.seeds, request.context)
    finally:
        experiment.close()
    score = ValidationScore.from_results(experiment.generation, results)
    return score.mean, time.perf_counter() - start


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def bench_double_pole(seeds: list[int], cases: list[str] | None) -> None:
    print("\n## Double pole: training evaluations until solved")
    print(
        "| case | seeds solved | median evaluations | median of the solved | mean of the solved | "
        "100k steps from the standard start by then | median wall time |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for case in DOUBLE_POLE:
        if cases and case.name not in cases:
            continue
        if not (CONFIGS / case.config).is_file():
            print(f"| {case.name} | (no {case.config}) | | |")
            continue
        runs = [evaluations_to_solve(case, seed) for seed in seeds]
        solved = [run.solved for run in runs if run.solved is not None]
        wall = median([run.seconds for run in runs])
        # the median over every seed, an unsolved one counting as "more than the cap"
        everyone = median([math.inf if run.solved is None else float(run.solved) for run in runs])
        overall = f"> {case.cap:,}" if math.isinf(everyone) else f"{everyone:,.0f}"
        long_column = "(= solved)"
        if validation_test(load_config(CONFIGS / case.config)) != "long":
            passed = [run.long_test for run in runs if run.long_test is not None]
            long_median = median(
                [math.inf if run.long_test is None else float(run.long_test) for run in runs]
            )
            shown = f"> {case.cap:,}" if math.isinf(long_median) else f"{long_median:,.0f}"
            long_column = f"{len(passed)}/{len(runs)}, median {shown}"
        print(
            f"| {case.name} | {len(solved)}/{len(runs)} (cap {case.cap:,}) | {overall} | "
            f"{f'{median(solved):,.0f}' if solved else '-'} | "
            f"{f'{statistics.mean(solved):,.0f}' if solved else '-'} | {long_column} | "
            f"{wall:.1f} s |",
            flush=True,
        )
        print("  per seed (solved / 100k steps): " + ", ".join(
            f"{seed}: {'-' if run.solved is None else f'{run.solved:,}'} / "
            f"{'-' if run.long_test is None else f'{run.long_test:,}'}"
            for seed, run in zip(seeds, runs)
        ), flush=True)  # fmt: skip
    print("\nPublished (Gomez et al. 2008, JMLR 9, mean of 50 runs; solved = 100,000 steps):")
    print("  non-Markov, damping fitness (Table 4): " + ", ".join(
        f"{name} {count:,}" for name, count in PUBLISHED_NON_MARKOV.items()))  # fmt: skip
    print("  Markov (Table 3): " + ", ".join(
        f"{name} {count:,}" for name, count in PUBLISHED_MARKOV.items()))  # fmt: skip


def bench_popgym(seeds: list[int], budget: int, tasks: list[str] | None) -> None:
    print(f"\n## POPGym: held-out validation mean after {budget:,} training env steps (unless")
    print("a row names its own budget)")
    print("| task | brain | training env steps | median held-out mean | seeds | median wall time |")
    print("| --- | --- | ---: | ---: | --- | ---: |")
    for case in POPGYM:
        if tasks and case.task not in tasks:
            continue
        steps = case.budget or budget
        variants = [(case.config, None), (case.config, case.other), (case.control, None)]
        for config_name, override in variants:
            if not (CONFIGS / config_name).is_file():
                print(f"| {case.task} | (no {config_name}) | | | | |")
                continue
            brain = (
                str(override["type"])
                if override
                else load_config(CONFIGS / config_name).brain.type_name()
            )
            if override is None and config_name == case.config:
                brain += " (shipped)"
            runs = [return_at_budget(config_name, override, seed, steps) for seed in seeds]
            means = [mean for mean, _ in runs]
            shown = ", ".join(f"{mean:.3f}" for mean in means)
            print(
                f"| {case.task} | {brain} | {steps:,} | {median(means):.3f} | {shown} | "
                f"{median([seconds for _, seconds in runs]):.1f} s |",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = ["doublepole", "restarts", "popgym", "all"]
    parser.add_argument("--part", choices=parts, default="all")
    parser.add_argument("--seeds", type=int, default=10, help="double-pole run seeds: N of them")
    parser.add_argument("--first-seed", type=int, default=1, help="the first double-pole run seed")
    parser.add_argument("--cap", type=int, default=300, help="restarts: generations per search")
    parser.add_argument("--record", type=Path, help="restarts: write every search here (JSON)")
    parser.add_argument("--popgym-seeds", type=int, default=3, help="POPGym run seeds 1..M")
    parser.add_argument("--budget", type=int, default=1_000_000, help="POPGym env steps")
    parser.add_argument(
        "--cases", nargs="+", choices=[case.name for case in DOUBLE_POLE], help="double-pole cases"
    )
    parser.add_argument(
        "--tasks", nargs="+", choices=[case.task for case in POPGYM], help="POPGym tasks (all)"
    )
    args = parser.parse_args()
    print(f"# bench_memory on {os.cpu_count()} cores")
    if args.part in ("doublepole", "all"):
        seeds = list(range(args.first_seed, args.first_seed + args.seeds))
        bench_double_pole(seeds, args.cases)
    if args.part == "restarts":
        seeds = list(range(args.first_seed, args.first_seed + args.seeds))
        bench_restarts(seeds, args.cap, args.record)
    if args.part in ("popgym", "all"):
        bench_popgym(list(range(1, args.popgym_seeds + 1)), args.budget, args.tasks)


if __name__ == "__main__":
    main()
