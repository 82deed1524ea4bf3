"""Every random stream of a run, derived from its one ``random_seed``: the only seeding module.

Nothing random in a run depends on which worker ran what or in which order; everything below is
a pure function of the run seed (``S``) and the indices named. The table lists every stream; a
new one gets a new row and inputs that no row uses yet (a new entropy shape or spawn key), so it
cannot repeat another stream. Changing a row changes the numbers of existing runs: the
checkpoint format version must then change so old runs are refused.

=====================  =====================================================  ===================
stream                 derivation (``SeedSequence`` entropy -> output)        used for
=====================  =====================================================  ===================
template masks         ``[S, TEMPLATE_STREAM=1]`` -> 1 uint32, seeds          ``BrainTemplate.
                       ``default_rng``  (:func:`run_stream_seed`)             from_config`` rng
optimizer seed         ``[S, OPTIMIZER_STREAM=2]`` -> 1 uint32 ("O")          ``make_optimizer``
                       (:func:`run_stream_seed`)
optimizer generators   ``SeedSequence(O, spawn_key=(OPTIMIZER_SPAWN_KEY,      DEAP's ``random``
                       purpose))`` -> 128 bits (:func:`optimizer_generator_   (purpose 0), PCG64
                       seed`); purpose 0: Python ``random``, 1: unused,       (2)
                       2: numpy ``Generator`` (PCG64)
episode base seeds     ``[S, g, i]`` -> 1 uint32 per individual i of          ``batch_evaluate``
                       generation g; ``[S, g]`` when                          seeds
                       ``fix_seed_for_generation`` (:func:`generation_seeds`)
env reset seed         ``[b, k]`` -> 1 uint32 for episode k of base seed b    ``env.reset(seed=)``
                       (:func:`episode_seed`); ``episode_runner.training_
                       reset_seeds[k]`` instead, when a config names them
                       (:func:`episode_seeds` ``fixed``)
brain noise            ``default_rng([b, k, 1])`` (:func:`brain_rng`)         ``brain.reset(rng)``
validation env seeds   ``2**32 + SeedSequence(S, spawn_key=                    held-out scoring;
                       (VALIDATION_SPAWN_KEY,))`` -> 1 uint32 ("V"); episode  >= 2**32, so never
                       k resets with ``V + k``, brain noise                   a training reset
                       ``default_rng(V + k)`` (:func:`validation_seeds`)      seed (all < 2**32)
observation noise      ``SeedSequence(e, spawn_key=(OBS_NOISE_SPAWN_KEY,))``  the Observation-
                       seeds ``default_rng``, e being the episode's env       Noise wrapper
                       reset seed (:func:`observation_noise_rng`)
JAX brain noise        ``fold_in(fold_in(K, 1), t)`` for step t, where K is   the jax handler's
                       the PRNG key of the episode's env reset seed           CTRNN noise (not
                       (``jax.envs.reset_keys``: ``PRNGKey(seed)``)           numpy's generator)
QD emitter seeds       ``SeedSequence(O, spawn_key=(EMITTER_SPAWN_KEY, e,    CMA-ME emitter e
                       r))`` -> 1 uint32 (:func:`emitter_seed`)               after r restarts
CVT centroids          ``SeedSequence(c, spawn_key=(CVT_SPAWN_KEY,))``        the CVT archive's
                       seeds ``default_rng``, c = ``archive.cvt_seed``        k-means samples
(next stream)          a new spawn key, e.g. ``int.from_bytes(b"<8 chars>",
                       "little")``, added here with its row
=====================  =====================================================  ===================

Outside a run: ``replay`` resets episode k with seed ``--seed + k`` and the brain with
``default_rng(env seed)`` -- as validation episodes do, so ``replay --validation`` (or ``--seed V
--episodes M``) reruns a run's validation exactly; the dry run uses seed 0.

Known overlaps, kept so existing runs resume identically (``SeedSequence`` pads entropy with
zeros, so ``[S, g]`` and ``[S, g, 0]`` are one input): the shared base seed of generation g equals
individual 0's unshared one, and the template and optimizer words ``[S, 1]``, ``[S, 2]`` equal the
base seeds of generation 1 and 2. They seed different things (a mask generator / an optimizer vs.
env resets), so no draw is reused as the same kind of number. New streams use a spawn key of
their own, which entropy-only inputs never reach, and add no overlap.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

TEMPLATE_STREAM = 1
OPTIMIZER_STREAM = 2
OPTIMIZER_SPAWN_KEY = int.from_bytes(b"optimizr", "little")
PYTHON_RANDOM_PURPOSE = 0
NUMPY_LEGACY_PURPOSE = 1  # unused; kept so that the other purposes keep their numbers
GENERATOR_PURPOSE = 2  # the PCG64 Generator of PGPE, OPENAI_ES, SNES, ...
VALIDATION_SPAWN_KEY = int.from_bytes(b"validate", "little")
OBS_NOISE_SPAWN_KEY = int.from_bytes(b"obsnoise", "little")
EMITTER_SPAWN_KEY = int.from_bytes(b"emitters", "little")
CVT_SPAWN_KEY = int.from_bytes(b"cvtcells", "little")
TRAINING_SEED_LIMIT = 2**32  # every training env reset seed is a uint32, below this


def _word(entropy: list[int]) -> int:
    return int(np.random.SeedSequence(entropy).generate_state(1)[0])


def run_stream_seed(run_seed: int, stream: int) -> int:
    """A 32-bit seed for one purpose of the run (``TEMPLATE_STREAM``, ``OPTIMIZER_STREAM``)."""
    return _word([run_seed, stream])


def template_rng(run_seed: int) -> np.random.Generator:
    """The generator a run's template draws its masks from."""
    return np.random.default_rng(run_stream_seed(run_seed, TEMPLATE_STREAM))


def optimizer_seed(run_seed: int) -> int:
    """The seed a run's optimizer is made with."""
    return run_stream_seed(run_seed, OPTIMIZER_STREAM)


def optimizer_generator_seed(seed: int, purpose: int) -> int:
    """A 128-bit seed for one generator an optimizer owns, from the optimizer's ``seed``."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed: must be a non-negative integer, got {seed!r}")
    words = np.random.SeedSequence(int(seed), spawn_key=(OPTIMIZER_SPAWN_KEY, purpose))
    state = words.generate_state(4, dtype=np.uint32)
    return sum(int(w) << (32 * i) for i, w in enumerate(state))


def generation_seeds(run_seed: int, generation: int, count: int, shared: bool) -> np.ndarray:
    """(count,) uint32 episode base seeds for the individuals of one generation."""
    if shared:
        return np.full(count, _word([run_seed, generation]), dtype=np.uint32)
    return np.array([_word([run_seed, generation, i]) for i in range(count)], dtype=np.uint32)


def validation_seeds(run_seed: int, count: int) -> np.ndarray:
    """(count,) int64 env reset seeds of the held-out validation episodes: consecutive and all
    >= 2**32, so disjoint from every training reset seed by construction (not by chance); the
    first n of ``count`` do not depend on ``count``."""
    sequence = np.random.SeedSequence(int(run_seed), spawn_key=(VALIDATION_SPAWN_KEY,))
    first = TRAINING_SEED_LIMIT + int(sequence.generate_state(1)[0])
    return first + np.arange(count, dtype=np.int64)


def episode_seed(base_seed: int, episode: int) -> int:
    """The ``env.reset(seed=...)`` value of episode ``episode`` of an evaluation."""
    return _word([int(base_seed), episode])


def _brain_entropy(base_seed: int, episode: int) -> list[int]:
    return [int(base_seed), episode, 1]


def brain_rng(base_seed: int, episode: int) -> np.random.Generator:
    """The generator handed to ``brain.reset`` for episode ``episode`` of an evaluation."""
    return np.random.default_rng(_brain_entropy(base_seed, episode))


def episode_seeds(
    base_seeds: np.ndarray, episode: int, fixed: Sequence[int] | None = None
) -> list[int]:
    """``episode_seed(s, episode)`` for every base seed, derived once per distinct seed; with
    ``fixed`` (a config's ``training_reset_seeds``), ``fixed[episode]`` for every one."""
    if fixed is not None:
        return [int(fixed[episode])] * len(base_seeds)
    cache: dict[int, int] = {}
    for seed in map(int, base_seeds):
        if seed not in cache:
            cache[seed] = episode_seed(seed, episode)
    return [cache[seed] for seed in map(int, base_seeds)]


def brain_rngs(base_seeds: np.ndarray, episode: int) -> list[np.random.Generator]:
    """``brain_rng(s, episode)`` for every base seed, with one SeedSequence per distinct seed:
    ``default_rng(entropy)`` is ``Generator(PCG64(SeedSequence(entropy)))``, so a population that
    shares its seeds makes each sequence once (a test holds this equal to :func:`brain_rng`)."""
    sequences: dict[int, np.random.SeedSequence] = {}
    for seed in map(int, base_seeds):
        if seed not in sequences:
            sequences[seed] = np.random.SeedSequence(_brain_entropy(seed, episode))
    return [np.random.Generator(np.random.PCG64(sequences[int(seed)])) for seed in base_seeds]


def observation_noise_rng(env_seed: int) -> np.random.Generator:
    """The generator of the observation noise of an episode reset with ``env_seed``: a function
    of that seed alone, so every handler, worker and replay draws the same noise for it."""
    sequence = np.random.SeedSequence(int(env_seed), spawn_key=(OBS_NOISE_SPAWN_KEY,))
    return np.random.default_rng(sequence)


def emitter_seed(optimizer_seed: int, emitter: int, restarts: int) -> int:
    """The seed of CMA-ME emitter ``emitter``'s CMA-ES after ``restarts`` restarts."""
    sequence = np.random.SeedSequence(
        int(optimizer_seed), spawn_key=(EMITTER_SPAWN_KEY, emitter, restarts)
    )
    return int(sequence.generate_state(1)[0])


def cvt_rng(cvt_seed: int) -> np.random.Generator:
    """The generator of a CVT archive's k-means samples (a function of ``archive.cvt_seed``)."""
    return np.random.default_rng(np.random.SeedSequence(int(cvt_seed), spawn_key=(CVT_SPAWN_KEY,)))
