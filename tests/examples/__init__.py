"""Code that test child processes must be able to import (spawn/forkserver re-import by name).

``tests/`` is on ``sys.path`` under pytest (pyproject.toml's ``pythonpath``), so this package
imports as ``examples`` in the test process and its children.
"""

from __future__ import annotations


class PlainSettings:
    """An ordinary class with a class attribute: what config/template/brain classes must not be."""

    value = "original"


def read_plain_setting() -> str:
    """What a process sees as ``PlainSettings.value``."""
    return PlainSettings.value
