"""An env module that fails while it is imported, for the one-line error tests
(tests/envs/test_environments.py): a researcher's package with a bug in it."""

from __future__ import annotations

SCALE = {"speed": 0.1}
SPEED = SCALE["sped"]  # the bug: a KeyError raised during import
