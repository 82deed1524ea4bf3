"""The optimizer states committed under ``tests/optimizer_states/``: what each case runs, and how a
fixture is written and replayed.

A fixture holds one optimizer's ``state()`` after :data:`BEFORE` generations and a pending ask
(mid-generation, the hardest point to resume from), the hall of fame's state with it, and the
genomes the uninterrupted run then asked for :data:`AFTER` more generations and its final center.
The files were written by the code of the day they were committed (``python
tests/optimizers/state_fixture_cases.py``, which refuses to overwrite one); a checkpoint a user
holds today must resume under every later version of the optimizers, so a fixture is never
rewritten to make a change pass.

The cases are the contract configs of every registered optimizer (6 genes, run seed 5) and the
variants whose state has more parts: IPOP/BIPOP schedules that restart within the recorded
generations, periodic fresh starts, the active covariance update, resampled bounds, and CoSyNE's
paper options.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from contract_cases import CASES

from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.optimizers import OPTIMIZERS, Optimizer, make_optimizer
from neuro_evolution.optimizers.base import Evaluations

FOLDER = Path(__file__).parents[1] / "optimizer_states"
GENOME_SIZE = 6
SEED = 5
BEFORE = 4  # generations told before the saved state (then one more ask is pending)
AFTER = 6  # generations recorded after it
HALL_OF_FAME = 3

# IPOP/BIPOP schedules that stop a search after 2 generations, so the recorded generations
# cross restarts (with a grown population) before and after the saved state.
_QUICK_STOPS = {"max_generations": 2, "tolfun": 0.0, "tolx": 0.0, "stagnation": False}

VARIANTS: dict[str, dict[str, Any]] = {
    "CMA_ES-ipop": {"type": "CMA_ES", "restarts": {"kind": "ipop", **_QUICK_STOPS}},
    "CMA_ES-bipop": {"type": "CMA_ES", "restarts": {"kind": "bipop", **_QUICK_STOPS}},
    "CMA_ES-active": {"type": "CMA_ES", "active": True},
    "CMA_ES-every-3": {"type": "CMA_ES", "restart_every_generations": 3},
    "CMA_ES-resample": {
        "type": "CMA_ES",
        "bounds": {"low": -0.5, "high": 0.5, "method": "resample"},
    },
    "SEP_CMA_ES-ipop": {"type": "SEP_CMA_ES", "restarts": {"kind": "ipop", **_QUICK_STOPS}},
    "SEP_CMA_ES-active": {"type": "SEP_CMA_ES", "active": True},
    "SNES-every-3": {"type": "SNES", "restart_every_generations": 3},
    "MA_ES-every-3": {"type": "MA_ES", "restart_every_generations": 3},
    "LM_MA_ES-every-3": {"type": "LM_MA_ES", "directions": 4, "restart_every_generations": 3},
    "COSYNE-paper": {
        "type": "COSYNE",
        "mutation": "gaussian",
        "mutation_scope": "population",
        "marking": "fitness",
    },
    "PGPE-adam": {"type": "PGPE", "population_size": 10, "center_update": "adam"},
}


def contract_sections() -> dict[str, dict[str, Any]]:
    """Every registered optimizer's contract config section, by name."""
    return {name: {"type": name, **case.config} for name, case in CASES.items()}


def all_cases() -> dict[str, dict[str, Any]]:
    """Every fixture's optimizer section, by fixture name."""
    return {**contract_sections(), **VARIANTS}


def make(section: dict[str, Any]) -> Optimizer:
    return make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), GENOME_SIZE, SEED)


def objective(genomes: np.ndarray) -> np.ndarray:
    """Minus the squared distance to the all-ones genome."""
    return -np.sum((genomes - 1.0) ** 2, axis=-1)


def generation(optimizer: Optimizer, hall_of_fame: HallOfFame, index: int) -> np.ndarray:
    """One ask / evaluate / tell round (genes 0 and 1 as the measures of a measured optimizer);
    returns the asked genomes."""
    genomes = optimizer.ask()
    fitness = objective(genomes)
    hall_of_fame.update(genomes, fitness, index)
    measures = genomes[:, :2] if optimizer.measure_configs() else None
    seeds = np.zeros(len(genomes), dtype=np.int64)
    optimizer.tell(Evaluations(fitness, hall_of_fame, measures, seeds, generation=index))
    return genomes


def record(section: dict[str, Any]) -> dict[str, np.ndarray]:
    """The fixture arrays of one case, from an uninterrupted run of the current code."""
    optimizer = make(section)
    hall_of_fame = HallOfFame(HALL_OF_FAME, GENOME_SIZE)
    for g in range(BEFORE):
        generation(optimizer, hall_of_fame, g)
    optimizer.ask()
    arrays: dict[str, np.ndarray] = {}
    arrays.update({f"state/{k}": np.asarray(v) for k, v in optimizer.state().items()})
    arrays.update({f"hall_of_fame/{k}": np.asarray(v) for k, v in hall_of_fame.state().items()})
    for g in range(BEFORE, BEFORE + AFTER):
        arrays[f"asked/{g}"] = generation(optimizer, hall_of_fame, g)
    center = optimizer.center()
    arrays["center"] = np.zeros(0) if center is None else center
    arrays["best_fitness"] = np.asarray(hall_of_fame.best_fitness)
    return arrays


def main() -> None:
    """Write the fixture of every case that has none yet."""
    FOLDER.mkdir(exist_ok=True)
    for name, section in all_cases().items():
        path = FOLDER / f"{name}.npz"
        if path.exists():
            print(f"kept {path.name}")
            continue
        np.savez_compressed(path, **record(section))
        print(f"wrote {path.name}")


if __name__ == "__main__":
    main()
