"""``environment``: the three ways to name an env, wrappers in the config, replay and resume of a
wrapped run, and one-line errors for bad names, bad arguments and failing imports.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import (
    WAYS,
    WRAPPED_BLACKJACK,
    line_target_config,
    require,
    small_config,
    start_up_error,
    without_end_validation,
    without_time,
)

from neuro_evolution import replay, train
from neuro_evolution.config.tree import config_to_dict, parse_config
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.evaluation.episodes.wrappers import REWARD_OFFSET
from neuro_evolution.run.directory import LogRow, read_log
from neuro_evolution.run.experiment import Experiment


def test_custom_env_named_three_ways_trains_identically() -> None:
    """imports + registered id, module:EnvId and entry_point + kwargs make the same env, so the
    same seed gives the same run; the kwargs really reach the env."""
    logs = {}
    for way in WAYS:
        experiment = Experiment(parse_config(line_target_config(way)))
        assert experiment.template.io.input_size == 2
        env = experiment.config.environment.make()
        assert (env.unwrapped.speed, env.unwrapped.max_steps) == (0.2, 25)
        env.close()
        experiment.run()
        logs[way] = without_time(experiment.log)
    assert logs["imports"] == logs["module_id"] == logs["entry_point"]
    assert logs["imports"][0]["env_steps"] > 0


def test_module_env_id_form_gymnasium_make_accepts() -> None:
    """The issue's example: gymnasium's own module path in front of a registered id."""
    data = small_config(environment={"id": "gymnasium.envs.classic_control.cartpole:CartPole-v1"})
    plain = Experiment(parse_config(small_config()))
    with_module = Experiment(parse_config(data))
    plain.run()
    with_module.run()
    assert without_time(plain.log) == without_time(with_module.log)


def test_wrappers_are_saved_in_full_in_the_resolved_config() -> None:
    """A bare name is short for {name, kwargs: {}}; config.json holds every wrapper in order."""
    config = parse_config(small_config(environment=WRAPPED_BLACKJACK))
    saved = config_to_dict(config)["environment"]
    assert saved["wrappers"] == [
        {"name": "FlattenObservation", "kwargs": {}},
        {"name": REWARD_OFFSET, "kwargs": {"offset": -0.25}},
    ]
    assert parse_config(json.loads(json.dumps(config_to_dict(config)))) == config


def test_a_wrapper_named_by_its_module_before_the_rooms_still_loads() -> None:
    """A config saved before evaluation/ was split into rooms names the wrappers' old module; it
    makes the same wrapper, so an old run directory resumes and replays."""
    old_module = "neuro_evolution.evaluation." + "wrappers"  # split: the old name is the point
    environment = {
        **WRAPPED_BLACKJACK,
        "wrappers": [
            "FlattenObservation",
            {"name": f"{old_module}:RewardOffset", "kwargs": {"offset": -0.25}},
        ],
    }
    env = parse_config(small_config(environment=environment)).environment.make()
    assert type(env).__name__ == "RewardOffset"
    assert type(env).__module__ == REWARD_OFFSET.partition(":")[0]


def test_wrappers_apply_in_the_listed_order() -> None:
    """The first wrapper is innermost: RewardOffset(FlattenObservation(Blackjack))."""
    env = parse_config(small_config(environment=WRAPPED_BLACKJACK)).environment.make()
    assert type(env).__name__ == "RewardOffset"
    assert type(env.env).__name__ == "FlattenObservation"
    assert env.observation_space.shape == (45,)


def test_reward_offset_adds_the_offset_to_every_reward() -> None:
    """Against the bare env stepped with the same seed and actions."""
    wrapped = {"id": "CartPole-v1", "wrappers": [{"name": REWARD_OFFSET, "kwargs": {"offset": -3}}]}
    env = parse_config(small_config(environment=wrapped)).environment.make()
    bare = parse_config(small_config()).environment.make()
    env.reset(seed=4)
    bare.reset(seed=4)
    for action in [0, 1, 1, 0, 1]:
        assert env.step(action)[1] == bare.step(action)[1] - 3.0


@pytest.mark.parametrize(
    ("environment", "imports", "path", "words"),
    [
        ({"id": "CartPole-v1", "wrappers": ["FlattenObservations"]}, [],
         "environment.wrappers[0].name", "Did you mean `FlattenObservation`?"),
        ({"id": "CartPole-v1", "wrappers": ["FlattenObservation", {"name": "TimeLimit",
          "kwargs": {"max_episode_step": 5}}]}, [],
         "environment.wrappers[1].kwargs", "unexpected keyword argument 'max_episode_step'"),
        ({"id": "CartPole-v1", "wrappers": [{"name": "TransformReward"}]}, [],
         "environment.wrappers[0].name", REWARD_OFFSET),
        ({"id": "CartPole-v1", "wrappers": ["NormalizeObservation"]}, [],
         "environment.wrappers[0].name", "project's observation normalization"),
        ({"id": "CartPole-v1", "wrappers": ["examples.line_target:LineTargetEnv"]}, [],
         "environment.wrappers[0].name", "not a gymnasium.Wrapper subclass"),
        ({"id": "no_such_package.envs:Thing-v0"}, [], "environment.id",
         "no module named 'no_such_package'"),
        ({"id": "examples.broken_env:Thing-v0"}, [], "environment.id",
         "KeyError: 'sped' ("),
        ({"id": "CartPole-v1", "wrappers": ["examples.broken_env:Wrapper"]}, [],
         "environment.wrappers[0].name", "KeyError: 'sped'"),
        ({"id": "CartPole-v1"}, ["examples.broken_env"], "imports[0]", "KeyError: 'sped'"),
        ({"id": "examples.line_target:LineTarget-v9"}, [], "environment.id",
         "Did you mean `LineTarget-v0`?"),
        ({"entry_point": "examples.line_target:LineTargetEnv", "kwargs": {"sped": 1}}, [],
         "environment.kwargs", "unexpected keyword argument 'sped'"),
        ({"id": "CartPole-v1", "entry_point": "examples.line_target:LineTargetEnv"}, [],
         "environment", "exactly one of id"),
    ],
)  # fmt: skip
def test_bad_environment_config_is_one_line_naming_the_field(
    environment: dict, imports: list, path: str, words: str
) -> None:
    """Refused when the config is read, with the field path and the fix."""
    with pytest.raises(ConfigError) as caught:
        parse_config(small_config(environment=environment, imports=imports))
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and words in message
    assert "\n" not in message


def test_config_error_survives_pickling() -> None:
    """Raised inside a worker (a module missing there), it reaches the parent intact."""
    error = ConfigError("environment.id", "cannot import module 'x'")
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), str(again), again.path) == (ConfigError, str(error), "environment.id")


BAD_AT_START = {
    "bad wrapper name": ({"id": "CartPole-v1", "wrappers": ["ClipActions"]}, "wrappers[0].name"),
    "bad wrapper argument": (
        {"id": "Blackjack-v1", "wrappers": [{"name": "FlattenObservation", "kwargs": {"x": 1}}]},
        "wrappers[0].kwargs: got an unexpected keyword argument 'x'",
    ),
    "wrapper that cannot wrap the env": (
        {"id": "CartPole-v1", "wrappers": ["ClipAction"]},
        "environment.wrappers[0]: ClipAction cannot wrap this env",
    ),
    "bad wrapper value": (
        {"id": "Pendulum-v1", "wrappers": [{"name": "RescaleAction",
         "kwargs": {"min_action": 1, "max_action": -1}}]},
        "RescaleAction cannot wrap this env: ValueError",
    ),
    "failing module import": ({"id": "examples.broken_env:Thing-v0"}, "cannot import module"),
    "missing module": ({"entry_point": "nowhere.envs:Env"}, "no module named 'nowhere'"),
    "env refuses a value": (
        {"id": "neuro_evolution.envs:neuro_evolution/DoublePoleNonMarkov-v0",
         "kwargs": {"training_starts": "grid"}},
        "environment.kwargs: neuro_evolution.envs:neuro_evolution/DoublePoleNonMarkov-v0 refused "
        "them: training_starts: 'grid' is unknown: use standard or random",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD_AT_START)
def test_bad_environment_exits_2_with_one_line_and_no_run_directory(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """train refuses before anything is written: exit 2, one stderr line, no runs/ folder."""
    environment, words = BAD_AT_START[case]
    monkeypatch.chdir(tmp_path)
    err = start_up_error(environment, tmp_path, capsys)
    assert err.startswith("neuro_evolution.train: error: environment") and words in err


def test_failing_import_from_the_real_command_prints_no_traceback(tmp_path: Path) -> None:
    """As a user runs it: `python -m neuro_evolution.train`, exit 2, one line, nothing written."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(small_config(environment={"id": "no_such_pkg.envs:Env-v0"})))
    process = subprocess.run(
        [sys.executable, "-m", "neuro_evolution.train", str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert process.returncode == 2
    assert process.stderr.count("\n") == 1 and "Traceback" not in process.stderr
    assert "environment.id: cannot import module 'no_such_pkg.envs'" in process.stderr
    assert list(tmp_path.iterdir()) == [path]


def blackjack_config(**changes: Any) -> dict[str, Any]:
    """A tiny run on Blackjack with FlattenObservation and a reward offset."""
    return small_config(
        environment=WRAPPED_BLACKJACK,
        episode_runner={"number_fitness_runs": 4, "fix_seed_for_generation": True},
        **changes,
    )


def test_replay_of_a_wrapped_run_rebuilds_the_wrapped_env(tmp_path: Path) -> None:
    """replay reads the wrappers from config.json: the same returns as the training env, which
    differ from the bare env's (and the bare Tuple observation would not even fit the brain)."""
    out = tmp_path / "run"
    experiment = Experiment(parse_config(blackjack_config()), run_dir=out)
    experiment.run()
    brain = experiment.template.build(experiment.hall_of_fame.genomes[0])
    runner = experiment.spec.make()
    expected = [runner.run_episode(brain, 20 + k) for k in range(6)]
    assert replay.replay(out, episodes=6, seed=20) == [r.fitness for r in expected]
    # The offset is in there: a return is the bare return minus 0.25 per step.
    assert any(r.fitness % 1.0 != 0.0 for r in expected)


def test_resuming_a_wrapped_run_continues_it_exactly(tmp_path: Path) -> None:
    """--resume rebuilds the wrapped env from config.json (here on a spawn pool): 2 + 2
    generations equal 4 straight ones."""
    path = tmp_path / "blackjack.json"
    path.write_text(
        json.dumps(blackjack_config(number_generations=4, checkpoint={"every_generations": 1}))
    )
    straight, short = tmp_path / "straight", tmp_path / "short"
    assert train.main([str(path), "--out", str(straight), "--quiet"]) == 0
    assert train.main([str(path), "--out", str(short), "--generations", "2", "--quiet"]) == 0
    resume = ["--resume", str(short), "--generations", "4", "--handler", "mp", "--workers", "2"]
    assert train.main([*resume, "--start-method", "spawn", "--quiet"]) == 0
    extended = without_end_validation(read_log(short / "log.csv"), ended_after=2)
    straight_log = [LogRow.from_dict(row) for row in read_log(straight / "log.csv")]
    assert without_time([LogRow.from_dict(row) for row in extended]) == without_time(straight_log)
    a = np.load(short / "hall_of_fame.npz", allow_pickle=False)
    b = np.load(straight / "hall_of_fame.npz", allow_pickle=False)
    assert all(np.array_equal(a[key], b[key]) for key in b.files)


GUIDE = Path(__file__).resolve().parents[2] / "docs" / "environments.md"


@pytest.mark.parametrize("index", range(len(GUIDE.read_text().split("```json")) - 1))
def test_every_config_in_the_guide_is_accepted_and_dry_runs(index: int) -> None:
    """The JSON examples of docs/environments.md are real: read, built and dry-run."""
    block = GUIDE.read_text().split("```json")[index + 1].split("```")[0]
    experiment = Experiment(parse_config(small_config(**json.loads(block))))
    assert experiment.template.genome_size > 0


def test_making_a_mujoco_env_prints_nothing(tmp_path):
    """HalfCheetah's XML makes MuJoCo >= 3.3 warn about ``settotalmass`` on stdout (and in
    MUJOCO_LOG.TXT) at every env made; the environment section drops that known noise."""
    require("mujoco")
    code = (
        "from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig\n"
        "EnvironmentConfig(id='HalfCheetah-v5').make().close()\n"
        "EnvironmentConfig(id='HalfCheetah-v5').make().close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert "settotalmass" not in done.stdout + done.stderr
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()
