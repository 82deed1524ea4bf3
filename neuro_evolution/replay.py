"""Command line: ``python -m neuro_evolution.replay RUN_DIR [--episodes N] [--seed S] ...``.

Rebuilds the template and a brain from the run directory alone (``config.json`` and
``candidate.npz`` / ``hall_of_fame.npz``: the saved masks and observation scaler are used,
nothing is regenerated) and prints the return of each episode. By default it replays the genome
the run stands behind (``candidate.npz``: the distribution center, or the hall of fame's best);
``--rank N`` replays hall-of-fame entry N instead; ``--elite K`` / ``--cell I,J`` (an archive's
elites) and ``--front K`` (a Pareto front's members) rerun the training evaluation of a member
the run's optimizer declares it stores (``Optimizer.stored_members``: its genome, episode base
seed and scaler, the run's episodes) and print its fitness and measures next to the stored ones.
``--validation`` runs the run's held-out
validation episodes and reproduces its last validated score; with ``--exported PATH`` it plays
them through an exported policy (:mod:`neuro_evolution.export`) and prints its mean next to the
run's brain. ``--render`` opens a window (a
``warning:`` line, and no window, where there is no display); ``--video DIR`` records MP4s
(needs the ``video`` extra), off-screen, and says where they went. ``--brain-state DIR``
writes, per episode, ``episode-K.npz`` (observations, actions, rewards and the brain's internal
state after every step, row t = step t; no pickle) and ``episode-K.png``, a picture of them.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

from neuro_evolution.cli import ArgumentParser, run_cli
from neuro_evolution.evaluation.episodes.runner import (
    EpisodeRunner,
    RunnerSpec,
    replace_runner_config,
)
from neuro_evolution.evaluation.episodes.trace import EpisodeTrace
from neuro_evolution.run.genome_choice import choose_genome
from neuro_evolution.run.kernel_checks import run_kernels_line, stored_portable
from neuro_evolution.run.plots import plot_brain_state
from neuro_evolution.run.replay_members import (
    PROGRAM,
    display_available,
    named_member,
    replay_member,
)
from neuro_evolution.support.atomic import atomic_savez
from neuro_evolution.support.console import plural, warning
from neuro_evolution.support.errors import UserError
from neuro_evolution.support.kernels import require_portable
from neuro_evolution.support.seeds import validation_seeds


def build_parser() -> argparse.ArgumentParser:
    """The ``replay`` argument parser."""
    parser = ArgumentParser(PROGRAM, description="Replay the best brain of a training run.")
    parser.add_argument("run_dir", type=Path, help="a run directory written by train")
    parser.add_argument(
        "--episodes", type=int, help="episodes to run (default 5; with --validation: the run's)"
    )
    parser.add_argument("--seed", type=int, default=0, help="episode k resets with seed S+k")
    parser.add_argument(
        "--rank",
        type=int,
        help="replay hall-of-fame entry N (0: best training fitness) instead of the genome the "
        "run stands behind",
    )
    parser.add_argument(
        "--elite",
        type=int,
        metavar="K",
        help="rerun the training evaluation of stored archive elite K (QD runs: cells ascending) "
        "and compare with its stored fitness",
    )
    parser.add_argument(
        "--cell",
        metavar="I,J",
        help="runs with a grid archive: the elite of grid cell I,J (one index per descriptor)",
    )
    parser.add_argument(
        "--front",
        type=int,
        metavar="K",
        help="rerun the training evaluation of stored Pareto front member K (NSGA2 runs with "
        "objectives) and compare with its stored objectives",
    )
    parser.add_argument(
        "--validation",
        action="store_true",
        help="run the held-out validation episodes of the run (reproduces its validated score)",
    )
    parser.add_argument(
        "--exported",
        type=Path,
        metavar="PATH",
        help="with --validation: play the validation episodes through this exported policy "
        "(.onnx, or a numpy policy's .py) next to the run's own brain",
    )
    parser.add_argument("--render", action="store_true", help="show the episodes in a window")
    parser.add_argument("--video", type=Path, help="record the episodes as videos into this folder")
    parser.add_argument(
        "--brain-state",
        type=Path,
        metavar="DIR",
        help="write each episode's observations, actions, rewards and brain state (npz) and a "
        "picture of them (png) into DIR",
    )
    return parser


def replay(
    run_dir: Path,
    episodes: int | None = None,
    seed: int = 0,
    rank: int | None = None,
    render: bool = False,
    video: Path | None = None,
    validation: bool = False,
    brain_state: Path | None = None,
) -> list[float]:
    """Returns of the replayed episodes: episode k resets with ``seed + k`` (or, with
    ``validation``, with the run's k-th held-out validation seed); with ``brain_state``, each
    episode's trace goes to that folder (see :func:`write_trace`)."""
    config, template, genome, scaler, what = choose_genome(run_dir, rank)
    if validation:
        if config.validation is None:
            raise UserError(f"--validation: {run_dir} was trained without a validation section")
        count = episodes if episodes is not None else config.validation.episodes
        seeds = [int(s) for s in validation_seeds(config.random_seed, count)]
    else:
        seeds = [seed + k for k in range(episodes if episodes is not None else 5)]
    spec = replace_runner_config(
        RunnerSpec(environment=config.environment, episode_runner=config.episode_runner),
        number_fitness_runs=1,
    )
    if video is not None and importlib.util.find_spec("moviepy") is None:
        raise UserError("--video needs moviepy: pip install -e '.[video]'")
    if render and not display_available():
        warning(
            "--render: no display here (DISPLAY and WAYLAND_DISPLAY are unset), so no window "
            "opens; the episodes run without one (use --video DIR to record them)",
            PROGRAM,
        )
        render = False
    if video is not None and not render:
        # rgb_array frames need no window; SDL would otherwise look for a display and print
        # "error: XDG_RUNTIME_DIR is invalid or not set" on a headless machine.
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    render_mode = "human" if render else ("rgb_array" if video else None)
    env = config.environment.make(render_mode=render_mode)
    if video is not None:
        from gymnasium.wrappers import RecordVideo

        env = RecordVideo(env, str(video), episode_trigger=lambda _: True, disable_logger=True)
    runner = EpisodeRunner(spec, env=env)
    brain = template.build(genome)
    returns = []
    try:
        for episode, env_seed in enumerate(seeds):
            trace = EpisodeTrace() if brain_state is not None else None
            result = runner.run_episode(brain, env_seed, scaler=scaler, trace=trace)
            returns.append(result.fitness)
            if brain_state is not None and trace is not None:
                title = f"{config.environment.label}, episode {episode} (seed {env_seed})"
                write_trace(brain_state, episode, trace, title)
            print(
                f"episode {episode}: seed {env_seed}, return {result.fitness:.6g}, "
                f"{result.steps} steps"
            )
    finally:
        runner.close()
    kind = "held-out validation episode" if validation else "episode"
    print(
        f"mean return {np.mean(returns):.6g} ± {np.std(returns):.3g} (min {np.min(returns):.6g}) "
        f"over {plural(len(returns), kind)} ({what})"
    )
    if video is not None:
        videos = sorted(video.glob("*.mp4"))
        print(f"videos: {plural(len(videos), 'file')} in {video.resolve()}")
    if brain_state is not None:
        print(
            f"brain state: {plural(len(seeds), 'episode')} as episode-K.npz and episode-K.png "
            f"in {brain_state.resolve()}"
        )
        if not brain.internal_state():
            print(
                f"brain state: brain {template.config.type_name()} keeps no internal state from "
                "step to step; the files hold observations, actions and rewards only"
            )
    return returns


def write_trace(folder: Path, episode: int, trace: EpisodeTrace, title: str) -> None:
    """Write ``episode-K.npz`` and ``episode-K.png`` (K = ``episode``) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    arrays = trace.arrays()
    atomic_savez(folder / f"episode-{episode}.npz", arrays)
    plot_brain_state(folder / f"episode-{episode}.png", arrays, title)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args = build_parser().parse_args(argv)

    def run() -> int:
        if args.episodes is not None and args.episodes < 1:
            raise UserError(f"--episodes must be >= 1, got {args.episodes}")
        if stored_portable(args.run_dir):  # a portable run replays on the portable kernels
            require_portable(PROGRAM, f"{args.run_dir}: evaluation.portable_kernels", argv is None)
        kernels = run_kernels_line(args.run_dir)
        if kernels is not None:
            warning(kernels, PROGRAM)
        member = named_member({"--elite": args.elite, "--cell": args.cell, "--front": args.front})
        if member is not None:
            if args.rank is not None or args.validation or args.exported is not None:
                raise UserError(
                    f"{member[0]} replays a stored member: not with --rank/--validation/--exported"
                )
            replay_member(args.run_dir, *member, args.render, args.video)
            return 0
        if args.exported is not None:
            if not args.validation:
                raise UserError("--exported plays the run's validation episodes: add --validation")
            from neuro_evolution.export.verify import replay_exported

            replay_exported(args.run_dir, args.exported, args.episodes)
            return 0
        replay(
            args.run_dir,
            args.episodes,
            args.seed,
            args.rank,
            args.render,
            args.video,
            args.validation,
            args.brain_state,
        )
        return 0

    return run_cli(run, PROGRAM)


if __name__ == "__main__":
    sys.exit(main())
