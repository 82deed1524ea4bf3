"""scripts/autoencode_policies.py plays POPGym's AutoencodeEasy as its docstring says: a policy
that remembers every card scores the maximum, and one that remembers k cards scores k right
answers plus the fixed suit's luck."""

from __future__ import annotations

import numpy as np
from helpers import require, script_module

policies = script_module("autoencode_policies")


def test_remembering_every_card_scores_the_maximum() -> None:
    require("popgym")
    np.testing.assert_allclose(policies.play(52, 5), 1.0)


def test_remembering_k_cards_gets_those_k_right() -> None:
    """With k remembered cards the return is at least (k - (52 - k)) / 52, and each extra card
    adds at least one right answer where the fixed suit was wrong or right by luck."""
    require("popgym")
    for k in (1, 3, 10):
        returns = policies.play(k, 20)
        assert (returns >= (k - (52 - k)) / 52 - 1e-9).all()
    assert (policies.play(10, 20) >= policies.play(3, 20) - 1e-9).all()
