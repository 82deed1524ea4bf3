"""States written by earlier code resume under today's: for every optimizer and every state
variant in :mod:`state_fixture_cases`, a fresh optimizer that loads the committed state (and the
hall of fame saved with it) asks exactly the genomes the uninterrupted run asked then, and ends
with its center and best fitness; an uninterrupted run of today's code asks the same genomes too,
and writes every key of the committed state with the same value."""

from __future__ import annotations

import numpy as np
import pytest
from state_fixture_cases import (
    AFTER,
    BEFORE,
    FOLDER,
    GENOME_SIZE,
    HALL_OF_FAME,
    all_cases,
    generation,
    make,
    record,
)

from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.optimizers import OPTIMIZERS

CASES = all_cases()


def fixture(name: str) -> dict[str, np.ndarray]:
    with np.load(FOLDER / f"{name}.npz", allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def part(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    return {key[len(prefix) :]: value for key, value in arrays.items() if key.startswith(prefix)}


def test_every_optimizer_and_variant_has_a_committed_state() -> None:
    """One fixture per case, one case per fixture, and every shipped optimizer has a case."""
    assert sorted(path.stem for path in FOLDER.glob("*.npz")) == sorted(CASES)
    assert set(OPTIMIZERS.builtins) <= set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_committed_state_resumes_to_the_recorded_run(name: str) -> None:
    saved = fixture(name)
    optimizer = make(CASES[name])
    optimizer.load_state(part(saved, "state/"))
    hall_of_fame = HallOfFame(HALL_OF_FAME, GENOME_SIZE)
    hall_of_fame.load_state(part(saved, "hall_of_fame/"))
    for g in range(BEFORE, BEFORE + AFTER):
        asked = generation(optimizer, hall_of_fame, g)
        assert asked.tobytes() == saved[f"asked/{g}"].tobytes(), g
    center = optimizer.center()
    assert (np.zeros(0) if center is None else center).tobytes() == saved["center"].tobytes()
    assert hall_of_fame.best_fitness == float(saved["best_fitness"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_todays_run_writes_the_committed_state_and_asks(name: str) -> None:
    saved = fixture(name)
    fresh = record(CASES[name])
    for key, value in saved.items():
        assert key in fresh, key
        assert np.asarray(fresh[key]).tobytes() == value.tobytes(), key
        assert np.asarray(fresh[key]).dtype.kind == value.dtype.kind, key
