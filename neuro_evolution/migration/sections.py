"""The top level, ``optimizer``, ``episode_runner`` and ``novelty`` sections, and
:func:`migrate_config`, which maps a whole predecessor config.

Where an option moved: ``optimizer.hof_size`` is ``hall_of_fame_size``,
``optimizer.checkpoint_frequency`` is ``checkpoint.every_generations`` and
``optimizer.fix_seed_for_generation`` is ``episode_runner.fix_seed_for_generation``.
Where a value is converted: MU_ES's ``initial_gene_range`` r is [-r, r], its ``mutpb`` p is
``mutate_prob`` p and ``mate_prob`` 1 - p, its ``tournsize`` 0 is ``selection: best``; the
predecessor's ``max_steps_penalty`` was added to the return (here it is subtracted); its
``novelty_weight`` w weighted rank(novelty) against rank(fitness) with weight 1, which is
w / (1 + w) of this package's (1-w, w) split.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym

from neuro_evolution.migration.brains import BrainContext, migrate_brain
from neuro_evolution.migration.environments import migrate_environment
from neuro_evolution.migration.rules import (
    Converter,
    Drop,
    MigrationError,
    Notes,
    Rule,
    map_section,
    nest,
    require_section,
    shown,
    skip,
)

SECTIONS = ("environment", "number_generations", "optimizer", "brain", "episode_runner")
LIST_OPTIONS = frozenset({"hidden_layers", "cppn_hidden_layers"})
SEED_RANGE = (1, 10000)  # the predecessor drew random_seed -1 from it
ORDER = (
    "environment",
    "random_seed",
    "number_generations",
    "optimizer",
    "brain",
    "episode_runner",
    "novelty",
    "hall_of_fame_size",
    "checkpoint",
)


def random_seed(value: Any, where: str, notes: Notes) -> dict[str, Any]:
    """A negative seed (the predecessor drew one per run) is drawn now, with a line: every run
    of the written config is then the same run."""
    if isinstance(value, int) and value < 0:
        seed = random.SystemRandom().randint(*SEED_RANGE)
        notes.changed(
            where, value, f"random_seed={seed}", "the predecessor drew a new seed every run"
        )
        return {"random_seed": seed}
    return {"random_seed": value}


TOP_RULES: dict[str, Rule] = {
    "environment": skip,
    "random_seed": random_seed,
    "number_generations": "number_generations",
    "optimizer": skip,
    "brain": skip,
    "episode_runner": skip,
    "novelty": skip,
    "use_worker_processes": Drop("the evaluation section picks the handler here (mp by default)"),
}


def checkpoint_frequency(value: Any, where: str, notes: Notes) -> dict[str, Any]:
    """N > 0 -> checkpoint.every_generations N; 0 (none) cannot be had here."""
    if value:
        return {"checkpoint.every_generations": value}
    notes.dropped(where, value, "checkpoints cannot be switched off here: one every 10 generations")
    return {}


COMMON_OPTIMIZER_RULES: dict[str, Rule] = {
    "hof_size": "hall_of_fame_size",
    "checkpoint_frequency": checkpoint_frequency,
    "fix_seed_for_generation": "episode_runner.fix_seed_for_generation",
    "efficiency_weight": Drop(
        "no such option here: fitness is the episode return; for a cost per step use "
        "episode_runner.training_reward_shift or an NSGA2 objective"
    ),
}


def cma_mu(value: Any, where: str, notes: Notes) -> dict[str, Any]:
    """mu 0 (the predecessor: population_size // 2) is this package's default (null)."""
    return {"optimizer.mu": value} if value else {}


def gene_range(value: Any, where: str, notes: Notes) -> dict[str, Any]:
    """r -> [-r, r], the range of the first generation's genes."""
    return {"optimizer.initial_gene_range": [-value, value]}


def mutpb(value: Any, where: str, notes: Notes) -> dict[str, Any]:
    """An offspring was mutated with probability p, else crossed (DEAP's varOr)."""
    return {"optimizer.mutate_prob": value, "optimizer.mate_prob": round(1 - value, 12)}


def tournsize(value: Any, where: str, notes: Notes) -> dict[str, Any]:
    """0: the mu best survive; k > 0: tournaments of k."""
    if value:
        return {"optimizer.selection": "tournament", "optimizer.tournsize": value}
    return {"optimizer.selection": "best"}


def extra_from_hof(value: Any, where: str, notes: Notes) -> dict[str, Any]:
    """Kept by name; the predecessor's code drew those extra parents from the population."""
    if value:
        notes.note(
            where,
            "the predecessor's code added random members of the population, not of the hall "
            "of fame, to the parents; here the best hall-of-fame genomes are added",
        )
    return {"optimizer.extra_from_hof": value}


OPTIMIZER_RULES: dict[str, dict[str, Rule]] = {
    "CMA_ES": {
        "population_size": "optimizer.population_size",
        "sigma": "optimizer.sigma",
        "mu": cma_mu,
    },
    "MU_ES": {
        "mu": "optimizer.mu",
        "lambda_": "optimizer.lambda_",
        "initial_gene_range": gene_range,
        "mutpb": mutpb,
        "tournsize": tournsize,
        "extra_from_hof": extra_from_hof,
        "strategy_parameter_per_gene": "optimizer.strategy_parameter_per_gene",
    },
}


def migrate_optimizer(section: dict[str, Any], source: str, notes: Notes) -> dict[str, Any]:
    """``{target path: value}`` of the optimizer section (an unknown type is refused)."""
    kind = section.get("type")
    rules = OPTIMIZER_RULES.get(kind) if isinstance(kind, str) else None
    if rules is None:
        raise MigrationError(
            f"{source}: optimizer.type {shown(kind)} is not an optimizer of the predecessor "
            f"({', '.join(OPTIMIZER_RULES)}); fix the type"
        )
    fields = {key: value for key, value in section.items() if key != "type"}
    mapped = map_section(fields, "optimizer", {**COMMON_OPTIMIZER_RULES, **rules}, notes)
    return {"optimizer.type": kind, **mapped}


def max_steps_penalty(value: Any, where: str, notes: Notes) -> dict[str, Any]:
    """The predecessor added the penalty to a cut episode's return; here it is subtracted."""
    if not value:
        return {"episode_runner.max_steps_penalty": value}
    notes.changed(
        where,
        value,
        f"episode_runner.max_steps_penalty={shown(-value)}",
        "the predecessor added it to the return of a cut episode; here it is subtracted",
    )
    return {"episode_runner.max_steps_penalty": -value}


def max_steps_per_run(value: Any, where: str, notes: Notes) -> dict[str, Any]:
    """Kept; the predecessor's cut came one step later."""
    if value:
        notes.note(where, f"the predecessor cut an episode after {value + 1} steps, here {value}")
    return {"episode_runner.max_steps_per_run": value}


RUNNER_RULES: dict[str, Rule] = {
    "number_fitness_runs": "episode_runner.number_fitness_runs",
    "max_steps_per_run": max_steps_per_run,
    "max_steps_penalty": max_steps_penalty,
    "reuse_env": Drop("every worker here makes its env once and reuses it"),
    "keep_env_seed_fixed_during_generation": Drop(
        "the predecessor never read it; optimizer.fix_seed_for_generation is "
        "episode_runner.fix_seed_for_generation here"
    ),
    "use_autoencoder": Drop("no autoencoder here: brains see the env's observations"),
    "environment_attributes": skip,  # read with the environment
}

DISTANCES = {"euclid": "euclidean", "NCD": "ncd"}
SOURCES = ("action", "observation")
# Behaviour sources of the predecessor that mean something else here -> why.
OTHER_SOURCES = {
    "state": "the predecessor's state was a MuJoCo env's joint positions or an Atari env's RAM; "
    "here state is env.unwrapped.state, which those envs do not have",
}


def novelty_weight(value: Any, where: str, notes: Notes) -> dict[str, Any]:
    """rank(fitness) + w rank(novelty) there orders as (1-w') rank(fitness) + w' rank(novelty)
    here with w' = w / (1 + w)."""
    if not value:
        return {"novelty.novelty_weight": value}
    weight = round(value / (1 + value), 12)
    notes.changed(
        where,
        value,
        f"novelty.novelty_weight={shown(weight)}",
        "the predecessor ranked by rank(fitness) + w rank(novelty); here by (1-w) "
        "rank(fitness) + w rank(novelty), the same weighting at w / (1 + w)",
    )
    return {"novelty.novelty_weight": weight}


def distance(value: Any, where: str, notes: Notes) -> dict[str, Any]:
    """euclid -> euclidean, NCD -> ncd; the predecessor's ``equal`` is not offered."""
    if value in DISTANCES:
        return {"novelty.distance": DISTANCES[value]}
    notes.changed(where, value, 'novelty.distance="euclidean"', "not offered here")
    return {"novelty.distance": "euclidean"}


def behavior_source(value: Any, where: str, notes: Notes) -> dict[str, Any]:
    """action and observation are kept; any other source becomes the observation."""
    if value in SOURCES:
        return {"novelty.behavior_source": value}
    notes.changed(
        where,
        value,
        'novelty.behavior_source="observation"',
        OTHER_SOURCES.get(value, "the predecessor recorded no behaviour for it"),
    )
    return {"novelty.behavior_source": "observation"}


def positive(target: str, meaning: str) -> Converter:
    """A count copied to ``target`` when >= 1; the predecessor's -1 (``meaning``) is dropped."""

    def convert(value: Any, where: str, notes: Notes) -> dict[str, Any]:
        if isinstance(value, int) and value >= 1:
            return {target: value}
        notes.dropped(where, value, f"{meaning} is not offered here; the default applies")
        return {}

    return convert


NOVELTY_RULES: dict[str, Rule] = {
    "novelty_weight": novelty_weight,
    "distance": distance,
    "behavior_source": behavior_source,
    "novelty_nearest_k": "novelty.novelty_nearest_k",
    "max_recorded_behaviors": "novelty.max_recorded_behaviors",
    "recorded_behaviors_per_generation": "novelty.recorded_behaviors_per_generation",
    "behavioral_interval": positive(
        "novelty.behavioral_interval", "recording the last step's value alone"
    ),
    "behavioral_max_length": positive("novelty.behavioral_max_length", "no limit"),
}


def refuse_design_space(node: Any, source: str, where: str = "") -> None:
    """A list where the predecessor expects one value is its batch_train design space (lists
    of choices): refused, naming the first such option."""
    items = node.items() if isinstance(node, Mapping) else ()
    for key, value in items:
        path = f"{where}.{key}" if where else key
        if isinstance(value, Mapping):
            refuse_design_space(value, source, path)
        elif isinstance(value, list) and choices(key, value):
            raise MigrationError(
                f"{source}: {path} is a list of choices, a design space of the predecessor's "
                "batch_train, not one config; keep one value of each list (a sweep of this "
                "package runs grids: docs/guide/sweeps.md)"
            )


def choices(key: str, value: list[Any]) -> bool:
    """Whether a list value is a list of choices (layer lists are values, ``[[64, 64]]`` the
    one choice of layers)."""
    if key not in LIST_OPTIONS:
        return True
    return sum(isinstance(item, list) for item in value) > 1


def check_layout(data: Any, source: str) -> None:
    """A predecessor config is an object with its five sections; this package's own config
    (an ``environment`` object) and other JSON are refused."""
    if not isinstance(data, dict):
        raise MigrationError(
            f"{source}: a JSON {type(data).__name__}, not a config of the predecessor (an "
            "object with environment, optimizer, brain, episode_runner); pass one of its "
            "configurations/*.json"
        )
    if isinstance(data.get("environment"), dict):
        raise MigrationError(
            f"{source}: already a config of this package (environment is an object); train it "
            "with python -m neuro_evolution.train"
        )
    missing = [key for key in SECTIONS if key not in data]
    if missing:
        raise MigrationError(
            f"{source}: no {', '.join(missing)}: not a config of the predecessor (its "
            "configurations/*.json have environment, number_generations, optimizer, brain and "
            "episode_runner); pass one of those"
        )


def action_space_of(environment: dict[str, Any]) -> Callable[[], gym.Space]:
    """A function that makes the env once and returns its action space (for brains whose size
    the predecessor took from it)."""
    cache: list[gym.Space] = []

    def action_space() -> gym.Space:
        if not cache:
            from neuro_evolution.core.schema import parse
            from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig

            env = parse(EnvironmentConfig, environment, "environment").make()
            cache.append(env.action_space)
            env.close()
        return cache[0]

    return action_space


def migrate_config(data: Any, source: str, notes: Notes) -> dict[str, Any]:
    """This package's config of the predecessor's config ``data`` (read from ``source``); every
    dropped or changed option is a line of ``notes``. Raises :class:`MigrationError`."""
    check_layout(data, source)
    refuse_design_space(data, source)
    runner = require_section(data, "episode_runner", source)
    environment = migrate_environment(data["environment"], runner, source, notes)
    flat = map_section(data, "", TOP_RULES, notes)
    flat.update(migrate_optimizer(require_section(data, "optimizer", source), source, notes))
    flat.update(map_section(runner, "episode_runner", RUNNER_RULES, notes))
    if data.get("novelty") is not None:
        novelty = require_section(data, "novelty", source)
        flat.update(map_section(novelty, "novelty", NOVELTY_RULES, notes))
    context = BrainContext(notes, action_space_of(environment))
    brain = migrate_brain(require_section(data, "brain", source), source, context)
    tree = nest(flat)
    tree.update(environment=environment, brain=brain)
    return {key: tree[key] for key in ORDER if key in tree}
