"""The vectorized handler: a whole batch of genomes steps in lockstep against a vector env.

Every episode of every individual runs at the same time, one lane per (episode k, individual i),
k = 0 .. number_fitness_runs-1: lane k*P+i's env copy is reset with ``episode_seed(seeds[i], k)``,
its brain (one batch brain of R*P copies, ``template.build_batch``) with ``brain_rng(seeds[i], k)``,
and all lanes step together until every episode has ended. So a small population with several
episodes each still fills the batch (CartPole, P=20, 5 episodes: 100 lanes for at most 500 steps,
not 20 lanes for 5 x 500). A lane whose episode has ended is masked out: it accumulates no reward,
its env copy is not stepped (sync mode) or ignored (native mode), and the brain is told through
``BatchBrain.step(observations, active=mask)``. Fitness, steps and the terminated/truncated counts
follow :meth:`EpisodeRunner.run` to the bit (see ``docs/vectorized.md``).

A brain type without a batch brain (``template.supports_batch`` false), or a run that records
behaviour for novelty, falls back to the per-individual loop of
:class:`~neuro_evolution.evaluation.handlers.base.WorkerState` with one ``warning:`` line (printed
once, by the process that starts the workers): same results, no speed-up.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Literal

import numpy as np

from neuro_evolution.brains.base import BatchBrain, BrainTemplate
from neuro_evolution.evaluation.episode import (
    TRAINING,
    EpisodeOutcome,
    EpisodeRunnerConfig,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
)
from neuro_evolution.evaluation.handlers.base import EvaluationHandler, WorkerState, check_batch
from neuro_evolution.evaluation.handlers.registry import register_handler
from neuro_evolution.evaluation.vector_env import (
    LockstepEnv,
    NativeAdapter,
    VectorMode,
    make_lockstep_env,
    native_adapter,
)
from neuro_evolution.normalization import record_batch
from neuro_evolution.support.console import warning
from neuro_evolution.support.seeds import brain_rngs, episode_seeds

MAX_CACHED_SIZES = 4  # vector envs kept per batch size (mp/Dask chunks have one or two sizes)


def evaluate_lockstep(
    brain: BatchBrain,
    envs: LockstepEnv,
    seeds: np.ndarray,
    config: EpisodeRunnerConfig,
    context: EvaluationContext = TRAINING,
    observation_size: int = 0,
) -> list[EvaluationResult]:
    """Evaluate P individuals under the same rules (``config``) as EpisodeRunner.run: all their
    episodes at once, one lane per (episode k, individual i), an ended lane masked.

    ``brain`` and ``envs`` hold R * P lanes, lane ``k * P + i`` being episode k of individual i
    (R = ``lockstep_runs(config, context)``; see :func:`lockstep_genomes`).
    ``observation_size`` > 0 gathers per-individual observation statistics (training only).
    """
    count = len(seeds)
    runs = lockstep_runs(config, context)
    lanes = envs.num_envs
    if lanes != runs * count:
        raise ValueError(f"{lanes} lanes for {runs} episodes of {count} individuals")
    stats = None
    if observation_size and not context.validation:
        stats = np.zeros((lanes, 1 + 2 * observation_size))
    if context.validation:  # the seed itself, as EpisodeRunner.run_episode(brain, seed)
        observations = envs.reset([int(seed) for seed in seeds])
        brain.reset([np.random.default_rng(int(seed)) for seed in seeds])
    else:
        observations = envs.reset([s for k in range(runs) for s in episode_seeds(seeds, k)])
        brain.reset([rng for k in range(runs) for rng in brain_rngs(seeds, k)])
    scaler = context.observation_scaler
    episode_return = np.zeros(lanes)
    steps = np.zeros(lanes, dtype=np.int64)
    ended_terminated = np.zeros(lanes, dtype=bool)
    ended_truncated = np.zeros(lanes, dtype=bool)
    ended_cut = np.zeros(lanes, dtype=bool)
    active = np.ones(lanes, dtype=bool)
    all_active = True
    while all_active or active.any():
        if stats is not None:
            record_batch(stats, observations, None if all_active else active)
        shown = observations if scaler is None else scaler.apply(observations)
        actions = brain.step(shown, None if all_active else active)
        observations, rewards, terminated, truncated = envs.step(actions, active)
        np.add(episode_return, rewards, out=episode_return, where=active)
        steps += active
        ended_by_env = active & (terminated | truncated)
        ended_terminated |= ended_by_env & terminated
        ended_truncated |= ended_by_env & truncated
        active &= ~ended_by_env
        cut = active & config.reached_limit(steps)
        ended_cut |= cut
        active &= ~cut
        all_active = all_active and bool(active.all())
    lanes_of = [slice(k * count, (k + 1) * count) for k in range(runs)]  # episode k's lanes
    episodes = [
        EpisodeOutcome(
            episode_return=episode_return[k].copy(),
            steps=steps[k].copy(),
            terminated=ended_terminated[k].copy(),
            truncated=ended_truncated[k].copy(),
            cut=ended_cut[k].copy(),
        )
        for k in lanes_of
    ]
    score = config.score(episodes)
    per_individual = None
    if stats is not None:  # episode totals added in episode order, as EpisodeRunner.run does
        per_individual = np.zeros((count, stats.shape[1]))
        for k in range(runs):
            per_individual += stats[k * count : (k + 1) * count]
    return [
        EvaluationResult(
            fitness=float(score.fitness[i]),
            steps=int(score.steps[i]),
            terminated=int(score.terminated[i]),
            truncated=int(score.truncated[i]),
            observation_stats=None if per_individual is None else per_individual[i].copy(),
        )
        for i in range(count)
    ]


def lockstep_runs(config: EpisodeRunnerConfig, context: EvaluationContext) -> int:
    """Episodes per individual in one evaluation: one for validation, else number_fitness_runs."""
    return 1 if context.validation else config.number_fitness_runs


def lockstep_genomes(genomes: np.ndarray, runs: int) -> np.ndarray:
    """The (R * P, G) genomes of the lanes: lane ``k * P + i`` is individual i."""
    return genomes if runs == 1 else np.tile(genomes, (runs, 1))


def fallback_reason(template: BrainTemplate, spec: RunnerSpec) -> str:
    """Why this template/spec cannot run in lockstep ("" when it can)."""
    if not template.supports_batch:
        return f"brain type {template.config.type_name()} has no batch brain"
    if spec.novelty is not None:
        return "lockstep evaluation does not record behaviour for novelty"
    return ""


def warn_about_fallback(reason: str) -> None:
    """The one ``warning:`` line of a fallback to the per-individual loop."""
    warning(f"vectorized evaluation falls back to one individual at a time: {reason}")


class VectorizedWorkerState:
    """A worker's long-lived state for lockstep evaluation (same API as :class:`WorkerState`).

    ``mode`` "auto" uses the env's native vector env when it has a seed-exact adapter and a
    SyncVectorEnv otherwise; "native" insists on the native one; "sync" always uses SyncVectorEnv.
    """

    def __init__(
        self,
        template: BrainTemplate,
        spec: RunnerSpec,
        mode: VectorMode = "auto",
        announce: bool = True,
    ):
        if mode not in ("auto", "native", "sync"):
            raise ValueError(f"vectorized mode {mode!r} is unknown: use auto, native or sync")
        self.template = template
        self.spec = spec
        self.fallback: WorkerState | None = None
        self.fallback_reason = ""
        self._envs: OrderedDict[int, LockstepEnv] = OrderedDict()
        self._adapter: NativeAdapter | None = None
        self.mode: Literal["native", "sync"] = "sync"
        self.sync_reason = "sync mode was asked for"
        self.fallback_reason = fallback_reason(template, spec)
        if self.fallback_reason:
            if announce:  # a pool's workers do not: their parent warns once
                warn_about_fallback(self.fallback_reason)
            self.fallback = WorkerState(template, spec)
            return
        if mode != "sync":
            self._adapter, self.sync_reason = native_adapter(spec.environment)
            if self._adapter is not None:
                self.mode = "native"
            elif mode == "native":
                raise ValueError(
                    f"environment {spec.environment.label!r} cannot run on a native vector env: "
                    f"{self.sync_reason}; use mode 'auto' or 'sync'"
                )
        io = template.io
        self._observation_size = io.input_size
        self._neutral_action = io.decode_batch(np.zeros((1, io.output_size)))[0]
        self._discrete_actions = io.action_kind == "discrete"

    def describe(self) -> str:
        """How this state evaluates, e.g. 'native vector env' or 'SyncVectorEnv (why)'."""
        if self.fallback is not None:
            return f"per-individual loop ({self.fallback_reason})"
        if self.mode == "native":
            return f"native vector env of {self.spec.environment.label}"
        return f"SyncVectorEnv ({self.sync_reason})"

    def evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        """One result per genome, identical to what :meth:`WorkerState.evaluate` returns."""
        if self.fallback is not None:
            return self.fallback.evaluate(genomes, seeds, context)
        genomes, seeds = check_batch(genomes, seeds, self.template.genome_size)
        if genomes.shape[0] == 0:
            return []
        runs = lockstep_runs(self.spec.episode_runner, context)
        brain = self.template.build_batch(lockstep_genomes(genomes, runs))
        envs = self._lockstep_env(runs * genomes.shape[0])
        observation_size = 0
        if self.spec.observation_normalization is not None:
            observation_size = self._observation_size
        return evaluate_lockstep(
            brain, envs, seeds, self.spec.episode_runner, context, observation_size
        )

    def _lockstep_env(self, count: int) -> LockstepEnv:
        envs = self._envs.get(count)
        if envs is not None:
            self._envs.move_to_end(count)
            return envs
        envs = make_lockstep_env(
            self.spec.environment,
            count,
            self.mode,
            self._adapter,
            self._neutral_action,
            self._discrete_actions,
        )
        self._envs[count] = envs
        if len(self._envs) > MAX_CACHED_SIZES:
            _, oldest = self._envs.popitem(last=False)
            oldest.close()
        return envs

    def close(self) -> None:
        """Close every cached vector env (and the fallback's env)."""
        while self._envs:
            _, envs = self._envs.popitem()
            envs.close()
        if self.fallback is not None:
            self.fallback.close()


@register_handler("vectorized")
class VectorizedHandler(EvaluationHandler):
    """Evaluates the whole batch in this process, all individuals stepping in lockstep."""

    def __init__(self, mode: VectorMode = "auto") -> None:
        self.mode = mode
        self._worker: VectorizedWorkerState | None = None

    def start(self, template: BrainTemplate, spec: RunnerSpec) -> None:
        self.close()
        self._worker = VectorizedWorkerState(template, spec, self.mode)

    def batch_evaluate(
        self, genomes: np.ndarray, seeds: np.ndarray, context: EvaluationContext = TRAINING
    ) -> list[EvaluationResult]:
        if self._worker is None:
            raise RuntimeError("VectorizedHandler.start() was not called")
        return self._worker.evaluate(genomes, seeds, context)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def describe(self) -> str:
        """E.g. ``vectorized: native vector env of CartPole-v1``."""
        if self._worker is None:
            return "vectorized: lockstep in this process (not started)"
        return f"vectorized: {self._worker.describe()}"
