"""The vectorized handler: a whole batch of genomes steps in lockstep against a vector env.

Every episode of every individual runs at the same time, one lane per (episode k, individual i),
k = 0 .. number_fitness_runs-1: lane k*P+i's env copy is reset with ``episode_seed(seeds[i], k)``,
its brain (one batch brain of R*P copies, ``template.batch_brain``) with ``brain_rng(seeds[i], k)``,
and all lanes step together until every episode has ended. So a small population with several
episodes each still fills the batch (CartPole, P=20, 5 episodes: 100 lanes for at most 500 steps,
not 20 lanes for 5 x 500). A lane whose episode has ended is masked out: it accumulates no reward,
its env copy is not stepped (sync mode) or ignored (native mode), and the brain is told through
``BatchBrain.step(observations, active=mask)``. Fitness, steps and the terminated/truncated counts
follow :meth:`EpisodeRunner.run` to the bit (see ``docs/vectorized.md``). With
``RunnerSpec.max_lanes`` (``evaluation.max_lanes``) the R*P lanes run as consecutive waves of at
most that many lanes, with the same results; a wave that cannot fit in memory is refused
(:mod:`~neuro_evolution.evaluation.lockstep.lane_memory`).

What an evaluation yields beside its return comes from the spec's recorders' lockstep forms
(:meth:`~neuro_evolution.measures.recorder.Recorder.lanes`): each sees every step of the lanes
that take it, and the recorder joins an individual's lanes in episode order. A brain type
without a batch brain (``template.supports_batch`` false), or a recorder without a lockstep form
(info or function measures, a ``state`` behaviour), falls back to the per-individual loop of
:class:`~neuro_evolution.evaluation.pools.base.WorkerState` with one ``warning:`` line
(printed once, by the run's start-up check, :mod:`neuro_evolution.run.start_up`): same
results, no speed-up.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from neuro_evolution.brains.base import BatchBrain, BrainTemplate
from neuro_evolution.evaluation.episodes.runner import (
    TRAINING,
    EpisodeOutcome,
    EpisodeRunnerConfig,
    EvaluationContext,
    EvaluationResult,
    RunnerSpec,
    recorded_fields,
    template_shapes,
)
from neuro_evolution.evaluation.lockstep.lane_memory import (
    PROBE_LANES,
    check_wave_memory,
    measure_lane_bytes,
)
from neuro_evolution.evaluation.lockstep.vector_env import (
    BATCHED_BACKENDS,
    LockstepEnv,
    LockstepMode,
    NativeAdapter,
    VectorMode,
    make_lockstep_env,
    native_adapter,
)
from neuro_evolution.evaluation.pools.base import WorkerState, check_batch, register_handler
from neuro_evolution.evaluation.pools.in_process import InProcessHandler
from neuro_evolution.measures.recorder import LaneRecording, Recorder
from neuro_evolution.support.console import warning
from neuro_evolution.support.seeds import brain_rngs, episode_seeds

MAX_CACHED_SIZES = 4  # vector envs kept per batch size (mp/Dask chunks have one or two sizes)


def run_lanes(
    brain: BatchBrain,
    envs: LockstepEnv,
    env_seeds: list[int],
    rngs: list[np.random.Generator],
    config: EpisodeRunnerConfig,
    context: EvaluationContext = TRAINING,
    recordings: Sequence[LaneRecording] = (),
) -> EpisodeOutcome:
    """Run every lane's episode to its end under the rules of EpisodeRunner.run (``config``):
    lane j's env copy reset with ``env_seeds[j]``, its brain row with ``rngs[j]``, an ended lane
    masked. Returns per-lane arrays; every recording sees each step (``act`` before the envs
    step, ``step`` after) with the mask of the lanes that take it. Lanes are independent: any
    split into waves gives the same rows."""
    lanes = envs.num_envs
    if lanes != len(env_seeds) or lanes != len(rngs):
        raise ValueError(f"{lanes} lanes for {len(env_seeds)} seeds and {len(rngs)} generators")
    observations = envs.reset(env_seeds)
    brain.reset(rngs)
    scaler = context.observation_scaler
    episode_return = np.zeros(lanes)
    steps = np.zeros(lanes, dtype=np.int64)
    ended_terminated = np.zeros(lanes, dtype=bool)
    ended_truncated = np.zeros(lanes, dtype=bool)
    ended_cut = np.zeros(lanes, dtype=bool)
    active = np.ones(lanes, dtype=bool)
    all_active = True
    while all_active or active.any():
        shown = observations if scaler is None else scaler.apply(observations)
        actions = brain.step(shown, None if all_active else active)
        for recording in recordings:
            recording.act(observations, actions, active)
        observations, rewards, terminated, truncated = envs.step(actions, active)
        for recording in recordings:
            recording.step(actions, observations, rewards, active)
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
    return EpisodeOutcome(episode_return, steps, ended_terminated, ended_truncated, ended_cut)


def lane_seeds(
    seeds: np.ndarray, config: EpisodeRunnerConfig, context: EvaluationContext
) -> list[int]:
    """Every lane's ``env.reset`` seed, lane ``k * P + i`` = episode k of individual i
    (validation: the seed itself, as ``EpisodeRunner.run_episode(brain, seed)``)."""
    if context.validation:
        return [int(seed) for seed in seeds]
    fixed = config.training_reset_seeds
    return [s for k in range(config.number_fitness_runs) for s in episode_seeds(seeds, k, fixed)]


def lane_rngs(
    seeds: np.ndarray, start: int, stop: int, context: EvaluationContext
) -> list[np.random.Generator]:
    """The brain generators of lanes ``start`` .. ``stop``-1 (made per wave: a generator per
    lane of a whole large batch would take memory of its own)."""
    count = len(seeds)
    rngs: list[np.random.Generator] = []
    for k in range(start // count, (stop - 1) // count + 1):
        part = seeds[max(start - k * count, 0) : min(stop - k * count, count)]
        if context.validation:
            rngs.extend(np.random.default_rng(int(seed)) for seed in part)
        else:
            rngs.extend(brain_rngs(part, k))
    return rngs


def lockstep_results(
    outcome: EpisodeOutcome,
    count: int,
    config: EpisodeRunnerConfig,
    recorders: Sequence[Recorder] = (),
    lane_values: Sequence[np.ndarray] = (),
    *,
    training: bool,
) -> list[EvaluationResult]:
    """Per-individual results from the per-lane arrays of all R * P lanes: individual i's
    episodes are lanes k*P+i, scored in episode order; each recorder joins its lanes' values
    (``lane_values``, one (R * P, ...) array per recorder) in episode order."""
    runs = len(outcome.steps) // count
    lanes_of = [slice(k * count, (k + 1) * count) for k in range(runs)]  # episode k's lanes
    episodes = [EpisodeOutcome(*(field[k].copy() for field in outcome)) for k in lanes_of]
    score = config.score(episodes, training=training)
    steps = outcome.steps.reshape(runs, count)
    values = [
        recorder.join(lanes.reshape(runs, count, *lanes.shape[1:]), steps)
        for recorder, lanes in zip(recorders, lane_values)
    ]
    return [
        EvaluationResult(
            fitness=float(score.fitness[i]),
            steps=int(score.steps[i]),
            terminated=int(score.terminated[i]),
            truncated=int(score.truncated[i]),
            **recorded_fields(recorders, [value[i].copy() for value in values]),
        )
        for i in range(count)
    ]


def lane_waves(lanes: int, max_lanes: int | None) -> list[tuple[int, int]]:
    """Consecutive (start, stop) lane ranges of at most ``max_lanes`` lanes (None: one wave)."""
    size = lanes if max_lanes is None else max(min(max_lanes, lanes), 1)
    return [(start, min(start + size, lanes)) for start in range(0, lanes, size)]


def lockstep_runs(config: EpisodeRunnerConfig, context: EvaluationContext) -> int:
    """Episodes per individual in one evaluation: one for validation, else number_fitness_runs."""
    return 1 if context.validation else config.number_fitness_runs


def lane_genomes(genomes: np.ndarray, start: int, stop: int) -> np.ndarray:
    """The genomes of lanes ``start`` .. ``stop``-1: lane ``k * P + i`` is individual i."""
    count = genomes.shape[0]
    if start == 0 and stop == count:
        return genomes
    return genomes[np.arange(start, stop) % count]


def fallback_reason(template: BrainTemplate, spec: RunnerSpec) -> str:
    """Why this template/spec cannot run in lockstep ("" when it can): the brain's or a
    recorder's missing lockstep form."""
    shapes = template_shapes(template)
    missing = template.missing_form("batch_brain")
    if missing is None:
        missing = next(
            (
                error
                for recorder in spec.recorders()
                if (error := recorder.missing_form("lanes", shapes)) is not None
            ),
            None,
        )
    return "" if missing is None else str(missing)


def fallback_line(reason: str) -> str:
    """The text of the one ``warning:`` line of a fallback to the per-individual loop."""
    return f"vectorized evaluation falls back to one individual at a time: {reason}"


def warn_about_fallback(reason: str) -> None:
    """Print the one ``warning:`` line of a fallback to the per-individual loop."""
    warning(fallback_line(reason))


class VectorizedWorkerState:
    """A worker's long-lived state for lockstep evaluation (same API as :class:`WorkerState`).

    ``mode`` "auto" uses the env's native vector env when it has a seed-exact adapter (a gymnax
    env: its vmapped step) and a SyncVectorEnv otherwise; "native" insists on the native one;
    "sync" always uses SyncVectorEnv.
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
        self.mode: LockstepMode = "sync"
        self.sync_reason = "sync mode was asked for"
        self.recorders = spec.recorders()
        self.shapes = template_shapes(template)
        self.fallback_reason = fallback_reason(template, spec)
        if self.fallback_reason:
            if announce:  # a handler's states do not: the run's start-up check warns once
                warn_about_fallback(self.fallback_reason)
            self.fallback = WorkerState(template, spec)
            return
        if mode != "sync" and spec.environment.backend in BATCHED_BACKENDS:
            self.mode = "batched"
        elif mode != "sync":
            self._adapter, self.sync_reason = native_adapter(spec.environment)
            if self._adapter is not None:
                self.mode = "native"
            elif mode == "native":
                raise ValueError(
                    f"environment {spec.environment.label!r} cannot run on a native vector env: "
                    f"{self.sync_reason}; use mode 'auto' or 'sync'"
                )
        io = template.io
        self._neutral_action = io.decode_batch(np.zeros((1, io.output_size)))[0]
        self._discrete_actions = io.action_kind == "discrete"
        self._lane_bytes: int | None = None
        if spec.max_lanes is not None:  # refuse a wave that cannot fit now, before any batch
            self._check_wave(spec.max_lanes, f"max_lanes {spec.max_lanes:,}")

    def describe(self) -> str:
        """How this state evaluates, e.g. 'native vector env' or 'SyncVectorEnv (why)'."""
        if self.fallback is not None:
            return f"per-individual loop ({self.fallback_reason})"
        if self.mode == "native":
            return f"native vector env of {self.spec.environment.label}"
        if self.mode == "batched":
            return f"{self.spec.environment.label}, all lanes in one jitted vmapped step"
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
        count = genomes.shape[0]
        config = self.spec.episode_runner
        runs = lockstep_runs(config, context)
        waves = lane_waves(runs * count, self.spec.max_lanes)
        if self.spec.max_lanes is None:  # a configured wave size was checked at start-up
            self._check_wave(runs * count, f"{runs} episodes x {count:,} individuals")
        env_seeds = lane_seeds(seeds, config, context)
        recorders = () if context.validation else self.recorders
        parts = []
        lane_values: list[list[np.ndarray]] = [[] for _ in recorders]
        for start, stop in waves:  # lanes are independent: the waves' rows are the batch's rows
            brain = self.template.batch_brain(lane_genomes(genomes, start, stop))
            envs = self._lockstep_env(stop - start)
            recordings = [recorder.lanes(stop - start, self.shapes) for recorder in recorders]
            outcome = run_lanes(
                brain,
                envs,
                env_seeds[start:stop],
                lane_rngs(seeds, start, stop, context),
                config,
                context,
                recordings,
            )
            parts.append(outcome)
            for values, recording in zip(lane_values, recordings):
                values.append(recording.values(outcome.steps))
        if len(parts) == 1:
            outcome = parts[0]
        else:
            outcome = EpisodeOutcome(*(np.concatenate(field) for field in zip(*parts)))
        joined = [np.concatenate(values) for values in lane_values]
        training = not context.validation
        return lockstep_results(outcome, count, config, recorders, joined, training=training)

    def lane_bytes(self) -> int:
        """Estimated bytes of one lane, measured once (see :mod:`.lane_memory`)."""
        if self._lane_bytes is None:
            neutral = np.array([self._neutral_action] * PROBE_LANES)
            self._lane_bytes = measure_lane_bytes(self.template, self._make_envs, neutral)
        return self._lane_bytes

    def _check_wave(self, lanes: int, what: str) -> None:
        if lanes > PROBE_LANES:  # smaller waves take no more than the probe did
            check_wave_memory(lanes, self.lane_bytes(), what)

    def _make_envs(self, count: int) -> LockstepEnv:
        return make_lockstep_env(
            self.spec.environment,
            count,
            self.mode,
            self._adapter,
            self._neutral_action,
            self._discrete_actions,
        )

    def _lockstep_env(self, count: int) -> LockstepEnv:
        envs = self._envs.get(count)
        if envs is not None:
            self._envs.move_to_end(count)
            return envs
        envs = self._make_envs(count)
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
class VectorizedHandler(InProcessHandler):
    """Evaluates the whole batch in this process, all individuals stepping in lockstep (a
    sweep's runs take turns, each with its own vector envs)."""

    def __init__(self, mode: VectorMode = "auto") -> None:
        super().__init__()
        self.mode = mode

    def make_state(self, template: BrainTemplate, spec: RunnerSpec) -> VectorizedWorkerState:
        """The run's state, silent about a fallback: the run's start-up check warns once
        (:mod:`neuro_evolution.run.start_up`)."""
        return VectorizedWorkerState(template, spec, self.mode, announce=False)

    def pool_label(self) -> str:
        return f"vectorized: lockstep in this process ({self.mode})"

    def describe(self) -> str:
        """E.g. ``vectorized: native vector env of CartPole-v1``."""
        state = self.state
        if not isinstance(state, VectorizedWorkerState):
            return "vectorized: lockstep in this process (not started)"
        return f"vectorized: {state.describe()}"
