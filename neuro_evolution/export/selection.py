"""Which genome of a run to export: the candidate, a hall-of-fame entry, or a member the run's
optimizer declares it stores (``--elite``, ``--cell``, ``--front``; see
:meth:`~neuro_evolution.optimizers.base.Optimizer.stored_members`), picked by ``replay``'s own
selection code, with the scaler it was evaluated with.
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
from neuro_evolution.run.replay_members import choose_member
from neuro_evolution.support.errors import UserError


@dataclasses.dataclass(frozen=True)
class Chosen:
    """A genome to export, with its run's config, template and observation scaler."""

    config: ExperimentConfig
    template: BrainTemplate
    genome: np.ndarray
    scaler: ObservationScaler | None
    label: str  # "candidate", "hall_of_fame 2", or a member's: "elite 5", "front 0"
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
    run_dir: Path, hall_of_fame: int | None = None, member: tuple[str, str] | None = None
) -> Chosen:
    """The genome named by ``hall_of_fame`` or by ``member`` (a member option and its value, as
    :func:`~neuro_evolution.run.replay_members.named_member` gives it), not both; neither: the
    run's candidate."""
    check_run_directory(run_dir)
    if hall_of_fame is not None and member is not None:
        raise UserError(f"--hall-of-fame and {member[0]}: name one genome to export, not several")
    if member is not None:
        config, stored = choose_member(run_dir, *member, rank_flag="--hall-of-fame")
        return Chosen(
            config, stored.template, np.asarray(stored.genome, dtype=np.float64), stored.scaler,
            stored.label, stored.description,
        )  # fmt: skip
    config, template, genome, scaler, what = choose_genome(run_dir, hall_of_fame, "--hall-of-fame")
    label = "candidate" if hall_of_fame is None else f"hall_of_fame {hall_of_fame}"
    return Chosen(config, template, np.asarray(genome, dtype=np.float64), scaler, label, what)
