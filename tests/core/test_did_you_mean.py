"""``did_you_mean``: a name that differs only in case points at the registered one; otherwise
difflib's closest, with case kept and then ignored."""

from __future__ import annotations

import pytest

from neuro_evolution.core.schema import did_you_mean

NAMES = ["CMA_ES", "SEP_CMA_ES", "SNES", "XNES", "FFNN", "CartPole-v1"]


@pytest.mark.parametrize(
    ("word", "hint"),
    [
        ("xnes", "XNES"),  # only the case differs
        ("Snes", "SNES"),
        ("FFN", "FFNN"),  # difflib, case kept
        ("CartPol-v1", "CartPole-v1"),
        ("cmaes", "CMA_ES"),  # difflib, case ignored
    ],
)
def test_the_hint_names_the_registered_spelling(word: str, hint: str) -> None:
    assert did_you_mean(word, NAMES) == f" Did you mean `{hint}`?"


def test_no_hint_for_a_name_like_none() -> None:
    assert did_you_mean("PPO", NAMES) == ""
