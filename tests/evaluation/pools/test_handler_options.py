"""Evaluation options have one source: the handler registry and the ``evaluation`` section."""

from __future__ import annotations

import subprocess
import sys
import typing

import pytest

from neuro_evolution.config.tree import ExperimentConfig
from neuro_evolution.evaluation.pools import make_handler
from neuro_evolution.evaluation.pools.base import handler_names, register_handler
from neuro_evolution.evaluation.pools.options import (
    SECTION,
    START_METHODS,
    EvaluationConfig,
    StartMethod,
    evaluation_config,
    option_path,
)
from neuro_evolution.evaluation.pools.sequential import SequentialHandler
from neuro_evolution.support.errors import ConfigError
from neuro_evolution.train import build_parser


def test_section_constant_names_the_experiment_field_that_holds_the_evaluation_options() -> None:
    """option_path() builds error paths from SECTION, so it must be the real field name."""
    hints = typing.get_type_hints(ExperimentConfig)
    assert hints[SECTION] is EvaluationConfig
    assert typing.get_args(StartMethod) == START_METHODS
    assert option_path("scheduler") == "evaluation.scheduler"
    with pytest.raises(ValueError, match="no field 'schedular'"):
        option_path("schedular")


def test_train_offers_exactly_the_registered_handlers_and_start_methods() -> None:
    actions = {a.dest: a for a in build_parser()._actions}
    assert list(actions["handler"].choices) == handler_names()
    assert list(actions["start_method"].choices) == list(START_METHODS)
    assert handler_names()[:4] == ["sequential", "mp", "dask", "vectorized"]


def test_an_unknown_handler_is_refused_once_at_the_config_naming_the_field() -> None:
    with pytest.raises(ConfigError, match=r"^evaluation\.handler: must be one of .*`vectorized`"):
        evaluation_config("vectorised")


def test_a_registered_handler_is_made_from_the_config_section() -> None:
    """A handler outside the package registers by name and is built like the built-in ones."""

    @register_handler("test-recording")
    class RecordingHandler(SequentialHandler):
        @classmethod
        def from_config(cls, section: EvaluationConfig) -> RecordingHandler:
            handler = cls()
            handler.section = section  # type: ignore[attr-defined]
            return handler

    handler = make_handler("test-recording", workers=3)
    assert isinstance(handler, RecordingHandler)
    assert handler.section.worker_count == 3  # type: ignore[attr-defined]
    assert "test-recording" in handler_names()


def test_make_handler_resolves_zero_workers_to_one_per_core() -> None:
    handler = make_handler("mp", workers=0)
    assert handler.workers == evaluation_config("mp").worker_count >= 1  # type: ignore[attr-defined]


def test_listing_handler_names_does_not_import_dask() -> None:
    """The command line knows every built-in name without importing the heavy handlers."""
    code = (
        "import sys, neuro_evolution.train as t; t.build_parser(); "
        "print(any(m.startswith(('distributed', 'neuro_evolution.evaluation.pools.dask')) "
        "for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
