"""Making the evaluation handler an ``evaluation`` section names, from the section's options."""

from __future__ import annotations

from typing import Any

from neuro_evolution.evaluation.pools.base import EvaluationHandler, handler_class
from neuro_evolution.evaluation.pools.options import EvaluationConfig, evaluation_config


def handler_from_config(section: EvaluationConfig) -> EvaluationHandler:
    """The handler the section names, made from the section's options."""
    return handler_class(section.handler).from_config(section)


def make_handler(handler: str, **options: Any) -> EvaluationHandler:
    """The handler called ``handler`` with ``options`` (fields of ``evaluation``; workers=0:
    one per core), validated like the config section."""
    return handler_from_config(evaluation_config(handler, **options))
