"""Which genome of a run to export: the candidate, a hall-of-fame entry, a QD elite or a Pareto
front member, picked by ``replay``'s own selection code, with the scaler it was evaluated with.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.config.tree import ExperimentConfig
from neuro_evolution.core.normalization import ObservationScaler
from neuro_evolution.replay import choose_genome
from neuro_evolution.run.directory import CANDIDATE_FILE, CONFIG_FILE, HALL_OF_FAME_FILE
from neuro_evolution.run.replay_members import choose_elite, choose_front, load_run, row_scaler
from neuro_evolution.support.errors import UserError


@dataclasses.dataclass(frozen=True)
class Chosen:
    """A genome to export, with its run's config, template and observation scaler."""

    config: ExperimentConfig
    template: BrainTemplate
    genome: np.ndarray
    scaler: ObservationScaler | None
    label: str  # "candidate", "hall_of_fame 2", "elite 5", "front 0"
    description: str


def check_run_directory(run_dir: Path) -> None:
    """A UserError unless ``run_dir`` is a run directory that holds a genome."""
    if not (run_dir / CONFIG_FILE).is_file():
        raise UserError(f"{run_dir}: not a run directory of train (it has no {CONFIG_FILE})")
    if not (run_dir / CANDIDATE_FILE).is_file() and not (run_dir / HALL_OF_FAME_FILE).is_file():
        raise UserError(
            f"{run_dir}: no candidate yet ({CANDIDATE_FILE} is written after the first "
            "generation); wait for it or train longer"
        )


def choose(
    run_dir: Path,
    hall_of_fame: int | None = None,
    elite: int | None = None,
    cell: str | None = None,
    front: int | None = None,
) -> Chosen:
    """The genome named by at most one of the options (none: the run's candidate)."""
    check_run_directory(run_dir)
    named = [
        flag
        for flag, value in (
            ("--hall-of-fame", hall_of_fame), ("--elite", elite), ("--cell", cell),
            ("--front", front),
        )
        if value is not None
    ]  # fmt: skip
    if len(named) > 1:
        raise UserError(f"{' and '.join(named)}: name one genome to export, not several")
    if elite is not None or cell is not None:
        config, _, _ = load_run(run_dir)
        data, row, template = choose_elite(run_dir, elite, cell)
        what = f"archive elite {row} (cell {int(data['cells'][row])})"
        return Chosen(
            config, template, np.array(data["genomes"][row], dtype=np.float64),
            row_scaler(data, row), f"elite {row}", what,
        )  # fmt: skip
    if front is not None:
        config, _, _ = load_run(run_dir)
        data, template = choose_front(run_dir, front)
        return Chosen(
            config, template, np.array(data["genomes"][front], dtype=np.float64),
            row_scaler(data, front), f"front {front}", f"Pareto front member {front}",
        )  # fmt: skip
    config, template, genome, scaler, what = choose_genome(run_dir, hall_of_fame, "--hall-of-fame")
    label = "candidate" if hall_of_fame is None else f"hall_of_fame {hall_of_fame}"
    return Chosen(config, template, np.asarray(genome, dtype=np.float64), scaler, label, what)
