"""Command line: ``python -m neuro_evolution.replay RUN_DIR [--episodes N] [--seed S] ...``.

Rebuilds the template and a hall-of-fame brain from the run directory alone (``config.json`` and
``hall_of_fame.npz``: the saved masks are used, nothing is regenerated) and prints the return of
each episode. ``--render`` opens a window; ``--video DIR`` records MP4s (needs the ``video`` extra).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

from neuro_evolution.cli import run_cli
from neuro_evolution.config import ExperimentConfig, parse_config
from neuro_evolution.errors import UserError
from neuro_evolution.evaluation.episode import EpisodeRunner, RunnerSpec, replace_runner_config
from neuro_evolution.results import CONFIG_FILE, HALL_OF_FAME_FILE, load_hall_of_fame

PROGRAM = "neuro_evolution.replay"


def build_parser() -> argparse.ArgumentParser:
    """The ``replay`` argument parser."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {PROGRAM}", description="Replay the best brain of a training run."
    )
    parser.add_argument("run_dir", type=Path, help="a run directory written by train")
    parser.add_argument("--episodes", type=int, default=5, help="episodes to run (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="episode k resets with seed S+k")
    parser.add_argument("--rank", type=int, default=0, help="hall-of-fame rank (0: the best)")
    parser.add_argument("--render", action="store_true", help="show the episodes in a window")
    parser.add_argument("--video", type=Path, help="record the episodes as videos into this folder")
    return parser


def load_run(run_dir: Path) -> tuple[ExperimentConfig, object, object]:
    """(config, hall of fame, template) of a run directory; UserError if something is missing."""
    for name in (CONFIG_FILE, HALL_OF_FAME_FILE):
        if not (run_dir / name).is_file():
            raise UserError(f"{run_dir / name}: missing; is {run_dir} a run directory of train?")
    config = parse_config(json.loads((run_dir / CONFIG_FILE).read_text()))
    hall_of_fame, template = load_hall_of_fame(run_dir / HALL_OF_FAME_FILE)
    return config, hall_of_fame, template


def replay(
    run_dir: Path,
    episodes: int = 5,
    seed: int = 0,
    rank: int = 0,
    render: bool = False,
    video: Path | None = None,
) -> list[float]:
    """Returns of ``episodes`` episodes of the hall-of-fame brain at ``rank``."""
    config, hall_of_fame, template = load_run(run_dir)
    if not 0 <= rank < len(hall_of_fame):
        raise UserError(f"--rank must be in 0..{len(hall_of_fame) - 1}, got {rank}")
    spec = replace_runner_config(
        RunnerSpec(environment=config.environment, episode_runner=config.episode_runner),
        number_fitness_runs=1,
    )
    if video is not None and importlib.util.find_spec("moviepy") is None:
        raise UserError("--video needs moviepy: pip install -e '.[video]'")
    render_mode = "human" if render else ("rgb_array" if video else None)
    env = config.environment.make(render_mode=render_mode)
    if video is not None:
        from gymnasium.wrappers import RecordVideo

        env = RecordVideo(env, str(video), episode_trigger=lambda _: True, disable_logger=True)
    runner = EpisodeRunner(spec, env=env)
    brain = template.build(hall_of_fame.genomes[rank])
    returns = []
    try:
        for episode in range(episodes):
            result = runner.run_episode(brain, seed + episode)
            returns.append(result.fitness)
            print(
                f"episode {episode}: seed {seed + episode}, return {result.fitness:.6g}, "
                f"{result.steps} steps"
            )
    finally:
        runner.close()
    print(
        f"mean return {np.mean(returns):.6g} over {episodes} episodes "
        f"(hall-of-fame rank {rank}, training fitness {hall_of_fame.fitness[rank]:.6g})"
    )
    return returns


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args = build_parser().parse_args(argv)

    def run() -> int:
        if args.episodes < 1:
            raise UserError(f"--episodes must be >= 1, got {args.episodes}")
        replay(args.run_dir, args.episodes, args.seed, args.rank, args.render, args.video)
        return 0

    return run_cli(run, PROGRAM)


if __name__ == "__main__":
    sys.exit(main())
