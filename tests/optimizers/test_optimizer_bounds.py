"""``optimizer.bounds`` over every registered optimizer: no asked genome leaves the box.

Each optimizer runs with its defaults (a measured one with genes 0 and 1 as its descriptors) on
a sphere whose optimum (all ones) lies outside a narrow box, so that its samples press on the
bounds.
"""

from __future__ import annotations

import dataclasses
import io
from typing import Any

import numpy as np
import pytest

from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.optimizers import OPTIMIZERS, Optimizer, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.bounds import reflect
from neuro_evolution.support.errors import ConfigError

NAMES = OPTIMIZERS.names()
DESCRIPTORS = [  # a measured optimizer's descriptors: genes 0 and 1
    {"name": f"gene{i}", "source": "observation", "index": i, "low": -1.0, "high": 1.0, "bins": 5}
    for i in range(2)
]

GENES = 6
LOW = (-0.5, -0.4, -0.3, -0.2, -0.1, 0.0)  # one value per gene
HIGH = 0.25
METHODS = ("clip", "reflect", "resample")


def make(name: str, bounds: dict[str, Any], seed: int = 3) -> Optimizer:
    config_cls, _ = OPTIMIZERS.get(name)
    measured = "descriptors" in {field.name for field in dataclasses.fields(config_cls)}
    section: dict[str, Any] = {"type": name, "bounds": bounds}
    if measured:
        section["descriptors"] = DESCRIPTORS
    return make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), GENES, seed)


def generation(optimizer: Optimizer, hall_of_fame: HallOfFame, index: int) -> np.ndarray:
    """One ask / evaluate (maximise -||x - 1||^2) / tell round; returns the asked genomes."""
    genomes = optimizer.ask()
    fitness = -np.sum((genomes - 1.0) ** 2, axis=1)
    hall_of_fame.update(genomes, fitness, index)
    measures = genomes[:, :2] if optimizer.measure_configs() else None
    seeds = np.zeros(len(genomes), dtype=np.int64)
    optimizer.tell(Evaluations(fitness, hall_of_fame, measures, seeds, generation=index))
    return genomes


def npz_round_trip(state: dict[str, Any]) -> Any:
    buffer = io.BytesIO()
    np.savez(buffer, **state)
    buffer.seek(0)
    return np.load(buffer, allow_pickle=False)


def redraws(name: str) -> bool:
    return bool(OPTIMIZERS.get(name)[1].REDRAWS)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("method", METHODS)
def test_no_asked_genome_leaves_the_bounds(name: str, method: str) -> None:
    """Every genome asked over 8 generations lies in [low, high] gene by gene; an optimizer
    that cannot draw a genome again refuses resample in one line."""
    bounds = {"low": list(LOW), "high": HIGH, "method": method}
    if method == "resample" and not redraws(name):
        with pytest.raises(ConfigError, match=r"^optimizer.bounds.method: .* use clip or reflect"):
            make(name, bounds)
        return
    optimizer = make(name, bounds)
    hall_of_fame = HallOfFame(3, GENES)
    for g in range(8):
        genomes = generation(optimizer, hall_of_fame, g)
        assert (genomes >= np.array(LOW)).all() and (genomes <= HIGH).all(), (g, genomes)


@pytest.mark.parametrize("name", [name for name in NAMES if redraws(name)])
def test_a_resampled_run_resumes_bit_identically_mid_generation(name: str) -> None:
    """Resample's redraws come from the optimizer's own generator, which its state holds: a
    run loaded from a snapshot taken after an ask continues with the same genomes."""
    bounds = {"low": list(LOW), "high": HIGH, "method": "resample"}
    reference, hall_of_fame = make(name, bounds, 5), HallOfFame(3, GENES)
    expected = [generation(reference, hall_of_fame, g) for g in range(6)]
    first, first_hof = make(name, bounds, 5), HallOfFame(3, GENES)
    for g in range(3):
        generation(first, first_hof, g)
    first.ask()
    resumed = make(name, bounds, 5)
    resumed.load_state(npz_round_trip(first.state()))
    for g in range(3, 6):
        assert generation(resumed, first_hof, g).tobytes() == expected[g].tobytes(), g


def test_resample_learns_from_the_rows_it_evaluated() -> None:
    """SNES with resample: the pending noise is exactly (genome - center) / stdev of the asked
    genomes, so the update uses the samples that were evaluated, not the rejected ones."""
    optimizer = make("SNES", {"low": -1.5, "high": 1.5, "method": "resample"})
    unbounded = make_optimizer(OPTIMIZERS.parse_config({"type": "SNES"}, "optimizer"), GENES, 3)
    genomes = optimizer.ask()
    noise = optimizer.state()["asked_noise"]
    assert (np.abs(unbounded.ask()) > 1.5).any()  # rows were drawn again
    np.testing.assert_array_equal(optimizer.center() + 1.0 * noise, genomes)
    assert np.abs(genomes).max() <= 1.5


def test_bounds_change_nothing_for_genomes_inside() -> None:
    """A box that every sample stays inside leaves the run bit for bit as without bounds."""
    plain = make_optimizer(OPTIMIZERS.parse_config({"type": "SNES", "stdev_init": 0.01},
                                                   "optimizer"), GENES, 3)  # fmt: skip
    boxed = make_optimizer(
        OPTIMIZERS.parse_config(
            {"type": "SNES", "stdev_init": 0.01, "bounds": {"low": -10, "high": 10}}, "optimizer"
        ),
        GENES,
        3,
    )
    for g in range(3):
        assert (
            generation(plain, HallOfFame(1, GENES), g).tobytes()
            == generation(boxed, HallOfFame(1, GENES), g).tobytes()
        )


def test_reflect_mirrors_at_the_bound_it_crossed() -> None:
    """x = high + d becomes high - d, x = low - d becomes low + d, folding again past a full
    width; values inside are untouched."""
    low, high = np.zeros(6), np.ones(6)
    x = np.array([[0.25, 1.25, -0.25, 2.25, -1.75, 1.0]])
    np.testing.assert_allclose(reflect(x, low, high), [[0.25, 0.75, 0.25, 0.25, 0.25, 1.0]])


def test_clip_sets_a_gene_outside_to_its_bound() -> None:
    optimizer = make("SNES", {"low": -0.1, "high": 0.1})
    genomes = optimizer.ask()
    raw = optimizer.center() + optimizer.state()["asked_noise"]
    np.testing.assert_array_equal(genomes, np.clip(raw, -0.1, 0.1))


@pytest.mark.parametrize(
    ("bounds", "message"),
    [
        (
            {"low": [0, 0], "high": 1},
            "optimizer.bounds.low: has 2 values but the genome has 6 genes; give one per gene"
            " or a scalar",
        ),
        ({"low": 1, "high": 1}, "optimizer.bounds.high: must be above low for every gene"),
        ({"low": [0, 0], "high": [1, 1, 1]}, "optimizer.bounds.high: has 3 values and low has 2"),
        ({"low": 0, "high": 1, "method": "wrap"}, "optimizer.bounds.method: must be one of"),
        ({"high": 1}, "optimizer.bounds.low: is required"),
    ],
)
def test_bad_bounds_are_one_line_errors(bounds: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as error:
        make("SNES", bounds)
    assert str(error.value).startswith(message), str(error.value)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("method", METHODS)
def test_the_center_stood_behind_lies_in_the_bounds(name: str, method: str) -> None:
    """``center_in_bounds`` (what a run validates, saves and exports) lies in [low, high] after
    every generation, and is :meth:`center` repaired as an asked genome would be."""
    bounds = {"low": list(LOW), "high": HIGH, "method": method}
    if method == "resample" and not redraws(name):
        return
    optimizer = make(name, bounds)
    hall_of_fame = HallOfFame(3, GENES)
    for g in range(8):
        generation(optimizer, hall_of_fame, g)
        center, inside = optimizer.center(), optimizer.center_in_bounds()
        if center is None:
            assert inside is None
            continue
        assert inside is not None
        assert (inside >= np.array(LOW)).all() and (inside <= HIGH).all(), (g, inside)
        low, high = np.array(LOW), np.full(GENES, HIGH)
        expected = reflect(center, low, high) if method == "reflect" else np.clip(center, low, high)
        np.testing.assert_array_equal(inside, expected)
