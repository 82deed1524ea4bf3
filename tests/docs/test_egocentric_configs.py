"""A shipped config whose brain cuts an egocentric window says so in its file name, and the
pixels page points to each of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def brain_types(brain: dict[str, Any]) -> set[str]:
    """The type of a brain section and of every part of a composed one."""
    types = {str(brain.get("type"))}
    for part in brain.get("parts", []):
        types |= brain_types(part)
    return types


def test_egocentric_configs_are_named_so_and_linked_from_the_pixels_page() -> None:
    """Every configs/*.json with an egocentric part has "egocentric" in its name (and no other
    does); docs/guide/pixels.md names each."""
    egocentric = {
        path.name
        for path in (ROOT / "configs").glob("*.json")
        if "egocentric" in brain_types(json.loads(path.read_text()).get("brain", {}))
    }
    named = {path.name for path in (ROOT / "configs").glob("*egocentric*.json")}
    assert egocentric and egocentric == named
    page = (ROOT / "docs" / "guide" / "pixels.md").read_text()
    for name in sorted(egocentric):
        assert f"configs/{name}" in page, name
