"""``python -m neuro_evolution.migrate``: the predecessor's configs become configs that train here.

The files in ``tests/cli/predecessor_configs/`` are copies, unchanged, of
``configurations/*.json`` (and ``configurations/evaluation/*.json``) of the predecessor's public
repository neuroevolution-ai/NeuroEvolution-CTRNN_new at commit 37f9195b (2021-02-02): JSON
data, kept as test input.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from helpers import require

from neuro_evolution import migrate
from neuro_evolution.config.tree import load_config
from neuro_evolution.migration import MigrationError, Notes, migrate_config
from neuro_evolution.migration.environments import REACHER_MEMORY
from neuro_evolution.run.experiment import Experiment

OLD = Path(__file__).resolve().parent / "predecessor_configs"
# Old option name -> the name it has in the written config (where it is not the same).
RENAMED = {
    "hof_size": "hall_of_fame_size",
    "checkpoint_frequency": "every_generations",
    "mutpb": "mutate_prob",
    "non_linearity": "activation",
    "lstm_num_layers": "number_layers",
    "feed_forward_front": "parts",
    "feed_forward_back": "parts",
    "lstm": "parts",
    "tournsize": "selection",
}


def old(name: str) -> dict[str, Any]:
    """A predecessor config as a dict."""
    return json.loads((OLD / name).read_text())


def run_migrate(source: Path, out: Path, capsys: Any) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the command line run in this process."""
    code = migrate.main([str(source), "--out", str(out)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def leaf_options(node: dict[str, Any], where: str = "") -> list[tuple[str, str]]:
    """(path, key) of every option of a config that is not itself a section."""
    found = []
    for key, value in node.items():
        path = f"{where}.{key}" if where else key
        if isinstance(value, dict) and key not in {"environment_attributes"}:
            found += leaf_options(value, path)
        elif key != "type":
            found.append((path, key))
    return found


def one_tiny_generation(path: Path, run_dir: Path) -> None:
    """The written config, cut to one generation of short single episodes, trains."""
    config = load_config(path)
    runner = dataclasses.replace(config.episode_runner, number_fitness_runs=1, max_steps_per_run=20)
    evaluation = dataclasses.replace(config.evaluation, handler="sequential")
    config = dataclasses.replace(
        config, number_generations=1, episode_runner=runner, evaluation=evaluation, validation=None
    )
    experiment = Experiment(config, run_dir=run_dir)
    summary = experiment.run()
    assert summary.generations == 1
    assert experiment.log[0].env_steps > 0


# Config -> values the written config must hold (dotted paths).
RUNNABLE: dict[str, dict[str, Any]] = {
    "default.json": {
        "environment.id": "LunarLander-v3",
        "random_seed": 0,
        "number_generations": 150,
        "optimizer.type": "MU_ES",
        "optimizer.mu": 30,
        "optimizer.lambda_": 600,
        "optimizer.initial_gene_range": [-2, 2],
        "optimizer.mutate_prob": 0.8,
        "optimizer.mate_prob": 0.2,
        "optimizer.selection": "tournament",
        "optimizer.tournsize": 3,
        "hall_of_fame_size": 10,
        "checkpoint.every_generations": 10,
        "brain.type": "CTRNN",
        "brain.number_neurons": 10,
        "brain.neuron_activation": "relu",
        "brain.v_mask": "learned",
        "brain.v_mask_param": 50,
        "brain.delta_t": 0.5,
        "episode_runner.number_fitness_runs": 1,
        "episode_runner.fix_seed_for_generation": True,
        "novelty.novelty_weight": pytest.approx(1 / 3),
        "novelty.distance": "euclidean",
        "novelty.behavior_source": "action",
        "novelty.novelty_nearest_k": 5,
    },
    "cma_es_basic.json": {
        "environment.id": "BipedalWalker-v3",
        "optimizer.population_size": 100,
        "optimizer.mu": 25,
        "optimizer.sigma": 1.0,
        "brain.clipping_range_min": -0.1,
        "brain.clipping_range_max": 0.1,
        "brain.w_mask_param": 80,
        "novelty.novelty_weight": pytest.approx(1 / 6),
        "novelty.behavior_source": "observation",
        "novelty.behavioral_max_length": 500,
    },
    "mu_basic.json": {
        "optimizer.mu": 2,
        "optimizer.lambda_": 10,
        "optimizer.strategy_parameter_per_gene": True,
        "brain.v_mask": "logarithmic",
        "brain.v_mask_param": 8,
        "brain.normalize_input": True,
        "brain.normalize_input_target": 5,
        "episode_runner.number_fitness_runs": 2,
        "episode_runner.fix_seed_for_generation": False,
    },
    "solve_cartpole_cma.json": {
        "environment.id": "CartPole-v0",
        "random_seed": 123,
        "optimizer.type": "CMA_ES",
        "optimizer.population_size": 5,
        "optimizer.mu": 5,
        "optimizer.sigma": 1.0,
        "brain.number_neurons": 5,
        "brain.delta_t": 0.05,
        "brain.optimize_state_boundaries": "per_neuron",
        "episode_runner.number_fitness_runs": 100,
        "hall_of_fame_size": 5,
    },
    "lstm_basic.json": {
        "optimizer.population_size": 250,
        "optimizer.mu": 25,
        "brain.type": "LSTM",
        "brain.number_layers": 3,
        "brain.hidden_size": 2,
    },
    "concatenated_brain_lstm.json": {
        "optimizer.population_size": 5,
        "optimizer.mu": 1,
        "brain.type": "composed",
        "brain.sizes": [16, 8],
        "brain.parts": [
            {
                "type": "FFNN",
                "use_bias": True,
                "hidden_layers": [16],
                "activation": "relu",
                "output_activation": "identity",
            },
            {
                "type": "LSTM",
                "hidden_size": 8,
                "normalize_input": False,
                "normalize_input_target": 5,
                "use_bias": True,
                "number_layers": 1,
            },
            {
                "type": "FFNN",
                "use_bias": True,
                "hidden_layers": [8],
                "activation": "relu",
                "output_activation": "identity",
            },
        ],
    },
    "ffnn_basic.json": {
        "environment.id": "BipedalWalker-v3",
        "brain.type": "FFNN",
        "brain.hidden_layers": [64, 64],
        "brain.activation": "relu",
        "brain.output_activation": "clip",
    },
}


BOX2D = {"ffnn_basic.json", "cma_es_basic.json"}
SLOW = {"ffnn_basic.json"}  # CMA-ES over 6,020 genes: about 12 s on two cores


def value_at(config: dict[str, Any], path: str) -> Any:
    """The value at a dotted path of a written config."""
    node: Any = config
    for key in path.split("."):
        node = node[key]
    return node


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=[pytest.mark.slow] if name in SLOW else [])
        for name in sorted(RUNNABLE)
    ],
)
def test_a_migrated_config_holds_the_old_values_and_trains(name, tmp_path, capsys):
    """Each of these predecessor configs migrates (exit 0), the written config holds its
    population, mu/lambda, neurons, episodes, seed... and trains one tiny generation as written."""
    if name in BOX2D:
        require("box2d")
    out = tmp_path / "new.json"
    code, stdout, stderr = run_migrate(OLD / name, out, capsys)
    assert code == 0, stderr
    assert f"wrote {out}" in stdout
    written = json.loads(out.read_text())
    for path, expected in RUNNABLE[name].items():
        assert value_at(written, path) == expected, path
    one_tiny_generation(out, tmp_path / "run")


@pytest.mark.parametrize("name", sorted(RUNNABLE))
def test_every_old_option_is_written_or_named_on_stderr(name, tmp_path, capsys):
    """No option is lost silently: each one of the old file is in the written config (by its
    name here) or named in a ``migrate:`` line; every stderr line is such a line."""
    out = tmp_path / "new.json"
    code, _, stderr = run_migrate(OLD / name, out, capsys)
    assert code == 0, stderr
    lines = stderr.splitlines()
    assert all(line.startswith("migrate: ") for line in lines), lines
    written = out.read_text()
    for path, key in leaf_options(old(name)):
        named = any(f" {path}=" in line or f" {path}:" in line for line in lines)
        assert named or f'"{RENAMED.get(key, key)}"' in written, path


def test_dropped_options_are_one_line_each_with_the_reason(tmp_path, capsys):
    """efficiency_weight, reuse_env and the unused seed flag have no meaning here: one line each,
    naming the option, its value and why."""
    code, _, stderr = run_migrate(OLD / "mu_basic.json", tmp_path / "new.json", capsys)
    assert code == 0
    dropped = [line for line in stderr.splitlines() if line.startswith("migrate: dropped ")]
    names = [line.split()[2].split("=")[0] for line in dropped]
    assert sorted(names) == [
        "episode_runner.keep_env_seed_fixed_during_generation",
        "episode_runner.reuse_env",
        "episode_runner.use_autoencoder",
        "optimizer.efficiency_weight",
    ]
    assert all(line.endswith(")") and " (" in line for line in dropped)
    assert "migrate: dropped optimizer.efficiency_weight=0.2 (no such option here" in stderr


def test_the_command_runs_as_a_module(tmp_path):
    """``python -m neuro_evolution.migrate OLD --out NEW`` exits 0 and writes NEW."""
    out = tmp_path / "new.json"
    result = subprocess.run(
        [sys.executable, "-m", "neuro_evolution.migrate", str(OLD / "solve_cartpole_cma.json")]
        + ["--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert 'migrate: changed brain.optimize_state_boundaries="legacy"' in result.stderr
    assert load_config(out).brain.optimize_state_boundaries == "per_neuron"


def refused(source: Path, tmp_path: Path, capsys: Any) -> str:
    """The one stderr line of a refused migration (exit 2, no traceback, nothing written over
    an existing --out)."""
    out = tmp_path / "new.json"
    out.write_text("untouched")
    code, stdout, stderr = run_migrate(source, out, capsys)
    assert code == 2
    assert stdout == ""
    assert len(stderr.splitlines()) == 1, stderr
    assert "Traceback" not in stderr
    assert stderr.startswith("neuro_evolution.migrate: error: ")
    assert out.read_text() == "untouched"
    assert [path.name for path in tmp_path.iterdir() if path.name.endswith(".tmp")] == []
    return stderr


def write_json(path: Path, data: Any) -> Path:
    """``data`` as a JSON file at ``path``."""
    path.write_text(json.dumps(data))
    return path


def test_an_env_that_does_not_exist_here_is_one_line_and_exit_2(tmp_path, capsys):
    """A PyBullet id: one line naming the file and the env, exit 2, nothing written."""
    data = old("default.json") | {"environment": "AntBulletEnv-v0"}
    source = write_json(tmp_path / "bullet.json", data)
    line = refused(source, tmp_path, capsys)
    assert f"{source}: environment 'AntBulletEnv-v0' does not exist here" in line


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("reverse_novel.json", "environment 'ReverseShaped-v0' does not exist here"),
        ("memory_basic_design_space.json", "optimizer.population_size is a list of choices"),
    ],
)
def test_predecessor_configs_that_cannot_run_here_are_refused(name, expected, tmp_path, capsys):
    """The predecessor's own Reverse env and its design-space files: one line, exit 2."""
    line = refused(OLD / name, tmp_path, capsys)
    assert f"{OLD / name}: {expected}" in line


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        ("{not json", "not JSON (line 1 column 2"),
        ("[1, 2]", "a JSON list, not a config of the predecessor"),
        ('{"optimizer": {}}', "no environment, number_generations, brain, episode_runner"),
        (
            '{"environment": {"id": "CartPole-v1"}, "number_generations": 1}',
            "already a config of this package",
        ),
    ],
    ids=["missing", "not-json", "a-list", "no-sections", "ours"],
)
def test_bad_input_is_one_line_naming_the_file(content, expected, tmp_path, capsys):
    """A missing file, not JSON, another layout: one line naming the file and the fix, exit 2."""
    source = tmp_path / "old.json"
    if content is not None:
        source.write_text(content)
    line = refused(source, tmp_path, capsys)
    assert line.startswith(f"neuro_evolution.migrate: error: {source}: {expected}"), line


def test_an_unknown_brain_type_is_refused(tmp_path, capsys):
    """A brain type the predecessor never had: one line listing its types."""
    data = old("default.json")
    data["brain"]["type"] = "Elman"
    line = refused(write_json(tmp_path / "elman.json", data), tmp_path, capsys)
    assert 'brain.type "Elman" is not a brain type of the predecessor (CTRNN,' in line


def test_reacher_memory_maps_to_this_package_env_with_its_frame_counts():
    """ReacherMemory-v0 is neuro_evolution.envs' env; the predecessor's environment_attributes
    are its kwargs. (Checked on the mapped config: the written file loads only once the env is
    registered, which the next test checks where it is.)"""
    notes = Notes()
    config = migrate_config(old("reacher_memory_ctrnn.json"), "reacher.json", notes)
    assert config["environment"] == {
        "id": REACHER_MEMORY,
        "kwargs": {"observation_frames": 20, "memory_frames": 20, "action_frames": 50},
    }
    assert config["optimizer"]["mu"] == 500
    assert config["episode_runner"]["number_fitness_runs"] == 25


def test_a_migrated_reacher_memory_config_trains_on_the_registered_env(tmp_path, capsys):
    """neuro_evolution.envs registers ReacherMemory: the written config loads with the
    predecessor's frame counts and trains one tiny generation on it (the predecessor's mu 500 /
    lambda 1000 as written)."""
    require("mujoco")
    out = tmp_path / "new.json"
    code, _, stderr = run_migrate(OLD / "reacher_memory_ctrnn.json", out, capsys)
    assert code == 0, stderr
    config = load_config(out)
    assert config.environment.kwargs == {
        "observation_frames": 20,
        "memory_frames": 20,
        "action_frames": 50,
    }
    env = gym.make(REACHER_MEMORY, **config.environment.kwargs)
    assert type(env.unwrapped).__name__ == "ReacherMemoryEnv"
    env.close()
    one_tiny_generation(out, tmp_path / "run")


def test_converted_values_keep_the_predecessors_meaning():
    """A -1 seed is drawn once, the added step penalty is subtracted here, the novelty weight
    keeps the order of ranks, -1 behaviour intervals are dropped, an old env version is the
    newest one here: each with its line."""
    data = old("default.json")
    data["random_seed"] = -1
    data["episode_runner"] |= {"max_steps_per_run": 300, "max_steps_penalty": -5}
    data["novelty"] |= {"novelty_weight": 1.0, "behavioral_interval": -1, "distance": "NCD"}
    notes = Notes()
    config = migrate_config(data, "old.json", notes)
    text = "\n".join(notes.lines)
    assert 1 <= config["random_seed"] <= 10000
    assert "migrate: changed random_seed=-1 -> random_seed=" in text
    assert config["episode_runner"]["max_steps_penalty"] == 5
    assert config["episode_runner"]["max_steps_per_run"] == 300
    assert config["novelty"]["novelty_weight"] == 0.5
    assert config["novelty"]["distance"] == "ncd"
    assert "behavioral_interval" not in config["novelty"]
    assert "migrate: dropped novelty.behavioral_interval=-1" in text
    assert 'migrate: changed environment="LunarLander-v2" -> environment.id="LunarLander-v3"' in (
        text
    )


def test_an_old_mujoco_version_becomes_the_newest_one():
    """Ant-v2 (mujoco-py) cannot be made here: Ant-v5, with a line."""
    notes = Notes()
    config = migrate_config(old("ant_cma_es.json"), "ant.json", notes)
    assert config["environment"] == {"id": "Ant-v5"}
    assert config["optimizer"] == {
        "type": "CMA_ES",
        "population_size": 1000,
        "sigma": 0.2,
        "mu": 50,
    }
    assert any("Ant-v2 cannot be made here" in line for line in notes.lines)


def test_atari_configs_get_the_predecessors_preprocessing():
    """QbertNoFrameskip-v4 is made by ale_py in AtariPreprocessing with the predecessor's
    defaults and the config's screen size; its CNN_CTRNN is a composed conv + CTRNN brain."""
    config = migrate_config(old("qbert_hard_novel_cnn.json"), "qbert.json", Notes())
    assert config["environment"] == {
        "id": "ale_py:QbertNoFrameskip-v4",
        "wrappers": [
            {
                "name": "AtariPreprocessing",
                "kwargs": {
                    "screen_size": 32,
                    "scale_obs": True,
                    "terminal_on_life_loss": True,
                    "grayscale_obs": False,
                },
            }
        ],
    }
    untyped = migrate_config(old("qbert_mu_basic.json"), "qbert.json", Notes())["environment"]
    assert untyped["wrappers"][0]["kwargs"]["screen_size"] == 16  # attributes without a type
    conv, ctrnn = config["brain"]["parts"]
    assert [layer["channels"] for layer in conv["layers"]] == [5, 5]
    assert [layer["pool_stride"] for layer in conv["layers"]] == [2, 1]
    assert ctrnn["number_neurons"] == 30


def test_a_design_space_is_named_at_its_first_list():
    """Lists of choices anywhere are refused; a layer list (or one list in a list) is a value."""
    data = old("ffnn_basic.json")
    assert migrate_config(data, "ffnn.json", Notes())["brain"]["hidden_layers"] == [64, 64]
    data["brain"]["hidden_layers"] = [[4, 8], [16]]
    with pytest.raises(MigrationError, match=r"brain\.hidden_layers is a list of choices"):
        migrate_config(data, "ffnn.json", Notes())


def test_a_migrated_config_that_would_not_load_is_not_written(tmp_path, capsys):
    """The written config is validated first: a value this package refuses (no generations)
    is one line naming the file and the option, and --out stays as it was."""
    data = old("default.json") | {"number_generations": 0}
    source = write_json(tmp_path / "zero.json", data)
    line = refused(source, tmp_path, capsys)
    assert f"{source}: the migrated config does not load here: number_generations:" in line


def test_the_shipped_qbert_pred_config_is_the_migrated_predecessor_protocol():
    """configs/atari_qbert_pred.json holds what migrate writes for the predecessor's
    qbert_hard_novel_cnn.json (env and its preprocessing, brain, optimizer, episodes), without
    the novelty section and with lambda 100 (the file's later version; this copy's 10,000
    would be 10 generations in the budget); its budget is 50M frames (4 frames an env step)."""
    config = migrate_config(old("qbert_hard_novel_cnn.json"), "qbert.json", Notes())
    shipped = json.loads((OLD.parents[2] / "configs" / "atari_qbert_pred.json").read_text())
    assert config["optimizer"]["lambda_"] == 10_000 and shipped["optimizer"]["lambda_"] == 100
    config["optimizer"]["lambda_"] = 100
    for section in ("environment", "brain", "optimizer", "episode_runner", "hall_of_fame_size"):
        assert shipped[section] == config[section], section
    assert "novelty" in config and "novelty" not in shipped
    assert shipped["max_env_steps"] * 4 == 50_000_000
    assert shipped["validation"]["episodes"] == 30
