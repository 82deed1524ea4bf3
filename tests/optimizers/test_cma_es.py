"""CMA_ES and SEP_CMA_ES against pycma, exact resume around the lazy eigendecomposition, the
memory refusal at start-up and the tell-time warning."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import require, small_config

from neuro_evolution import train
from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.optimizers import OPTIMIZERS, Optimizer, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.optimizers.cma_common import CmaParameters
from neuro_evolution.optimizers.cost import (
    check_memory,
    default_config,
    optimizer_cost_warning,
    state_bytes,
)
from neuro_evolution.support.atomic import atomic_write_bytes, load_npz, npz_bytes

Objective = Callable[[np.ndarray], np.ndarray]


def sphere(x: np.ndarray) -> np.ndarray:
    return np.sum(x**2, axis=-1)


def rosenbrock(x: np.ndarray) -> np.ndarray:
    return np.sum(100 * (x[..., 1:] - x[..., :-1] ** 2) ** 2 + (1 - x[..., :-1]) ** 2, axis=-1)


def rastrigin(x: np.ndarray) -> np.ndarray:
    return 10 * x.shape[-1] + np.sum(x**2 - 10 * np.cos(2 * np.pi * x), axis=-1)


def make(section: dict[str, Any], genome_size: int, seed: int = 3) -> Optimizer:
    return make_optimizer(OPTIMIZERS.parse_config(dict(section), "optimizer"), genome_size, seed)


def ours(name: str, f: Objective, n: int, seed: int, x0: float, sigma: float, target: float,
         budget: int, pop: int | None) -> tuple[int, float]:  # fmt: skip
    """(generations until the best value < target, best value) for our optimizer (minimising f)."""
    section = {"type": name, "sigma": sigma, "initial_centroid": x0, "population_size": pop}
    optimizer, best = make(section, n, seed), np.inf
    hall_of_fame = HallOfFame(1, n)
    for generation in range(budget):
        values = f(optimizer.ask())
        best = min(best, float(values.min()))
        optimizer.tell(Evaluations(-values, hall_of_fame))
        if best < target:
            return generation + 1, best
    return budget, best


def reference(name: str, f: Objective, n: int, seed: int, x0: float, sigma: float,
              target: float, budget: int, pop: int | None) -> tuple[int, float]:  # fmt: skip
    """The same for pycma: full covariance, or CMA_diagonal for SEP_CMA_ES; no active CMA
    (ours has non-negative weights) and no termination criteria."""
    import cma  # the test-only extra: its callers require("cma") first

    options = {
        "seed": seed + 1,
        "verbose": -9,
        "CMA_active": False,
        "CMA_diagonal": name == "SEP_CMA_ES",
        "tolfun": 0,
        "tolx": 0,
        "tolfunhist": 0,
        "tolstagnation": 1e9,
        "tolflatfitness": 1e9,
    }
    if pop is not None:
        options["popsize"] = pop
    best = np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        es = cma.CMAEvolutionStrategy(n * [x0], sigma, options)
        for generation in range(budget):
            samples = np.array(es.ask())
            values = f(samples)
            best = min(best, float(values.min()))
            es.tell(list(samples), list(values))
            if best < target:
                return generation + 1, best
    return budget, best


# (function, genome size, x0, sigma, target, budget, population) per case
CONVERGENCE = {
    "sphere": (sphere, 10, 3.0, 1.0, 1e-8, 400, None),
    "rosenbrock": (rosenbrock, 8, 0.0, 0.5, 1e-8, 1500, None),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["CMA_ES", "SEP_CMA_ES"])
@pytest.mark.parametrize("case", CONVERGENCE)
def test_generations_to_target_match_pycma_within_a_third(name: str, case: str) -> None:
    """Median generations to reach the target over 5 seeds is within 1/3 of pycma's (full
    covariance for CMA_ES, CMA_diagonal for SEP_CMA_ES), and every seed reaches it."""
    require("cma")
    f, n, x0, sigma, target, budget, pop = CONVERGENCE[case]
    if name == "SEP_CMA_ES" and case == "rosenbrock":
        target, budget = 1e-1, 3000  # a diagonal learns the curved valley slowly (pycma too)
    ours_runs = [ours(name, f, n, s, x0, sigma, target, budget, pop) for s in range(5)]
    ref_runs = [reference(name, f, n, s, x0, sigma, target, budget, pop) for s in range(5)]
    assert all(best < target for _, best in ours_runs), ours_runs
    ours_median = np.median([g for g, _ in ours_runs])
    ref_median = np.median([g for g, _ in ref_runs])
    assert ref_median / 1.34 <= ours_median <= ref_median * 1.34, (ours_runs, ref_runs)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["CMA_ES", "SEP_CMA_ES"])
def test_rastrigin_final_value_matches_pycma_within_one_local_minimum(name: str) -> None:
    """5-D Rastrigin, population 40, 300 generations, 8 seeds: our median best value is at most
    1.5 above pycma's (local minima are ~1 apart) and far below the start (~94)."""
    require("cma")
    runs = [ours(name, rastrigin, 5, s, 3.0, 2.0, 1e-8, 300, 40)[1] for s in range(8)]
    ref = [reference(name, rastrigin, 5, s, 3.0, 2.0, 1e-8, 300, 40)[1] for s in range(8)]
    assert np.median(runs) <= np.median(ref) + 1.5, (runs, ref)
    assert np.median(runs) < 5, runs


@pytest.mark.parametrize("n", [2, 9, 50, 3000])
def test_strategy_parameters_equal_purecma_defaults(n: int) -> None:
    """Population, mu, weights, mueff, cc, cs, c1 and cmu equal those of Hansen's purecma (the
    tutorial's Table 1 with non-negative weights) to the last bits."""
    require("cma")
    from cma.more_algorithms import purecma

    ref = purecma.CMAESParameters(n)
    ours_ = CmaParameters.for_genome(default_config("CMA_ES"), n)
    assert (ours_.population_size, ours_.mu) == (ref.lam, ref.mu)
    np.testing.assert_allclose(ours_.weights, ref.weights[: ref.mu], rtol=1e-14)
    for key in ("mueff", "cc", "cs", "c1", "cmu"):
        assert getattr(ours_, key) == pytest.approx(getattr(ref, key), rel=1e-13), key


def test_sep_learning_rates_are_the_full_ones_times_n_plus_2_over_3() -> None:
    """Ros & Hansen 2008: sep-CMA-ES scales c1 and cmu by (n + 2)/3, nothing else."""
    full = CmaParameters.for_genome(default_config("CMA_ES"), 40)
    sep = CmaParameters.for_genome(default_config("SEP_CMA_ES"), 40, diagonal=True)
    assert sep.c1 == pytest.approx(full.c1 * 42 / 3)
    assert sep.cmu == pytest.approx(full.cmu * 42 / 3)
    assert (sep.cc, sep.cs, sep.damps) == (full.cc, full.cs, full.damps)


def reference_sep_cma_tell(
    state: dict[str, Any], genomes: np.ndarray, fitness: np.ndarray, p: CmaParameters
) -> dict[str, Any]:
    """One sep-CMA-ES update (Ros & Hansen 2008: Hansen's tutorial Eq. 41-47 with C diagonal),
    gene by gene in plain Python, from the asked genomes (maximising ``fitness``)."""
    m, sigma, ps, pc, C, g = (state[k] for k in ("mean", "sigma", "ps", "pc", "C", "generation"))
    n = len(m)
    order = sorted(range(len(fitness)), key=lambda i: -fitness[i])[: p.mu]
    y = [[(genomes[i][j] - m[j]) / sigma for j in range(n)] for i in order]
    y_w = [sum(p.weights[k] * y[k][j] for k in range(p.mu)) for j in range(n)]
    mean = [m[j] + sigma * y_w[j] for j in range(n)]
    a = math.sqrt(p.cs * (2 - p.cs) * p.mueff)
    ps = [(1 - p.cs) * ps[j] + a * y_w[j] / math.sqrt(C[j]) for j in range(n)]
    ps_norm = math.sqrt(sum(v * v for v in ps))
    hsig = ps_norm / math.sqrt(1 - (1 - p.cs) ** (2 * (g + 1))) < (1.4 + 2 / (n + 1)) * p.chi_n
    b = math.sqrt(p.cc * (2 - p.cc) * p.mueff)
    pc = [(1 - p.cc) * pc[j] + (b * y_w[j] if hsig else 0.0) for j in range(n)]
    delta = 0.0 if hsig else p.cc * (2 - p.cc)
    C = [
        (1 + p.c1 * delta - p.c1 - p.cmu) * C[j]
        + p.c1 * pc[j] ** 2
        + p.cmu * sum(p.weights[k] * y[k][j] ** 2 for k in range(p.mu))
        for j in range(n)
    ]
    sigma *= math.exp(p.cs / p.damps * (ps_norm / p.chi_n - 1))
    return {"mean": mean, "sigma": sigma, "ps": ps, "pc": pc, "C": C, "generation": g + 1}


def test_sep_cma_es_tell_is_the_papers_update() -> None:
    """Three tells of SEP_CMA_ES equal the reference update: mean, both evolution paths, the
    diagonal of C and sigma (from the second tell on C is no longer I, so C^-1/2 shows)."""
    section = {"type": "SEP_CMA_ES", "population_size": 8, "sigma": 0.5, "initial_centroid": 0.3}
    optimizer: Any = make_optimizer(OPTIMIZERS.parse_config(section, "optimizer"), 5, 11)
    p = optimizer.params
    state: dict[str, Any] = {
        "mean": [0.3] * 5,
        "sigma": 0.5,
        "ps": [0.0] * 5,
        "pc": [0.0] * 5,
        "C": [1.0] * 5,
        "generation": 0,
    }
    for _ in range(3):
        genomes = optimizer.ask()
        fitness = -rosenbrock(genomes)
        state = reference_sep_cma_tell(state, genomes.tolist(), fitness.tolist(), p)
        optimizer.tell(Evaluations(fitness, HallOfFame(1, 5)))
        for name, attribute in (("mean", "mean"), ("ps", "ps"), ("pc", "pc"), ("C", "C")):
            np.testing.assert_allclose(getattr(optimizer, attribute), state[name], rtol=1e-12)
        assert optimizer.sigma == pytest.approx(state["sigma"], rel=1e-12)
    assert not np.allclose(state["C"], 1.0) and np.ptp(state["C"]) > 0  # C was really adapted


def npz_round_trip(state: dict[str, Any]) -> Any:
    buffer = io.BytesIO()
    np.savez(buffer, **state)
    buffer.seek(0)
    return np.load(buffer, allow_pickle=False)


def one_generation(optimizer: Optimizer, hall_of_fame: HallOfFame) -> np.ndarray:
    genomes = optimizer.ask()
    optimizer.tell(Evaluations(-rosenbrock(genomes), hall_of_fame))
    return genomes


# 200 genes, population 4: the eigendecomposition runs every 8 generations.
LAZY = {"type": "CMA_ES", "population_size": 4, "sigma": 0.3}


@pytest.mark.parametrize(("snapshot_at", "decomposes_next"), [(15, True), (11, False)])
def test_resume_is_bit_identical_whether_or_not_the_next_tell_decomposes(
    snapshot_at: int, decomposes_next: bool
) -> None:
    """A state saved after ``snapshot_at`` generations (npz, no pickle) continues with exactly
    the genomes and mean of the uninterrupted run, across a generation that recomputes B, D
    (the schedule is part of the state: the last one was at generation 8) and across one that
    does not."""
    n, total = 200, 20
    reference_run = make(LAZY, n)
    assert reference_run.eigen_gap == 8
    hall_of_fame = HallOfFame(1, n)
    expected = [one_generation(reference_run, hall_of_fame) for _ in range(total)]

    first = make(LAZY, n)
    hall_of_fame = HallOfFame(1, n)
    for _ in range(snapshot_at):
        one_generation(first, hall_of_fame)
    resumed = make(LAZY, n, seed=99)  # another seed: everything must come from the state
    resumed.load_state(npz_round_trip(first.state()))
    before = resumed.eigen_generation
    one_generation(resumed, hall_of_fame)
    assert (resumed.eigen_generation != before) == decomposes_next
    for generation in range(snapshot_at + 1, total):
        genomes = one_generation(resumed, hall_of_fame)
        assert genomes.tobytes() == expected[generation].tobytes(), generation
    assert resumed.center().tobytes() == reference_run.center().tobytes()


def test_eigendecomposition_is_lazy_and_b_d_follow_c_when_recomputed() -> None:
    """Between decompositions B and D stay as they were; at one, B D^2 B^T equals C."""
    optimizer = make(LAZY, 200)
    hall_of_fame = HallOfFame(1, 200)
    for _ in range(7):
        one_generation(optimizer, hall_of_fame)
    assert optimizer.eigen_generation == 0 and np.array_equal(optimizer.B, np.eye(200))
    one_generation(optimizer, hall_of_fame)
    assert optimizer.eigen_generation == 8
    lower = np.tril(optimizer.C)
    C = lower + np.tril(lower, -1).T
    np.testing.assert_allclose((optimizer.B * optimizer.D**2) @ optimizer.B.T, C, atol=1e-12)


@pytest.mark.parametrize("name", ["CMA_ES", "SEP_CMA_ES"])
def test_odd_sizes_ask_the_right_shape_and_state_is_plain_arrays_and_scalars(name: str) -> None:
    """9 genes and population 9 (mu 4): genomes are (9, 9), the mean moves, state() holds only
    numpy arrays (no object dtype) and Python scalars."""
    optimizer = make({"type": name, "population_size": 9}, 9)
    hall_of_fame = HallOfFame(1, 9)
    for _ in range(3):
        assert one_generation(optimizer, hall_of_fame).shape == (9, 9)
    assert optimizer.params.mu == 4 and not np.array_equal(optimizer.center(), np.zeros(9))
    optimizer.ask()
    for key, value in optimizer.state().items():
        assert isinstance(value, np.ndarray | int | float | str | bool), key
        if isinstance(value, np.ndarray):
            assert value.dtype != object, key


# --- memory ----------------------------------------------------------------------------------
def test_memory_check_refuses_full_cma_in_one_line_naming_what_fits() -> None:
    """CMA_ES at 162,800 genes with 16 GiB available: one line on optimizer.type with the bytes
    it needs and the O(n) optimizers; a genome that fits passes."""
    config = default_config("CMA_ES")
    with pytest.raises(ConfigError) as error:
        check_memory(config, 162_800, available=16 * 2**30)
    message = str(error.value)
    assert message.startswith("optimizer.type: CMA_ES needs 988 GiB of memory"), message
    assert "16 GiB available" in message and "SEP_CMA_ES" in message and "MU_ES" in message
    fits = message.split("use one that fits: ")[1].split(", ")
    assert "CMA_ES" not in fits and "\n" not in message
    assert {"MU_ES", "SEP_CMA_ES", "PGPE", "OPENAI_ES", "SNES"} <= set(fits)
    check_memory(config, 3_000, available=16 * 2**30)
    check_memory(default_config("SEP_CMA_ES"), 162_800, available=16 * 2**30)


DESCRIPTORS = [{"name": "x", "source": "observation", "low": 0.0, "high": 1.0, "bins": 10}]


def test_memory_of_every_optimizer_but_full_cma_grows_at_most_linearly() -> None:
    """state_bytes from 100k to 1M genes grows at most ~10x (population grows with ln n) for
    every registered optimizer except CMA_ES, MA_ES and XNES, whose n x n matrices grow 100x, and
    DE, whose default population is 10 n (Storn & Price), so its population holds 10 n^2 genes."""
    for name in sorted(OPTIMIZERS.builtins):  # not a user optimizer another test registered
        if name in ("MAP_ELITES", "CMA_ME"):  # QD: no default descriptors
            config = OPTIMIZERS.parse_config({"type": name, "descriptors": DESCRIPTORS}, "o")
        else:
            config = default_config(name)
        ratio = state_bytes(config, 1_000_000) / state_bytes(config, 100_000)
        if name in ("CMA_ES", "CMA_ME", "MA_ES", "XNES", "DE"):  # CMA_ME: full CMA-ES emitters
            assert ratio > 90, ratio
        else:
            assert ratio <= 12, (name, ratio)


@pytest.mark.parametrize("name", ["MU_ES", "SEP_CMA_ES", "CMA_ES"])
def test_state_bytes_bounds_the_measured_peak(name: str) -> None:
    """The declared state_bytes is at least the traced peak of making the optimizer and running
    two generations at 1,500 genes (numpy allocations; LAPACK's workspace is not traced), and
    for O(n) optimizers at most 6 times it."""
    import tracemalloc

    config = default_config(name)
    tracemalloc.start()
    try:
        optimizer = make_optimizer(config, 1_500, 0)
        hall_of_fame = HallOfFame(1, 1_500)
        for _ in range(2):
            genomes = optimizer.ask()
            # an objective allocating nothing big
            optimizer.tell(Evaluations(-genomes[:, 0], hall_of_fame))
            del genomes
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    declared = state_bytes(config, 1_500)
    assert peak <= declared, (peak, declared)
    if name != "CMA_ES":
        assert declared <= 6 * peak, (peak, declared)


def test_train_refuses_an_oversized_cma_es_config_before_writing_anything(tmp_path: Path) -> None:
    """A 400-neuron CTRNN with CMA_ES, run as a user would: exit 2, exactly one stderr line
    naming optimizer.type, the memory and the optimizers that fit; no traceback, no run dir."""
    config = small_config(
        brain={"type": "CTRNN", "number_neurons": 400},
        optimizer={"type": "CMA_ES"},
    )
    path = tmp_path / "big.json"
    path.write_text(json.dumps(config))
    process = subprocess.run(
        [sys.executable, "-m", "neuro_evolution.train", str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert process.returncode == 2, process.stderr
    lines = process.stderr.splitlines()
    assert len(lines) == 1, process.stderr
    assert lines[0].startswith("neuro_evolution.train: error: optimizer.type: CMA_ES needs ")
    assert "GiB of memory" in lines[0] and "SEP_CMA_ES" in lines[0]
    assert not (tmp_path / "runs").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.json"]


# --- tell-time warning -----------------------------------------------------------------------
def test_cost_warning_only_when_tell_exceeds_a_tenth_of_the_evaluation() -> None:
    """tell 2 s vs evaluation 5 s: one line naming the linear optimizers (not CMA_ES itself);
    tell 0.4 s vs 5 s: no warning; a tell under 50 ms: no warning."""
    warning = optimizer_cost_warning("CMA_ES", 3_150, 2.0, 5.0)
    assert warning is not None and "\n" not in warning
    assert warning.startswith("optimizer.type: CMA_ES's tell took 2000 ms, 40%")
    linear = warning.split("grows linearly with the genome: ")[1].split(", ")
    assert {"SEP_CMA_ES", "MU_ES", "PGPE"} <= set(linear) and "CMA_ES" not in linear
    assert optimizer_cost_warning("CMA_ES", 3_150, 0.4, 5.0) is None
    # A tell under 50 ms costs nobody anything, whatever its share of a tiny evaluation.
    assert optimizer_cost_warning("MU_ES", 30, 0.01, 0.001) is None
    assert optimizer_cost_warning("CMA_ES", 3_150, 0.06, 0.001) is not None


# --- checkpoints of the DEAP-based CMA_ES ----------------------------------------------------
def test_resume_refuses_a_checkpoint_of_the_old_format_in_one_line(tmp_path: Path, capsys) -> None:
    """A checkpoint written with format_version 1 (DEAP's CMA_ES) is refused on resume: exit 2,
    one line saying what changed and that the run must be started again (no fallback)."""
    config = small_config(optimizer={"type": "CMA_ES", "population_size": 6}, number_generations=2)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config))
    run_dir = tmp_path / "run"
    assert train.main([str(path), "--out", str(run_dir), "--quiet", "--generations", "1"]) == 0
    status_path = run_dir / "training_status.json"
    status = json.loads(status_path.read_text())
    checkpoint = run_dir / status["latest_checkpoint"]
    arrays = load_npz(checkpoint)
    meta = json.loads(str(arrays["meta"]))
    meta["format_version"] = 1
    arrays["meta"] = np.array(json.dumps(meta))
    data = npz_bytes(arrays)
    atomic_write_bytes(checkpoint, data)
    import hashlib

    for entry in status["checkpoints"]:
        entry["sha256"] = hashlib.sha256(data).hexdigest()
    status_path.write_text(json.dumps(status))
    capsys.readouterr()
    assert train.main(["--resume", str(run_dir), "--quiet", "--generations", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "checkpoint format_version 1 is older" in err
    assert "CMA_ES became the project's own CMA-ES" in err and "start it again" in err


def test_a_run_measures_its_first_generation_and_warns_once(monkeypatch) -> None:
    """The training loop hands the first generation's measured tell and evaluation seconds to
    optimizer_cost_warning once per session and emits its line as one PerformanceWarning."""
    import warnings

    import neuro_evolution.run.experiment as experiment_module
    from neuro_evolution.config.tree import parse_config
    from neuro_evolution.evaluation.pools.sequential import SequentialHandler
    from neuro_evolution.support.errors import PerformanceWarning

    calls = []

    def fake_warning(name, genome_size, tell_seconds, evaluation_seconds):
        calls.append((name, genome_size, tell_seconds, evaluation_seconds))
        return "optimizer.type: slow"

    monkeypatch.setattr(experiment_module, "optimizer_cost_warning", fake_warning)
    config = {
        "environment": {"id": "CartPole-v1"},
        "number_generations": 3,
        "optimizer": {"type": "CMA_ES", "population_size": 4},
        "brain": {"type": "FFNN", "hidden_layers": [3]},
        "validation": None,
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = experiment_module.Experiment(parse_config(config), handler=SequentialHandler())
        run.run()
    assert len(calls) == 1
    name, genome_size, tell_seconds, evaluation_seconds = calls[0]
    assert (name, genome_size) == ("CMA_ES", run.template.genome_size)
    assert tell_seconds > 0 and evaluation_seconds > 0
    assert [str(w.message) for w in caught if w.category is PerformanceWarning] == [
        "optimizer.type: slow"
    ]


# --- restarts -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["CMA_ES", "SEP_CMA_ES"])
def test_restart_every_generations_starts_a_fresh_search_and_resumes_exactly(name: str) -> None:
    """With ``restart_every_generations`` 5, generation 5 asks from the initial mean, sigma and
    C = I with new draws (the generator runs on), and a state saved in the second search
    continues bit-identically."""
    section = {"type": name, "population_size": 6, "sigma": 0.4, "initial_centroid": 0.2,
               "restart_every_generations": 5}  # fmt: skip
    n, hall_of_fame = 12, HallOfFame(1, 12)
    optimizer = make(section, n)
    genomes = [one_generation(optimizer, hall_of_fame) for _ in range(5)]
    assert optimizer.restarts == 1 and optimizer.restart_generation == 5
    assert optimizer.center().tobytes() == np.full(n, 0.2).tobytes()
    assert optimizer.sigma == 0.4 and not optimizer.ps.any() and not optimizer.pc.any()
    first_of_second = optimizer.ask()
    assert not np.array_equal(first_of_second, genomes[0])  # new draws, same distribution
    assert np.allclose(first_of_second.mean(axis=0), 0.2, atol=0.6)
    one_generation(optimizer, hall_of_fame)
    resumed = make(section, n, seed=99)
    resumed.load_state(npz_round_trip(optimizer.state()))
    for _ in range(6):  # through the second restart at generation 10
        assert (
            one_generation(resumed, hall_of_fame).tobytes()
            == one_generation(optimizer, hall_of_fame).tobytes()
        )
    assert resumed.restarts == optimizer.restarts == 2


def test_a_state_saved_before_restarts_existed_loads_as_no_restart_yet() -> None:
    optimizer = make({"type": "CMA_ES", "population_size": 6}, 8)
    one_generation(optimizer, HallOfFame(1, 8))
    state = {k: v for k, v in optimizer.state().items() if not k.startswith("restart")}
    resumed = make({"type": "CMA_ES", "population_size": 6}, 8, seed=5)
    resumed.load_state(state)
    assert resumed.restarts == 0 and resumed.restart_generation == 0
    assert resumed.ask().tobytes() == optimizer.ask().tobytes()


@pytest.mark.parametrize("name", ["CMA_ES", "SEP_CMA_ES"])
def test_a_restarted_search_runs_as_a_new_optimizer_from_the_same_generator(name: str) -> None:
    """After a restart the search is a fresh run: the same genomes as an optimizer without
    restarts, at generation 0, holding the restarted one's generator. A linear objective keeps
    the evolution path long, so h_sigma's warm-up (counted from the restart) decides the
    covariance update."""
    section = {"type": name, "population_size": 40, "sigma": 0.4, "restart_every_generations": 6}
    n, hall_of_fame = 50, HallOfFame(1, 50)

    def linear_generation(optimizer: Optimizer) -> np.ndarray:
        genomes = optimizer.ask()
        optimizer.tell(Evaluations(genomes.sum(axis=1), hall_of_fame))
        return genomes

    restarted = make(section, n, seed=4)  # a seed whose warm-up decides h_sigma on both
    for _ in range(6):
        linear_generation(restarted)
    state = dict(restarted.state())
    state.update(generation=0, restarts=0, restart_generation=0)
    if "eigen_generation" in state:
        state["eigen_generation"] = 0
    fresh = make({**section, "restart_every_generations": None}, n, seed=99)
    fresh.load_state(state)
    for _ in range(5):
        assert linear_generation(restarted).tobytes() == linear_generation(fresh).tobytes()
