"""Which stored genome of a run ``replay`` and ``export`` take when no elite or front member is
named: the candidate (the genome the run stands behind), or a hall-of-fame entry by rank."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.config.tree import ExperimentConfig
from neuro_evolution.core.normalization import ObservationScaler
from neuro_evolution.run.directory import CANDIDATE_FILE, load_candidate
from neuro_evolution.run.replay_members import load_run
from neuro_evolution.support.console import plural
from neuro_evolution.support.errors import UserError


def missing_candidate_line(run_dir: Path, rank_flag: str) -> str:
    """Why there is no candidate to replay, and the options."""
    return (
        f"{run_dir / CANDIDATE_FILE}: missing, so there is no genome the run stands behind (it "
        "is written with each validation, and after every generation of a run without one); "
        f"pass {rank_flag} N for hall-of-fame entry N (scored on training seeds only), or train "
        "on to the next validation"
    )


def choose_genome(
    run_dir: Path, rank: int | None, rank_flag: str = "--rank"
) -> tuple[ExperimentConfig, BrainTemplate, np.ndarray, ObservationScaler | None, str]:
    """(config, template, genome, scaler, description) of what to replay: the candidate, or
    with ``rank`` that hall-of-fame entry. A missing candidate is refused, never replaced by
    the hall of fame's best (a training-seed maximum, not what the run stands behind)."""
    config, hall_of_fame, template = load_run(run_dir)
    if rank is None:
        if not (run_dir / CANDIDATE_FILE).is_file():
            raise UserError(missing_candidate_line(run_dir, rank_flag))
        candidate, template = load_candidate(run_dir / CANDIDATE_FILE)
        score = candidate.score
        validated = (
            f", validation mean {score.mean:.6g} over "
            f"{plural(len(score.returns), 'held-out episode')}"
            if score is not None
            else ""
        )
        what = f"{candidate.source} after generation {candidate.generation}{validated}"
        return config, template, candidate.genome, candidate.scaler, what
    if not 0 <= rank < len(hall_of_fame):
        raise UserError(f"{rank_flag} must be in 0..{len(hall_of_fame) - 1}, got {rank}")
    what = f"hall-of-fame rank {rank}, training fitness {hall_of_fame.fitness[rank]:.6g}"
    return config, template, hall_of_fame.genomes[rank], hall_of_fame.scaler(rank), what
