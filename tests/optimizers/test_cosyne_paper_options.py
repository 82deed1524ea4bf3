"""CoSyNE's options for the paper's reading (Gomez, Schmidhuber & Miikkulainen 2008):
``crossover: neuron`` (one cut within each neuron's genes) and ``mutation_scope: population``
(every weight of the new P may mutate, survivors too), each walked by hand through Fig. 2's
steps with the same draws, taken from a copy of the optimizer's generator."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import small_config

from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.cosyne import Cosyne
from neuro_evolution.optimizers.rng import generator_load_state
from neuro_evolution.run.experiment import Experiment

UNITS = np.array([0, 0, 0, 1, 1, 2])  # two neurons of 3 and 2 genes, one unit of one gene
FITNESS = np.array([0.3, -1.0, 2.5, 0.0, 1.7, -0.2, 0.9, -3.0])


def cosyne(units: np.ndarray | None = UNITS, seed: int = 5, **options: Any) -> Cosyne:
    section = {"type": "COSYNE", "population_size": 8, "marking": "all", **options}
    config = OPTIMIZERS.parse_config(section, "optimizer")
    optimizer = make_optimizer(config, len(UNITS), seed, units)
    assert isinstance(optimizer, Cosyne)
    return optimizer


def mutate(values: np.ndarray, rng: np.random.Generator, rate: float) -> np.ndarray:
    """Each value moved with probability ``rate`` by 0.3 Cauchy noise: mask first, then noise."""
    mask, noise = rng.random(values.shape), rng.standard_cauchy(values.shape)
    out = values.copy()
    for j in range(values.shape[0]):
        for i in range(values.shape[1]):
            if mask[j, i] < rate:
                out[j, i] += 0.3 * noise[j, i]
    return out


def walked(population: np.ndarray, rng: np.random.Generator, rate: float, scope: str):
    """One generation, every survivor permuted (marking all), two offspring of the top two."""
    m, n = population.shape
    ranked = population[np.argsort(-FITNESS, kind="stable")]
    a, b = rng.choice(2, 2, replace=False)
    one, other = ranked[a].copy(), ranked[b].copy()
    for unit in range(3):
        genes = [g for g in range(n) if UNITS[g] == unit]
        if len(genes) > 1:
            cut = int(rng.integers(1, len(genes)))
            for gene in genes[cut:]:
                one[gene], other[gene] = ranked[b][gene], ranked[a][gene]
    children = np.array([one, other])
    if scope == "offspring":
        children = mutate(children, rng, rate)
    uniforms, keys = rng.random((m - 2, n)), rng.random((m - 2, n))
    assert np.all(uniforms < 1.0)  # marking all: every survivor's value is marked
    result = ranked.copy()
    for i in range(n):
        moving = sorted(range(m - 2), key=lambda j: keys[j, i])
        for place, source in zip(range(m - 2), moving):
            result[place, i] = ranked[source, i]
    result[m - 1], result[m - 2] = children[0], children[1]  # o_k -> x_{m-k}
    if scope == "population":
        result = mutate(result, rng, rate)
    return result


@pytest.mark.parametrize("scope", ["offspring", "population"])
@pytest.mark.parametrize("rate", [0.0, 0.4])
def test_one_generation_matches_the_papers_steps_walked_by_hand(scope: str, rate: float) -> None:
    optimizer = cosyne(crossover="neuron", mutation_scope=scope, mutation_rate=rate)
    population = optimizer.ask()
    twin = np.random.Generator(np.random.PCG64())
    generator_load_state(twin, optimizer.state(), "generator")
    expected = walked(population, twin, rate, scope)
    optimizer.tell(Evaluations(FITNESS))
    np.testing.assert_array_equal(optimizer.ask(), expected)


def test_neuron_crossover_cuts_once_within_each_neuron_and_never_splits_one_gene() -> None:
    """Without mutation each child's neuron is a prefix of one parent's and the rest of the
    other's; the one-gene unit comes whole from the child's first parent."""
    optimizer = cosyne(crossover="neuron", mutation_rate=0.0, seed=3)
    population = optimizer.ask()
    optimizer.tell(Evaluations(FITNESS))
    best, second = population[2], population[4]  # the top quarter: 2.5 and 1.7
    crossed_units = 0
    for child in optimizer.ask()[6:]:
        first = best if child[0] == best[0] else second
        assert child[5] == first[5]
        for unit in (0, 1):
            genes = np.flatnonzero(unit == UNITS)
            from_first = child[genes] == first[genes]
            assert from_first[0] and np.all(
                from_first | (child[genes] == (best + second - first)[genes])
            )
            assert np.count_nonzero(np.diff(from_first.astype(int))) <= 1
            crossed_units += int(not from_first.all())
    assert crossed_units > 0


def test_population_scope_mutates_survivors_at_the_mutation_rate() -> None:
    """With ``mutation_scope: population`` about mutation_rate of every surviving value moves;
    with ``offspring`` none does (a survivor is a permutation of the old values)."""
    for scope, expected in (("population", 0.3), ("offspring", 0.0)):
        optimizer = make_optimizer(
            OPTIMIZERS.parse_config(
                {"type": "COSYNE", "population_size": 40, "mutation_scope": scope}, "optimizer"
            ),
            200,
            3,
        )
        population = optimizer.ask()
        optimizer.tell(Evaluations(np.arange(40.0)))
        survivors = optimizer.ask()[:30]
        moved = ~np.any(survivors[:, None, :] == population[None, :, :], axis=1)
        assert abs(moved.mean() - expected) < 0.03


def test_neuron_crossover_without_a_layout_is_refused_in_one_line() -> None:
    with pytest.raises(ConfigError, match="optimizer.crossover: neuron needs a brain type"):
        cosyne(units=None, crossover="neuron")
    cosyne(units=None)  # the genome crossover needs none


def test_a_run_hands_the_brain_templates_layout_to_the_optimizer() -> None:
    """Experiment passes ``gene_units`` of its template: a CTRNN run with neuron crossover
    trains."""
    data = small_config(
        optimizer={"type": "COSYNE", "population_size": 8, "crossover": "neuron"},
        number_generations=2,
    )
    experiment = Experiment(parse_config(data))
    units = experiment.optimizer.gene_units
    assert units is not None
    np.testing.assert_array_equal(units, experiment.template.gene_units())
    experiment.run()
