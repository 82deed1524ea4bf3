"""Helpers of the population-method reference tests (GA, DE, PSO against evosax)."""

from __future__ import annotations

from typing import Any

import numpy as np

from neuro_evolution.optimizers import OPTIMIZERS, Optimizer, make_optimizer
from neuro_evolution.optimizers.base import Evaluations


def make(name: str, genome_size: int, seed: int = 0, **options: Any) -> Optimizer:
    section = {"type": name, **options}
    return make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), genome_size, seed)


def tell_population(optimizer: Optimizer, genomes: np.ndarray, fitness: np.ndarray) -> None:
    """Ask, then replace the pending genomes by ``genomes`` (through the state, as a resume
    would) and tell ``fitness``: the optimizer learns from exactly these rows."""
    optimizer.ask()
    state = dict(optimizer.state())
    state["asked_genomes"] = np.asarray(genomes, dtype=np.float64)
    optimizer.load_state(state)
    optimizer.tell(Evaluations(np.asarray(fitness, dtype=np.float64)))


def nearest_rows(points: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """For each of ``points``, the index of its nearest row of ``rows``."""
    distances = ((points[:, None, :] - rows[None, :, :]) ** 2).sum(axis=-1)
    return np.argmin(distances, axis=1)
