"""NSGA2 runs with objectives end to end: objectives config errors are one line each, the run is
identical whichever handler ran it and after a SIGKILL + resume, the run directory holds
pareto.npz (no pickle) and pareto.png, log.csv's hypervolume is the saved front's, replaying a
front member reproduces its objectives, and a run without objectives stays a plain GA."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import (
    NSGA2_OBJECTIVES,
    assert_identical,
    assert_npz_identical,
    kill_then_resume,
    nsga2_config,
    require,
    run_straight,
    small_config,
)

from neuro_evolution import replay
from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.hall_of_fame import HallOfFame
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
from neuro_evolution.evaluation.pools.base import EvaluationHandler
from neuro_evolution.evaluation.pools.dask_handler import DaskHandler
from neuro_evolution.evaluation.pools.process_pool import MultiprocessingHandler
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.measures.base import TrajectorySummary
from neuro_evolution.measures.functions import lunar_lander_fuel, lunar_lander_powers
from neuro_evolution.moo.files import PARETO_FILE, PARETO_PLOT_FILE
from neuro_evolution.moo.nsga2 import NSGA2
from neuro_evolution.moo.pareto import hypervolume, to_maximization
from neuro_evolution.optimizers import OPTIMIZERS, make_optimizer
from neuro_evolution.optimizers.base import Evaluations
from neuro_evolution.run.directory import read_log
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.run.replay_members import replay_member

SENSES = [objective["sense"] for objective in NSGA2_OBJECTIVES]


def with_optimizer(**changes: Any) -> dict[str, Any]:
    """The test config with optimizer options replaced."""
    config = nsga2_config()
    config["optimizer"].update(changes)
    return config


def one_objective(**changes: Any) -> list[dict[str, Any]]:
    """The objectives with the second one's options replaced."""
    return [NSGA2_OBJECTIVES[0], {**NSGA2_OBJECTIVES[1], **changes}]


# --- config errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"objectives": one_objective(sense="minimise")},
            "optimizer.objectives[1].sense: must be one of 'maximize', 'minimize', got "
            "'minimise'. Did you mean `minimize`?",
        ),
        (
            {"reference_point": None},
            "optimizer.reference_point: objectives need a reference point in raw units, one "
            "value per objective (e.g. [0.0, 0.0])",
        ),
        (
            {"reference_point": [0.0]},
            "optimizer.reference_point: needs 2 values (one per objective), got 1",
        ),
        (
            {"candidate_objective": 2},
            "optimizer.candidate_objective: must name one of the 2 objectives (0..1), got 2",
        ),
        (
            {"objectives": [], "reference_point": [0.0]},
            "optimizer.reference_point: is only used with objectives: set it to null",
        ),
        (
            {"objectives": one_objective(name="return")},
            "optimizer.objectives[1].name: 'return' is named twice",
        ),
        (
            {"objectives": one_objective(source="info")},
            "optimizer.objectives[1].key: source info needs the info key to read",
        ),
        (
            {"objectives": one_objective(index=-1)},
            "optimizer.objectives[1].index: must be >= 0, got -1",
        ),
    ],
)
def test_objective_config_errors_are_one_line(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(with_optimizer(**changes))
    text = str(error.value)
    assert message in text and "\n" not in text, text


@pytest.mark.parametrize(
    ("objective", "message"),
    [
        (
            {"source": "reward", "index": 1, "reduce": "sum"},
            "optimizer.objectives[1].index: the env's reward has 1 value per step (0..0), got 1",
        ),
        (
            {"source": "info", "key": "reward_ctrl", "reduce": "sum"},
            "optimizer.objectives[1].key: 'reward_ctrl' is not in a step's info dict (keys: none)",
        ),
        (
            {"source": "action", "index": 1},
            "optimizer.objectives[1].index: action has 1 elements (0..0), got 1",
        ),
    ],
)
def test_objectives_the_env_cannot_give_are_refused_at_start_up(
    objective: dict[str, Any], message: str
) -> None:
    """Checked against the env's spaces and one step before any worker starts."""
    config = parse_config(with_optimizer(objectives=one_objective(**objective)))
    with pytest.raises(ConfigError) as error:
        Experiment(config)
    text = str(error.value)
    assert message in text and "\n" not in text, text


# --- the optimizer told measures ----------------------------------------------------------


def make(section: dict[str, Any], genome_size: int = 4, seed: int = 3) -> NSGA2:
    config = OPTIMIZERS.parse_config({"type": "NSGA2", **section}, "optimizer")
    optimizer = make_optimizer(config, genome_size, seed)
    assert isinstance(optimizer, NSGA2)
    return optimizer


def test_measures_are_told_as_maximization_objectives_minimized_ones_negated() -> None:
    """A tell with raw measures selects exactly as a tell of the maximization matrix to an
    NSGA2 without objectives (the minimized column negated), generation after generation."""
    section = {
        "population_size": 6,
        "objectives": NSGA2_OBJECTIVES,
        "reference_point": [0.0, 1.0],
    }
    measured, plain = make(section), make({"population_size": 6})
    rng = np.random.default_rng(0)
    for generation in range(4):
        genomes = measured.ask()
        assert genomes.tobytes() == plain.ask().tobytes()
        raw = np.round(rng.normal(size=(len(genomes), 2)), 1)
        seeds = np.arange(len(genomes)) + 100 * generation
        fitness = rng.normal(size=len(genomes))  # not what NSGA2 selects on
        measured.tell(Evaluations(fitness, HallOfFame(1, 4), raw, seeds, generation=generation))
        maximized = to_maximization(raw, SENSES)
        plain.tell(Evaluations(fitness, measures=maximized))
    for ours, theirs in zip(measured.front(), plain.front()):
        assert ours.tobytes() == theirs.tobytes()
    _, front = measured.front()
    reference = to_maximization(np.array([[0.0, 1.0]]), SENSES)[0]
    assert measured.log_metrics() == {"hypervolume": hypervolume(front, reference)}
    best = measured.candidate(0)
    assert best is not None and measured.center() is not None
    assert measured.center().tobytes() == best.tobytes()  # type: ignore[union-attr]


# --- runs ---------------------------------------------------------------------------------


def run_on(handler: EvaluationHandler, **changes: object) -> Experiment:
    experiment = Experiment(parse_config(nsga2_config(**changes)), handler=handler)
    experiment.run()
    handler.close()
    return experiment


def test_an_objectives_run_is_identical_on_sequential_mp_vectorized_and_dask() -> None:
    """Three generations on the sequential handler, an mp pool of 2 (forkserver; and with
    lockstep workers), the vectorized handler and a Dask LocalCluster of 2 give the same log
    (hypervolume included, wall time aside) and the same optimizer state to the bit."""
    handlers: dict[str, EvaluationHandler] = {
        "sequential": SequentialHandler(),
        "mp": MultiprocessingHandler(workers=2, start_method="forkserver"),
        "mp-lockstep": MultiprocessingHandler(workers=2, vectorize=True),
        "lockstep": VectorizedHandler(),
        "dask": DaskHandler(workers=2),
    }
    runs = {name: run_on(handler) for name, handler in handlers.items()}
    reference = runs["sequential"]
    _, front = reference.optimizer.front()  # type: ignore[attr-defined]
    assert len(np.unique(front, axis=0)) > 1  # a front with a trade-off, not one point
    expected = reference.optimizer.state()
    for name, run in runs.items():
        assert [r.to_dict() | {"wall_time": 0} for r in run.log] == [
            r.to_dict() | {"wall_time": 0} for r in reference.log
        ], name
        state = run.optimizer.state()
        assert state.keys() == expected.keys()
        for key, value in expected.items():
            assert np.asarray(state[key]).tobytes() == np.asarray(value).tobytes(), (name, key)


def config_file(tmp_path: Path, **changes: object) -> Path:
    data = nsga2_config(
        number_generations=6,
        checkpoint={"every_generations": 3, "keep": 2},
        validation={"every_generations": 2, "episodes": 2},
        observation_normalization={},
        **changes,
    )
    path = tmp_path / "nsga2.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.slow
def test_sigkill_then_resume_ends_identical_front_and_all(tmp_path: Path) -> None:
    """An NSGA2 objectives train process killed after generation 4 (checkpoint at 3) and
    resumed ends with the log, optimizer state (survivors' seeds and scalers included), hall of
    fame and pareto.npz of the uninterrupted run."""
    config = config_file(tmp_path)
    straight = run_straight(config, tmp_path / "straight")
    run_dir = tmp_path / "killed"
    kill_then_resume(config, run_dir, tmp_path)
    assert_identical(run_dir, straight)
    assert_npz_identical(run_dir / PARETO_FILE, straight / PARETO_FILE)


def test_run_directory_holds_the_front_and_replay_reproduces_every_member(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pareto.npz loads without pickle and holds the front first (genomes, raw objectives,
    ranks, seeds, scalers); log.csv ends with a hypervolume column equal to the hypervolume of
    the saved front against the reference point, and so does train's summary; pareto.png
    exists; replay --front K reruns member K's training evaluation to its saved objectives
    exactly; the candidate validated is the front member best in objective 0."""
    run_dir = run_straight(config_file(tmp_path), tmp_path / "run")
    summary = capsys.readouterr().out
    data = np.load(run_dir / PARETO_FILE, allow_pickle=False)  # no object arrays inside
    for key in ("genomes", "objectives", "ranks", "seeds", "generations", "observation_mean"):
        assert key in data.files, key
    assert (run_dir / PARETO_PLOT_FILE).stat().st_size > 1000
    size = int(data["front_size"])
    assert size >= 2 and (data["ranks"][:size] == 0).all() and (data["ranks"][size:] > 0).all()
    front = data["objectives"][:size]
    expected = hypervolume(
        to_maximization(front, SENSES), to_maximization(np.array([[0.0, 1.0]]), SENSES)[0]
    )
    log = read_log(run_dir / "log.csv")
    header = (run_dir / "log.csv").read_text().splitlines()[0]
    assert header.endswith(",wall_time,hypervolume")
    assert log[-1]["hypervolume"] == expected == float(data["hypervolume"]) > 0
    assert f"optimizer: hypervolume {expected:.6g} after generation 6" in summary
    for member in range(size):
        replayed = replay_member(run_dir, "--front", str(member))
        saved = replayed.member.stored_measures
        assert replayed.measures.tobytes() == saved.tobytes() == front[member].tobytes()
    assert capsys.readouterr().out.count("front member ") == size
    candidate = np.load(run_dir / "candidate.npz", allow_pickle=False)
    assert str(candidate["source"]) == "front_best"
    best = int(np.argmax(front[:, 0]))
    assert candidate["genome"].tobytes() == data["genomes"][best].tobytes()
    assert replay.main([str(run_dir), "--front", str(size)]) == 2
    assert f"--front must be in 0..{size - 1}, got {size}" in capsys.readouterr().err
    (run_dir / PARETO_FILE).unlink()
    assert replay.main([str(run_dir), "--front", "0"]) == 2
    assert "pareto.npz: missing" in capsys.readouterr().err


def test_without_objectives_nsga2_selects_on_the_return_and_writes_no_front(
    tmp_path: Path,
) -> None:
    """No objectives: the log has no hypervolume column, no pareto files are written, the run
    stands behind its hall of fame's best, and the survivors are the best returns."""
    data = small_config(
        number_generations=3,
        optimizer={"type": "NSGA2", "population_size": 4, "offspring_size": 6},
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 50},
    )
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(data))
    run_dir = run_straight(path, tmp_path / "run")
    assert (run_dir / "log.csv").read_text().splitlines()[0].endswith(",wall_time")
    assert not (run_dir / PARETO_FILE).exists() and not (run_dir / PARETO_PLOT_FILE).exists()
    assert str(np.load(run_dir / "candidate.npz")["source"]) == "hall_of_fame"


# --- the shipped fuel measure -------------------------------------------------------------


def test_engine_powers_follow_lunar_landers_step_rules() -> None:
    """Discrete: main on 2, side on 1 and 3; continuous: main at (clip(a0) + 1) / 2 when
    a0 > 0, side at clip(|a1|, 0.5, 1) when |a1| > 0.5."""
    main, side = lunar_lander_powers(np.array([[0], [1], [2], [3]]))
    assert main.tolist() == [0, 0, 1, 0] and side.tolist() == [0, 1, 0, 1]
    actions = np.array([[-0.5, 0.0], [0.2, 0.7], [1.5, -0.4], [0.0, -1.2]])
    main, side = lunar_lander_powers(actions)
    assert main.tolist() == [0.0, 0.6, 1.0, 0.0] and side.tolist() == [0.0, 0.7, 0.0, 1.0]


@pytest.mark.parametrize("continuous", [False, True])
def test_lunar_lander_fuel_is_the_fuel_cost_the_env_subtracts(continuous: bool) -> None:
    """Per step the env's reward is its shaping gain minus the fuel cost: summed over an
    episode of random actions (the last step aside, whose reward is the landing outcome), the
    shaping gains minus the rewards equal lunar_lander_fuel's fuel of the same actions."""
    require("box2d")
    import gymnasium as gym

    env = gym.make("LunarLander-v3", continuous=continuous)
    env.reset(seed=4)
    env.action_space.seed(4)
    lander: Any = env.unwrapped
    fuel_seen, actions, done = 0.0, [], False
    while not done:
        action = env.action_space.sample()
        before = lander.prev_shaping
        _, reward, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
        if not done and before is not None:
            fuel_seen += (lander.prev_shaping - before) - float(reward)
            actions.append(action)
    env.close()
    rows = np.array(actions, dtype=np.float64).reshape(len(actions), -1)
    summary = TrajectorySummary(rows, rows, np.zeros(len(rows)), {}, True, False)
    fuel, main, side = lunar_lander_fuel(summary)
    assert len(actions) > 20 and main > 0 and side > 0
    assert fuel == pytest.approx(fuel_seen, rel=1e-6)  # the env computes in float32


def test_without_objectives_nsga2_still_selects_on_novelty() -> None:
    """No objectives: NSGA2 is told the selection fitness, so a novelty section changes what
    survives (the runs start alike and part after the first selection)."""
    section = {"type": "NSGA2", "population_size": 4, "offspring_size": 6}
    novelty = {"novelty_weight": 0.9, "behavior_source": "state", "behavioral_interval": 10}
    runs = []
    for extra in ({}, {"novelty": novelty}):
        config = small_config(number_generations=3, optimizer=section, **extra)
        experiment = Experiment(parse_config(config))
        experiment.run()
        runs.append(experiment.optimizer.state())
    plain, with_novelty = runs
    assert plain["parent_genomes"].tobytes() != with_novelty["parent_genomes"].tobytes()
    assert with_novelty["objective_count"] == 1
