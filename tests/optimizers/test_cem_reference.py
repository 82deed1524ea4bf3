"""CEM against a hand-worked generation of Szita & Lőrincz's (2006) noisy CE pseudo-code.

No maintained numpy implementation of the noisy CE method exists to compare with, so four
genomes of two genes and their fitness are worked by hand: the elite set I (the floor(rho n)
best), mu = the elites' mean, sigma^2 = their (biased) variance + Z_{t+1}. The numbers are
small exact binary fractions; the tolerance 1e-15 only allows the square root's rounding.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.cem import Cem
from neuro_evolution.support.errors import ConfigError

GENOMES = np.array([[1.0, 2.0], [3.0, -1.0], [0.0, 0.0], [-2.0, 4.0]])


def cem(**options: Any) -> Cem:
    section = {"type": "CEM", "population_size": 4, "elite_fraction": 0.5, **options}
    optimizer = make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), 2, 0)
    assert isinstance(optimizer, Cem)
    return optimizer


def told(optimizer: Cem, fitness: list[float], generation: int = 0) -> tuple[Any, Any]:
    """Ask exactly GENOMES (center 0, stdev 1, those rows as the pending noise), tell
    ``fitness`` as generation ``generation``; the new (mean, stdev)."""
    optimizer.ask()
    state = optimizer.state()
    state.update(center=np.zeros(2), stdev=np.ones(2), asked_noise=GENOMES.copy())
    state["generation"] = generation
    optimizer.load_state(state)
    assert np.array_equal(optimizer.ask(), GENOMES)
    optimizer.tell(Evaluations(np.array(fitness)))
    return optimizer.center(), optimizer.stdev


@pytest.mark.parametrize(
    ("options", "generation", "added"),
    [
        ({"noise": "decreasing"}, 0, 4.9),  # Z_1 = max(5 - 1/10, 0)
        ({"noise": "decreasing"}, 60, 0.0),  # Z_61 = max(5 - 61/10, 0)
        ({"noise": "decreasing", "noise_a": 2.0, "noise_b": 4.0}, 2, 1.25),  # 2 - 3/4
        ({"noise": "constant", "noise_a": 4.0}, 7, 4.0),
        ({"noise": "none"}, 0, 0.0),
    ],
)
def test_one_generation_matches_the_hand_worked_noisy_ce_step(
    options: dict[str, Any], generation: int, added: float
) -> None:
    """Fitness 5, 7, 1, 6 and rho = 0.5 keep genomes 2 and 4, (3, -1) and (-2, 4): mu = (0.5,
    1.5), elite variance (6.25, 6.25), sigma^2 = 6.25 + Z_{t+1}."""
    mean, stdev = told(cem(**options), [5.0, 7.0, 1.0, 6.0], generation)
    np.testing.assert_array_equal(mean, [0.5, 1.5])
    np.testing.assert_allclose(stdev**2, [6.25 + added] * 2, rtol=1e-15)


def test_tied_fitness_keeps_the_earlier_sample() -> None:
    """Genomes 1, 2 and 4 tie for best with two elites: the first two (1 and 2) are kept."""
    mean, stdev = told(cem(noise="none"), [3.0, 3.0, 0.0, 3.0])
    np.testing.assert_array_equal(mean, [2.0, 0.5])
    np.testing.assert_array_equal(stdev, [1.0, 1.5])


def test_the_next_generation_samples_the_updated_gaussian() -> None:
    """After the update the asked genomes are mu + sigma z for fresh standard normal z: their
    standardized rows have mean ~0 and stdev ~1 over a large population."""
    optimizer = make_optimizer(
        OPTIMIZERS.parse_config({"type": "CEM", "population_size": 20000}, "optimizer"), 3, 1
    )
    assert isinstance(optimizer, Cem)
    genomes = optimizer.ask()
    optimizer.tell(Evaluations(-np.sum((genomes - 2.0) ** 2, axis=1)))
    center, stdev = optimizer.center(), optimizer.stdev
    z = (optimizer.ask() - center) / stdev
    assert np.all(np.abs(z.mean(axis=0)) < 0.05) and np.all(np.abs(z.std(axis=0) - 1) < 0.05)


def test_a_population_too_small_for_one_elite_is_refused_naming_the_field() -> None:
    """floor(rho n) = 0 elites cannot set a mean: a ConfigError on elite_fraction."""
    section = {"type": "CEM", "population_size": 9, "elite_fraction": 0.1}
    with pytest.raises(ConfigError, match="optimizer.elite_fraction"):
        OPTIMIZERS.parse_config(section, "optimizer")
