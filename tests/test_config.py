"""The config: frozen, validated, errors naming the field path."""

from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import small_config

from neuro_evolution.config import config_hash, config_to_dict, load_config, parse_config
from neuro_evolution.configtools import ConfigError


def error_of(data: dict) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(data)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_valid_config_parses_and_fills_defaults():
    """A valid config gives a tree with every default filled in."""
    config = parse_config(small_config())
    resolved = config_to_dict(config)
    assert resolved["episode_runner"]["number_fitness_runs"] == 2
    assert resolved["evaluation"]["handler"] == "sequential"
    assert (
        config_to_dict(
            parse_config({k: v for k, v in small_config().items() if k != "evaluation"})
        )["evaluation"]["handler"]
        == "mp"
    )  # the default: all cores
    assert resolved["brain"]["type"] == "FFNN"
    assert resolved["optimizer"]["type"] == "MU_ES"
    assert parse_config(resolved) == config  # the resolved form parses to the same config


def test_config_is_frozen():
    """Neither instances nor config classes can be changed at runtime."""
    config = parse_config(small_config())
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.random_seed = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.environment.kwargs["x"] = 1  # type: ignore[index]
    with pytest.raises(AttributeError, match="config"):
        type(config.episode_runner).number_fitness_runs = 5  # type: ignore[misc]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"brain": {"type": "FFNN", "hidden_layers": [-3]}}, "brain.hidden_layers[0]: must be"),
        ({"brain": {"type": "FFNN", "activation": "sigmoid"}}, "brain.activation: must be one of"),
        ({"brain": {"type": "FFN"}}, "brain.type: unknown brain type 'FFN'. Did you mean `FFNN`?"),
        ({"brain": {"hidden_layers": [3]}}, "brain.type: is required"),
        ({"random_seed": -1}, "random_seed: must be an integer >= 0"),
        ({"random_seed": "1"}, "random_seed: must be an integer"),
        ({"number_generations": 0}, "number_generations: must be an integer >= 1, got 0"),
        ({"environment": {"id": "CartPol-v1"}}, "Did you mean `CartPole-v1`?"),
        ({"environment": {"name": "CartPole-v1"}}, "environment.name: unknown key"),
        ({"episode_runner": {"number_fitness_run": 2}}, "Did you mean `number_fitness_runs`?"),
        ({"episode_runner": {"max_steps_penalty": "x"}}, "episode_runner.max_steps_penalty: must"),
        ({"evaluation": {"handler": "threads"}}, "evaluation.handler: must be one of"),
        ({"checkpoint": {"keep": 0}}, "checkpoint.keep: must be an integer >= 1"),
        ({"optimizer": {"type": "MU-ES"}}, "optimizer.type: unknown optimizer type"),
        (
            {"imports": ["no_such_module_xyz"]},
            "imports[0]: cannot import module 'no_such_module_xyz'",
        ),
    ],
)
def test_bad_values_name_the_field(change, expected):
    """Each bad value is refused with a one-line message that names the field path."""
    assert expected in error_of(small_config(**change))


def test_unknown_top_level_key_suggests_the_right_one():
    """A typo in a top-level key gets a 'did you mean'."""
    data = small_config()
    data["number_generation"] = data.pop("number_generations")
    message = error_of(data)
    assert message.startswith("number_generation: unknown key")
    assert "Did you mean `number_generations`?" in message


def test_missing_required_key():
    """A missing required section is named."""
    data = small_config()
    del data["brain"]
    assert error_of(data) == "brain: is required"


def test_load_config_errors_name_the_file(tmp_path):
    """A missing file and invalid JSON are one-line errors naming the file."""
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"random_seed": 1,,}')
    with pytest.raises(ConfigError, match=r"broken.json: invalid JSON at line 1 column"):
        load_config(broken)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(small_config()))
    assert load_config(good) == parse_config(small_config())


def test_config_hash_ignores_named_sections_only():
    """The hash changes with any setting except the sections it is told to ignore."""
    base = parse_config(small_config())
    other_handler = parse_config(small_config(evaluation={"handler": "mp"}))
    other_seed = parse_config(small_config(random_seed=8))
    assert config_hash(base) != config_hash(other_handler)
    assert config_hash(base, ignore=("evaluation",)) == config_hash(
        other_handler, ignore=("evaluation",)
    )
    assert config_hash(base) != config_hash(other_seed)
