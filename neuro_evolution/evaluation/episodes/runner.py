"""EpisodeRunner: runs a brain in one long-lived Gymnasium env and returns its fitness.

The rules of an evaluation are written once, in :class:`EpisodeRunnerConfig`, and followed by
this runner's loop (one env), the vectorized handler's lockstep loop (P envs) and the jax
handler's compiled program: stepping differs, the rules do not. What an evaluation yields beside
its return comes from the spec's recorders (:meth:`RunnerSpec.recorders`,
:mod:`neuro_evolution.measures.recorder`), which all three loops call in the same places.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import gymnasium as gym
import numpy as np

from neuro_evolution.brains.base import Brain, BrainTemplate
from neuro_evolution.brains.genome_reads import unread_genes_problem
from neuro_evolution.core.importing import import_module
from neuro_evolution.core.normalization import ObservationNormalizationConfig, ObservationScaler
from neuro_evolution.core.schema import ConfigBase, ConfigError, config_class, join, option
from neuro_evolution.evaluation.episodes.environment import EnvironmentConfig
from neuro_evolution.measures.base import MeasureConfig
from neuro_evolution.measures.observations import ObservationStats
from neuro_evolution.measures.recorder import (
    RESULT_FIELDS,
    EpisodeRecording,
    EpisodeShapes,
    Recorder,
    space_shapes,
)
from neuro_evolution.measures.recording import Measures
from neuro_evolution.optimizers.novelty import NoveltyConfig
from neuro_evolution.support.frozen import FrozenClassMeta, frozen_dataclass
from neuro_evolution.support.seeds import brain_rng, episode_seeds

if TYPE_CHECKING:
    from neuro_evolution.evaluation.episodes.trace import EpisodeTrace


class EpisodeOutcome(NamedTuple):
    """How one episode ended, the record all three episode loops produce: scalars for one
    individual (:class:`EpisodeRunner`), one array over a batch in lockstep (the vectorized and
    jax handlers; a NamedTuple is a JAX pytree, so a compiled loop returns it as it is)."""

    episode_return: Any  # the sum of rewards (before a cut's penalty)
    steps: Any  # env steps taken
    terminated: Any  # the env terminated it
    truncated: Any  # the env truncated it (its own time limit)
    cut: Any  # cut after max_steps_per_run steps


class EvaluationScore(NamedTuple):
    """What the episode rules make of an evaluation's episodes (scalars or batch arrays)."""

    fitness: Any  # mean (penalised) return
    steps: Any  # env steps of all episodes
    terminated: Any  # episodes that ended by termination
    truncated: Any  # episodes that ended by the env's truncation or a cut


@config_class
class EpisodeRunnerConfig(ConfigBase):
    """How one genome is evaluated: the episode rules, written once for both episode loops
    (:class:`EpisodeRunner`, one env; the vectorized handler, P envs in lockstep):

    - an evaluation runs ``number_fitness_runs`` episodes, k = 0, 1, ... (their seeds:
      :mod:`neuro_evolution.support.seeds`);
    - an episode ends when the env terminates or truncates it (its own time limit); otherwise it
      is *cut* once it has run ``max_steps_per_run`` steps (0: never);
    - a cut episode loses ``max_steps_penalty`` from its return and counts as truncated; an
      episode the env both terminated and truncated counts as terminated;
    - fitness is the mean of the episode returns (summed in episode order), steps their sum;
    - a training evaluation's episode also loses ``training_reward_shift`` per step it ran
      (ARS's ``shift``: the survival bonus taken out while training); validation, replay and
      export checks score the true return.

    :meth:`reached_limit` and :meth:`score` are plain arithmetic, so the same code serves one
    individual's scalars and a batch's arrays.
    """

    number_fitness_runs: int = option(1, doc="episodes per evaluation; fitness is their mean", ge=1)
    max_steps_per_run: int = option(
        0, doc="cut an episode after this many steps (0: only the env's own limit)", ge=0
    )
    max_steps_penalty: float = option(
        0.0, doc="subtracted from the return of an episode cut by max_steps_per_run"
    )
    training_reward_shift: float = option(
        0.0,
        doc="subtracted from every step's reward of a training episode (ARS's shift: 1 for "
        "Hopper, Walker2d, Ant); validation and replay score the true return",
    )
    fix_seed_for_generation: bool = option(
        True, doc="all individuals of a generation use the same episode seeds (fair comparison)"
    )
    training_reset_seeds: tuple[int, ...] | None = option(
        None,
        doc="env reset seed of each training episode k (one per number_fitness_runs), for every "
        "individual and generation, e.g. a published benchmark's fixed seed; validation keeps "
        "its held-out seeds (None: derived from the run seed)",
    )

    def validate(self, path: str) -> None:
        seeds = self.training_reset_seeds
        if seeds is None:
            return
        where = join(path, "training_reset_seeds")
        if len(seeds) != self.number_fitness_runs:
            raise ConfigError(
                where,
                f"names {len(seeds)} seeds for {self.number_fitness_runs} episodes per "
                "evaluation: give one per episode (number_fitness_runs)",
            )
        for seed in seeds:
            if not 0 <= seed < 2**32:  # the schema has checked that each is an integer
                raise ConfigError(
                    where,
                    f"{seed!r} is not a training reset seed: use integers in [0, 2**32) "
                    "(validation's held-out seeds lie above)",
                )

    def reset_seed(self, base_seed: int, episode: int) -> int:
        """The ``env.reset`` seed of training episode ``episode`` of an evaluation with base
        seed ``base_seed``: ``training_reset_seeds[episode]`` when named, else derived."""
        return episode_seeds(np.array([base_seed]), episode, self.training_reset_seeds)[0]

    def reached_limit(self, steps: Any) -> Any:
        """Whether an episode that the env has not ended after ``steps`` steps is cut now."""
        return steps >= self.max_steps_per_run if self.max_steps_per_run else False

    def score(self, episodes: Sequence[EpisodeOutcome], *, training: bool) -> EvaluationScore:
        """The score of an evaluation's episodes (in episode order), each a scalar or one array
        over a batch of individuals; ``training`` takes ``training_reward_shift`` per step off
        (every episode loop says which it ran: a held-out episode is never shifted)."""
        shift = self.training_reward_shift if training else 0.0
        total_return: Any = 0.0
        total_steps: Any = 0
        terminated_count: Any = 0
        truncated_count: Any = 0
        for episode in episodes:
            cut = episode.cut
            penalty = self.max_steps_penalty * cut + shift * episode.steps
            total_return = total_return + (episode.episode_return - penalty)
            total_steps = total_steps + episode.steps
            terminated_count = terminated_count + episode.terminated
            truncated_count = truncated_count + ((episode.truncated > episode.terminated) | cut)
        return EvaluationScore(
            total_return / len(episodes), total_steps, terminated_count, truncated_count
        )


@frozen_dataclass
class EvaluationResult(metaclass=FrozenClassMeta):
    """What one evaluation of a genome returns."""

    fitness: float
    steps: int
    terminated: int = 0  # episodes that ended by termination
    truncated: int = 0  # episodes that ended by the env's truncation or max_steps_per_run
    behavior: np.ndarray | None = None  # behaviour record, when novelty asks for one
    # [count, sum, sum of squares] of the raw observations, when observations are normalized
    observation_stats: np.ndarray | None = None
    # the evaluation's measures (RunnerSpec.measures, in order), when an optimizer asks for them
    measures: np.ndarray | None = None
    # the values of RunnerSpec.recorders beyond the built-in ones, by recorder name
    records: dict[str, Any] | None = None


def recorded_fields(recorders: Sequence[Recorder], values: Sequence[Any]) -> dict[str, Any]:
    """EvaluationResult keyword arguments of the recorders' ``values`` (in the same order): a
    built-in recorder's field, the others' in ``records`` by name."""
    fields: dict[str, Any] = {}
    records = {}
    for recorder, value in zip(recorders, values):
        if recorder.name in RESULT_FIELDS:
            fields[recorder.name] = value
        else:
            records[recorder.name] = value
    if records:
        fields["records"] = records
    return fields


@frozen_dataclass
class EvaluationContext(metaclass=FrozenClassMeta):
    """What every evaluation of one batch shares, frozen by the main process before sending.

    ``observation_scaler``: the generation's frozen observation normalization (None: off).
    ``validation``: every seed is one held-out episode, reset with the seed itself and its brain
    noise from ``default_rng(seed)`` -- exactly what ``replay --seed S`` runs -- and no
    observation statistics are gathered (validation never feeds training).
    """

    observation_scaler: ObservationScaler | None = None
    validation: bool = False


TRAINING = EvaluationContext()


@frozen_dataclass
class RunnerSpec(metaclass=FrozenClassMeta):
    """Plain, picklable data from which any worker makes its own EpisodeRunner."""

    environment: EnvironmentConfig
    episode_runner: EpisodeRunnerConfig
    novelty: NoveltyConfig | None = None  # set when behaviour is recorded
    # set when observations are normalized: evaluations then gather observation statistics
    observation_normalization: ObservationNormalizationConfig | None = None
    imports: tuple[str, ...] = ()  # the config's imports, e.g. a module registering the env id
    # lockstep evaluation: at most this many lanes at once (evaluation.max_lanes; None: no cap)
    max_lanes: int | None = None
    # per-episode measures an optimizer needs (QD descriptors, objectives); () when none
    measures: tuple[MeasureConfig, ...] = ()
    # a user's own recorders (library use): their values go to EvaluationResult.records
    extra_recorders: tuple[Recorder, ...] = ()

    def __post_init__(self) -> None:
        self.recorders()  # a user recorder's name is checked when the spec is made

    def recorders(self) -> tuple[Recorder, ...]:
        """What every training evaluation records beside its return, in the order every
        episode loop calls them: observation statistics, novelty's behaviour, the measures,
        then ``extra_recorders``."""
        found: list[Recorder] = []
        if self.observation_normalization is not None:
            found.append(ObservationStats())
        if self.novelty is not None:
            found.append(self.novelty.behavior())
        if self.measures:
            found.append(Measures(self.measures))
        names = [recorder.name for recorder in found]
        for position, recorder in enumerate(self.extra_recorders):
            if recorder.name in names or recorder.name in RESULT_FIELDS:
                raise ConfigError(
                    f"extra_recorders[{position}]",
                    f"recorder name {recorder.name!r} is taken; give {type(recorder).__name__} "
                    "a name of its own",
                )
            names.append(recorder.name)
        return (*found, *self.extra_recorders)

    def import_modules(self) -> None:
        """Import ``imports`` in this process: a worker started by forkserver, spawn or Dask has
        not run the main process's imports, and an env id they register must resolve there too."""
        for index, module in enumerate(self.imports):
            import_module(module, f"imports[{index}]")

    def make(self) -> EpisodeRunner:
        """A runner with its own env (made once, reused for every episode)."""
        return EpisodeRunner(self)


class EpisodeRunner:
    """Evaluates brains in one env that lives as long as the runner."""

    def __init__(self, spec: RunnerSpec, env: gym.Env | None = None):
        self.spec = spec
        self.config = spec.episode_runner
        self.env = env if env is not None else spec.environment.make()

    def run(
        self, brain: Brain, seed: int, context: EvaluationContext = TRAINING
    ) -> EvaluationResult:
        """Evaluate ``brain`` over ``number_fitness_runs`` episodes derived from ``seed``.

        With ``context.validation``: one episode reset with ``seed`` itself (see
        :class:`EvaluationContext`).
        """
        scaler = context.observation_scaler
        if context.validation:
            return self.run_episode(brain, int(seed), scaler=scaler)
        recorders = self.spec.recorders()
        recordings = [recorder.scalar(self.env, self.shapes) for recorder in recorders]
        episodes = [
            self._episode(
                brain,
                self.config.reset_seed(seed, k),
                brain_rng(seed, k),
                recordings,
                scaler,
            )
            for k in range(self.config.number_fitness_runs)
        ]
        fields = recorded_fields(recorders, [recording.value() for recording in recordings])
        return self._result(episodes, fields, training=True)

    @property
    def shapes(self) -> EpisodeShapes:
        """The env's flattened observation and action sizes (what recorders are made for)."""
        return space_shapes(self.env.observation_space, self.env.action_space)

    def run_episode(
        self,
        brain: Brain,
        env_seed: int,
        rng: np.random.Generator | None = None,
        scaler: ObservationScaler | None = None,
        trace: EpisodeTrace | None = None,
    ) -> EvaluationResult:
        """One episode from ``env.reset(seed=env_seed)``; fitness is the (penalised) return,
        never shifted (validation, replay and export checks run this).

        The brain sees ``scaler.apply(observation)`` when a scaler is given; ``trace`` records
        every step (see :mod:`neuro_evolution.evaluation.episodes.trace`).
        """
        recordings = [] if trace is None else [trace]
        episode = self._episode(brain, env_seed, rng, recordings, scaler)
        return self._result([episode], training=False)

    def _result(
        self,
        episodes: list[EpisodeOutcome],
        fields: dict[str, Any] | None = None,
        *,
        training: bool,
    ) -> EvaluationResult:
        score = self.config.score(episodes, training=training)
        return EvaluationResult(
            fitness=score.fitness,
            steps=score.steps,
            terminated=int(score.terminated),
            truncated=int(score.truncated),
            **(fields or {}),
        )

    def _episode(
        self,
        brain: Brain,
        env_seed: int,
        rng: np.random.Generator | None,
        recordings: Sequence[EpisodeRecording],
        scaler: ObservationScaler | None = None,
    ) -> EpisodeOutcome:
        """How one episode ends, as the config's rules say; every recording sees the start, each
        step (``act`` before the env steps, ``step`` after) and the end."""
        env = self.env
        observation, _ = env.reset(seed=env_seed)
        brain.reset(rng if rng is not None else np.random.default_rng(env_seed))
        for recording in recordings:
            recording.start_episode()
        info: dict = {}
        episode_return = 0.0
        steps = 0
        terminated = truncated = cut = False
        while True:
            action = brain.step(observation if scaler is None else scaler.apply(observation))
            for recording in recordings:
                recording.act(observation, action, brain)
            observation, reward, terminated, truncated, info = env.step(action)
            for recording in recordings:
                recording.step(action, observation, reward, info)
            episode_return += float(reward)
            steps += 1
            terminated, truncated = bool(terminated), bool(truncated)
            if terminated or truncated:
                break
            if self.config.reached_limit(steps):
                cut = True
                break
        for recording in recordings:
            recording.end_episode(info, terminated, truncated or cut)
        return EpisodeOutcome(episode_return, steps, terminated, truncated, cut)

    def dry_run(self, template: BrainTemplate) -> None:
        """One reset, one brain step and one env step with a zero genome, and a fill that leaves
        genes unread refused: fail early on mismatch."""
        name = template.config.type_name()
        try:
            brain = template.build(np.zeros(template.genome_size))
        except (ValueError, IndexError, TypeError) as error:  # e.g. fill reads more genes
            detail = str(error).splitlines()[0] if str(error) else ""
            raise ConfigError(
                "brain",
                f"a {name} brain cannot be built from a genome of its genome_size "
                f"({template.genome_size} genes): {type(error).__name__}: {detail}; the "
                "template's genome_size must be the number of genes its fill reads",
            ) from None
        problem = unread_genes_problem(template)
        if problem is not None:
            raise ConfigError("brain", problem)
        observation, _ = self.env.reset(seed=0)
        brain.reset(np.random.default_rng(0))
        action = brain.step(observation)
        if not self.env.action_space.contains(action):
            raise ConfigError(
                "brain",
                f"brain {name} produced {action!r}, which is not in the action space "
                f"{self.env.action_space} of {self.spec.environment.label}",
            )
        self.env.step(action)

    def close(self) -> None:
        """Close the env."""
        self.env.close()


def template_shapes(template: BrainTemplate) -> EpisodeShapes:
    """The flattened observation and action sizes of the template's env spaces (a Discrete
    observation or action is one number)."""
    io = template.io
    observation = 1 if io.observation_kind == "discrete" else io.input_size
    action = 1 if io.action_kind == "discrete" else int(np.prod(io.action_shape or (1,)))
    return EpisodeShapes(observation, action)


def replace_runner_config(spec: RunnerSpec, **changes: Any) -> RunnerSpec:
    """A copy of ``spec`` with some episode-runner options changed (e.g. for replay)."""
    runner = dataclasses.replace(spec.episode_runner, **changes)
    return dataclasses.replace(spec, episode_runner=runner)
