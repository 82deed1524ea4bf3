"""Validation scores read alike in every line a PBT prints: the interval lines, the copy lines
and the end's best score all show a score with 6 significant digits, as ``train`` does."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

from helpers import pbt_config_data, write_json

from neuro_evolution.pbt import cli as pbt_cli
from neuro_evolution.support.console import score_text


def test_every_pbt_line_shows_a_score_as_the_final_line_does(tmp_path: Path) -> None:
    """3 validation episodes (means in thirds): each interval line's score of each run, and
    each copy line's two scores, are the recorded score in the one format; the best score
    at the end is printed the same way."""
    data = pbt_config_data(validation={"every_generations": 2, "episodes": 3})
    config = write_json(tmp_path / "pbt.json", data)
    out = tmp_path / "out"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert pbt_cli.main([str(config), "--out", str(out), "--handler", "sequential"]) == 0
    lines = printed.getvalue().splitlines()
    state = json.loads((out / "pbt_state.json").read_text())
    interval_lines = [line for line in lines if re.match(r"pbt: interval \d+/\d+ ended", line)]
    assert len(interval_lines) == len(state["history"]) == 3
    shown: set[str] = set()
    for line, entry in zip(interval_lines, state["history"]):
        for name, score in entry["scores"].items():
            assert f"{name} {score_text(score)}" in line, (line, score)
            shown.add(score_text(score))
    assert any(len(re.sub(r"\D", "", text)) > 4 for text in shown), shown  # digits past 4
    copies = [c for run in state["lineage"].values() for c in run["copies"]]
    for copy in copies:
        line = f"({score_text(copy['score'])}) copies {copy['copied']} "
        assert any(line in printed_line for printed_line in lines), line
    final = state["history"][-1]["scores"]
    best = max(final.values())
    assert any(f"at the end: {score_text(best)} (" in line for line in lines)
