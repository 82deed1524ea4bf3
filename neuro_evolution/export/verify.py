"""Replay a run's held-out validation episodes through an exported policy.

The export plays the episodes the run validates on (the same reset seeds, episode rules and
env), and so does the framework's own brain of the same genome; both means are printed, with
the run's recorded validation when the export is of its candidate. The policy is given its raw
observations: its scaler is inside it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from neuro_evolution.core.schema import to_dict
from neuro_evolution.evaluation.episodes.runner import (
    EpisodeRunner,
    RunnerSpec,
    replace_runner_config,
)
from neuro_evolution.export.loaded import ExportedBrain, load_policy
from neuro_evolution.export.selection import choose
from neuro_evolution.optimizers.members import MEMBER_FLAGS
from neuro_evolution.run.directory import CANDIDATE_FILE, load_candidate
from neuro_evolution.support.console import plural
from neuro_evolution.support.errors import UserError
from neuro_evolution.support.seeds import validation_seeds


def _selection(label: str) -> dict[str, Any]:
    """The :func:`choose` arguments that pick the genome an export's ``label`` names again."""
    kind, _, value = label.partition(" ")
    if kind == "candidate":
        return {}
    if kind == "hall_of_fame" and value.isdigit():
        return {"hall_of_fame": int(value)}
    if f"--{kind}" in MEMBER_FLAGS and value:
        return {"member": (f"--{kind}", value)}
    raise UserError(f"the export names its genome {label!r}, which this run cannot pick")


def replay_exported(
    run_dir: str | Path, exported: str | Path, episodes: int | None = None
) -> tuple[list[float], list[float]]:
    """(returns of the export, returns of the framework's brain) on the run's validation
    episodes (the first ``episodes`` of them, default the run's count); prints both."""
    run_dir = Path(run_dir)
    policy = load_policy(exported)
    label = str(policy.metadata.get("genome", "candidate"))
    chosen = choose(run_dir, **_selection(label))
    config = chosen.config
    if config.validation is None:
        raise UserError(f"--validation: {run_dir} was trained without a validation section")
    environment = to_dict(config.environment)
    if json.dumps(policy.metadata.get("environment"), sort_keys=True) != json.dumps(
        environment, sort_keys=True
    ):
        raise UserError(
            f"{exported} was exported for {policy.metadata.get('environment')}, but {run_dir} "
            f"trains on {environment}"
        )
    count = episodes if episodes is not None else config.validation.episodes
    seeds = [int(s) for s in validation_seeds(config.random_seed, count)]
    spec = replace_runner_config(
        RunnerSpec(environment=config.environment, episode_runner=config.episode_runner),
        number_fitness_runs=1,
    )
    runner = EpisodeRunner(spec)
    brain, exported_brain = chosen.template.build(chosen.genome), ExportedBrain(policy)
    own, through = [], []
    try:
        for episode, seed in enumerate(seeds):
            result = runner.run_episode(exported_brain, seed)
            reference = runner.run_episode(brain, seed, scaler=chosen.scaler)
            through.append(float(result.fitness))
            own.append(float(reference.fitness))
            print(
                f"episode {episode}: seed {seed}, return {result.fitness:.10g} (framework brain "
                f"{reference.fitness:.10g}), {result.steps} steps"
            )
    finally:
        runner.close()
    print(
        f"exported policy ({Path(exported).name}): mean return {np.mean(through):.10g} over "
        f"{plural(len(seeds), 'held-out validation episode')}; the framework's brain: "
        f"{np.mean(own):.10g}{_recorded(run_dir, label)}"
    )
    return through, own


def _recorded(run_dir: Path, label: str) -> str:
    """``; the run's validation: ...`` for the candidate, when the run recorded one."""
    if label != "candidate" or not (run_dir / CANDIDATE_FILE).is_file():
        return ""
    candidate, _ = load_candidate(run_dir / CANDIDATE_FILE)
    score = candidate.score
    if score is None:
        return ""
    return (
        f"; the run's validation: {score.mean:.10g} over "
        f"{plural(len(score.returns), 'episode')} (after generation {score.generation})"
    )
