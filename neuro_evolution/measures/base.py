"""Per-episode measures: a named vector computed by whoever runs the episode, returned with fitness.

A measure is one number per evaluation, described by a :class:`MeasureConfig`; an optimizer
that needs measures (QD descriptors, later multi-objective objectives) names them, the experiment
puts them in the :class:`~neuro_evolution.evaluation.episodes.runner.RunnerSpec`, and every episode
loop (the runner, hence the mp and Dask workers; lockstep lanes in
:mod:`~neuro_evolution.measures.lanes`) fills
``EvaluationResult.measures`` with them in the order named. Sources:

- ``observation`` / ``action``: element ``index`` of the flattened observation the env returned
  after a step / of the action taken at that step, reduced over the episode's steps by
  ``reduce``: ``last`` (the end state), ``mean``, ``min``, ``max``, ``sum``, or ``first_event``:
  the value at the first step where any of the observation elements ``event`` is non-zero (e.g.
  LunarLander's leg contacts 6, 7), and ``fallback`` (last/mean/min/max/sum) when that never
  happens;
- ``reward``: element ``index`` of each step's reward (a vector-reward env's components), e.g.
  ``reduce: sum`` for a return;
- ``info``: ``info[key]`` (element ``index`` of an array): with ``reduce: last`` of the step that
  ended the episode (the final info dict), otherwise of every step (e.g. the ``sum`` of a
  per-step reward component such as MuJoCo's ``reward_ctrl``);
- ``function``: element ``index`` of ``module:function(summary)``, a user function imported on
  every worker (like the other ``module:Name`` references) that takes a
  :class:`TrajectorySummary` of the episode and returns a vector of numbers.

An evaluation of several episodes (``number_fitness_runs``) gets each measure's mean over its
episodes, summed in episode order.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from neuro_evolution.core.importing import load_object
from neuro_evolution.core.schema import ConfigBase, ConfigError, config_class, join, option

Source = Literal["observation", "action", "reward", "info", "function"]
Reduce = Literal["last", "mean", "min", "max", "sum", "first_event"]
Fallback = Literal["last", "mean", "min", "max", "sum"]
STEP_SOURCES = ("observation", "action", "reward")  # read from every step's arrays
EXAMPLE = "mypackage.measures:landing"


@config_class
class MeasureConfig(ConfigBase):
    """One per-episode measure (see :mod:`neuro_evolution.measures.base`)."""

    name: str = option(doc="the measure's name (a log / picture label)")
    source: Source = option(doc="observation, action, reward, info or function")
    index: int = option(
        0, doc="element of the flattened observation/action/reward/info/function value"
    )
    reduce: Reduce = option(
        "last", doc="over the steps: last, mean, min, max, sum, or first_event (see module doc)"
    )
    event: tuple[int, ...] = option(
        (), doc="first_event: observation elements whose first non-zero step is the event"
    )
    fallback: Fallback = option("last", doc="first_event: the reduction when no event happens")
    key: str | None = option(
        None, doc="info: the key (reduce last: of the final info dict; else of every step's)"
    )
    function: str | None = option(
        None, doc="function: module:function(TrajectorySummary) -> vector of numbers"
    )

    def validate(self, path: str) -> None:
        if not self.name:
            raise ConfigError(join(path, "name"), "must be a non-empty string")
        if self.index < 0:
            raise ConfigError(join(path, "index"), f"must be >= 0, got {self.index}")
        if self.source == "info" and not self.key:
            raise ConfigError(join(path, "key"), "source info needs the info key to read")
        if self.source == "function":
            if not self.function:
                raise ConfigError(join(path, "function"), "source function needs module:function")
            if not callable(load_object(self.function, join(path, "function"), EXAMPLE)):
                raise ConfigError(join(path, "function"), f"{self.function} is not callable")
        if self.source == "function" and self.reduce != "last":
            raise ConfigError(
                join(path, "reduce"),
                f"source function is read once per episode: use last, got {self.reduce!r}",
            )
        if self.reduce == "first_event" and not self.event:
            raise ConfigError(join(path, "event"), "first_event needs observation indices")
        if self.reduce != "first_event" and self.event:
            raise ConfigError(join(path, "event"), "is only used with reduce first_event")


def check_measures(measures: Sequence[MeasureConfig], path: str) -> None:
    """Names must be distinct (a second one with the same name is a one-line error)."""
    seen: set[str] = set()
    for position, measure in enumerate(measures):
        if measure.name in seen:
            raise ConfigError(f"{path}[{position}].name", f"{measure.name!r} is named twice")
        seen.add(measure.name)


def check_against_spaces(
    measures: Sequence[MeasureConfig], path: str, observation_size: int, action_size: int
) -> None:
    """Indices of observation/action measures must exist in the env's spaces (start-up)."""
    for position, measure in enumerate(measures):
        where = f"{path}[{position}]"
        size = {"observation": observation_size, "action": action_size}.get(measure.source)
        if size is not None and measure.index >= size:
            raise ConfigError(
                join(where, "index"),
                f"{measure.source} has {size} elements (0..{size - 1}), got {measure.index}",
            )
        for event in measure.event:
            if event >= observation_size or event < 0:
                raise ConfigError(
                    join(where, "event"),
                    f"observation has {observation_size} elements, got index {event}",
                )


@dataclasses.dataclass(frozen=True)
class TrajectorySummary:
    """What a ``function`` measure sees of one episode: rows are steps (row t after step t)."""

    observations: np.ndarray  # (T, observation size): the observation after each step
    actions: np.ndarray  # (T, action size): the action of each step
    rewards: np.ndarray  # (T,)
    final_info: Mapping[str, Any]  # the info dict of the last step
    terminated: bool
    truncated: bool


def _flat(value: Any) -> np.ndarray:
    return np.asarray(value, dtype=np.float64).reshape(-1)


class _Reduction:
    """Running last/sum/min/max and the first-event value of one measure over one episode."""

    __slots__ = ("count", "last", "total", "low", "high", "at_event")

    def __init__(self) -> None:
        self.count = 0
        self.last = math.nan
        self.total = 0.0
        self.low = math.inf
        self.high = -math.inf
        self.at_event: float | None = None

    def add(self, value: float) -> None:
        self.count += 1
        self.last = value
        self.total += value
        self.low = min(self.low, value)
        self.high = max(self.high, value)

    def value(self, kind: str) -> float:
        if kind == "first_event":
            raise AssertionError("first_event is resolved by the recorder")
        if self.count == 0:
            return math.nan
        return {
            "last": self.last,
            "mean": self.total / self.count,
            "min": self.low,
            "max": self.high,
            "sum": self.total,
        }[kind]


class MeasureRecorder:
    """Computes the measures of one evaluation, episode by episode (one recorder per evaluation).

    The episode loop calls :meth:`start_episode`, then :meth:`step` after every env step, then
    :meth:`end_episode`; :meth:`vector` is the evaluation's measures (means over its episodes).
    """

    def __init__(self, measures: Sequence[MeasureConfig]):
        self.measures = tuple(measures)
        self.functions: dict[str, Callable[[TrajectorySummary], Any]] = {
            m.function: load_object(m.function, "measures.function", EXAMPLE)
            for m in self.measures
            if m.source == "function" and m.function
        }
        self.keep_trajectory = bool(self.functions)
        self.episodes: list[np.ndarray] = []
        self._start()

    def _start(self) -> None:
        self.reductions = [_Reduction() for _ in self.measures]
        self.observations: list[np.ndarray] = []
        self.actions: list[np.ndarray] = []
        self.rewards: list[np.ndarray] = []

    def start_episode(self) -> None:
        """Forget the previous episode's steps."""
        self._start()

    def step(
        self, action: Any, observation: Any, reward: Any, info: Mapping[str, Any] | None = None
    ) -> None:
        """One env step: the action taken, the observation, reward and info it led to."""
        flat_observation = _flat(observation)
        flat_action = _flat(action)
        flat_reward = _flat(reward)
        for measure, reduction in zip(self.measures, self.reductions):
            if measure.source == "observation":
                value = float(flat_observation[measure.index])
            elif measure.source == "action":
                value = float(flat_action[measure.index])
            elif measure.source == "reward":
                value = _element(flat_reward, measure.index, "reward")
            elif measure.source == "info" and measure.reduce != "last":
                assert measure.key is not None
                value = _info_value(info or {}, measure.key, measure.index)
            else:
                continue
            reduction.add(value)
            if (
                measure.reduce == "first_event"
                and reduction.at_event is None
                and any(flat_observation[e] != 0 for e in measure.event)
            ):
                reduction.at_event = value
        if self.keep_trajectory:
            self.observations.append(flat_observation)
            self.actions.append(flat_action)
            self.rewards.append(flat_reward if flat_reward.size != 1 else flat_reward[0])

    def end_episode(self, info: Mapping[str, Any], terminated: bool, truncated: bool) -> None:
        """The episode ended with ``info`` (the last step's): its measure values are fixed."""
        summary = None
        if self.keep_trajectory:
            summary = TrajectorySummary(
                observations=np.array(self.observations).reshape(len(self.observations), -1),
                actions=np.array(self.actions).reshape(len(self.actions), -1),
                rewards=np.array(self.rewards),
                final_info=info,
                terminated=terminated,
                truncated=truncated,
            )
        function_values = {}
        if summary is not None:
            function_values = {
                reference: _flat(function(summary))
                for reference, function in self.functions.items()
            }
        values = np.empty(len(self.measures))
        for position, (measure, reduction) in enumerate(zip(self.measures, self.reductions)):
            if measure.source == "info" and measure.reduce == "last":
                assert measure.key is not None
                values[position] = _info_value(info, measure.key, measure.index)
            elif measure.source == "function":
                assert measure.function is not None
                vector = function_values[measure.function]
                if measure.index >= vector.size:
                    raise ValueError(
                        f"measure {measure.name!r}: {measure.function} returned {vector.size} "
                        f"values, index {measure.index} does not exist"
                    )
                values[position] = vector[measure.index]
            elif measure.reduce == "first_event":
                event = reduction.at_event
                values[position] = event if event is not None else reduction.value(measure.fallback)
            else:
                values[position] = reduction.value(measure.reduce)
        self.episodes.append(values)

    def vector(self) -> np.ndarray:
        """The evaluation's measures: each one's mean over the episodes, in episode order."""
        if not self.episodes:
            return np.full(len(self.measures), np.nan)
        total = np.zeros(len(self.measures))
        for values in self.episodes:
            total = total + values
        return total / len(self.episodes)


def _element(values: np.ndarray, index: int, what: str) -> float:
    if index >= values.size:
        raise ValueError(f"{what} has {values.size} values, index {index} does not exist")
    return float(values[index])


def _info_value(info: Mapping[str, Any], key: str, index: int) -> float:
    if key not in info:
        known = ", ".join(sorted(map(str, info))) or "none"
        raise ValueError(f"measure info key {key!r} is not in the final info dict (keys: {known})")
    value = _flat(info[key])
    if index >= value.size:
        raise ValueError(f"info[{key!r}] has {value.size} values, index {index} does not exist")
    return float(value[index])
