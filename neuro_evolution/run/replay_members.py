"""Rerun one stored training evaluation of a run: a member its optimizer declares it stores
(:meth:`~neuro_evolution.optimizers.base.Optimizer.stored_members`; ``replay --elite K``,
``--cell I,J``, ``--front K``): the genome with its episode base seed, the run's episodes and
its observation scaler, so the replayed fitness and measures equal the stored ones. Only that
declaration is read; no optimizer or file is named here.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.config.tree import ExperimentConfig, parse_run_config
from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.core.normalization import ObservationScaler
from neuro_evolution.evaluation.episodes.runner import EpisodeRunner, EvaluationResult, RunnerSpec
from neuro_evolution.measures.base import MeasureConfig
from neuro_evolution.optimizers.base import OPTIMIZERS
from neuro_evolution.optimizers.members import MEMBER_FLAGS, Member, StoredMembers
from neuro_evolution.run.directory import CONFIG_FILE, HALL_OF_FAME_FILE, load_hall_of_fame
from neuro_evolution.support.console import warning
from neuro_evolution.support.errors import UserError

PROGRAM = "neuro_evolution.replay"


def load_run(run_dir: Path) -> tuple[ExperimentConfig, HallOfFame, BrainTemplate]:
    """(config, hall of fame, template) of a run directory; UserError if something is missing."""
    for name in (CONFIG_FILE, HALL_OF_FAME_FILE):
        if not (run_dir / name).is_file():
            raise UserError(f"{run_dir / name}: missing; is {run_dir} a run directory of train?")
    config = parse_run_config(json.loads((run_dir / CONFIG_FILE).read_text()))
    hall_of_fame, template = load_hall_of_fame(run_dir / HALL_OF_FAME_FILE)
    return config, hall_of_fame, template


def stored_members(
    config: ExperimentConfig, run_dir: Path, flag: str, rank_flag: str = "--rank"
) -> StoredMembers:
    """What the run's optimizer declares it stores (:meth:`Optimizer.stored_members`), when
    ``flag`` names one of its members; a one-line UserError otherwise."""
    name = config.optimizer.type_name()
    _, optimizer_cls = OPTIMIZERS.get(name)
    members = optimizer_cls.stored_members(config.optimizer, run_dir)
    if members is None:
        raise UserError(
            f"{flag}: the run's optimizer {name} stores no members "
            f"({optimizer_cls.__name__}.stored_members() declares none for its config), so "
            f"there is none to name; pick the candidate (no option) or a hall-of-fame entry "
            f"({rank_flag} N)"
        )
    if flag not in members.flags:
        raise UserError(
            f"{flag}: the run's optimizer {name} names its stored members with "
            f"{' or '.join(members.flags)}, not {flag}"
        )
    return members


def choose_member(
    run_dir: Path, flag: str, value: str, rank_flag: str = "--rank"
) -> tuple[ExperimentConfig, Member]:
    """(config, member) of the stored member ``flag value`` of a run directory."""
    config, _, _ = load_run(run_dir)
    return config, stored_members(config, run_dir, flag, rank_flag).member(flag, str(value))


def named_member(values: Mapping[str, object]) -> tuple[str, str] | None:
    """(flag, value) of the one member option (:data:`MEMBER_FLAGS`) in ``values`` that is not
    None (None when none is); naming two is a UserError."""
    named = [(flag, str(values[flag])) for flag in MEMBER_FLAGS if values.get(flag) is not None]
    if len(named) > 1:
        raise UserError(f"{' and '.join(f for f, _ in named)}: name one member, not several")
    return named[0] if named else None


def rerun_evaluation(
    config: ExperimentConfig,
    template: BrainTemplate,
    genome: np.ndarray,
    seed: int,
    scaler: ObservationScaler | None,
    measures: tuple[MeasureConfig, ...],
    render: bool = False,
    video: Path | None = None,
) -> EvaluationResult:
    """One training evaluation rerun as the run made it (base seed, episodes, scaler), with
    its per-episode ``measures``."""
    from neuro_evolution.evaluation.episodes.runner import EvaluationContext

    spec = RunnerSpec(
        environment=config.environment, episode_runner=config.episode_runner, measures=measures
    )
    if render and not display_available():
        warning("--render: no display here, so no window opens (use --video DIR)", PROGRAM)
        render = False
    if video is not None and not render:
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    env = config.environment.make(
        render_mode="human" if render else ("rgb_array" if video else None)
    )
    if video is not None:
        from gymnasium.wrappers import RecordVideo

        env = RecordVideo(env, str(video), episode_trigger=lambda _: True, disable_logger=True)
    runner = EpisodeRunner(spec, env=env)
    try:
        return runner.run(
            template.build(genome), seed, EvaluationContext(observation_scaler=scaler)
        )
    finally:
        runner.close()


@dataclasses.dataclass(frozen=True)
class ReplayedMember:
    """A stored member's training evaluation rerun: what it gave, and the member (with what
    was stored)."""

    fitness: float
    measures: np.ndarray
    member: Member


def replay_member(
    run_dir: Path, flag: str, value: str, render: bool = False, video: Path | None = None
) -> ReplayedMember:
    """Rerun the training evaluation of the stored member ``flag value`` (its genome, episode
    base seed, the run's episodes and its observation scaler) and print the replayed values
    next to the stored ones, which they equal."""
    config, member = choose_member(run_dir, flag, value)
    result = rerun_evaluation(
        config, member.template, member.genome, member.seed, member.scaler, member.measures,
        render, video,
    )  # fmt: skip
    measures = np.asarray(result.measures if result.measures is not None else (), np.float64)
    print(member.replay_line(float(result.fitness), measures))
    return ReplayedMember(float(result.fitness), measures, member)


def display_available() -> bool:
    """Whether a window can open: a display on Linux/BSD (SDL's dummy driver has none)."""
    if os.environ.get("SDL_VIDEODRIVER") in ("dummy", "offscreen"):
        return False
    if sys.platform.startswith(("linux", "freebsd", "openbsd")):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True
