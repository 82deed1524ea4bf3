"""Benchmark: conv front end + CTRNN brains on pixel envs (MinAtar, Atari).

Prints, measured in one run on this machine (the shipped configs' brains and envs,
configs/minatar_breakout.json and configs/atari_qbert.json):

1. Held-out score within a fixed budget on MinAtar Breakout: the shipped config trained on its
   own handler (mp, 2 workers, vectorized) for ``--budget`` seconds of wall time, then its
   center scored on the config's validation seeds (held out: >= 2**32); next to a random
   policy (uniform actions from ``default_rng(seed)``) on the same seeds and the same step cap.
   Published ES/GA figures on MinAtar: see PUBLISHED below (none with a number was found).
2. Env steps/s of a population of P brains (``--population``, 256), per handler: sequential (on
   the first ``--sequential`` individuals: a rate, so comparable), mp (2 forkserver workers), mp
   with vectorized workers, vectorized (lockstep, one process). Every handler is checked to
   give the sequential results on the sequential subset. MinAtar's population: mutants of the
   trained center of part 1 (generation-0 brains lose the ball within ~10 steps, so resets
   would dominate); Atari's: generation-0 genomes, episodes cut at the config's
   ``max_steps_per_run``. Rates are env steps per wall second (the machine is shared: the load
   average is printed) and, for the one-process handlers, per CPU second.
3. jax brain steps: the JAX batch brain (conv + CTRNN, float32, jit) on P recorded
   observations of these games, brain steps/s (the jax handler plays gymnax's MinAtar, not the
   ``minatar`` package's or ALE's games measured here: ``--part jax`` measures it).
4. The brain's share of the step time: one brain's ``step`` timed on the observations an
   episode recorded, against that whole episode (env reset and steps included) in the
   sequential runner's loop; and the batch brain's step on P recorded observations against the
   vectorized handler's time per lane step.

``--part jax`` prints instead, in one run, for gymnax's four MinAtar games on the jax handler
(``configs/minatar_breakout_jax.json`` and
``configs/minatar_<game>_egocentric_jax.json``), with no change on a GPU machine:

5. Env steps per CPU second (``time.process_time``: every thread of this process) of the jax
   handler at each ``--jax-populations`` P (256 and 4,096) next to the numpy lockstep
   (vectorized) handler on the ``minatar`` package's game (``minatar:MinAtar/<Game>-v1``, the same
   genomes: N(0, 0.5) brains of the config's template), and the jax handler's compile seconds
   (excluded from its rate), wall rates beside them. Beside them, the JAX brain alone: the same
   P brains stepped in one compiled loop over observations the game recorded (random actions),
   brain steps per CPU second -- no handler on this device runs faster than its brain. And
   the gymnax game itself on the numpy handlers: mp (2 workers) and lockstep (vectorized, all
   lanes in one jitted vmapped step), wall rates after a first batch that compiles, results
   checked equal.
6. The held-out score of each config trained for ``--steps`` env steps (default 20M; its
   candidate on the config's validation seeds), next to the anchors: gymnax-blines' PPO at
   about 10M env steps (``agents/<game>/ppo.pkl``) and, for Breakout, its GA.

Usage: python scripts/bench_pixels.py [--quick] [--budget 600] [--population 256]
``--quick``: budget 60 s, P = 64 on Atari, fewer repeats (2 min 42 s here; ``--budget 300``:
8 min 52 s; the default budget, 600 s, trains 300 s longer).
``python scripts/bench_pixels.py --part jax [--games Breakout ...] [--jax-populations 256 4096]
[--steps 20000000] [--skip-training]`` (``--skip-training``: speed only).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.config.tree import ExperimentConfig, load_config
from neuro_evolution.evaluation.episodes.runner import EvaluationContext, RunnerSpec
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
from neuro_evolution.evaluation.pools.base import EvaluationHandler
from neuro_evolution.evaluation.pools.process_pool import MultiprocessingHandler
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.run.experiment import Experiment, build_template
from neuro_evolution.support.seeds import validation_seeds

ROOT = Path(__file__).resolve().parent.parent
MINATAR = ROOT / "configs" / "minatar_breakout.json"
ATARI = ROOT / "configs" / "atari_qbert.json"
SEED = 12345
PUBLISHED = (
    "published ES/GA figures on MinAtar Breakout: none found with a number. gymnax's README "
    "(https://github.com/RobertTLange/gymnax, 'Implemented Accelerated Environments') lists "
    "Breakout-MinAtar with 'PPO, ES (R: ???)'; gymnax-blines shows OpenES learning curves as "
    "an image only. Young & Tian (2019, arXiv:1903.03176) report DQN and AC(lambda), not ES/GA."
)


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def spec_of(config: ExperimentConfig) -> RunnerSpec:
    return RunnerSpec(environment=config.environment, episode_runner=config.episode_runner)


def random_policy(config: ExperimentConfig, seeds: np.ndarray) -> np.ndarray:
    """Returns of uniform random actions (from ``default_rng(seed)``) on each seed, cut at the
    config's ``max_steps_per_run`` like the brains' episodes."""
    env = config.environment.make()
    limit = config.episode_runner.max_steps_per_run
    returns = []
    for seed in seeds.tolist():
        env.reset(seed=seed)
        rng, total, steps = np.random.default_rng(seed), 0.0, 0
        while True:
            _, reward, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
            total, steps = total + float(reward), steps + 1
            if terminated or truncated or (limit and steps >= limit):
                break
        returns.append(total)
    env.close()
    return np.array(returns)


def train_within(budget: float) -> np.ndarray:
    """Train the shipped MinAtar Breakout config for ``budget`` wall seconds; print its held-out
    score next to the random policy's; return the center."""
    config = load_config(MINATAR)
    config = dataclasses.replace(config, number_generations=10**6, validation=None)
    section = load_config(MINATAR).validation
    assert section is not None
    seeds = validation_seeds(config.random_seed, section.episodes)
    experiment = Experiment(config)
    try:
        experiment.start()
        while experiment.wall_time < budget:
            experiment.step()
        candidate = experiment.candidate()
        genomes = np.repeat(candidate.genome[None, :], len(seeds), axis=0)
        results = experiment.handler.batch_evaluate(
            genomes, seeds, EvaluationContext(validation=True)
        )
        wall, generations = experiment.wall_time, experiment.generation
        how = experiment.handler.describe()
        env_steps = sum(row.env_steps for row in experiment.log)
    finally:
        experiment.close()
    scores = np.array([r.fitness for r in results])
    random_scores = random_policy(config, seeds)
    print(
        f"MinAtar Breakout, {MINATAR.name} ({how}), {load()}:\n"
        f"    trained {generations} generations, {env_steps:,} env steps in {wall:.0f} s "
        f"(budget {budget:.0f} s)\n"
        f"    held-out ({len(seeds)} episodes, seeds >= 2**32): center {scores.mean():.2f} "
        f"+- {scores.std():.2f}\n"
        f"    random policy, same seeds:                 {random_scores.mean():.2f} "
        f"+- {random_scores.std():.2f}\n"
        f"    {PUBLISHED}"
    )
    return candidate.genome


def timed(handler: EvaluationHandler, genomes: np.ndarray, seeds: np.ndarray) -> tuple:
    """(env steps per wall second, per CPU second of this process, results)."""
    wall, cpu = time.perf_counter(), time.process_time()
    results = handler.batch_evaluate(genomes, seeds)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    steps = sum(r.steps for r in results)
    return steps / wall, steps / cpu, results


def handler_rates(
    name: str, template: BrainTemplate, spec: RunnerSpec, genomes: np.ndarray, subset: int
) -> dict[str, float]:
    """Print env steps/s of every numpy handler on ``genomes``; return the CPU rates."""
    seeds = np.full(len(genomes), SEED, dtype=np.uint32)
    cpu_rates: dict[str, float] = {}
    with SequentialHandler() as sequential:
        sequential.start(template, spec)
        wall, cpu, reference = timed(sequential, genomes[:subset], seeds[:subset])
    steps = sum(r.steps for r in reference) / subset / spec.episode_runner.number_fitness_runs
    print(f"{name}: P={len(genomes)}, {steps:.0f} steps per episode on average, {load()}")
    print(
        f"    {'sequential':<22} {wall:>10,.0f} env steps/s wall {cpu:>10,.0f} per CPU s "
        f"(first {subset} individuals)"
    )
    cpu_rates["sequential"] = cpu
    handlers: dict[str, Any] = {
        "mp (2 workers)": lambda: MultiprocessingHandler(workers=2),
        "mp + vectorize": lambda: MultiprocessingHandler(workers=2, vectorize=True),
        "vectorized (lockstep)": VectorizedHandler,
    }
    for label, make in handlers.items():
        with make() as handler:
            handler.start(template, spec)
            handler.batch_evaluate(genomes[:2], seeds[:2])  # workers and envs up
            wall, cpu, results = timed(handler, genomes, seeds)
        if results[:subset] != reference:
            raise SystemExit(f"{name}: {label} results differ from sequential ones")
        one_process = label.startswith("vectorized")
        extra = f" {cpu:>10,.0f} per CPU s" if one_process else ""
        print(f"    {label:<22} {wall:>10,.0f} env steps/s wall{extra}")
        if one_process:
            cpu_rates[label] = cpu
    return cpu_rates


def recorded_observations(template: BrainTemplate, spec: RunnerSpec, genome: np.ndarray) -> tuple:
    """One brain's episodes in the sequential runner's loop, until 1000 steps: the observations
    it saw, the CPU time of the whole loop (resets included) and of the brain's steps alone."""
    env, brain = spec.environment.make(), template.build(genome)
    limit = spec.episode_runner.max_steps_per_run
    observations, whole, seed = [], 0.0, 0
    while len(observations) < 1000:
        start = time.process_time()
        observation, _ = env.reset(seed=seed)
        brain.reset(np.random.default_rng(seed))
        steps = 0
        while True:
            observations.append(observation)
            observation, _, terminated, truncated, _ = env.step(brain.step(observation))
            steps += 1
            if terminated or truncated or (limit and steps >= limit):
                break
        whole += time.process_time() - start
        seed += 1
    env.close()
    brain.reset(np.random.default_rng(0))
    start = time.process_time()
    for observation in observations:
        brain.step(observation)
    return observations, whole, time.process_time() - start


def brain_share(
    name: str,
    template: BrainTemplate,
    spec: RunnerSpec,
    genomes: np.ndarray,
    lockstep_rate: float,
    repeats: int,
) -> None:
    """Print the brain's share of the step time, one brain and P brains in lockstep, and the
    JAX batch brain's rate on the same recorded observations."""
    observations, whole, brain_time = recorded_observations(template, spec, genomes[0])
    count = len(genomes)
    batch = np.stack([observations[i % len(observations)] for i in range(count)])
    batched = template.batch_brain(genomes)
    batched.reset([np.random.default_rng(i) for i in range(count)])
    start = time.process_time()
    for _ in range(repeats):
        batched.step(batch)
    per_lane_step = (time.process_time() - start) / (repeats * count)
    print(
        f"    brain's share of the step time: one brain {100 * brain_time / whole:.1f}% "
        f"({1e6 * brain_time / len(observations):.0f} of {1e6 * whole / len(observations):.0f} "
        f"us per step over {len(observations)} steps); lockstep P={count} "
        f"{100 * per_lane_step * lockstep_rate:.1f}% ({1e6 * per_lane_step:.1f} us of "
        f"{1e6 / lockstep_rate:.1f} us per lane step, CPU time)"
    )
    jax_rate(template, genomes, batch, repeats)


def jax_rate(template: BrainTemplate, genomes: np.ndarray, batch: np.ndarray, repeats: int) -> None:
    """The JAX batch brain alone on these games' observations, float32, jit."""
    try:
        import jax
        import jax.numpy as jnp

        from neuro_evolution.brains.jax_brains import encode_inputs
    except ImportError:
        print("    jax: not installed, not measured")
        return
    brain = template.jax_brain()
    params = brain.params(genomes, jnp.float32)
    state = brain.initial_state(params)
    inputs = encode_inputs(template.io, jnp.asarray(batch), jnp.float32)
    step = jax.jit(lambda s, x: brain.step(params, s, x, None))
    state, outputs = step(state, inputs)
    outputs.block_until_ready()
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeats):
        state, outputs = step(state, inputs)
    outputs.block_until_ready()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    count = len(genomes)
    print(
        f"    jax brain steps (the jax handler's games: --part jax): the JAX "
        f"batch brain on P={count} recorded observations {repeats * count / wall:,.0f} brain "
        f"steps/s wall, {repeats * count / cpu:,.0f} per CPU s ({jax.devices()[0].platform}, "
        "float32, jit, compile excluded)"
    )


# gymnax game -> (config file stem, gymnax-blines' PPO test return at ~10M env steps)
JAX_GAMES = {
    "Breakout": ("breakout", 22.9),
    "Asterix": ("asterix_egocentric", 15.0),
    "Freeway": ("freeway_egocentric", 58.8),
    "SpaceInvaders": ("space_invaders_egocentric", 131.6),
}
PPO_SOURCE = "gymnax-blines agents/<game>/ppo.pkl, ~10M env steps"
SPEED_ANCHOR = (
    "gymnax-blines' speed table, Breakout-MinAtar, MLP policy: 0.26 s per 1M steps on an A100 "
    "(2,000 envs, ~3.8M steps/s); 13.7 s per 1M steps with JAX on a CPU (10 envs)"
)
GA_ANCHOR = (
    "GA, gymnax-blines agents/Breakout-MinAtar/es.yaml (population 256, MLP): 6.49 after "
    "1.96G env steps"
)


def jax_config(game: str) -> ExperimentConfig:
    return load_config(ROOT / "configs" / f"minatar_{JAX_GAMES[game][0]}_jax.json")


def cpu_timed(handler: EvaluationHandler, genomes: np.ndarray, seeds: np.ndarray) -> tuple:
    """(env steps, wall seconds, CPU seconds of this process, all threads) of one batch."""
    wall, cpu = time.perf_counter(), time.process_time()
    results = handler.batch_evaluate(genomes, seeds)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return sum(r.steps for r in results), wall, cpu


def jax_speed(game: str, populations: list[int], rng: np.random.Generator) -> None:
    """Print the jax handler's and the numpy lockstep handler's env steps per CPU second."""
    from neuro_evolution.core.schema import parse
    from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
    from neuro_evolution.evaluation.jax.handler import JaxHandler

    config = jax_config(game)
    template, spec = build_template(config), spec_of(config)
    numpy_env = parse(EnvironmentConfig, {"id": f"minatar:MinAtar/{game}-v1"}, "environment")
    numpy_spec = dataclasses.replace(spec, environment=numpy_env)
    print(f"{game}-MinAtar (jax, gymnax) vs minatar:MinAtar/{game}-v1 (numpy lockstep), {load()}")
    for count in populations:
        genomes = rng.normal(0.0, 0.5, (count, template.genome_size))
        seeds = np.arange(count, dtype=np.int64) + SEED
        with JaxHandler() as fast:
            fast.start(template, spec)
            fast.batch_evaluate(genomes, seeds)  # compiles this shape
            compile_seconds = fast.statistics().compile_seconds  # type: ignore[attr-defined]
            steps, wall, cpu = cpu_timed(fast, genomes, seeds)
            device = fast.describe()
        with VectorizedHandler() as lockstep:
            lockstep.start(template, numpy_spec)
            lockstep.batch_evaluate(genomes, seeds)  # its P envs made, as the jax compile
            numpy_steps, numpy_wall, numpy_cpu = cpu_timed(lockstep, genomes, seeds)
        jax_rate, numpy_rate = steps / cpu, numpy_steps / numpy_cpu
        episodes = count * spec.episode_runner.number_fitness_runs
        print(
            f"    P={count:>5}: jax {jax_rate:>12,.0f} env steps per CPU s ({steps / wall:>12,.0f} "
            f"wall; {steps / episodes:.0f} steps/episode; compile {compile_seconds:.1f} s); "
            f"numpy lockstep {numpy_rate:>10,.0f} per CPU s ({numpy_steps / numpy_wall:,.0f} "
            f"wall; {numpy_steps / episodes:.0f} steps/episode); jax/numpy per CPU s "
            f"{jax_rate / numpy_rate:.1f}x"
        )
        ceiling = jax_brain_alone(template, spec, genomes)
        print(
            f"           the JAX brain alone {ceiling:>12,.0f} brain steps per CPU s on the "
            f"game's observations: {ceiling / numpy_rate:.1f}x numpy lockstep, the jax handler's "
            "ceiling here"
        )
        gymnax_numpy_rates(game, template, spec, genomes, seeds)
    print(f"    jax device: {device}")
    if game == "Breakout":
        print(f"    anchor: {SPEED_ANCHOR}")


def gymnax_numpy_rates(
    game: str, template: BrainTemplate, spec: RunnerSpec, genomes: np.ndarray, seeds: np.ndarray
) -> None:
    """Print the gymnax game's env steps/s on the numpy handlers: mp (2 workers, one env at a
    time) and lockstep (vectorized: all lanes in one jitted vmapped step), after a first batch
    that starts the workers and compiles; the two must give the same results."""
    rates: dict[str, tuple[float, float, list]] = {}
    for label, make in (
        ("mp", lambda: MultiprocessingHandler(workers=2)),
        ("lockstep", VectorizedHandler),
    ):
        with make() as handler:
            handler.start(template, spec)
            handler.batch_evaluate(genomes, seeds)  # workers up, every lane count compiled
            wall, cpu, results = timed(handler, genomes, seeds)
        rates[label] = (wall, cpu, results)
    if rates["mp"][2] != rates["lockstep"][2]:
        raise SystemExit(f"{game}-MinAtar (gymnax): lockstep results differ from mp's")
    (mp_wall, _, _), (lockstep_wall, lockstep_cpu, _) = rates["mp"], rates["lockstep"]
    print(
        f"           gymnax {game}-MinAtar on the numpy handlers: mp (2 workers) "
        f"{mp_wall:>10,.0f} env steps/s wall; lockstep (vectorized) {lockstep_wall:>10,.0f} "
        f"wall ({lockstep_cpu:,.0f} per CPU s); lockstep/mp wall {lockstep_wall / mp_wall:.1f}x"
    )


def jax_brain_alone(template: BrainTemplate, spec: RunnerSpec, genomes: np.ndarray) -> float:
    """Brain steps per CPU second of the config's JAX brain alone: P brains stepped 64 times in
    one compiled loop over 16 observations per lane that the game recorded (random actions)."""
    import jax
    import jax.numpy as jnp

    from neuro_evolution.brains.jax_brains import encode_inputs

    count, frames, steps = len(genomes), 16, 64
    env = spec.environment.make_jax_env()
    keys = jax.random.split(jax.random.PRNGKey(SEED), count)
    observation, state = jax.vmap(env.reset)(keys)
    recorded = []
    actions = np.random.default_rng(SEED).integers(0, env.action_space.n, (frames, count))
    for action in actions:  # a lane whose game ended keeps its last frames: inputs all the same
        recorded.append(observation)
        observation, state, _, _ = jax.vmap(env.step)(state, jnp.asarray(action, jnp.int32))
    brain = template.jax_brain()
    params = brain.params(genomes, jnp.float32)
    inputs = jnp.stack([encode_inputs(template.io, o, jnp.float32) for o in recorded])

    def loop(params, inputs):
        def body(t, carry):
            state, _ = carry
            return brain.step(params, state, inputs[t % frames], None)

        first = brain.step(params, brain.initial_state(params), inputs[0], None)
        return jax.lax.fori_loop(1, steps, body, first)

    compiled = jax.jit(loop).lower(params, inputs).compile()
    jax.block_until_ready(compiled(params, inputs))
    best = float("inf")
    for _ in range(3):
        cpu = time.process_time()
        jax.block_until_ready(compiled(params, inputs))
        best = min(best, time.process_time() - cpu)
    return steps * count / best


def jax_learning(game: str, budget: int) -> None:
    """Train the game's jax config for ``budget`` env steps; print its candidate's held-out
    score next to gymnax-blines' anchors."""
    config = jax_config(game)
    section = config.validation
    assert section is not None
    seeds = validation_seeds(config.random_seed, section.episodes)
    config = dataclasses.replace(
        config, number_generations=10**6, max_env_steps=None, validation=None
    )
    experiment = Experiment(config)
    try:
        experiment.start()
        steps = 0
        while steps < budget:
            experiment.step()
            steps += experiment.log[-1].env_steps
        candidate = experiment.candidate()
        genomes = np.repeat(candidate.genome[None, :], len(seeds), axis=0)
        results = experiment.handler.batch_evaluate(
            genomes, seeds, EvaluationContext(validation=True)
        )
        generations, wall = experiment.generation, experiment.wall_time
    finally:
        experiment.close()
    scores = np.array([r.fitness for r in results])
    anchor = f"PPO {JAX_GAMES[game][1]} ({PPO_SOURCE})"
    if game == "Breakout":
        anchor += f"; {GA_ANCHOR}"
    print(
        f"{game}-MinAtar, minatar_{JAX_GAMES[game][0]}_jax.json: {steps:,} env steps "
        f"({generations} generations, {wall:.0f} s): held-out ({len(seeds)} episodes) "
        f"{scores.mean():.2f} +- {scores.std():.2f}; anchors: {anchor}"
    )


def jax_part(args: argparse.Namespace) -> None:
    """Part 5 and 6 (``--part jax``)."""
    import jax

    print(f"bench_pixels --part jax, {os.cpu_count()} CPUs, JAX {jax.__version__} on "
          f"{jax.devices()[0]}, {load()}")  # fmt: skip
    rng = np.random.default_rng(1)
    for game in args.games:
        jax_speed(game, args.jax_populations, rng)
    if not args.skip_training:
        for game in args.games:
            jax_learning(game, args.steps)
    print(f"done, {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = "numpy: parts 1-4 (default); jax: gymnax MinAtar, parts 5-6"
    parser.add_argument("--part", choices=("numpy", "jax"), default="numpy", help=parts)
    parser.add_argument("--games", nargs="+", choices=list(JAX_GAMES), default=list(JAX_GAMES))
    parser.add_argument("--jax-populations", nargs="+", type=int, default=[256, 4096])
    parser.add_argument("--steps", type=int, default=20_000_000, help="jax training budget")
    parser.add_argument("--quick", action="store_true", help="budget 60 s, Atari P=64")
    parser.add_argument("--budget", type=float, help="training seconds on MinAtar (600)")
    parser.add_argument("--population", type=int, default=256)
    parser.add_argument("--sequential", type=int, help="individuals run sequentially (64/16)")
    parser.add_argument(
        "--skip-training", action="store_true", help="numpy: parts 2-4 only; jax: part 5 only"
    )
    args = parser.parse_args()
    if args.part == "jax":
        jax_part(args)
        return
    budget = args.budget if args.budget is not None else (60.0 if args.quick else 600.0)
    repeats = 20 if args.quick else 100
    print(
        f"bench_pixels ({'quick' if args.quick else 'full'} mode), {os.cpu_count()} CPUs, {load()}"
    )
    rng = np.random.default_rng(1)

    config = load_config(MINATAR)
    template, spec = build_template(config), spec_of(config)
    center = np.zeros(template.genome_size) if args.skip_training else train_within(budget)
    genomes = center + rng.normal(0, 0.02, (args.population, template.genome_size))
    subset = args.sequential or min(64, args.population)
    rates = handler_rates(f"MinAtar Breakout ({MINATAR.name})", template, spec, genomes, subset)
    print(
        f"    lockstep / sequential per CPU second: "
        f"{rates['vectorized (lockstep)'] / rates['sequential']:.1f}x"
    )
    brain_share("MinAtar", template, spec, genomes, rates["vectorized (lockstep)"], repeats)

    config = load_config(ATARI)
    template, spec = build_template(config), spec_of(config)
    count = 64 if args.quick else args.population
    genomes = rng.normal(0, 0.1, (count, template.genome_size))
    subset = args.sequential or 16
    rates = handler_rates(f"Atari Qbert ({ATARI.name})", template, spec, genomes, subset)
    brain_share("Atari", template, spec, genomes, rates["vectorized (lockstep)"], repeats)
    print(f"done, {load()}")


if __name__ == "__main__":
    main()
