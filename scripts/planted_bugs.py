"""Plant small deliberate bugs one at a time and see whether the tests catch them.

Each mutation is an exact-string replacement in one file of the package: a flipped comparison,
a dropped term, a reversed order, each breaking one behaviour the README claims. For each, a
scratch copy of the repository (package, tests, configs, docs) gets that one change, and the test
files that guard the behaviour run against the copy (``PYTHONPATH`` and the working directory are
the copy, so workers and subprocesses import the mutated package). A mutation is *caught* when
pytest fails, and *survives* when every test passes. The original string of every mutation must
occur exactly once in its file; the script refuses to start otherwise, so no mutation can
silently become a no-op when the code it targets moves.

    python scripts/planted_bugs.py                   # every mutation (tens of minutes)
    python scripts/planted_bugs.py --list            # names, files and test files only
    python scripts/planted_bugs.py --only cma-es-restart-keeps-covariance composed-fill-view
    python scripts/planted_bugs.py --fast            # leave out tests marked slow

First the listed test files run once unmutated (``--no-baseline`` skips it): a mutation is only
meaningful against tests that pass. Extend the list with each feature.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COPIED = ("neuro_evolution", "tests", "configs", "docs", "scripts", "pyproject.toml", "README.md")
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", "runs", "sweeps")
PACKAGE = "neuro_evolution/"


@dataclasses.dataclass(frozen=True)
class Mutation:
    """One planted bug: ``original`` becomes ``replacement`` in ``path``; ``tests`` guard it."""

    name: str
    claim: str  # the behaviour (README / design) the bug breaks
    path: str  # relative to the package folder
    original: str
    replacement: str
    tests: tuple[str, ...]


def in_tests(name: str) -> str:
    """``tests/FOLDER/NAME`` for a test module's file name (file names are unique in tests/);
    ``tests/NAME`` when no such file exists, which the stale-list check reports."""
    found = sorted((ROOT / "tests").rglob(name))
    return found[0].relative_to(ROOT).as_posix() if len(found) == 1 else f"tests/{name}"


def m(name: str, claim: str, path: str, original: str, replacement: str, *tests: str) -> Mutation:
    return Mutation(name, claim, path, original, replacement, tuple(map(in_tests, tests)))


# fmt: off
MUTATIONS: tuple[Mutation, ...] = (
    # --- brains ------------------------------------------------------------------------------
    m("composed-fill-view", "copy-then-fill: a composed brain owns its weights",
      "brains/composed.py", "part.fill(own, genome[piece].copy())", "part.fill(own, genome[piece])",
      "test_composed_fill_copies.py", "test_composed.py"),
    m("composed-batch-view", "copy-then-fill for batch brains",
      "brains/composed.py", "part.batch_brain(genomes[:, piece].copy())",
      "part.batch_brain(genomes[:, piece])", "test_composed_fill_copies.py", "test_composed.py"),
    # --- double pole -------------------------------------------------------------------------
    m("double-pole-generalization-counts-steps", "solved = balanced 1000 steps (Gruau et al.)",
      "envs/double_pole_task.py", "return 1.0 if balanced == GENERALIZATION_STEPS else 0.0",
      "return 1.0 if int(self.steps[lane]) == GENERALIZATION_STEPS else 0.0",
      "test_double_pole.py"),
    m("double-pole-damping-boundary", "f2 = 0 only for t < 100 (Gruau et al. 1996)",
      "envs/double_pole_task.py", "f2 = 0.0 if balanced < DAMPING_WINDOW else",
      "f2 = 0.0 if balanced <= DAMPING_WINDOW else", "test_double_pole.py"),
    m("double-pole-damping-weights", "0.1 f1 + 0.9 f2",
      "envs/double_pole_task.py", "return 0.1 * f1 + 0.9 * f2", "return 0.9 * f1 + 0.1 * f2",
      "test_double_pole.py"),
    # --- optimizers ----------------------------------------------------------------------------
    m("cma-es-restart-keeps-covariance", "a CMA-ES restart starts from C = I (Hansen)",
      "optimizers/cma_common.py",
      "        self._fresh_distribution()\n        self._reset_covariance(generation)\n",
      "        self._fresh_distribution()\n",
      "test_restarts_and_merge_order.py", "test_cma_es.py"),
    m("cma-es-best-is-worst", "CMA-ES selects the mu best",
      "optimizers/cma_common.py", 'ranked = np.argsort(-fitness, kind="stable")',
      'ranked = np.argsort(fitness, kind="stable")', "test_cma_es.py"),
    m("bounds-not-applied", "every asked genome lies in optimizer.bounds",
      "optimizers/base.py",
      "genomes = self._ask()\n        return genomes if self.bounds is None else",
      "genomes = self._ask()\n        return genomes if True else", "test_optimizer_bounds.py"),
    m("bounds-reflect-clips", "reflect mirrors a gene at the bound it crossed",
      "optimizers/bounds.py", "folded = np.where(offset > width, 2 * width - offset, offset)",
      "folded = np.minimum(offset, width)", "test_optimizer_bounds.py"),
    m("centered-ranks-off-by-one", "centered ranks span [-0.5, 0.5]",
      "optimizers/shaping.py", "return ranks / (len(ranks) - 1) - 0.5",
      "return ranks / len(ranks) - 0.5", "test_optimizers.py", "test_gaussian_optimizers.py"),
    m("clipup-no-speed-limit", "ClipUp clips the speed to max_speed",
      "optimizers/gaussian.py", "if speed > self.max_speed:", "if speed > 10 * self.max_speed:",
      "test_gaussian_optimizers.py", "test_optimizers.py"),
    m("openai-es-weight-decay-sign", "OpenAI-ES L2 decay pulls the center towards 0",
      "optimizers/openai_es.py", "- decay * center", "+ decay * center",
      "test_gaussian_optimizers.py", "test_optimizers.py"),
    m("resume-drops-generator", "resume is bit-identical (optimizer generator restored)",
      "optimizers/declared_state.py",
      "            generator_load_state(getattr(owner, entry.attribute), state, entry.prefix)\n",
      "            pass\n", "test_optimizer_contract.py", "test_gaussian_optimizers.py"),
    m("ga-one-elite-too-many", "the GA carries exactly `elites` parents over (Such et al. 2017)",
      "optimizers/ga.py", "elite = rows < config.elites", "elite = rows <= config.elites",
      "test_population_rules.py"),
    m("pso-velocity-clamp-loose", "PSO clamps each velocity gene to [-Vmax, Vmax]",
      "optimizers/pso.py", "np.clip(new, -config.max_velocity, config.max_velocity)",
      "np.clip(new, -2 * config.max_velocity, 2 * config.max_velocity)",
      "test_population_rules.py"),
    m("bipop-small-sigma-compounds", "a BIPOP search starts from sigma * its factor (Hansen 2009)",
      "optimizers/cma_common.py", "self.sigma0 = self.config.sigma * plan.sigma_factor",
      "self.sigma0 = self.sigma0 * plan.sigma_factor", "test_population_rules.py"),
    # --- PBT -----------------------------------------------------------------------------------
    m("pbt-donor-never-the-last-top-run", "a PBT donor is drawn uniformly from the top quantile",
      "pbt/loop.py", "donor = top[int(rng.integers(count))]",
      "donor = top[int(rng.integers(max(1, count - 1)))]", "test_pbt_decisions.py"),
    m("pbt-explore-unclipped", "an explored value is clipped into its range",
      "pbt/space.py", "return float(min(self.high, max(self.low, float(value) * factor)))",
      "return float(float(value) * factor)", "test_pbt_decisions.py"),
    m("pbt-one-seed-for-all", "each PBT run starts on random_seed + its index",
      "pbt/loop.py", 'data["random_seed"] = int(setup.experiment["random_seed"]) + index',
      'data["random_seed"] = int(setup.experiment["random_seed"])', "test_pbt_decisions.py"),
    m("pbt-generator-not-saved", "the PBT saves its generator after each decision",
      "pbt/loop.py", "            state.generator = generator_state(rng)\n", "",
      "test_pbt_decisions.py"),
    # --- export and replay ---------------------------------------------------------------------
    m("egocentric-export-outside-one", "the exported egocentric window reads outside cells as 0",
      "brains/egocentric.py", 'graph.constant("outside", np.zeros(1))',
      'graph.constant("outside", np.ones(1))', "test_egocentric_export.py"),
    m("hall-of-fame-rank-takes-best-scaler", "rank k is replayed and exported with its scaler",
      "run/genome_choice.py", "hall_of_fame.genomes[rank], hall_of_fame.scaler(rank), what",
      "hall_of_fame.genomes[rank], hall_of_fame.scaler(0), what", "test_hall_of_fame_scaler.py"),
    # --- QD ------------------------------------------------------------------------------------
    m("cma-me-order-as-rank", "CMA-ME ranks samples by the improvement ranking (Fontaine 2020)",
      "qd/cma_me.py",
      "ranked[order] = -np.arange(batch, dtype=np.float64)",
      "ranked[:] = -order.astype(np.float64)",
      "test_restarts_and_merge_order.py", "test_qd_archive.py"),
    m("cma-me-restart-at-best", "CMA-ME restarts at a uniformly drawn elite (Fontaine 2020)",
      "qd/cma_me.py", "mean = self.archive.genomes[cells[self._random.integers(len(cells))]]",
      "mean = self.archive.genomes[self.archive.best_cell()]",
      "test_restarts_and_merge_order.py", "test_qd_archive.py"),
    m("archive-replaces-on-tie", "an elite is replaced only by a better one",
      "qd/archive.py", "if f <= self.fitness[cell]:", "if f < self.fitness[cell]:",
      "test_best_kept_and_scale.py", "test_qd_archive.py"),
    # --- NSGA-II -------------------------------------------------------------------------------
    m("nsga2-weak-dominance", "dominance: >= everywhere and > somewhere (Deb et al. 2002)",
      "moo/pareto.py", "better = (rows > matrix[None, :, :]).any(axis=2)",
      "better = (rows >= matrix[None, :, :]).any(axis=2)", "test_pareto.py", "test_nsga2.py"),
    m("nsga2-crowding-no-extremes", "crowding: boundary rows get infinity",
      "moo/pareto.py", "distance[order[0]] = distance[order[-1]] = np.inf",
      "distance[order[0]] = distance[order[-1]] = 0.0", "test_pareto.py", "test_nsga2.py"),
    m("hypervolume-counts-partial-beaters", "only rows beating the reference everywhere count",
      "moo/pareto.py", "gains = gains[(gains > 0).all(axis=1)]",
      "gains = gains[(gains > 0).any(axis=1)]", "test_pareto.py"),
    # --- normalization -------------------------------------------------------------------------
    m("statistics-merge-reversed", "observation statistics merge in submission order",
      "core/normalization.py", "for stats in per_evaluation:",
      "for stats in reversed(per_evaluation):",
      "test_restarts_and_merge_order.py", "test_normalization.py"),
    m("experiment-merge-reversed", "a generation's statistics merge in submission order",
      "run/experiment.py", "merge([r.observation_stats for r in results])",
      "merge([r.observation_stats for r in reversed(results)])",
      "test_restarts_and_merge_order.py"),
    m("normalization-epsilon-outside-sqrt", "scale = 1 / sqrt(var + epsilon)",
      "core/normalization.py", "scale = 1.0 / np.sqrt(variance + self.config.epsilon)",
      "scale = 1.0 / (np.sqrt(variance) + self.config.epsilon)", "test_best_kept_and_scale.py",
      "test_normalization.py"),
    # --- seeds, validation, handlers, resume ---------------------------------------------------
    m("validation-seeds-not-held-out", "validation seeds are >= 2**32, disjoint from training",
      "support/seeds.py", "first = TRAINING_SEED_LIMIT + int(sequence.generate_state(1)[0])",
      "first = int(sequence.generate_state(1)[0])", "test_seeds.py", "test_validation.py"),
    m("solved-strictly-above-target", "solved: validation mean >= target (equal counts)",
      "evaluation/episodes/validation.py", "and mean >= target", "and mean > target",
      "test_validation.py"),
    m("jax-refill-wrong-brain", "jax handler: a lane taking a queued episode plays its individual",
      "evaluation/jax/program.py", "brain_params = brain.take(params, task % count)",
      "brain_params = brain.take(params, task % count * 0)", "test_jax_handler.py"),
    m("jax-noise-by-lane", "jax handler: an episode's brain noise follows its task, not its lane",
      "evaluation/jax/program.py",
      ")(noise_keys[jnp.minimum(carry.task, tasks - 1)], carry.steps)",
      ")(noise_keys[jnp.arange(carry.task.shape[0])], carry.steps)", "test_jax_handler.py"),
    m("jax-behaviour-before-step", "jax novelty: an observation sample is what the step returned",
      "measures/jax_forms.py", "else view.next_observations",
      "else view.observations", "test_jax_handler.py"),
    m("jax-behaviour-episodes-reversed", "novelty: an evaluation's episodes join in order",
      "measures/samples.py", "    for k in range(runs):\n        taken",
      "    for k in reversed(range(runs)):\n        taken", "test_jax_handler.py"),
    m("pool-results-out-of-order", "handlers identical: results in submission order",
      "evaluation/pools/run_pool.py",
      "return [result for chunk in self.chunks for result in chunk or ()]",
      "return [result for chunk in self.chunks[::-1] for result in chunk or ()]",
      "test_handlers_identical.py", "test_handler_mp.py"),
    m("workers-outlive-parent", "mp workers exit when the main process is killed",
      "evaluation/pools/worker.py", "    exit_when_parent_dies()  # no orphans",
      "    pass  # no", "test_orphaned_workers.py"),
    m("wave-checked-only-at-generation-0", "a wave that cannot fit is refused at start-up",
      "evaluation/lockstep/wave_check.py", "        check_wave_memory(lanes, lane_bytes, what)",
      "        pass", "test_start_up_refusals.py"),
    m("run-directory-write-unchecked", "a read-only --out is one line, nothing written",
      "run/directory.py", "    unwritable = write_error(path)\n", "    unwritable = None\n",
      "test_start_up_refusals.py"),
    m("resume-write-unchecked", "resume in a read-only run directory is one line",
      "run/resume.py", "    unwritable = write_error(run_dir)\n", "    unwritable = None\n",
      "test_start_up_refusals.py"),
    m("final-info-key-unchecked", "an info key reduced with last is checked at start-up",
      "measures/results.py", "    check_final_info_keys(measures, env, path)",
      "    pass", "test_start_up_refusals.py"),
    m("solved-run-cannot-be-extended", "--generations N extends a run that reached its target",
      "train.py", "experiment.train_past_target = True  # asked for more",
      "pass  # asked for more", "test_resume_solved.py"),
    m("descriptor-bounds-silent", "descriptor bounds no value reaches are warned about",
      "qd/bounds.py", "        if outside.all():", "        if outside.all() and False:",
      "test_result_warnings.py"),
    m("reference-point-silent", "a reference point nobody beats is warned about",
      "moo/nsga2.py", "if volume == 0.0 and len(objectives)",
      "if volume < 0.0 and len(objectives)", "test_result_warnings.py"),
    m("conv-on-vector-silent", "conv kernels over a vector observation are warned about",
      "brains/conv.py", "self.image_shape[0] != 1 or kernel", "self.image_shape[0] != 0 or kernel",
      "test_result_warnings.py"),
    m("jax-names-descriptors-for-objectives", "NSGA2 on jax is refused naming objectives",
      "measures/recording.py", 'field = "objectives" if objectives else "descriptors"',
      'field = "descriptors"', "test_start_up_refusals.py"),
    m("dask-refused-address-waits", "an address where nothing listens is refused at once",
      "evaluation/pools/dask_security.py",
      "        with connect(address, host, port) as raw:\n            raw.settimeout",
      "        with socket.create_connection((host, port), timeout=PROBE_SECONDS) as raw:\n"
      "            raw.settimeout", "test_dask_waits.py"),
    m("episode-seed-from-wrong-episode", "episode seeds derive from (base seed, episode)",
      "support/seeds.py", "return _word([int(base_seed), episode])",
      "return _word([int(base_seed), 0])", "test_seeds.py", "test_handlers_identical.py"),
    m("max-steps-penalty-dropped", "a cut episode loses max_steps_penalty",
      "evaluation/episodes/runner.py", "penalty = self.max_steps_penalty * cut + shift",
      "penalty = 0.0 * cut + shift", "test_episode.py", "test_vectorized.py"),
    m("resume-accepts-changed-config", "a changed config is refused on resume",
      "run/resume.py", "and old.get(key) != new.get(key)", "and False",
      "test_checkpoint.py", "test_resume.py"),
    m("novelty-counts-itself", "an individual is not its own neighbour",
      "optimizers/novelty.py", "np.fill_diagonal(within, np.inf)", "np.fill_diagonal(within, 0.0)",
      "test_novelty.py"),
    m("hall-of-fame-worst-first", "the hall of fame keeps the best genomes",
      "core/hall_of_fame.py", 'order = np.argsort(-all_fitness, kind="stable")',
      'order = np.argsort(all_fitness, kind="stable")', "test_best_kept_and_scale.py",
      "test_checkpoint.py"),
)
# fmt: on


def check_mutations(mutations: tuple[Mutation, ...], root: Path) -> None:
    """Every original occurs exactly once in its file, and every test file exists."""
    problems = []
    for mutation in mutations:
        path = root / PACKAGE / mutation.path
        if not path.is_file():
            problems.append(f"{mutation.name}: {path} does not exist")
            continue
        count = path.read_text().count(mutation.original)
        if count != 1:
            problems.append(
                f"{mutation.name}: the original string occurs {count} times in {path}, not once"
            )
        problems += [
            f"{mutation.name}: test file {test} does not exist"
            for test in mutation.tests
            if not (root / test).is_file()
        ]
    names = [mutation.name for mutation in mutations]
    problems += [
        f"{name}: listed twice" for name in sorted({n for n in names if names.count(n) > 1})
    ]
    if problems:
        raise SystemExit(
            "planted_bugs: error: " + "\n  ".join(["mutation list is stale:", *problems])
        )


def copy_tree(destination: Path) -> None:
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, destination / name, ignore=IGNORED)
        elif source.is_file():
            shutil.copy2(source, destination / name)


def run_tests(copy: Path, tests: tuple[str, ...], fast: bool, timeout: float) -> tuple[int, str]:
    """pytest's exit code on ``tests`` in ``copy`` (``-x``: the first failure is enough) and
    its summary line, preceded by the failed tests' ids."""
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
    if fast:
        command += ["-m", "not slow"]
    environment = {**os.environ, "PYTHONPATH": str(copy), "MPLBACKEND": "Agg",
                   "SDL_VIDEODRIVER": "dummy"}  # fmt: skip
    try:
        done = subprocess.run(command, cwd=copy, env=environment, capture_output=True,
                              text=True, timeout=timeout)  # fmt: skip
    except subprocess.TimeoutExpired:
        return -1, "timed out"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    failed = [line.split(" - ")[0] for line in lines if line.startswith(("FAILED", "ERROR"))]
    last = lines[-1] if lines else done.stderr.strip()[-200:]
    return done.returncode, "; ".join([*failed, last])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these mutations")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--fast", action="store_true", help='pytest -m "not slow"')
    parser.add_argument("--no-baseline", action="store_true", help="skip the unmutated run")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per pytest run")
    args = parser.parse_args(argv)
    check_mutations(MUTATIONS, ROOT)
    chosen = MUTATIONS
    if args.only:
        unknown = sorted(set(args.only) - {mutation.name for mutation in MUTATIONS})
        if unknown:
            parser.error(f"unknown mutation(s): {', '.join(unknown)} (see --list)")
        chosen = tuple(mutation for mutation in MUTATIONS if mutation.name in args.only)
    if args.list:
        for mutation in chosen:
            print(
                f"{mutation.name}: {mutation.path} -- {mutation.claim} [{' '.join(mutation.tests)}]"
            )
        return 0
    with tempfile.TemporaryDirectory(prefix="planted-bugs-") as scratch:
        copy = Path(scratch)
        copy_tree(copy)
        if not args.no_baseline:
            tests = tuple(sorted({test for mutation in chosen for test in mutation.tests}))
            code, last = run_tests(copy, tests, args.fast, args.timeout)
            print(f"baseline (unmutated): {'pass' if code == 0 else 'FAIL'}: {last}", flush=True)
            if code != 0:
                print("planted_bugs: error: the tests fail without a mutation; fix that first")
                return 1
        survivors, errors = [], []
        for mutation in chosen:
            target = copy / PACKAGE / mutation.path
            original = target.read_text()
            target.write_text(original.replace(mutation.original, mutation.replacement, 1))
            started = time.perf_counter()
            try:
                code, last = run_tests(copy, mutation.tests, args.fast, args.timeout)
            finally:
                target.write_text(original)
            seconds = time.perf_counter() - started
            if code == 1:
                verdict = "caught"
            elif code == 0:
                verdict = "SURVIVED"
                survivors.append(mutation)
            else:  # 2-5: interrupted, internal or usage error, nothing collected; -1: timeout
                verdict = f"ERROR (pytest exit {code})"
                errors.append(mutation)
            print(f"{verdict:>9}  {mutation.name} ({seconds:.0f} s): {last}", flush=True)
    caught = len(chosen) - len(survivors) - len(errors)
    print(f"\nplanted {len(chosen)}, caught {caught}, survived {len(survivors)}, "
          f"errors {len(errors)}")  # fmt: skip
    for mutation in survivors:
        print(f"  survived: {mutation.name} ({mutation.claim}) [{' '.join(mutation.tests)}]")
    return 0 if not survivors and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
