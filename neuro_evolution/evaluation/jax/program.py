"""One compiled XLA program per generation: P brains x R episodes on P lanes of a JAX env.

The rules are :class:`~neuro_evolution.evaluation.episodes.runner.EpisodeRunnerConfig`'s. The P x R
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

What an episode yields beside its return comes from the spec's recorders' JAX forms
(:class:`~neuro_evolution.measures.recorder.JaxRecording`): each carries its state through the
loop, sees every step (the raw observations shown, the actions, what the env answered) and the
end of every episode, and returns its arrays with the outcomes; the host finishes them into
per-individual values (observation statistics, novelty's behaviour, a user's recorder).

Seeds (see :mod:`neuro_evolution.support.seeds`): episode k of base seed b resets its env with
the key of ``episode_seed(b, k)`` (:func:`~neuro_evolution.evaluation.jax.envs.reset_keys`: the
same key ``JaxGymEnv.reset(seed=...)`` uses); a validation episode with the seed itself. A CTRNN
with ``parameter_perturbations`` draws its step-t noise from ``fold_in(fold_in(reset key, 1), t)``
with ``jax.random.normal`` -- not numpy's generator, so noisy brains score differently here than
on the numpy handlers (noise-free ones follow the same formulas, see ``docs/jax.md``).
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from neuro_evolution.brains.base import BrainTemplate, JaxBrain
from neuro_evolution.brains.jax_brains import decode_actions, encode_inputs
from neuro_evolution.evaluation.episodes.runner import EpisodeOutcome, EpisodeRunnerConfig
from neuro_evolution.evaluation.jax.envs import JaxEnv
from neuro_evolution.measures.recorder import JaxRecording, JaxStep

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
    outcome: Any  # EpisodeOutcome of (R·P,) arrays, written when a task's episode ends
    records: tuple  # each recording's carried state (empty when nothing is recorded)


class GenerationOutput(NamedTuple):
    """What the program returns: per-episode outcomes of (R, P) arrays, and each recording's
    output (empty when nothing was recorded)."""

    episodes: EpisodeOutcome
    records: tuple = ()


class GenerationProgram:
    """Builds, compiles (once per input shape) and runs the evaluation program."""

    def __init__(
        self,
        template: BrainTemplate,
        brain: JaxBrain,
        env: JaxEnv,
        rules: EpisodeRunnerConfig,
        dtype: Any,
        recordings: tuple[JaxRecording, ...] = (),
    ):
        self.template, self.brain, self.env, self.rules = template, brain, env, rules
        self.dtype, self.recordings = dtype, recordings
        self._compiled: dict[tuple, Any] = {}
        self.compilations = 0
        self.compile_seconds = 0.0

    def run(
        self,
        params: Any,
        reset_keys: np.ndarray,
        scaler: tuple[np.ndarray, np.ndarray, float] | None,
        record: bool,
    ) -> GenerationOutput:
        """Per-episode outcomes as (R, P) arrays and, when ``record`` (training), every
        recording's output; ``reset_keys`` is (R, P, 2) uint32."""
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
        recordings = self.recordings if record else ()
        signature = (keys.shape, scaler is not None, bool(recordings))
        compiled = self._compiled.get(signature)
        if compiled is None:
            start = time.perf_counter()
            function = jax.jit(self._program(scaler is not None, recordings))
            compiled = function.lower(*args).compile()
            self.compile_seconds += time.perf_counter() - start
            self.compilations += 1
            self._compiled[signature] = compiled
        episodes, records = compiled(*args)
        outcome = EpisodeOutcome(*(np.asarray(value) for value in episodes))
        return GenerationOutput(outcome, tuple(np.asarray(value) for value in records))

    def _program(self, scaled: bool, recordings: tuple[JaxRecording, ...]):
        brain, env, rules, dtype = self.brain, self.env, self.rules, self.dtype
        io = self.template.io
        noise_size = brain.noise_size
        reset = jax.vmap(env.reset)
        step = jax.vmap(env.step)

        def choose(mask: Any, new: Any, old: Any) -> Any:
            return jax.tree_util.tree_map(
                lambda a, b: jnp.where(mask.reshape((-1,) + (1,) * (b.ndim - 1)), a, b), new, old
            )

        def observe(carry: EpisodeCarry, scale_args: tuple) -> tuple[Any, Any]:
            """The brain's inputs, and the raw observations (flat, in the program's dtype)."""
            raw = carry.observations.reshape(carry.observations.shape[0], -1).astype(dtype)
            shown = carry.observations
            if scaled:
                mean, scale, clip = scale_args
                shown = jnp.clip((raw - mean) * scale, -clip, clip)
            return encode_inputs(io, shown, dtype), raw

        def body(carry: EpisodeCarry, params, keys, noise_keys, scale_args) -> EpisodeCarry:
            tasks = keys.shape[0]
            inputs, raw = observe(carry, scale_args)
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
            view = JaxStep(carry.task, carry.steps, active, raw, actions, obs, reward, tasks)
            records = tuple(r.step(s, view) for r, s in zip(recordings, carry.records))
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
            records = tuple(r.end(s, done, slot) for r, s in zip(recordings, records))
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
                outcome=written,
                records=records,
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
                outcome=EpisodeOutcome(
                    episode_return=jnp.zeros(tasks, dtype=dtype),
                    steps=jnp.zeros(tasks, dtype=jnp.int32),
                    terminated=no,
                    truncated=no,
                    cut=no,
                ),
                records=tuple(r.init(count, tasks, dtype) for r in recordings),
            )
            out = jax.lax.while_loop(
                lambda c: jnp.any(c.active),
                lambda c: body(c, params, keys, noise_keys, scale_args),
                carry,
            )
            episodes = EpisodeOutcome(*(a.reshape(runs, count) for a in out.outcome))
            records = tuple(r.output(s, runs, count) for r, s in zip(recordings, out.records))
            return GenerationOutput(episodes, records)

        return program
