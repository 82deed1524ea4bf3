"""The config reference (``docs/config.md``) rendered from the config classes themselves.

``python -m neuro_evolution.config.reference > docs/config.md`` regenerates it; a test fails when
the file and the code disagree, so documented defaults cannot drift.
"""

from __future__ import annotations

import json

from neuro_evolution.brains.base import BRAINS
from neuro_evolution.config.tree import CheckpointConfig, ExperimentConfig
from neuro_evolution.core.schema import field_docs
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.evaluation.episodes.runner import EpisodeRunnerConfig
from neuro_evolution.evaluation.episodes.wrappers import WrapperConfig
from neuro_evolution.evaluation.pools.options import EvaluationConfig
from neuro_evolution.moo.objectives import ObjectiveConfig
from neuro_evolution.observers.registry import OBSERVERS
from neuro_evolution.optimizers.base import OPTIMIZERS
from neuro_evolution.optimizers.cma_restarts import RestartsConfig
from neuro_evolution.qd.descriptors import ArchiveConfig, DescriptorConfig


def _table(cls: type) -> list[str]:
    lines = ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
    for name, type_text, default, doc in field_docs(cls):
        shown = "required" if default == "required" else f"`{json.dumps(default)}`"
        type_text = type_text.replace("|", "\\|")
        lines.append(f"| `{name}` | {type_text} | {shown} | {doc} |")
    return lines


def render_reference() -> str:
    """The whole reference as Markdown."""
    lines = [
        "# Config reference",
        "",
        "Generated from the config classes by `python -m neuro_evolution.config.reference`;",
        "a test checks that this file matches the code. Unknown keys are refused.",
        "",
        "## Top level",
        "",
        *_table(ExperimentConfig),
    ]
    sections: list[tuple[str, type]] = [
        ("environment", EnvironmentConfig),
        ("environment.wrappers[i]", WrapperConfig),
        ("episode_runner", EpisodeRunnerConfig),
        ("evaluation", EvaluationConfig),
        ("checkpoint", CheckpointConfig),
    ]
    for extra in _optional_sections():
        sections.append(extra)
    sections += [
        ("optimizer.descriptors[i] (MAP_ELITES, CMA_ME)", DescriptorConfig),
        ("optimizer.archive (MAP_ELITES, CMA_ME)", ArchiveConfig),
        ("optimizer.objectives[i] (NSGA2)", ObjectiveConfig),
        ("optimizer.restarts (CMA_ES, SEP_CMA_ES)", RestartsConfig),
    ]
    for name, cls in sections:
        lines += ["", f"## `{name}`", "", *_table(cls)]
    for type_name in OBSERVERS.names():
        observer_config, observer = OBSERVERS.get(type_name)
        if _is_builtin(observer):  # not a user's observer registered in this process
            heading = f'## `observers[i]` with `"type": "{type_name}"`'
            lines += ["", heading, "", *_table(observer_config)]
    for kind, registry in (("optimizer", OPTIMIZERS), ("brain", BRAINS)):
        for type_name in registry.names():
            config_cls, impl = registry.get(type_name)
            if not _is_builtin(impl):
                continue  # a user's brain or optimizer registered in this process
            lines += ["", f'## `{kind}` with `"type": "{type_name}"`', ""]
            doc = (config_cls.__doc__ or "").strip().splitlines()
            if doc:
                lines += [doc[0], ""]
            lines += _table(config_cls)
    return "\n".join(lines) + "\n"


def _is_builtin(impl: type) -> bool:
    """Whether a registered implementation ships with neuro_evolution."""
    return impl.__module__.split(".")[0] == "neuro_evolution"


def _optional_sections() -> list[tuple[str, type]]:
    """Sections that exist only in some builds (e.g. novelty), found on ExperimentConfig."""
    import typing

    hints = typing.get_type_hints(ExperimentConfig)
    known = {"environment", "episode_runner", "evaluation", "checkpoint", "optimizer", "brain"}
    found = []
    for name, hint in hints.items():
        if name in known:
            continue
        for arg in typing.get_args(hint) or (hint,):
            if isinstance(arg, type) and hasattr(arg, "__dataclass_fields__"):
                found.append((name, arg))
    return found


if __name__ == "__main__":
    print(render_reference(), end="")
