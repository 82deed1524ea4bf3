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
        """The function to compile: ``(params, keys, *scale_args) -> GenerationOutput``."""
        steps = ProgramSteps(
            self.template, self.brain, self.env, self.rules, self.dtype, scaled, recordings
        )
        return steps.program


def choose(mask: Any, new: Any, old: Any) -> Any:
    """``new`` where a lane's ``mask`` is set, ``old`` elsewhere, leaf by leaf of a pytree."""
    return jax.tree_util.tree_map(
        lambda a, b: jnp.where(mask.reshape((-1,) + (1,) * (b.ndim - 1)), a, b), new, old
    )


class EpisodeEnds(NamedTuple):
    """Which lanes' episodes end at this step, and how (lane arrays)."""

    steps: Any  # the episode's env steps after this one
    episode_return: Any
    terminated: Any  # what the env answered
    truncated: Any  # the env's time limit reached
    ended: Any  # terminated or truncated
    cut: Any  # stopped by the episode rules' step limit
    done: Any  # ended or cut: the lane writes its outcome
    slot: Any  # the task whose outcome a done lane writes (out of range otherwise: dropped)


class ProgramSteps:
    """The steps of the generation program, each traced in the order :meth:`program` and
    :meth:`step_lanes` call them: start the lanes, step the brains, step the envs, record, write
    the ended episodes' outcomes, hand out the next tasks, refill, collect the outputs."""

    def __init__(
        self,
        template: BrainTemplate,
        brain: JaxBrain,
        env: JaxEnv,
        rules: EpisodeRunnerConfig,
        dtype: Any,
        scaled: bool,
        recordings: tuple[JaxRecording, ...],
    ):
        self.brain, self.env, self.rules, self.dtype = brain, env, rules, dtype
        self.scaled, self.recordings = scaled, recordings  # observations scaled; what is recorded
        self.io = template.io
        self.noise_size = brain.noise_size
        self.reset = jax.vmap(env.reset)
        self.step = jax.vmap(env.step)

    def program(self, params: Any, keys: Any, *scale_args: Any) -> GenerationOutput:
        """The whole generation: P lanes step until the queue of R·P tasks is empty."""
        runs, count = keys.shape[:2]
        tasks = runs * count
        keys = keys.reshape(tasks, *keys.shape[2:])
        noise_keys = jax.vmap(lambda key: jax.random.fold_in(key, NOISE_STREAM))(keys)
        carry = self.start_lanes(params, keys, count, tasks)
        out = jax.lax.while_loop(
            lambda c: jnp.any(c.active),
            lambda c: self.step_lanes(c, params, keys, noise_keys, scale_args),
            carry,
        )
        return self.collect(out, runs, count)

    def start_lanes(self, params: Any, keys: Any, count: int, tasks: int) -> EpisodeCarry:
        """Lane p starts task p: its env reset with the task's key, individual p's brain."""
        observations, env_state = self.reset(keys[:count])
        no = jnp.zeros(tasks, dtype=bool)
        return EpisodeCarry(
            task=jnp.arange(count, dtype=jnp.int32),
            next_task=jnp.int32(count),
            observations=observations,
            env_state=env_state,
            brain_params=params,
            brain_state=self.brain.initial_state(params),
            episode_return=jnp.zeros(count, dtype=self.dtype),
            steps=jnp.zeros(count, dtype=jnp.int32),
            active=jnp.ones(count, dtype=bool),
            outcome=EpisodeOutcome(
                episode_return=jnp.zeros(tasks, dtype=self.dtype),
                steps=jnp.zeros(tasks, dtype=jnp.int32),
                terminated=no,
                truncated=no,
                cut=no,
            ),
            records=tuple(r.init(count, tasks, self.dtype) for r in self.recordings),
        )

    def step_lanes(
        self, carry: EpisodeCarry, params: Any, keys: Any, noise_keys: Any, scale_args: tuple
    ) -> EpisodeCarry:
        """One step of every lane; lanes whose episode ended take their next task."""
        tasks = keys.shape[0]
        brain_state, actions, raw = self.step_brains(carry, noise_keys, scale_args, tasks)
        obs, env_state, reward, terminated = self.step(carry.env_state, actions)
        view = JaxStep(carry.task, carry.steps, carry.active, raw, actions, obs, reward, tasks)
        records = tuple(r.step(s, view) for r, s in zip(self.recordings, carry.records))
        ends = self.episode_ends(carry, reward, terminated, tasks)
        written = self.write_outcomes(carry.outcome, ends)
        records = tuple(r.end(s, ends.done, ends.slot) for r, s in zip(self.recordings, records))
        task, fresh = self.next_tasks(carry, ends.done, tasks)
        carry = EpisodeCarry(
            task=task,
            next_task=jnp.minimum(carry.next_task + jnp.sum(ends.done, dtype=jnp.int32), tasks),
            observations=obs,
            env_state=env_state,
            brain_params=carry.brain_params,
            brain_state=brain_state,
            episode_return=jnp.where(ends.done, 0, ends.episode_return).astype(self.dtype),
            steps=jnp.where(ends.done, 0, ends.steps),
            active=(carry.active & ~ends.done) | fresh,
            outcome=written,
            records=records,
        )
        return jax.lax.cond(
            jnp.any(fresh), lambda c: self.refill(c, fresh, params, keys), lambda c: c, carry
        )

    def observe(self, carry: EpisodeCarry, scale_args: tuple) -> tuple[Any, Any]:
        """The brain's inputs, and the raw observations (flat, in the program's dtype)."""
        raw = carry.observations.reshape(carry.observations.shape[0], -1).astype(self.dtype)
        shown = carry.observations
        if self.scaled:
            mean, scale, clip = scale_args
            shown = jnp.clip((raw - mean) * scale, -clip, clip)
        return encode_inputs(self.io, shown, self.dtype), raw

    def step_brains(
        self, carry: EpisodeCarry, noise_keys: Any, scale_args: tuple, tasks: int
    ) -> tuple[Any, Any, Any]:
        """Each lane's brain shown its observation: the new brain state, the env actions and
        the raw observations; a noisy brain draws its step's noise from its task's key."""
        inputs, raw = self.observe(carry, scale_args)
        noise = None
        if self.noise_size:
            noise = jax.vmap(
                lambda key, t: jax.random.normal(
                    jax.random.fold_in(key, t), (self.noise_size,), dtype=self.dtype
                )
            )(noise_keys[jnp.minimum(carry.task, tasks - 1)], carry.steps)
        brain_state, outputs = self.brain.step(carry.brain_params, carry.brain_state, inputs, noise)
        return brain_state, decode_actions(self.io, outputs), raw

    def episode_ends(
        self, carry: EpisodeCarry, reward: Any, terminated: Any, tasks: int
    ) -> EpisodeEnds:
        """The step counted and its reward added on active lanes; which episodes end, and how."""
        active = carry.active
        steps = carry.steps + active
        truncated = steps >= self.env.time_limit
        episode_return = carry.episode_return + jnp.where(active, reward.astype(self.dtype), 0)
        ended = active & (terminated | truncated)
        cut = active & ~ended & self.rules.reached_limit(steps)
        done = ended | cut
        slot = jnp.where(done, carry.task, tasks)  # out of range: dropped
        return EpisodeEnds(steps, episode_return, terminated, truncated, ended, cut, done, slot)

    def write_outcomes(self, outcome: EpisodeOutcome, ends: EpisodeEnds) -> EpisodeOutcome:
        """The ended episodes' outcomes written into their tasks' slots."""
        slot = ends.slot
        return EpisodeOutcome(
            episode_return=outcome.episode_return.at[slot].set(ends.episode_return, mode="drop"),
            steps=outcome.steps.at[slot].set(ends.steps, mode="drop"),
            terminated=outcome.terminated.at[slot].set(ends.ended & ends.terminated, mode="drop"),
            truncated=outcome.truncated.at[slot].set(ends.ended & ends.truncated, mode="drop"),
            cut=outcome.cut.at[slot].set(ends.cut, mode="drop"),
        )

    def next_tasks(self, carry: EpisodeCarry, done: Any, tasks: int) -> tuple[Any, Any]:
        """Each lane's task after this step, and the lanes that took a new one (``fresh``): done
        lanes take the queue's next tasks in lane order, R·P (none) once it is empty."""
        offered = carry.next_task + jnp.cumsum(done, dtype=jnp.int32) - 1  # in lane order
        fresh = done & (offered < tasks)
        task = jnp.where(done, jnp.where(fresh, offered, tasks), carry.task).astype(jnp.int32)
        return task, fresh

    def refill(self, carry: EpisodeCarry, fresh: Any, params: Any, keys: Any) -> EpisodeCarry:
        """Lanes ``fresh`` start their new task: env reset, the task's brain, fresh state."""
        brain = self.brain
        count = fresh.shape[0]
        task = jnp.minimum(carry.task, keys.shape[0] - 1)
        observations, env_state = self.reset(keys[task])
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

    def collect(self, out: EpisodeCarry, runs: int, count: int) -> GenerationOutput:
        """The outcomes as (R, P) arrays and each recording's output."""
        episodes = EpisodeOutcome(*(a.reshape(runs, count) for a in out.outcome))
        records = tuple(r.output(s, runs, count) for r, s in zip(self.recordings, out.records))
        return GenerationOutput(episodes, records)
