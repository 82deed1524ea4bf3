"""Rules of the search algorithms that a plausible slip would break without changing any run's
shape: CMA-ES restarts from C = I, CMA-ME's ranking and restarts, and the merge order of the
observation statistics."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.core.normalization import ObservationNormalizationConfig, ObservationStatistics
from neuro_evolution.core.schema import parse, to_dict
from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.qd.cma_me import improvement_order
from neuro_evolution.qd.descriptors import DescriptorConfig

STATE_COUNTERS = ("generation", "restarts", "restart_generation", "eigen_generation")


def make(section: dict[str, Any], genome_size: int, seed: int = 3) -> Any:
    return make_optimizer(OPTIMIZERS.parse_config(dict(section), "optimizer"), genome_size, seed)


def generator_copy(generator: np.random.Generator) -> np.random.Generator:
    twin = np.random.Generator(type(generator.bit_generator)())
    twin.bit_generator.state = generator.bit_generator.state
    return twin


# --- CMA-ES restarts -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["CMA_ES", "SEP_CMA_ES"])
def test_a_restart_starts_from_the_identity_covariance(name: str) -> None:
    """Hansen, "The CMA Evolution Strategy: A Tutorial" (2016), Table 1 / Appendix A: a search
    starts with C = I, p_sigma = p_c = 0, the initial mean and sigma; an independent restart is
    such a start. So after the restart every part of the state but the generator and the counters
    equals a new optimizer's, and the next genomes are m0 + sigma0 z with z ~ N(0, I) drawn
    from the optimizer's generator, C = I."""
    section = {"type": name, "population_size": 8, "sigma": 0.3, "initial_centroid": 0.5,
               "restart_every_generations": 4}  # fmt: skip
    n, hall_of_fame = 6, HallOfFame(1, 6)
    optimizer = make(section, n)
    for _ in range(4):  # an ill-conditioned objective: C moves far from I before the restart
        genomes = optimizer.ask()
        fitness = -np.sum((genomes * np.logspace(0, 3, n)) ** 2, axis=1)
        optimizer.tell(Evaluations(fitness, hall_of_fame))
    assert optimizer.restarts == 1
    fresh = make(section, n, seed=99).state()
    state = optimizer.state()
    for key, value in fresh.items():
        if key.startswith("generator") or key in STATE_COUNTERS:
            continue
        assert np.array_equal(np.asarray(state[key]), np.asarray(value)), key
    z = generator_copy(optimizer._random).standard_normal((8, n))
    np.testing.assert_array_equal(optimizer.ask(), 0.5 + 0.3 * z)


# --- CMA-ME ------------------------------------------------------------------------------------

DESCRIPTORS = [
    {"name": "a", "source": "observation", "low": 0.0, "high": 1.0, "bins": 10},
    {"name": "b", "source": "observation", "index": 1, "low": 0.0, "high": 1.0, "bins": 10},
]


def cma_me(section: dict[str, Any], genome_size: int = 5, seed: int = 9) -> Any:
    descriptors = [to_dict(parse(DescriptorConfig, d, "d")) for d in DESCRIPTORS]
    data = {"type": "CMA_ME", "descriptors": descriptors, **section}
    return make_optimizer(OPTIMIZERS.parse_config(data, "optimizer"), genome_size, seed)


def tell(optimizer: Any, fitness: np.ndarray, measures: np.ndarray, generation: int) -> None:
    seeds = np.zeros(len(fitness), dtype=np.int64)
    hall_of_fame = HallOfFame(1, optimizer.genome_size)
    optimizer.tell(Evaluations(fitness, hall_of_fame, measures, seeds, generation=generation))


def test_cma_me_moves_each_emitter_towards_the_best_of_its_improvement_ranking() -> None:
    """Fontaine et al. 2020 (CMA-ME, Alg. 2, improvement emitter): the emitter sorts its samples
    by the two-stage improvement ranking and updates CMA-ES with the mu best *in that order*,
    weighted by their rank: m' = m + sum_i w_i (x_(i) - m), x_(i) the sample ranked i-th (c_m =
    1). A sample's rank is its position in the order, not the index the sort returns."""
    batch = 10
    optimizer = cma_me({"emitters": 1, "batch_size": batch, "sigma": 0.3}, seed=4)
    genomes = optimizer.ask()
    rng = np.random.default_rng(11)
    fitness = rng.normal(size=batch)
    measures = rng.uniform(0.0, 1.0, (batch, 2))
    measures[6:] = measures[0]  # some land in a taken cell: improved or not added
    before = copy.deepcopy(optimizer.archive)
    status, value = before.add(genomes, fitness, measures, 0, np.zeros(batch, dtype=np.int64))
    order = improvement_order(status, value)
    emitter = optimizer.emitters[0]
    mean, weights, mu = emitter.mean.copy(), emitter.params.weights, emitter.params.mu
    assert not np.array_equal(order[:mu], np.argsort(order)[:mu])  # order != rank here
    tell(optimizer, fitness, measures, 0)
    expected = mean + weights @ (genomes[order[:mu]] - mean)
    np.testing.assert_allclose(optimizer.emitters[0].mean, expected, rtol=1e-12, atol=1e-12)


def test_a_stalled_emitter_restarts_at_a_uniformly_drawn_elite() -> None:
    """Fontaine et al. 2020 (CMA-ME, Sec. 4, restart rule as in pyribs' "no_improvement"): an
    emitter none of whose samples entered the archive restarts at an elite drawn uniformly
    from the archive, with the optimizer's own generator, not at the best elite."""
    batch = 6
    optimizer = cma_me({"emitters": 1, "batch_size": batch, "sigma": 0.3})
    cells = np.linspace(0.05, 0.95, batch)
    measures = np.stack([cells, cells[::-1]], axis=1)  # six distinct cells
    optimizer.ask()
    tell(optimizer, np.arange(batch, dtype=np.float64), measures, 0)
    elites = optimizer.archive.elite_cells()
    best = optimizer.archive.genomes[optimizer.archive.best_cell()]
    starts, drawn_not_best = [], 0
    for generation in range(1, 9):
        optimizer.ask()
        draw = generator_copy(optimizer._random).integers(len(elites))
        expected = optimizer.archive.genomes[elites[draw]]
        tell(optimizer, np.full(batch, -1e9), measures, generation)  # nothing enters: stalled
        assert optimizer.restarts[0] == generation
        np.testing.assert_array_equal(optimizer.emitters[0].mean, expected)
        drawn_not_best += not np.array_equal(expected, best)
        starts.append(expected)
    assert drawn_not_best >= 3  # the draws differ from the best elite, so the rule is seen


# --- observation statistics ------------------------------------------------------------------


def test_observation_statistics_merge_in_submission_order() -> None:
    """Design, determinism contract: the main process adds the per-evaluation totals in
    submission order, so the float sums are those of a left-to-right sum in that order (here
    1e16 - 1e16 + 1 = 1, where the reverse order gives 0 and other orders other values)."""
    statistics = ObservationStatistics(ObservationNormalizationConfig(), 1)
    per_evaluation = [
        np.array([1.0, 1e16, 1.0]),
        np.array([2.0, -1e16, 2.0]),
        np.array([3.0, 1.0, 0.5]),
    ]
    statistics.merge(per_evaluation)
    assert statistics.count == 6.0
    assert statistics.total.tolist() == [(1e16 + -1e16) + 1.0]
    assert statistics.total.tolist() == [1.0] and statistics.squares.tolist() == [3.5]
    again = ObservationStatistics(ObservationNormalizationConfig(), 1)
    for stats in per_evaluation:  # merging generation by generation gives the same sums
        again.merge([stats])
    assert again.state()["total"].tolist() == statistics.state()["total"].tolist()


def test_a_generation_merges_its_results_statistics_in_submission_order() -> None:
    """The experiment merges the results of one generation in the order their genomes were
    asked: the statistics after generation 0 equal a left-to-right merge of the sequential
    handler's results for the same genomes and seeds, bit for bit."""
    from helpers import small_config

    from neuro_evolution.config.tree import parse_config
    from neuro_evolution.evaluation.pools.sequential import SequentialHandler
    from neuro_evolution.run.experiment import Experiment

    data = small_config(observation_normalization={}, number_generations=1)
    data["episode_runner"] = {**data.get("episode_runner", {}), "number_fitness_runs": 1}
    experiment = Experiment(parse_config(data), handler=SequentialHandler())
    seen: list[list[Any]] = []
    original = experiment.handler.batch_evaluate

    def recording(*args: Any, **kwargs: Any) -> Any:
        results = original(*args, **kwargs)
        context = args[2] if len(args) > 2 else kwargs.get("context")
        if context is None or not context.validation:
            seen.append(results)
        return results

    experiment.handler.batch_evaluate = recording  # type: ignore[method-assign]
    experiment.run()
    statistics = ObservationStatistics(ObservationNormalizationConfig(), 4)
    for stats in [r.observation_stats for r in seen[0]]:
        statistics.merge([stats])
    reverse = ObservationStatistics(ObservationNormalizationConfig(), 4)
    reverse.merge([r.observation_stats for r in reversed(seen[0])])
    merged = experiment.observation_statistics
    assert merged.total.tobytes() == statistics.total.tobytes()
    assert merged.squares.tobytes() == statistics.squares.tobytes()
    assert reverse.squares.tobytes() != statistics.squares.tobytes()  # the order is visible
