"""Pixel envs: Atari through ale-py (the ``atari`` extra) and MinAtar (the ``minatar`` extra).

Named as ``module:EnvId``; observations keep their image shape through the env layer (brains
flatten what they take); Atari preprocessing and frame stacking from ``environment.wrappers``;
two generations of an Atari run; MinAtar results identical on every handler and across an exact
resume; one-line errors for a missing extra and for wrappers that do not fit. The shipped pixel
configs (conv -> CTRNN), cut short: Breakout identical on every handler, resumed exactly, replayed
from the command line; Qbert two generations on a small screen.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from helpers import (
    as_tuples,
    assert_handler_matches_sequential,
    config_setup,
    extend_on_vectorized,
    require,
    sequential_results,
    small_config,
    start_up_error,
    without_time,
)

from neuro_evolution import train
from neuro_evolution.config.tree import parse_config
from neuro_evolution.core.schema import ConfigError, parse
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.history import AtariResetFromSnapshot
from neuro_evolution.evaluation.episodes.observation_wrappers import FramesAsChannels
from neuro_evolution.evaluation.lockstep.handler import VectorizedHandler
from neuro_evolution.evaluation.pools.process_pool import MultiprocessingHandler
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.run.directory import read_log
from neuro_evolution.run.experiment import Experiment

PONG = "ale_py:ALE/Pong-v5"
BREAKOUT = "minatar:MinAtar/Breakout-v1"


def atari(*extra_wrappers: Any, stack: int = 2, ale_sticky: bool = False) -> dict[str, Any]:
    """Pong as the predecessor's configs saw it: grayscale 32 px, frame skip 4 (by the wrapper,
    so the env skips none), the last ``stack`` frames as channels; sticky actions by
    StickyAction (ALE's own off, so resets restore a snapshot), or ALE's own (``ale_sticky``)."""
    own = {"name": "StickyAction", "kwargs": {"repeat_action_probability": 0.25}}
    return {
        "id": PONG,
        "kwargs": {"frameskip": 1}
        if ale_sticky
        else {"frameskip": 1, "repeat_action_probability": 0},
        "wrappers": [
            *([] if ale_sticky else [own]),
            {"name": "AtariPreprocessing", "kwargs": {"screen_size": 32}},
            {"name": "FrameStackObservation", "kwargs": {"stack_size": stack}},
            "FramesAsChannels",
            *extra_wrappers,
        ],
    }


def make_env(environment: dict[str, Any]) -> gym.Env:
    return parse(EnvironmentConfig, environment, "environment").make()


def test_observations_keep_their_image_layout_through_the_env_layer() -> None:
    """AtariPreprocessing gives (H, W) uint8, FrameStackObservation (k, H, W), FramesAsChannels
    (H, W, k) -- frame t is channel t; MinAtar gives (10, 10, C) bool. Nothing is flattened."""
    require("atari")
    env = make_env(atari(stack=3))
    layers = {"FramesAsChannels": env, "FrameStackObservation": env.env}
    layers["AtariPreprocessing"] = env.env.env
    assert [type(layer).__name__ for layer in layers.values()] == list(layers)
    shapes = [layer.observation_space.shape for layer in layers.values()]
    assert shapes == [(32, 32, 3), (3, 32, 32), (32, 32)]
    observation, _ = env.reset(seed=3)
    for _ in range(5):
        observation, *_ = env.step(2)
    assert observation.shape == (32, 32, 3) and observation.dtype == np.uint8
    assert observation.flags.c_contiguous
    require("minatar")
    env = make_env({"id": BREAKOUT})
    observation, _ = env.reset(seed=3)
    assert env.observation_space.shape == observation.shape == (10, 10, 4)
    assert observation.dtype == np.bool_


def test_frames_as_channels_puts_frame_t_channel_c_at_t_times_c_plus_c() -> None:
    """A stack of colour frames (k, H, W, C) becomes (H, W, k * C), oldest frame first."""
    require("atari")
    env = make_env(
        {
            "id": PONG,
            "kwargs": {"frameskip": 1},
            "wrappers": [
                {
                    "name": "AtariPreprocessing",
                    "kwargs": {"screen_size": 16, "grayscale_obs": False},
                },
                {"name": "FrameStackObservation", "kwargs": {"stack_size": 2}},
            ],
        }
    )
    stacked, _ = env.reset(seed=1)
    for _ in range(3):
        stacked, *_ = env.step(3)
    assert stacked.shape == (2, 16, 16, 3)
    channels = FramesAsChannels(env)
    assert channels.observation_space.shape == (16, 16, 6)
    merged = channels.observation(stacked)
    for t in range(2):
        for c in range(3):
            np.testing.assert_array_equal(merged[:, :, t * 3 + c], stacked[t, :, :, c])


def test_a_brain_sees_minatar_observations_as_floats() -> None:
    """The bool (10, 10, 4) image reaches a brain as 400 float64 inputs (encode casts and
    flattens; the env layer does neither)."""
    require("minatar")
    setup = config_setup(small_config(environment={"id": BREAKOUT}), count=2)
    assert setup.template.io.input_size == 400
    observation, _ = make_env({"id": BREAKOUT}).reset(seed=0)
    encoded = setup.template.io.encode(observation)
    assert encoded.dtype == np.float64 and encoded.shape == (400,)
    np.testing.assert_array_equal(encoded, observation.reshape(-1).astype(np.float64))


def atari_run(**changes: Any) -> dict[str, Any]:
    """PGPE on Pong at 32 px, frames flattened into a linear FFNN: short episodes, tiny
    population."""
    data = small_config(
        environment=atari("FlattenObservation"),
        optimizer={"type": "PGPE", "population_size": 4},
        brain={"type": "FFNN", "hidden_layers": []},
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 30},
        validation={"episodes": 1},
        number_generations=2,
    )
    data.update(changes)
    return data


def test_an_atari_run_trains_two_generations_from_the_command_line(tmp_path: Path) -> None:
    """``train`` on Pong: two logged generations of 4 x 30 agent steps and a hall of fame of
    linear brains from 32 x 32 x 2 pixels to Pong's 6 actions."""
    require("atari")
    path = tmp_path / "pong.json"
    path.write_text(json.dumps(atari_run()))
    assert train.main([str(path), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    log = read_log(tmp_path / "run" / "log.csv")
    assert [row["generation"] for row in log] == [0, 1]
    assert log[-1]["env_steps_total"] == 2 * 4 * 30
    hall_of_fame = np.load(tmp_path / "run" / "hall_of_fame.npz", allow_pickle=False)
    assert hall_of_fame["genomes"].shape[1] == (32 * 32 * 2 + 1) * 6


@pytest.mark.slow
def test_an_atari_run_logs_the_same_on_a_forkserver_pool_as_sequentially() -> None:
    """Two forkserver workers import ale_py themselves for the ``ale_py:`` id; with sticky
    actions on, the log and hall of fame equal the sequential run's."""
    require("atari")
    mp = {"handler": "mp", "workers": 2, "start_method": "forkserver"}
    pooled = Experiment(parse_config(atari_run(evaluation=mp)))
    try:
        pooled.run()
    finally:
        pooled.close()
    reference = Experiment(parse_config(atari_run()), handler=SequentialHandler())
    try:
        reference.run()
    finally:
        reference.close()
    assert without_time(pooled.log) == without_time(reference.log)
    assert (pooled.hall_of_fame.genomes == reference.hall_of_fame.genomes).all()


@pytest.mark.parametrize("sticky", ["StickyAction", pytest.param("ALE", marks=pytest.mark.slow)])
def test_an_atari_generation_is_identical_on_the_vectorized_handler(sticky: str) -> None:
    """A SyncVectorEnv of wrapped ALE envs (each restoring its own snapshot, or each loading its
    ROM again with ALE's own sticky actions) gives the sequential runner's results."""
    require("atari")
    environment = atari("FlattenObservation", ale_sticky=sticky == "ALE")
    setup = config_setup(atari_run(environment=environment), count=4)
    reference = sequential_results(setup)
    with VectorizedHandler() as handler:
        handler.start(setup.template, setup.spec)
        assert as_tuples(handler.batch_evaluate(setup.genomes, setup.seeds)) == reference
        assert "SyncVectorEnv" in handler.describe()


def minatar_run(**changes: Any) -> dict[str, Any]:
    """PGPE + CTRNN on MinAtar Breakout, two episodes of at most 100 steps per genome."""
    data = small_config(
        environment={"id": BREAKOUT},
        optimizer={"type": "PGPE", "population_size": 8, "radius_init": 3.0},
        brain={"type": "CTRNN", "number_neurons": 4, "delta_t": 1.0},
        episode_runner={"number_fitness_runs": 2, "max_steps_per_run": 100},
        validation={"episodes": 3},
    )
    data.update(changes)
    return data


@pytest.mark.parametrize(
    "case", [pytest.param("mp-forkserver", marks=pytest.mark.slow), "vectorized"]
)
def test_minatar_results_are_identical_on_every_handler(case: str) -> None:
    """mp (forkserver workers that run MinAtar's registration themselves) and vectorized (a
    SyncVectorEnv of MinAtar envs, bool images gathered as floats) match sequential."""
    require("minatar")
    setup = config_setup(minatar_run(), count=12)
    assert_handler_matches_sequential(setup, case)


def test_a_minatar_run_resumed_on_another_handler_ends_identical(tmp_path: Path) -> None:
    """3 generations extended to 6 on the vectorized handler equal 6 straight sequential ones
    (validation episodes, seeds >= 2**32, included)."""
    require("minatar")
    path = tmp_path / "breakout.json"
    data = minatar_run(number_generations=6, checkpoint={"every_generations": 2, "keep": 2})
    path.write_text(json.dumps(data))
    extend_on_vectorized(path, tmp_path)


# A missing extra, simulated by hiding its module (``None`` in sys.modules makes imports fail).
MISSING = {
    "atari": (atari(ale_sticky=True), "ale_py", "environment.id: needs the optional 'atari' extra"),
    "opencv": (
        atari(ale_sticky=True),
        "cv2",
        "environment.wrappers[0].name: AtariPreprocessing needs the ",
    ),
    "minatar": ({"id": BREAKOUT}, "minatar", "environment.id: needs the optional 'minatar'"),
    "popgym": (
        {"id": "popgym:popgym-RepeatPreviousEasy-v0"},
        "popgym",
        "environment.id: needs the optional 'popgym' extra",
    ),
}


@pytest.mark.parametrize("extra", MISSING)
def test_a_missing_extra_is_one_line_naming_it(
    extra: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """train exits 2 with one line: the field, the extra and the pip command to install it."""
    environment, module, words = MISSING[extra]
    if extra == "opencv":  # the env itself must load before its wrappers are checked
        require("atari")
    monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.chdir(tmp_path)
    err = start_up_error(environment, tmp_path, capsys)
    assert err.startswith(f"neuro_evolution.train: error: {words}"), err
    assert "pip install 'neuro_evolution[" in err


BAD = {
    "the env skips frames too": (
        {**atari(ale_sticky=True), "kwargs": {}},
        "environment.wrappers[0].kwargs.frame_skip: AtariPreprocessing skips frames itself, and "
        "the env skips frames too (ALE v5 ids skip 4): make the env with environment.kwargs "
        '{"frameskip": 1}',
    ),
    "a misspelt wrapper argument": (
        {**atari(), "wrappers": [{"name": "AtariPreprocessing", "kwargs": {"screen_sise": 32}}]},
        "environment.wrappers[0].kwargs: got an unexpected keyword argument 'screen_sise'",
    ),
    "a misspelt env argument": (
        {**atari(), "kwargs": {"frame_skip": 1}},
        "environment.kwargs: got an unexpected keyword argument 'frame_skip'",
    ),
    "frames as channels without a stack": (
        {**atari(), "wrappers": [atari(ale_sticky=True)["wrappers"][0], "FramesAsChannels"]},
        "environment.wrappers[1]: FramesAsChannels needs a stack of frames, (k, H, W) or "
        "(k, H, W, C); this env's observation has shape (32, 32): list FrameStackObservation",
    ),
    "a bare ALE id": (
        {"id": "ALE/Pong-v5"},
        "environment.id: unknown Gymnasium environment 'ALE/Pong-v5'",
    ),
}


@pytest.mark.parametrize("case", BAD)
def test_an_atari_env_that_does_not_fit_is_one_line_naming_the_field(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """Exit 2 at start-up, one stderr line that names the field and the fix."""
    require("atari")
    environment, words = BAD[case]
    if case == "a bare ALE id":  # as in a fresh process, where nothing imported ale_py yet
        for name in [n for n in gym.registry if n.startswith("ALE/")]:
            monkeypatch.delitem(gym.registry, name)
    monkeypatch.chdir(tmp_path)
    err = start_up_error(environment, tmp_path, capsys)
    assert err.startswith(f"neuro_evolution.train: error: {words}"), err
    if case == "a bare ALE id":
        assert "write ale_py:ALE/Pong-v5 (the 'atari' extra)" in err


def test_minatar_ids_are_registered_by_its_entry_point_not_by_its_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Importing minatar registers nothing (Gymnasium 1.x runs no entry points); reading a
    ``minatar:`` id runs MinAtar's ``gymnasium.envs`` entry point, once."""
    require("minatar")
    for name in [n for n in gym.registry if n.startswith("MinAtar/")]:
        monkeypatch.delitem(gym.registry, name)
    import minatar  # noqa: F401

    assert "MinAtar/Breakout-v1" not in gym.registry
    with pytest.raises(ConfigError, match="registers no such id"):
        parse(EnvironmentConfig, {"id": "minatar:MinAtar/Breakout-v9"}, "environment")
    assert "MinAtar/Breakout-v1" in gym.registry  # the failed lookup registered the real ids
    parse(EnvironmentConfig, {"id": BREAKOUT}, "environment").make().close()
    assert sum(n.startswith("MinAtar/") for n in gym.registry) == 10  # 5 games x v0, v1


@pytest.mark.slow
def test_without_ales_sticky_actions_a_reset_restores_a_snapshot_with_ales_own_episodes() -> None:
    """With ``repeat_action_probability`` 0 (sticky actions from Gymnasium's StickyAction and
    the env's seeded generator instead), a seeded reset restores the emulator state saved after
    the ROM was loaded instead of loading it again: the episodes equal ALE's own seeded resets
    (which reload the ROM) for every seed, after other episodes too. Seaquest is a game where a
    plain ``reset_game`` would carry state from one episode into the next."""
    require("atari")
    section = {
        "id": "ale_py:ALE/Seaquest-v5",
        "kwargs": {"frameskip": 1, "repeat_action_probability": 0.0},
        "wrappers": [
            {"name": "StickyAction", "kwargs": {"repeat_action_probability": 0.25}},
            {"name": "AtariPreprocessing", "kwargs": {"screen_size": 32}},
        ],
    }
    env = make_env(section)
    assert isinstance(env.env.env, AtariResetFromSnapshot)
    ale = gym.make("ALE/Seaquest-v5", frameskip=1, repeat_action_probability=0.0)
    reference = gym.wrappers.AtariPreprocessing(
        gym.wrappers.StickyAction(ale, repeat_action_probability=0.25), screen_size=32
    )
    for seed in (3, 4, 7, 11):  # env plays them one after the other, reference reloads each
        for episodes in (reference, env):
            episodes.reset(seed=seed)
        actions = np.random.default_rng(seed + 100).integers(env.action_space.n, size=250)
        for action in actions.tolist():
            got, want = env.step(action), reference.step(action)
            np.testing.assert_array_equal(got[0], want[0])
            assert got[1:4] == want[1:4]
            if got[2] or got[3]:
                break
    assert not isinstance(make_env(atari(ale_sticky=True)).env.env.env, AtariResetFromSnapshot)


def test_making_an_atari_env_prints_nothing(tmp_path: Path) -> None:
    """The first ALE interface of a process prints a two-line banner on stderr; making an env
    from the environment section prints nothing."""
    require("atari")
    code = (
        "from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig\n"
        "EnvironmentConfig(id='ale_py:ALE/Pong-v5').make().close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout + done.stderr == ""


# --- the shipped pixel configs (configs/minatar_breakout.json, configs/atari_qbert.json) -------
CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def shipped(name: str, **changes: Any) -> dict[str, Any]:
    """A shipped config as JSON data, top-level sections updated key by key with ``changes``."""
    data = json.loads((CONFIGS / name).read_text())
    for key, value in changes.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    return data


def short_breakout(**changes: Any) -> dict[str, Any]:
    """The shipped MinAtar Breakout config (conv -> CTRNN), cut short: population 8, episodes of
    at most 60 steps, 3 validation episodes, sequential."""
    short: dict[str, Any] = {
        "optimizer": {"population_size": 8},
        "episode_runner": {"number_fitness_runs": 2, "max_steps_per_run": 60},
        "validation": {"every_generations": 1, "episodes": 3},
        "evaluation": {"handler": "sequential", "vectorize": False},
    }
    return shipped("minatar_breakout.json", **{**short, **changes})


def shipped_setup(data: dict[str, Any], count: int) -> Any:
    """Template (the config's own composed brain), RunnerSpec and ``count`` genomes N(0, 0.1^2)
    with per-individual seeds (most lose the ball after 6 steps, some return it)."""
    from neuro_evolution.evaluation.episodes.runner import RunnerSpec
    from neuro_evolution.run.experiment import build_template
    from neuro_evolution.support.seeds import generation_seeds

    config = parse_config(data)
    template = build_template(config)
    spec = RunnerSpec(environment=config.environment, episode_runner=config.episode_runner)
    genomes = np.random.default_rng(4).normal(0, 0.1, (count, template.genome_size))
    return template, spec, genomes, generation_seeds(5, 2, count, shared=False)


@pytest.mark.parametrize(
    "case", [pytest.param("mp-forkserver", marks=pytest.mark.slow), "vectorized"]
)
def test_the_shipped_breakout_brain_scores_the_same_on_every_handler(case: str) -> None:
    """The shipped conv -> CTRNN brain on MinAtar Breakout: mp (forkserver) and vectorized
    (one composed batch brain in lockstep) give the sequential results."""
    require("minatar")
    template, spec, genomes, seeds = shipped_setup(short_breakout(), count=24)
    assert template.config.type_name() == "composed"
    with SequentialHandler() as sequential:
        sequential.start(template, spec)
        reference = as_tuples(sequential.batch_evaluate(genomes, seeds))
    assert len(set(reference)) > 2  # the genomes really differ
    if case == "vectorized":
        handler: VectorizedHandler | MultiprocessingHandler = VectorizedHandler()
    else:
        handler = MultiprocessingHandler(workers=2, start_method="forkserver")
    with handler:
        handler.start(template, spec)
        assert as_tuples(handler.batch_evaluate(genomes, seeds)) == reference


def test_the_shipped_breakout_config_resumed_on_another_handler_ends_identical(
    tmp_path: Path,
) -> None:
    """The shipped Breakout config, short: 3 generations extended to 6 on the vectorized handler
    equal 6 straight sequential ones (checkpoints, validation and hall of fame included)."""
    require("minatar")
    path = tmp_path / "breakout.json"
    data = short_breakout(
        number_generations=6,
        checkpoint={"every_generations": 2, "keep": 2},
        validation={"every_generations": 4, "episodes": 3},
    )
    path.write_text(json.dumps(data))
    extend_on_vectorized(path, tmp_path)


def test_a_composed_breakout_run_replays_its_validation_from_the_command_line(
    tmp_path: Path,
) -> None:
    """``python -m neuro_evolution.replay RUN --validation`` on a run of the shipped Breakout
    config (conv -> CTRNN) reproduces the validation mean the run logged."""
    require("minatar")
    path = tmp_path / "breakout.json"
    data = short_breakout(
        number_generations=4,
        optimizer={"population_size": 16},
        validation={"every_generations": 4, "episodes": 6},
    )
    path.write_text(json.dumps(data))
    run_dir = tmp_path / "run"
    assert train.main([str(path), "--out", str(run_dir), "--quiet"]) == 0
    row = read_log(run_dir / "log.csv")[-1]
    logged = row["validation_mean"]
    assert row["validation_std"] > 0  # the six episodes differ: a seed mix-up would show
    done = subprocess.run(
        [sys.executable, "-m", "neuro_evolution.replay", str(run_dir), "--validation"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"mean return {logged:.6g} " in done.stdout, (logged, done.stdout)


def test_the_shipped_atari_config_trains_two_generations_on_a_small_screen(
    tmp_path: Path,
) -> None:
    """configs/atari_qbert.json (conv -> CTRNN on stacked grayscale frames) with a 16 px screen,
    population 4 and episodes of 20 steps: two logged generations from the command line and a
    hall of fame of composed brains."""
    require("atari")
    data = shipped(
        "atari_qbert.json",
        number_generations=2,
        optimizer={"population_size": 4},
        episode_runner={"max_steps_per_run": 20},
        validation={"every_generations": 1, "episodes": 1},
        evaluation={"handler": "sequential"},
    )
    preprocessing = data["environment"]["wrappers"][1]
    assert preprocessing["name"] == "AtariPreprocessing"
    preprocessing["kwargs"]["screen_size"] = 16
    path = tmp_path / "qbert.json"
    path.write_text(json.dumps(data))
    assert train.main([str(path), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    log = read_log(tmp_path / "run" / "log.csv")
    assert [row["generation"] for row in log] == [0, 1]
    assert log[-1]["env_steps_total"] == 2 * 4 * 20
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert [part["type"] for part in config["brain"]["parts"]] == ["conv", "CTRNN"]
