"""Class attributes of config, template and brain classes cannot change at runtime, and why."""

from __future__ import annotations

import multiprocessing

import gymnasium as gym
import numpy as np
import pytest
from examples import PlainSettings, read_plain_setting

from neuro_evolution.brains import brain_types, get_brain_type, make_template
from neuro_evolution.brains.base import parse_brain_config
from neuro_evolution.brains.spaces import FeatureSpace


def brain_classes(brain_type: str) -> list[type]:
    """The config, template and brain classes of a brain type."""
    config_cls, template_cls = get_brain_type(brain_type)
    config = parse_brain_config({"type": brain_type}, "brain")
    observation, action = gym.spaces.Box(-1, 1, (3,)), gym.spaces.Discrete(2)
    if brain_type == "egocentric":  # a front end: an image in, its window's features out
        observation = gym.spaces.Box(0, 1, (4, 4, 2))
        action = FeatureSpace(template_cls.feature_size(config, observation) or 0)
    template = make_template(config, observation, action, np.random.default_rng(0))
    return [config_cls, template_cls, type(template.new_brain())]


@pytest.mark.parametrize("brain_type", brain_types())
def test_class_attributes_of_brain_types_cannot_be_changed(brain_type: str) -> None:
    """Setting or deleting a class attribute of a config, template or brain class raises, and the
    error says to change the experiment config instead."""
    for cls in brain_classes(brain_type):
        existing = next(name for name in vars(cls) if not name.startswith("__"))
        for name in (existing, "new_attribute"):
            with pytest.raises(AttributeError, match="experiment config instead"):
                setattr(cls, name, 5)
        with pytest.raises(AttributeError, match="frozen"):
            delattr(cls, existing)
        assert existing in vars(cls)


def child_sees(method: str) -> str:
    """``PlainSettings.value`` as read in a child process started with ``method``."""
    context = multiprocessing.get_context(method)
    with context.Pool(1) as pool:
        return pool.apply(read_plain_setting)


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_a_runtime_class_attribute_change_does_not_reach_spawned_workers(method: str) -> None:
    """Why classes are frozen: under spawn and forkserver a child re-imports the class, so a class
    attribute changed at runtime in the parent is seen with its OLD value by the workers."""
    PlainSettings.value = "changed at runtime"
    try:
        assert read_plain_setting() == "changed at runtime"
        assert child_sees(method) == "original"
    finally:
        PlainSettings.value = "original"


def test_a_forked_child_copies_the_changed_class_attribute() -> None:
    """The contrast: fork copies the parent's memory, so the change happens to arrive there —
    which is why the problem stays hidden until the start method changes."""
    PlainSettings.value = "changed at runtime"
    try:
        assert child_sees("fork") == "changed at runtime"
    finally:
        PlainSettings.value = "original"
