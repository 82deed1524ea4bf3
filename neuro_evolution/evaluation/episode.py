"""EpisodeRunner: runs a brain in one long-lived Gymnasium env and returns its fitness.

Fitness is the mean episode return over ``number_fitness_runs`` episodes. An episode ends when
the env terminates or truncates (its own time limit), or after ``max_steps_per_run`` steps when
that is set; an episode cut by ``max_steps_per_run`` before the env terminated loses
``max_steps_penalty`` from its return.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np

from neuro_evolution.brains.base import Brain, BrainTemplate
from neuro_evolution.configtools import ConfigBase, config_class, option
from neuro_evolution.evaluation.environment import EnvironmentConfig
from neuro_evolution.frozen import FrozenClassMeta, frozen_dataclass
from neuro_evolution.novelty import BehaviorRecorder, NoveltyConfig
from neuro_evolution.seeds import brain_rng, episode_seed


@config_class
class EpisodeRunnerConfig(ConfigBase):
    """How one genome is evaluated."""

    number_fitness_runs: int = option(1, doc="episodes per evaluation; fitness is their mean", ge=1)
    max_steps_per_run: int = option(
        0, doc="cut an episode after this many steps (0: only the env's own limit)", ge=0
    )
    max_steps_penalty: float = option(
        0.0, doc="subtracted from the return of an episode cut by max_steps_per_run"
    )
    fix_seed_for_generation: bool = option(
        True, doc="all individuals of a generation use the same episode seeds (fair comparison)"
    )


@frozen_dataclass
class EvaluationResult(metaclass=FrozenClassMeta):
    """What one evaluation of a genome returns."""

    fitness: float
    steps: int
    terminated: int = 0  # episodes that ended by termination
    truncated: int = 0  # episodes that ended by the env's truncation or max_steps_per_run
    behavior: np.ndarray | None = None  # behaviour record, when novelty asks for one


@frozen_dataclass
class RunnerSpec(metaclass=FrozenClassMeta):
    """Plain, picklable data from which any worker makes its own EpisodeRunner."""

    environment: EnvironmentConfig
    episode_runner: EpisodeRunnerConfig
    novelty: NoveltyConfig | None = None  # set when behaviour is recorded

    def make(self) -> EpisodeRunner:
        """A runner with its own env (made once, reused for every episode)."""
        return EpisodeRunner(self)


class EpisodeRunner:
    """Evaluates brains in one env that lives as long as the runner."""

    def __init__(self, spec: RunnerSpec, env: gym.Env | None = None):
        self.spec = spec
        self.config = spec.episode_runner
        self.env = env if env is not None else spec.environment.make()

    def run(self, brain: Brain, seed: int) -> EvaluationResult:
        """Evaluate ``brain`` over ``number_fitness_runs`` episodes derived from ``seed``."""
        runs = self.config.number_fitness_runs
        recorder = None
        if self.spec.novelty is not None:
            recorder = BehaviorRecorder(self.spec.novelty, self.env)
        total_return = 0.0
        total_steps = terminated = truncated = 0
        for episode in range(runs):
            result = self.run_episode(
                brain, episode_seed(seed, episode), brain_rng(seed, episode), recorder
            )
            total_return += result.fitness
            total_steps += result.steps
            terminated += result.terminated
            truncated += result.truncated
        return EvaluationResult(
            fitness=total_return / runs,
            steps=total_steps,
            terminated=terminated,
            truncated=truncated,
            behavior=None if recorder is None else recorder.behavior(),
        )

    def run_episode(
        self,
        brain: Brain,
        env_seed: int,
        rng: np.random.Generator | None = None,
        recorder: BehaviorRecorder | None = None,
    ) -> EvaluationResult:
        """One episode from ``env.reset(seed=env_seed)``; fitness is the (penalised) return."""
        env = self.env
        limit = self.config.max_steps_per_run or None
        observation, _ = env.reset(seed=env_seed)
        brain.reset(rng if rng is not None else np.random.default_rng(env_seed))
        if recorder is not None:
            recorder.start_episode()
        episode_return = 0.0
        steps = 0
        terminated = truncated = False
        while True:
            action = brain.step(observation)
            if recorder is not None and recorder.source != "observation":
                recorder.record(action, None)
            observation, reward, terminated, truncated, _ = env.step(action)
            if recorder is not None and recorder.source == "observation":
                recorder.record(None, observation)
            episode_return += float(reward)
            steps += 1
            if terminated or truncated:
                break
            if limit is not None and steps >= limit:
                episode_return -= self.config.max_steps_penalty
                truncated = True
                break
        return EvaluationResult(
            fitness=episode_return,
            steps=steps,
            terminated=int(bool(terminated)),
            truncated=int(bool(truncated) and not terminated),
        )

    def dry_run(self, template: BrainTemplate) -> None:
        """One reset, one brain step and one env step with a zero genome: fail early on mismatch."""
        brain = template.build(np.zeros(template.genome_size))
        observation, _ = self.env.reset(seed=0)
        brain.reset(np.random.default_rng(0))
        action = brain.step(observation)
        if not self.env.action_space.contains(action):
            raise ValueError(
                f"brain {template.config.type_name()} produced {action!r}, which is not in the "
                f"action space {self.env.action_space} of {self.spec.environment.id}"
            )
        self.env.step(action)

    def close(self) -> None:
        """Close the env."""
        self.env.close()


def replace_runner_config(spec: RunnerSpec, **changes: Any) -> RunnerSpec:
    """A copy of ``spec`` with some episode-runner options changed (e.g. for replay)."""
    runner = dataclasses.replace(spec.episode_runner, **changes)
    return dataclasses.replace(spec, episode_runner=runner)
