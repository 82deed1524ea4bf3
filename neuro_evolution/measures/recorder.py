"""The recorder interface: one quantity an evaluation yields beside its return, written once for
every episode loop.

A :class:`Recorder` is plain, picklable data (it travels to every worker in the
:class:`~neuro_evolution.evaluation.episodes.runner.RunnerSpec`) that makes one *form* per episode
loop:

- :meth:`Recorder.scalar`: an :class:`EpisodeRecording` of one evaluation in one env (the
  sequential, mp and Dask loop, ``EpisodeRunner.run``): ``start_episode``; per step ``act``
  (the raw observation the brain was shown and its action, before the env steps) and ``step``
  (the action, the observation, reward and info the env answered); ``end_episode``; ``value``;
- :meth:`Recorder.lanes`: a :class:`LaneRecording` of one wave of lockstep lanes (the vectorized
  handler): the same ``act`` and ``step`` on (lanes, ...) arrays with the mask of the lanes that
  take the step, and ``values``, each lane's episode; :meth:`Recorder.join` makes an individual's
  value of its episodes' (in episode order);
- :meth:`Recorder.jax_form`: a :class:`JaxRecording`, pure functions of a carried state and the
  step's outputs inside the compiled generation program (the jax handler).

The three loops call every recorder of the spec in the same places, so a recorder works in all
three; a form it lacks is refused in one line naming the recorder and the method
(:meth:`Recorder.missing_form`; the lockstep loop then falls back to the scalar loop, the jax
handler refuses at start-up). Validation episodes record nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

import numpy as np

from neuro_evolution.core.schema import ConfigError

# The EvaluationResult fields the built-in recorders fill; any other recorder's value goes into
# EvaluationResult.records under the recorder's name.
RESULT_FIELDS = ("behavior", "observation_stats", "measures")
FORMS = {
    "lanes": "lockstep form",
    "jax_form": "JAX form",
}
PAGE = "docs/measurements.md"


class EpisodeShapes(NamedTuple):
    """Elements of one flattened observation and one flattened action of the env."""

    observation_size: int
    action_size: int


def space_shapes(observation_space: Any, action_space: Any) -> EpisodeShapes:
    """The :class:`EpisodeShapes` of an env's spaces (a Discrete action is one number)."""
    return EpisodeShapes(
        int(np.prod(observation_space.shape or (1,), dtype=np.int64)),
        int(np.prod(action_space.shape or (1,), dtype=np.int64)),
    )


class EpisodeRecording:
    """One evaluation's record in the scalar loop, episode by episode (defaults: nothing)."""

    def start_episode(self) -> None:
        """An episode starts (after the env's reset)."""

    def act(self, observation: Any, action: Any, brain: Any) -> None:
        """The brain was shown the raw ``observation`` and answered ``action`` (before the env
        steps; ``brain`` holds its state after the step)."""

    def step(self, action: Any, observation: Any, reward: Any, info: Mapping[str, Any]) -> None:
        """The env took ``action`` and answered ``observation``, ``reward`` and ``info``."""

    def end_episode(self, info: Mapping[str, Any], terminated: bool, truncated: bool) -> None:
        """The episode ended (``truncated`` includes a cut), ``info`` the last step's."""

    def value(self) -> Any:
        """The evaluation's value (what the result carries)."""
        raise NotImplementedError


class LaneRecording:
    """One wave of lockstep lanes' records; a lane records only the steps it takes."""

    def act(self, observations: np.ndarray, actions: np.ndarray, stepping: np.ndarray) -> None:
        """The lanes of ``stepping`` were shown ``observations`` (raw) and answered ``actions``."""

    def step(
        self,
        actions: np.ndarray,
        observations: np.ndarray,
        rewards: np.ndarray,
        stepping: np.ndarray,
    ) -> None:
        """The lanes of ``stepping`` took ``actions`` and got ``observations``, ``rewards``."""

    def values(self, steps: np.ndarray) -> np.ndarray:
        """(lanes, ...) each lane's episode value; ``steps`` the lanes' episode lengths."""
        raise NotImplementedError


class JaxStep(NamedTuple):
    """What a :class:`JaxRecording` sees of one step of the compiled loop ((lanes, ...) arrays)."""

    task: Any  # the task (episode k * P + individual p) each lane plays
    steps: Any  # steps the lane's episode took before this one
    active: Any  # the lane takes this step
    observations: Any  # (lanes, D) raw observations shown to the brains, in the program's dtype
    actions: Any  # the actions they answered
    next_observations: Any  # what the env answered
    rewards: Any
    tasks: int  # R * P, the number of tasks


class JaxRecording:
    """A recorder's JAX form: pure functions of a carried state (a pytree) inside the compiled
    generation program; ``finish`` runs on the host."""

    def init(self, lanes: int, tasks: int, dtype: Any) -> Any:
        """The carried state before the first step."""
        raise NotImplementedError

    def step(self, state: Any, view: JaxStep) -> Any:
        """The state after one step of every lane (masked by ``view.active``)."""
        raise NotImplementedError

    def end(self, state: Any, done: Any, slot: Any) -> Any:
        """The lanes ``done`` ended their episode, whose task is ``slot`` (out of range: none)."""
        return state

    def output(self, state: Any, runs: int, count: int) -> Any:
        """What the program returns of the state after the loop (traced)."""
        raise NotImplementedError

    def finish(self, output: np.ndarray, steps: np.ndarray) -> np.ndarray:
        """(P, ...) float64 values from :meth:`output` and the (R, P) episode lengths."""
        raise NotImplementedError


class Recorder:
    """What an evaluation yields beside its return; see the module docstring.

    ``name`` names the recorder in messages and in ``EvaluationResult.records``; a built-in one
    whose name is one of :data:`RESULT_FIELDS` fills that field instead.
    """

    name: ClassVar[str] = "recorder"
    # the config path a refusal names (a one-line ConfigError on it)
    path: ClassVar[str] = "extra_recorders"

    def scalar(self, env: Any, shapes: EpisodeShapes) -> EpisodeRecording:
        """The scalar loop's form for one evaluation in ``env``."""
        raise NotImplementedError

    def lanes(self, count: int, shapes: EpisodeShapes) -> LaneRecording:
        """The lockstep form for ``count`` lanes."""
        raise self.refusal("lanes")

    def join(self, episodes: np.ndarray, steps: np.ndarray) -> np.ndarray:
        """(P, ...) each individual's value from its (R, P, ...) episode values and (R, P)
        lengths, in episode order (the lockstep loop's episodes)."""
        raise NotImplementedError

    def jax_form(self, shapes: EpisodeShapes) -> JaxRecording:
        """The JAX form; it imports its JAX module when called (jax is an optional extra)."""
        raise self.refusal("jax_form")

    def missing_form(self, method: str, shapes: EpisodeShapes) -> ConfigError | None:
        """The one-line refusal of form ``method`` (``lanes`` or ``jax_form``), or None when
        this recorder has it."""
        try:
            if method == "lanes":
                self.lanes(0, shapes)
            else:
                self.jax_form(shapes)
        except ConfigError as error:
            return error
        return None

    def refusal(self, method: str, why: str = "") -> ConfigError:
        """The one-line ConfigError of a form ``method`` this recorder lacks."""
        loop = "lockstep loop" if method == "lanes" else "jax handler"
        because = f" ({why})" if why else ""
        return ConfigError(
            self.path,
            f"recorder {self.name!r} has no {FORMS[method]}{because}; write "
            f"{type(self).__name__}.{method}() (see {PAGE}) to record it in the {loop}",
        )
