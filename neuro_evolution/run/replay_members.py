"""Rerun one stored training evaluation of a run: an archive elite of a QD run (``replay
--elite K`` / ``--cell I,J``, from ``archive.npz``) or a Pareto front member of an NSGA2 run
with objectives (``replay --front K``, from ``pareto.npz``): the genome with its episode base
seed, the run's episodes and its observation scaler, so the replayed fitness and measures equal
the stored ones.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.config.tree import ExperimentConfig, parse_config
from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.core.normalization import ObservationScaler
from neuro_evolution.evaluation.episode import EpisodeRunner, EvaluationResult, RunnerSpec
from neuro_evolution.measures.base import MeasureConfig
from neuro_evolution.run.directory import CONFIG_FILE, HALL_OF_FAME_FILE, load_hall_of_fame
from neuro_evolution.support.console import warning
from neuro_evolution.support.errors import UserError

PROGRAM = "neuro_evolution.replay"


def load_run(run_dir: Path) -> tuple[ExperimentConfig, HallOfFame, BrainTemplate]:
    """(config, hall of fame, template) of a run directory; UserError if something is missing."""
    for name in (CONFIG_FILE, HALL_OF_FAME_FILE):
        if not (run_dir / name).is_file():
            raise UserError(f"{run_dir / name}: missing; is {run_dir} a run directory of train?")
    config = parse_config(json.loads((run_dir / CONFIG_FILE).read_text()))
    hall_of_fame, template = load_hall_of_fame(run_dir / HALL_OF_FAME_FILE)
    return config, hall_of_fame, template


def choose_elite(
    run_dir: Path, elite: int | None, cell: str | None
) -> tuple[dict[str, np.ndarray], int, BrainTemplate]:
    """(archive arrays, row of the chosen elite, template) of a QD run directory."""
    from neuro_evolution.qd.files import ARCHIVE_FILE, load_archive

    path = run_dir / ARCHIVE_FILE
    if not path.is_file():
        raise UserError(f"{path}: missing; --elite/--cell replay elites of a QD run's archive")
    data, template = load_archive(path)
    cells = data["cells"]
    if cell is not None:
        if str(data["kind"]) != "grid":
            raise UserError("--cell: this run's archive is a CVT; name the elite with --elite K")
        try:
            position = tuple(int(part) for part in cell.split(","))
        except ValueError:
            raise UserError(f"--cell must be integers I,J,..., got {cell!r}") from None
        shape = tuple(int(b) for b in data["descriptor_bins"])
        if len(position) != len(shape) or not all(0 <= p < n for p, n in zip(position, shape)):
            raise UserError(f"--cell {cell}: not a cell of the {'x'.join(map(str, shape))} grid")
        flat = int(np.ravel_multi_index(position, shape))
        rows = np.flatnonzero(cells == flat)
        if not len(rows):
            raise UserError(f"--cell {cell}: that cell holds no elite ({len(cells)} cells do)")
        return data, int(rows[0]), template
    assert elite is not None
    if not 0 <= elite < len(cells):
        raise UserError(f"--elite must be in 0..{len(cells) - 1}, got {elite}")
    return data, elite, template


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
    from neuro_evolution.evaluation.episode import EvaluationContext

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


def row_scaler(data: dict[str, np.ndarray], row: int) -> ObservationScaler | None:
    """The observation scaler stored for row ``row`` of an archive or front file."""
    from neuro_evolution.core.normalization import scaler_from_arrays

    return scaler_from_arrays({k: v[row] for k, v in data.items() if k.startswith("observation_")})


def named_values(names: np.ndarray, values: np.ndarray | None) -> str:
    """``name value, ...`` of measures."""
    return ", ".join(f"{n} {v:.6g}" for n, v in zip(names, values if values is not None else ()))


def replay_elite(
    run_dir: Path,
    elite: int | None,
    cell: str | None,
    render: bool = False,
    video: Path | None = None,
) -> tuple[float, float]:
    """Rerun the training evaluation of an archive elite (its episode base seed, episodes and
    observation scaler); returns (replayed fitness, archived fitness), which agree."""
    config, _, _ = load_run(run_dir)
    data, row, template = choose_elite(run_dir, elite, cell)
    seed = int(data["seeds"][row])
    descriptors = tuple(getattr(config.optimizer, "descriptors", ()))
    result = rerun_evaluation(
        config, template, data["genomes"][row], seed, row_scaler(data, row), descriptors,
        render, video,
    )  # fmt: skip
    archived = float(data["fitness"][row])
    names = data["descriptor_names"]
    print(
        f"elite {row} (cell {int(data['cells'][row])}, generation {int(data['generations'][row])},"
        f" base seed {seed}): fitness {result.fitness:.10g} (archived {archived:.10g}); "
        f"descriptors {named_values(names, result.measures)} (archived "
        f"{named_values(names, data['measures'][row])})"
    )
    return float(result.fitness), archived


def replay_front(
    run_dir: Path, member: int, render: bool = False, video: Path | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Rerun the training evaluation of Pareto front member ``member`` (row K of
    ``pareto.npz``: its base seed, episodes and scaler); returns (replayed objectives, saved
    objectives) in raw units, which agree."""
    from neuro_evolution.moo.files import PARETO_FILE, load_pareto

    config, _, _ = load_run(run_dir)
    path = run_dir / PARETO_FILE
    if not path.is_file():
        raise UserError(f"{path}: missing; --front replays a front member of an NSGA2 run")
    data, template = load_pareto(path)
    size = int(data["front_size"])
    if not 0 <= member < size:
        raise UserError(f"--front must be in 0..{size - 1}, got {member}")
    seed = int(data["seeds"][member])
    objectives = tuple(getattr(config.optimizer, "objectives", ()))
    result = rerun_evaluation(
        config, template, data["genomes"][member], seed, row_scaler(data, member), objectives,
        render, video,
    )  # fmt: skip
    replayed = np.asarray(result.measures, dtype=np.float64)
    saved = np.asarray(data["objectives"][member], dtype=np.float64)
    names = data["objective_names"]
    print(
        f"front member {member} of {size} (generation {int(data['generations'][member])}, base "
        f"seed {seed}): objectives {named_values(names, replayed)} (saved "
        f"{named_values(names, saved)}); fitness {result.fitness:.10g}"
    )
    return replayed, saved


def display_available() -> bool:
    """Whether a window can open: a display on Linux/BSD (SDL's dummy driver has none)."""
    if os.environ.get("SDL_VIDEODRIVER") in ("dummy", "offscreen"):
        return False
    if sys.platform.startswith(("linux", "freebsd", "openbsd")):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True
