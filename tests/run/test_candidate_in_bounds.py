"""With ``optimizer.bounds``, the genome a run stands behind lies in the box: the genome
validated, saved in ``candidate.npz``, replayed and exported is the method's center brought in
as an asked genome is (clipped for clip and resample, mirrored for reflect), while the method's
own center, which its checkpoints hold, moves unbounded. Real CartPole runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from helpers import require, small_config
from onnx import numpy_helper

from neuro_evolution import train
from neuro_evolution.config.tree import parse_config
from neuro_evolution.evaluation.episodes.runner import EvaluationContext, EvaluationResult
from neuro_evolution.export import export_run, replay_exported
from neuro_evolution.optimizers.bounds import reflect
from neuro_evolution.run.directory import load_candidate
from neuro_evolution.run.experiment import Experiment, run_generation

# (optimizer, box): the user's report (CMA-ES clip [-1, 1], xNES reflect) and SNES resample;
# sigma large enough that every center leaves its box within a few generations.
CASES = {
    "CMA_ES clip": ({"type": "CMA_ES", "sigma": 1.0}, (-1.0, 1.0, "clip")),
    "XNES reflect": ({"type": "XNES", "stdev_init": 2.0}, (-1.0, 1.0, "reflect")),
    "SNES resample": ({"type": "SNES", "stdev_init": 1.0}, (-1.0, 1.0, "resample")),
}


def bounded_config(optimizer: dict[str, Any], box: tuple[float, float, str], **changes: Any) -> Any:
    low, high, method = box
    settings: dict[str, Any] = {
        "number_generations": 6,
        "optimizer": {
            **optimizer,
            "population_size": 8,
            "bounds": {"low": low, "high": high, "method": method},
        },
        "brain": {"type": "CTRNN", "number_neurons": 4},
        "validation": {"every_generations": 1, "episodes": 2},
    }
    return small_config(**{**settings, **changes})


def in_box(genomes: np.ndarray, low: float, high: float) -> bool:
    return bool((np.asarray(genomes) >= low).all() and (np.asarray(genomes) <= high).all())


@pytest.mark.parametrize("case", list(CASES))
def test_validated_and_saved_genome_is_the_center_brought_into_the_box(
    case: str, tmp_path: Path
) -> None:
    """Every generation: each validation genome and the saved candidate equal the center
    repaired by the bounds method, inside the box; the center itself leaves the box (what
    the method learns from is unchanged)."""
    optimizer, box = CASES[case]
    low, high, method = box
    experiment = Experiment(parse_config(bounded_config(optimizer, box)), run_dir=tmp_path / "r")
    validated: list[np.ndarray] = []

    def evaluate(
        genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext
    ) -> list[EvaluationResult]:
        if context.validation:
            validated.append(genomes.copy())
        return experiment.handler.batch_evaluate(genomes, seeds, context)

    left_the_box = False
    try:
        experiment.start()
        for generation in range(6):
            run_generation(experiment.generation_work(), evaluate)
            center = experiment.optimizer.center()
            assert center is not None
            left_the_box |= not in_box(center, low, high)
            lows, highs = np.full_like(center, low), np.full_like(center, high)
            expected = (
                reflect(center, lows, highs) if method == "reflect" else np.clip(center, low, high)
            )
            candidate, _ = load_candidate(tmp_path / "r" / "candidate.npz")
            assert candidate.genome.tobytes() == expected.tobytes(), generation
            assert in_box(candidate.genome, low, high), generation
            assert len(validated) == generation + 1
            assert (validated[-1] == expected).all(), generation
    finally:
        experiment.close()
    assert left_the_box, "the center never left the box: the test would hold without the rule"


def test_the_export_of_a_clipped_run_lies_in_the_box(tmp_path: Path) -> None:
    """CMA-ES with clip [-1, 1] and a feed-forward brain, whose exported weights and biases
    are the genome's genes: every float in the ONNX model and in the numpy file lies in
    [-1, 1], and validation replayed through the ONNX model gives the run's recorded returns,
    while the checkpointed center has genes outside."""
    require("export")
    optimizer, box = CASES["CMA_ES clip"]
    data = bounded_config(
        optimizer,
        box,
        number_generations=4,
        brain={"type": "FFNN", "hidden_layers": [4]},
        validation={"every_generations": 2, "episodes": 3},
        checkpoint={"every_generations": 1},
    )
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    run_dir = tmp_path / "run"
    assert train.main([str(path), "--out", str(run_dir), "--quiet"]) == 0
    candidate, _ = load_candidate(run_dir / "candidate.npz")
    last = sorted((run_dir / "checkpoints").glob("*.npz"))[-1]
    with np.load(last, allow_pickle=False) as checkpoint:
        center = checkpoint["optimizer/mean"]
    assert not in_box(center, -1.0, 1.0)
    assert candidate.genome.tobytes() == np.clip(center, -1.0, 1.0).tobytes()
    export_run(run_dir, "onnx", tmp_path / "policy.onnx")
    weights = [
        numpy_helper.to_array(tensor)
        for tensor in onnx.load(str(tmp_path / "policy.onnx")).graph.initializer
    ]
    floats = np.concatenate([w.ravel() for w in weights if w.dtype.kind == "f"])
    assert floats.size == candidate.genome.size and in_box(floats, -1.0, 1.0)
    [_, npz] = export_run(run_dir, "numpy", tmp_path / "policy.py")
    with np.load(npz, allow_pickle=False) as arrays:
        numpy_floats = [arrays[k] for k in arrays.files if arrays[k].dtype.kind == "f"]
    assert numpy_floats and all(in_box(a, -1.0, 1.0) for a in numpy_floats)
    through, own = replay_exported(run_dir, tmp_path / "policy.onnx")
    assert candidate.score is not None
    assert through == own == list(candidate.score.returns)
