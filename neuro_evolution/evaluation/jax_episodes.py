"""One compiled XLA program per generation: P brains x R episodes on P lanes of a JAX env.

The rules are :class:`~neuro_evolution.evaluation.episode.EpisodeRunnerConfig`'s. The P x R
episodes are tasks in a queue, episode k of individual p being task ``k * P + p``; the P lanes
start with tasks 0 .. P-1 and step together in one ``lax.while_loop``. A lane whose episode ends
writes that episode's outcome and takes the next task of the queue (lanes ending at the same
step in lane order): its env is reset with the task's key, its brain becomes the task's
individual with a fresh state. The loop ends when the queue is empty and every lane's episode has
ended, so a lane waits, masked, only in the last tasks' tail, not until the population's longest
episode of every k. Which lane plays an episode changes nothing in it: its env, brain and noise
draws follow its task alone. ``reached_limit`` is called on the traced step counts, and the
per-episode arrays go back to the host as (R, P), where ``score`` turns them into fitness exactly
as for every other handler.

Seeds (see :mod:`neuro_evolution.support.seeds`): episode k of base seed b resets its env with
the key of ``episode_seed(b, k)`` (:func:`~neuro_evolution.evaluation.jax_envs.reset_keys`: the
same key ``JaxGymEnv.reset(seed=...)`` uses); a validation episode with the seed itself. A CTRNN
with ``parameter_perturbations`` draws its step-t noise from ``fold_in(fold_in(reset key, 1), t)``
with ``jax.random.normal`` -- not numpy's generator, so noisy brains score differently here than
on the numpy handlers (noise-free ones follow the same formulas, see ``docs/jax.md``). Observation
statistics are summed per episode, then over an individual's episodes in the order k = 0 .. R-1.
With novelty on, a training episode writes its behaviour samples (the action, or the observation
the step returned, every ``behavioral_interval`` steps from its first, at most
``behavioral_max_length``) into its task's rows; the host joins an individual's episodes in order
(:func:`~neuro_evolution.optimizers.novelty.join_episode_samples`), as the sequential runner's
recorder does.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from neuro_evolution.brains.base import BrainTemplate, JaxBrain
from neuro_evolution.brains.jax_brains import decode_actions, encode_inputs
from neuro_evolution.evaluation.episode import EpisodeOutcome, EpisodeRunnerConfig
from neuro_evolution.evaluation.jax_envs import JaxEnv
from neuro_evolution.optimizers.novelty import NoveltyConfig

NOISE_STREAM = 1  # fold_in(reset key, NOISE_STREAM): the brain-noise key of an episode


class EpisodeCarry(NamedTuple):
    """The state the episode loop (``lax.while_loop``) carries from step to step; lane arrays
    are (P, ...), task arrays (R·P, ...)."""

    task: Any  # the task each lane plays (R·P once the lane has nothing left to play)
    next_task: Any  # the first task of the queue not yet handed to a lane, a scalar
    observations: Any
    env_state: Any
    brain_params: Any  # the params of each lane's individual
    brain_state: Any
    episode_return: Any
    steps: Any  # env steps of each lane's episode (also the index of its brain-noise draw)
    active: Any  # the lane's episode has not ended
    lane_stats: Any  # (P, 1 + 2D) observation statistics of each lane's episode, (P, 0) if none
    outcome: Any  # EpisodeOutcome of (R·P,) arrays, written when a task's episode ends
    task_stats: Any  # (R·P, 1 + 2D) observation statistics per task, (R·P, 0) if none
    samples: Any  # (R·P·S, B) behaviour samples, S per task, (0, 0) if none


class GenerationOutput(NamedTuple):
    """What the program returns: per-episode outcomes of (R, P) arrays, observation
    statistics (P, 1 + 2D) when recorded and behaviour samples (R, P, S, B) when recorded
    (None otherwise)."""

    episodes: EpisodeOutcome
    stats: Any
    samples: Any = None


class GenerationProgram:
    """Builds, compiles (once per input shape) and runs the evaluation program."""

    def __init__(
        self,
        template: BrainTemplate,
        brain: JaxBrain,
        env: JaxEnv,
        rules: EpisodeRunnerConfig,
        dtype: Any,
        novelty: NoveltyConfig | None = None,
    ):
        self.template, self.brain, self.env, self.rules = template, brain, env, rules
        self.dtype, self.novelty = dtype, novelty
        self._compiled: dict[tuple, Any] = {}
        self.compilations = 0
        self.compile_seconds = 0.0

    def run(
        self,
        params: Any,
        reset_keys: np.ndarray,
        scaler: tuple[np.ndarray, np.ndarray, float] | None,
        record_stats: bool,
        record_behavior: bool = False,
    ) -> GenerationOutput:
        """Per-episode outcomes as (R, P) arrays, the observation statistics (P, 1 + 2D)
        when ``record_stats`` and the behaviour samples (R, P, S, B) when ``record_behavior``
        (novelty on); ``reset_keys`` is (R, P, 2) uint32."""
        keys = jnp.asarray(reset_keys)
        scale_args: tuple[Any, ...] = ()
        if scaler is not None:
            mean, scale, clip = scaler
            scale_args = (
                jnp.asarray(mean, self.dtype),
                jnp.asarray(scale, self.dtype),
                jnp.asarray(clip, self.dtype),
            )
        args = (params, keys, *scale_args)
        record_behavior = record_behavior and self.novelty is not None
        signature = (keys.shape, scaler is not None, record_stats, record_behavior)
        compiled = self._compiled.get(signature)
        if compiled is None:
            start = time.perf_counter()
            function = jax.jit(self._program(scaler is not None, record_stats, record_behavior))
            compiled = function.lower(*args).compile()
            self.compile_seconds += time.perf_counter() - start
            self.compilations += 1
            self._compiled[signature] = compiled
        episodes, stats, samples = compiled(*args)
        outcome = EpisodeOutcome(*(np.asarray(value) for value in episodes))
        return GenerationOutput(
            outcome,
            None if stats is None else np.asarray(stats),
            None if samples is None else np.asarray(samples),
        )

    def _behavior_shape(self, record_behavior: bool) -> tuple[int, int]:
        """(samples per episode S, values per sample B) of the behaviour record; (0, 0) off."""
        novelty = self.novelty
        if not record_behavior or novelty is None:
            return 0, 0
        if novelty.behavior_source == "action":
            size = self.env.action_space.shape
        else:
            size = self.env.observation_space.shape
        return novelty.behavioral_max_length, int(np.prod(size or (1,), dtype=np.int64))

    def _program(self, scaled: bool, record_stats: bool, record_behavior: bool):
        brain, env, rules, dtype = self.brain, self.env, self.rules, self.dtype
        io = self.template.io
        width = 1 + 2 * io.input_size if record_stats else 0
        per_task, breadth = self._behavior_shape(record_behavior)
        interval = self.novelty.behavioral_interval if self.novelty is not None else 1
        by_action = self.novelty is not None and self.novelty.behavior_source == "action"
        noise_size = brain.noise_size
        reset = jax.vmap(env.reset)
        step = jax.vmap(env.step)

        def choose(mask: Any, new: Any, old: Any) -> Any:
            return jax.tree_util.tree_map(
                lambda a, b: jnp.where(mask.reshape((-1,) + (1,) * (b.ndim - 1)), a, b), new, old
            )

        def observe(carry: EpisodeCarry, scale_args: tuple) -> tuple[Any, Any]:
            """The brain's inputs, and the lanes' statistics with this observation added."""
            raw = carry.observations.reshape(carry.observations.shape[0], -1).astype(dtype)
            stats = carry.lane_stats
            if record_stats:
                weight = carry.active[:, None].astype(dtype)
                stats = stats + jnp.concatenate([weight, raw * weight, raw * raw * weight], axis=1)
            shown = carry.observations
            if scaled:
                mean, scale, clip = scale_args
                shown = jnp.clip((raw - mean) * scale, -clip, clip)
            return encode_inputs(io, shown, dtype), stats

        def body(carry: EpisodeCarry, params, keys, noise_keys, scale_args) -> EpisodeCarry:
            tasks = keys.shape[0]
            inputs, lane_stats = observe(carry, scale_args)
            noise = None
            if noise_size:
                noise = jax.vmap(
                    lambda key, t: jax.random.normal(
                        jax.random.fold_in(key, t), (noise_size,), dtype=dtype
                    )
                )(noise_keys[jnp.minimum(carry.task, tasks - 1)], carry.steps)
            brain_state, outputs = brain.step(carry.brain_params, carry.brain_state, inputs, noise)
            actions = decode_actions(io, outputs)
            obs, env_state, reward, terminated = step(carry.env_state, actions)
            active = carry.active
            samples = carry.samples
            if per_task:  # the step's sample, at row task·S + its index in the episode
                index = carry.steps // interval
                taken = active & (carry.steps % interval == 0) & (index < per_task)
                row = jnp.where(taken, carry.task * per_task + index, tasks * per_task)
                value = (actions if by_action else obs).reshape(actions.shape[0], -1)
                samples = samples.at[row].set(value.astype(dtype), mode="drop")
            steps = carry.steps + active
            truncated = steps >= env.time_limit
            episode_return = carry.episode_return + jnp.where(active, reward.astype(dtype), 0)
            ended = active & (terminated | truncated)
            cut = active & ~ended & rules.reached_limit(steps)
            done = ended | cut
            slot = jnp.where(done, carry.task, tasks)  # out of range: dropped
            written = EpisodeOutcome(
                episode_return=carry.outcome.episode_return.at[slot].set(
                    episode_return, mode="drop"
                ),
                steps=carry.outcome.steps.at[slot].set(steps, mode="drop"),
                terminated=carry.outcome.terminated.at[slot].set(ended & terminated, mode="drop"),
                truncated=carry.outcome.truncated.at[slot].set(ended & truncated, mode="drop"),
                cut=carry.outcome.cut.at[slot].set(cut, mode="drop"),
            )
            task_stats = carry.task_stats
            if record_stats:
                task_stats = task_stats.at[slot].set(lane_stats, mode="drop")
            offered = carry.next_task + jnp.cumsum(done, dtype=jnp.int32) - 1  # in lane order
            fresh = done & (offered < tasks)
            task = jnp.where(done, jnp.where(fresh, offered, tasks), carry.task).astype(jnp.int32)
            carry = EpisodeCarry(
                task=task,
                next_task=jnp.minimum(carry.next_task + jnp.sum(done, dtype=jnp.int32), tasks),
                observations=obs,
                env_state=env_state,
                brain_params=carry.brain_params,
                brain_state=brain_state,
                episode_return=jnp.where(done, 0, episode_return).astype(dtype),
                steps=jnp.where(done, 0, steps),
                active=(active & ~done) | fresh,
                lane_stats=jnp.where(done[:, None], 0, lane_stats).astype(dtype),
                outcome=written,
                task_stats=task_stats,
                samples=samples,
            )
            return jax.lax.cond(
                jnp.any(fresh), lambda c: refill(c, fresh, params, keys), lambda c: c, carry
            )

        def refill(carry: EpisodeCarry, fresh: Any, params, keys) -> EpisodeCarry:
            """Lanes ``fresh`` start their new task: env reset, the task's brain, fresh state."""
            count = fresh.shape[0]
            task = jnp.minimum(carry.task, keys.shape[0] - 1)
            observations, env_state = reset(keys[task])
            brain_params = brain.take(params, task % count)
            brain_state = brain.choose_state(
                fresh, brain.initial_state(brain_params), carry.brain_state
            )
            return carry._replace(
                observations=choose(fresh, observations, carry.observations),
                env_state=choose(fresh, env_state, carry.env_state),
                brain_params=brain_params,
                brain_state=brain_state,
            )

        def program(params, keys, *scale_args):
            runs, count = keys.shape[:2]
            tasks = runs * count
            keys = keys.reshape(tasks, *keys.shape[2:])
            noise_keys = jax.vmap(lambda key: jax.random.fold_in(key, NOISE_STREAM))(keys)
            observations, env_state = reset(keys[:count])
            no = jnp.zeros(tasks, dtype=bool)
            carry = EpisodeCarry(
                task=jnp.arange(count, dtype=jnp.int32),
                next_task=jnp.int32(count),
                observations=observations,
                env_state=env_state,
                brain_params=params,
                brain_state=brain.initial_state(params),
                episode_return=jnp.zeros(count, dtype=dtype),
                steps=jnp.zeros(count, dtype=jnp.int32),
                active=jnp.ones(count, dtype=bool),
                lane_stats=jnp.zeros((count, width), dtype=dtype),
                outcome=EpisodeOutcome(
                    episode_return=jnp.zeros(tasks, dtype=dtype),
                    steps=jnp.zeros(tasks, dtype=jnp.int32),
                    terminated=no,
                    truncated=no,
                    cut=no,
                ),
                task_stats=jnp.zeros((tasks, width), dtype=dtype),
                samples=jnp.zeros((tasks * per_task, breadth), dtype=dtype),
            )
            out = jax.lax.while_loop(
                lambda c: jnp.any(c.active),
                lambda c: body(c, params, keys, noise_keys, scale_args),
                carry,
            )
            episodes = EpisodeOutcome(*(a.reshape(runs, count) for a in out.outcome))
            stats = None
            if record_stats:
                per_run = out.task_stats.reshape(runs, count, width)
                stats = per_run[0]
                for k in range(1, runs):
                    stats = stats + per_run[k]
            samples = None
            if per_task:
                samples = out.samples.reshape(runs, count, per_task, breadth)
            return GenerationOutput(episodes, stats, samples)

        return program
