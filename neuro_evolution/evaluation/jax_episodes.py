"""One compiled XLA program per generation: P brains x R episodes on P copies of a JAX env.

The rules are :class:`~neuro_evolution.evaluation.episode.EpisodeRunnerConfig`'s, followed as the
vectorized handler's lockstep loop follows them: episode k of every individual runs at once
(``lax.scan`` over k), all P step together in a ``lax.while_loop`` until every episode has ended,
and an individual whose episode has ended is masked (its reward, steps and observation statistics
stop; its env and brain keep computing, ignored). ``reached_limit`` is called on the traced step
counts, and the per-episode arrays go back to the host, where ``score`` turns them into fitness
exactly as for every other handler.

Seeds (see :mod:`neuro_evolution.support.seeds`): episode k of base seed b resets its env with
the key of ``episode_seed(b, k)`` (:func:`~neuro_evolution.evaluation.jax_envs.reset_keys`: the
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

from neuro_evolution.brains.base import BrainTemplate
from neuro_evolution.brains.jax_brains import JaxBrain, decode_actions, encode_inputs
from neuro_evolution.evaluation.episode import EpisodeOutcome, EpisodeRunnerConfig
from neuro_evolution.evaluation.jax_envs import JaxEnv

NOISE_STREAM = 1  # fold_in(reset key, NOISE_STREAM): the brain-noise key of an episode


class EpisodeCarry(NamedTuple):
    """The state the episode loop (``lax.while_loop``) carries from step to step, per lane."""

    t: Any  # steps taken by the loop (the brain-noise index), a scalar
    observations: Any
    env_state: Any
    brain_state: Any
    episode_return: Any
    steps: Any  # env steps of each lane's episode (frozen once it ended)
    active: Any  # the lane's episode has not ended
    terminated: Any
    truncated: Any
    cut: Any
    stats: Any  # (P, 1 + 2D) observation statistics, (P, 0) when not recorded


class GenerationOutput(NamedTuple):
    """What the program returns: per-episode outcomes of (R, P) arrays, and observation
    statistics (P, 1 + 2D) when recorded (None otherwise)."""

    episodes: EpisodeOutcome
    stats: Any


class GenerationProgram:
    """Builds, compiles (once per input shape) and runs the evaluation program."""

    def __init__(
        self,
        template: BrainTemplate,
        brain: JaxBrain,
        env: JaxEnv,
        rules: EpisodeRunnerConfig,
        dtype: Any,
    ):
        self.template, self.brain, self.env, self.rules = template, brain, env, rules
        self.dtype = dtype
        self._compiled: dict[tuple, Any] = {}
        self.compilations = 0
        self.compile_seconds = 0.0

    def run(
        self,
        params: Any,
        reset_keys: np.ndarray,
        scaler: tuple[np.ndarray, np.ndarray, float] | None,
        record_stats: bool,
    ) -> GenerationOutput:
        """Per-episode outcomes as (R, P) arrays, and the observation statistics (P, 1 + 2D)
        when ``record_stats``; ``reset_keys`` is (R, P, 2) uint32."""
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
        signature = (keys.shape, scaler is not None, record_stats)
        compiled = self._compiled.get(signature)
        if compiled is None:
            start = time.perf_counter()
            function = jax.jit(self._program(scaler is not None, record_stats))
            compiled = function.lower(*args).compile()
            self.compile_seconds += time.perf_counter() - start
            self.compilations += 1
            self._compiled[signature] = compiled
        episodes, stats = compiled(*args)
        outcome = EpisodeOutcome(*(np.asarray(value) for value in episodes))
        return GenerationOutput(outcome, None if stats is None else np.asarray(stats))

    def _program(self, scaled: bool, record_stats: bool):
        brain, env, rules, dtype = self.brain, self.env, self.rules, self.dtype
        io = self.template.io
        size = io.input_size
        noise_size = brain.noise_size
        reset = jax.vmap(env.reset)
        step = jax.vmap(env.step)

        def episode(params, keys, scale_args, stats):
            count = keys.shape[0]
            observations, env_state = reset(keys)
            noise_keys = jax.vmap(lambda key: jax.random.fold_in(key, NOISE_STREAM))(keys)
            zeros = jnp.zeros(count, dtype=dtype)
            no = jnp.zeros(count, dtype=bool)
            carry = EpisodeCarry(
                t=jnp.int32(0),
                observations=observations,
                env_state=env_state,
                brain_state=brain.initial_state(params),
                episode_return=zeros,
                steps=jnp.zeros(count, dtype=jnp.int32),
                active=jnp.ones(count, dtype=bool),
                terminated=no,
                truncated=no,
                cut=no,
                stats=stats,
            )

            def more(carry: EpisodeCarry) -> Any:
                return jnp.any(carry.active)

            def body(carry: EpisodeCarry) -> EpisodeCarry:
                t, obs, env_state, brain_state, ret, steps, active, term, trunc, cut, stats = carry
                raw = obs.reshape(count, -1).astype(dtype)
                if record_stats:
                    weight = active[:, None].astype(dtype)
                    stats = stats + jnp.concatenate(
                        [weight, raw * weight, raw * raw * weight], axis=1
                    )
                shown = obs
                if scaled:
                    mean, scale, clip = scale_args
                    shown = jnp.clip((raw - mean) * scale, -clip, clip)
                noise = None
                if noise_size:
                    noise = jax.vmap(
                        lambda key: jax.random.normal(
                            jax.random.fold_in(key, t), (noise_size,), dtype=dtype
                        )
                    )(noise_keys)
                inputs = encode_inputs(io, shown, dtype)
                brain_state, outputs = brain.step(params, brain_state, inputs, noise)
                obs, env_state, reward, terminated = step(env_state, decode_actions(io, outputs))
                steps = steps + active
                truncated = steps >= env.time_limit
                ret = ret + jnp.where(active, reward.astype(dtype), 0)
                ended = active & (terminated | truncated)
                term = term | (ended & terminated)
                trunc = trunc | (ended & truncated)
                active = active & ~ended
                now_cut = active & rules.reached_limit(steps)
                cut = cut | now_cut
                active = active & ~now_cut
                return EpisodeCarry(
                    t + 1, obs, env_state, brain_state, ret, steps, active, term, trunc, cut, stats
                )

            out = jax.lax.while_loop(more, body, carry)
            outcome = EpisodeOutcome(
                episode_return=out.episode_return,
                steps=out.steps,
                terminated=out.terminated,
                truncated=out.truncated,
                cut=out.cut,
            )
            return out.stats, outcome

        def program(params, keys, *scale_args):
            count = keys.shape[1]
            stats = jnp.zeros((count, 1 + 2 * size if record_stats else 0), dtype=dtype)

            def one(stats, episode_keys):
                stats, result = episode(params, episode_keys, scale_args, stats)
                return stats, result

            stats, episodes = jax.lax.scan(one, stats, keys)  # episodes: (R, P) arrays
            return GenerationOutput(episodes, stats if record_stats else None)

        return program
