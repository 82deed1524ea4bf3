"""Continuing a PBT folder: the same setup goes on, and a larger ``number_generations`` extends it.

A folder continues when the command's setup is the one it was made with, compared as resolved
configs: the experiment a run's stored config was made from (the explored settings and the seed
aside, which is all a run's config differs in) is resolved by this release, so a field a later
release added, at its default, is no change; the stored setup hash, over the data as the folder's
release wrote it, holds the pbt section and the seed.

What may change: ``number_generations`` may grow by whole intervals (``--generations N``). No draw
of the PBT's generator depends on the number of intervals, and a run trains interval by interval
whatever the total, so the copies after the old last interval are decided now as a PBT given N
from the start decided them, and the extended PBT ends identical to it. What may not: the number
of runs (the start values of every run and every copy so far were drawn for that many), the pbt
section and every other experiment key; ``number_generations`` may not shrink.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from neuro_evolution.config.tree import config_to_dict, parse_config
from neuro_evolution.pbt.lineage import (
    PbtState,
    generator_from_state,
    generator_state,
    setup_hash,
)
from neuro_evolution.pbt.loop import PbtSetup, decide_copies
from neuro_evolution.pbt.section import section_data
from neuro_evolution.pbt.space import current_values, with_values
from neuro_evolution.run.resume import changed_keys
from neuro_evolution.support.errors import ConfigError, UserError

WHAT_MAY_CHANGE = (
    "only --generations may grow (whole intervals), and the evaluation section and observers "
    "may change"
)


def made_experiment(state: PbtState, setup: PbtSetup) -> dict[str, Any]:
    """The experiment the PBT in ``state`` was made from, as its release wrote it: a run's
    stored config with the command's explored settings and the first run's seed."""
    data = next(iter(state.configs.values()))
    made = with_values(data, current_values(setup.space, setup.experiment))
    made["random_seed"] = int(next(iter(state.lineage.values()))["seed"])
    return made


def resolved(folder: Path, made: dict[str, Any]) -> dict[str, Any]:
    """``made`` resolved by this release (a field added since takes its default)."""
    try:
        return config_to_dict(parse_config(made))
    except ConfigError as error:
        raise UserError(f"{folder}: its stored config no longer parses: {error}") from None


def stored_generations(state: PbtState) -> int:
    """The number_generations of the PBT in ``state``."""
    return int(next(iter(state.configs.values()))["number_generations"])


def kept_length(state: PbtState, setup: PbtSetup) -> PbtSetup:
    """``setup`` with the folder's number_generations where the command's is smaller (a PBT
    extended before, continued by the command that made it)."""
    generations = stored_generations(state)
    if setup.experiment["number_generations"] >= generations:
        return setup
    experiment = {**setup.experiment, "number_generations": generations}
    return dataclasses.replace(setup, experiment=experiment)


def check_same_setup(folder: Path, state: PbtState, setup: PbtSetup) -> int:
    """Refuse (one line) a command whose setup differs from the folder's in anything but what
    may change; return the folder's number_generations."""
    made = made_experiment(state, setup)
    changed = changed_keys(resolved(folder, made), setup.experiment)
    if changed:
        raise UserError(
            f"{folder}: holds a PBT whose config differs in {', '.join(changed)}; "
            f"{WHAT_MAY_CHANGE}: give another --out for a new PBT, or undo the change"
        )
    runs, section = len(state.configs), setup.section
    if setup_hash(made, {**section_data(section), "runs": runs}) != state.setup:
        raise UserError(
            f"{folder}: holds a PBT of another pbt section (or other base values of its explored "
            f"keys); {WHAT_MAY_CHANGE}: give another --out for a new PBT, or the same section to "
            "continue it"
        )
    generations = stored_generations(state)
    if section.runs != runs:
        raise UserError(
            f"--runs {section.runs}: {folder} holds a PBT of {runs} runs, and that number cannot "
            f"change (the start values and every copy so far were drawn for {runs} runs); give "
            f"another --out for a new PBT, or --generations N (a multiple of {section.interval} "
            f"above {generations}) to train every run on"
        )
    if setup.experiment["number_generations"] < generations:
        raise UserError(
            f"number_generations {setup.experiment['number_generations']}: {folder} holds a PBT "
            f"of {generations} generations; it can be extended (--generations N, a multiple of "
            f"{section.interval} above {generations}), not shortened; without --generations it "
            "keeps its length"
        )
    return generations


def continued_state(folder: Path, state: PbtState, setup: PbtSetup) -> PbtState:
    """``state`` checked against ``setup``, every run's config resolved by this release and
    given the command's number_generations; where that grew and the PBT had ended, the copies
    after its old last interval are decided (as the longer PBT decided them). Nothing is
    written here."""
    generations = check_same_setup(folder, state, setup)
    total = setup.experiment["number_generations"]

    def current(data: dict[str, Any]) -> dict[str, Any]:
        return {**resolved(folder, data), "number_generations": total}

    state.configs = {name: current(data) for name, data in state.configs.items()}
    for copy in state.pending or []:
        copy["config"] = current(copy["config"])
    ended = state.pending is None and state.intervals_done == generations // setup.section.interval
    if total > generations and ended:
        last = state.history[-1]
        rng = generator_from_state(state.generator)
        state.pending = decide_copies(setup, state, last["scores"], rng, last["generation"])
        state.generator = generator_state(rng)
        state.intervals_done -= 1  # the copies close it, as they close every interval
    state.setup = setup.hash
    return state
