"""Making the evaluation handler an ``evaluation`` section names, from the section's options."""

from __future__ import annotations

from typing import Any, cast

from neuro_evolution.evaluation.handlers.base import EvaluationHandler
from neuro_evolution.evaluation.handlers.options import EvaluationConfig, evaluation_config
from neuro_evolution.evaluation.handlers.registry import handler_class


def handler_from_config(section: EvaluationConfig) -> EvaluationHandler:
    """The handler the section names, made from the section's options."""
    # the registry sits below base.py, so it cannot name the type; every entry is a handler class
    cls = cast("type[EvaluationHandler]", handler_class(section.handler))
    return cls.from_config(section)


def make_handler(handler: str, **options: Any) -> EvaluationHandler:
    """The handler called ``handler`` with ``options`` (fields of ``evaluation``; workers=0:
    one per core), validated like the config section."""
    return handler_from_config(evaluation_config(handler, **options))
