"""Rules of GA, PSO and BIPOP-CMA-ES seen through ``ask()`` and ``tell()`` alone: the GA carries
exactly ``elites`` parents over, PSO never moves a gene faster than ``max_velocity``, and BIPOP's
small searches start from the config's sigma times their drawn factor."""

from __future__ import annotations

from typing import Any

import numpy as np

from neuro_evolution.optimizers import OPTIMIZERS, Optimizer, make_optimizer
from neuro_evolution.optimizers.base import Evaluations


def make(section: dict[str, Any], genome_size: int, seed: int = 3) -> Optimizer:
    return make_optimizer(OPTIMIZERS.parse_config(dict(section), "optimizer"), genome_size, seed)


def sphere(genomes: np.ndarray) -> np.ndarray:
    return -np.sum((genomes - 0.7) ** 2, axis=1)


def test_the_ga_carries_over_exactly_its_elites_best_first_and_mutates_every_other_row() -> None:
    """population 10, truncation 4, elites 2: each next ask starts with the 2 best told genomes
    unchanged, best first, and no other row equals any genome told before."""
    ga = make({"type": "GA", "population_size": 10, "truncation": 4, "elites": 2, "sigma": 0.1}, 5)
    genomes = ga.ask()
    for _ in range(4):
        fitness = sphere(genomes)
        ga.tell(Evaluations(fitness))
        best = genomes[np.argsort(-fitness, kind="stable")[:2]]
        following = ga.ask()
        assert np.array_equal(following[:2], best)
        told = {row.tobytes() for row in genomes}
        assert sum(row.tobytes() in told for row in following) == 2
        genomes = following


def test_pso_clamps_every_velocity_gene_to_max_velocity() -> None:
    """Particles start spread over [-5, 5] with Vmax 0.05: every gene's move from one ask to the
    next (the particle's velocity, Eq. 2) lies within [-Vmax, Vmax], and the clamp is reached
    on both sides."""
    vmax = 0.05
    section = {"type": "PSO", "population_size": 12, "max_velocity": vmax,
               "inertia": 1.0, "cognitive": 2.0, "social": 2.0,
               "initial_gene_range": [-5.0, 5.0]}  # fmt: skip
    pso = make(section, 4)
    positions = pso.ask()
    moves = []
    for _ in range(6):
        pso.tell(Evaluations(sphere(positions)))
        following = pso.ask()
        moves.append(following - positions)
        positions = following
    moves_all = np.concatenate(moves)
    assert np.all(np.abs(moves_all) <= vmax * (1 + 1e-12))
    assert np.isclose(moves_all.max(), vmax) and np.isclose(moves_all.min(), -vmax)


def test_bipop_small_searches_start_from_the_configs_sigma_times_their_factor() -> None:
    """A flat fitness ends every search at once (equal function values): after each restart
    the search's sigma is sigma * its sigma factor (1 in the large regime, 10^(-2 U1) in the
    small one, never the previous search's sigma times it), the mean is back at 0, and the
    asked genomes spread with that sigma."""
    sigma = 0.8
    cma = make({"type": "CMA_ES", "sigma": sigma, "restarts": {"kind": "bipop"}}, 40)
    seen: dict[str, int] = {"large": 0, "small": 0}
    genomes = cma.ask()
    while seen["small"] < 3 and cma.restarts < 30:
        before = cma.restarts
        cma.tell(Evaluations(np.zeros(len(genomes))))
        genomes = cma.ask()
        if cma.restarts == before:
            continue
        plan = cma.schedule.plan  # type: ignore[attr-defined]
        seen[plan.regime] += 1
        factor = plan.sigma_factor
        assert (factor == 1.0) == (plan.regime == "large")
        assert cma.sigma == sigma * factor  # type: ignore[attr-defined]
        assert not cma.center().any()  # type: ignore[union-attr]
        assert np.isclose(genomes.std(), sigma * factor, rtol=0.1)
    assert seen["small"] >= 3 and seen["large"] >= 1
