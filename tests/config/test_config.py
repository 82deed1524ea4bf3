"""The config: frozen, validated, errors naming the field path."""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from typing import Any

import pytest
from helpers import small_config

from neuro_evolution.brains.base import BRAINS
from neuro_evolution.config.tree import (
    ExperimentConfig,
    config_hash,
    config_to_dict,
    load_config,
    parse_config,
)
from neuro_evolution.core.schema import ConfigBase, ConfigError, parse_value
from neuro_evolution.optimizers.base import OPTIMIZERS


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


def _config_classes() -> set[type]:
    """Every config class reachable from ExperimentConfig, plus every registered type's."""
    found: set[type] = set()
    todo: list[type] = [ExperimentConfig]
    for registry in (OPTIMIZERS, BRAINS):
        todo += [registry.get(name)[0] for name in registry.names()]
    while todo:
        cls = todo.pop()
        if cls in found or not dataclasses.is_dataclass(cls):
            continue
        found.add(cls)
        for hint in typing.get_type_hints(cls).values():
            for arg in (hint, *typing.get_args(hint)):
                if isinstance(arg, type) and issubclass(arg, ConfigBase):
                    todo.append(arg)
    return found


def _integer_fields() -> list[tuple[str, Any, dict[str, Any], Any]]:
    """(path, hint, bounds, a valid value) of every integer field of every config class."""
    fields = []
    for cls in sorted(_config_classes(), key=lambda c: c.__qualname__):
        hints = typing.get_type_hints(cls)
        for field in dataclasses.fields(cls):
            hint = hints[field.name]
            kinds = {a for a in typing.get_args(hint) if a is not type(None)} or {hint}
            meta = dict(field.metadata)
            low = int(meta["ge"] if meta.get("ge") is not None else (meta.get("gt") or 0) + 1)
            if kinds == {int}:
                fields.append((f"{cls.__name__}.{field.name}", hint, meta, low))
            elif typing.get_origin(hint) is tuple and set(typing.get_args(hint)) <= {int, ...}:
                fields.append((f"{cls.__name__}.{field.name}", hint, meta, (low, low)))
    return fields


INTEGER_FIELDS = _integer_fields()


def test_every_integer_field_is_found():
    """The walk below reaches the integer fields of the top level, sections and registries."""
    names = {path for path, *_ in INTEGER_FIELDS}
    assert {"ExperimentConfig.number_generations", "CheckpointConfig.every_generations"} <= names
    assert {"EvaluationConfig.workers", "FFNNConfig.hidden_layers"} <= names
    assert len(names) >= 15


@pytest.mark.parametrize(("path", "hint", "meta", "valid"), INTEGER_FIELDS, ids=lambda v: v)
def test_every_integer_field_takes_whole_floats_and_refuses_fractions(path, hint, meta, valid):
    """One rule for every integer field: ``30.0`` is the integer 30 (many JSON writers do not
    keep an int/float distinction), ``30.5`` is refused naming the field."""
    as_float = [float(v) for v in valid] if isinstance(valid, tuple) else float(valid)
    parsed = parse_value(hint, as_float, path, meta)
    assert parsed == valid
    assert all(type(v) is int for v in (parsed if isinstance(parsed, tuple) else (parsed,)))
    fraction = [v + 0.5 for v in as_float] if isinstance(as_float, list) else as_float + 0.5
    with pytest.raises(ConfigError, match=rf"^{re.escape(path)}.*: must be an integer"):
        parse_value(hint, fraction, path, meta)


def test_number_generations_30_point_0_is_30_and_30_point_5_is_refused():
    """The issue's example end to end through parse_config."""
    assert parse_config(small_config(number_generations=30.0)).number_generations == 30
    assert "number_generations: must be an integer >= 1, got 30.5" in error_of(
        small_config(number_generations=30.5)
    )
