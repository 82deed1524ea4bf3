"""``compare`` never prints a bootstrap interval of one value: a median over a single run is
shown alone and marked, and the command says why in one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import small_config

from neuro_evolution import compare, train


def test_a_single_run_gets_no_interval_and_a_one_line_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One run: its cells read ``value (1 run: no interval)``, no ``[low, high]``, and stdout
    has one note line saying the group has a single run."""
    config = tmp_path / "small.json"
    data = small_config(number_generations=2, validation={"episodes": 3, "target": 5})
    config.write_text(json.dumps(data))
    run = tmp_path / "run"
    assert train.main([str(config), "--out", str(run), "--quiet"]) == 0
    capsys.readouterr()
    assert compare.main([str(run)]) == 0
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "1 of 1 groups have a single run" in notes[0], out
    assert "no bootstrap interval" in notes[0]
    row = next(line for line in (run / "comparison.md").read_text().splitlines()[6:])
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1] == "1" and cells[4] == "1/1", row
    for cell in (cells[2], cells[5], cells[6]):  # final validation, time and steps to target
        assert cell.endswith(compare.SINGLE) and not re.search(r"\[.*,.*\]", cell), row


def test_the_bootstrap_of_one_value_is_its_value_without_bounds() -> None:
    """bootstrap_median([x]) is (x, nan, nan); two values get a real interval."""
    median, low, high = compare.bootstrap_median([500.0])
    assert median == 500.0 and low != low and high != high  # NaN
    assert compare.interval_text((500.0, low, high)) == f"500 {compare.SINGLE}"
    median, low, high = compare.bootstrap_median([1.0, 3.0])
    assert (median, low, high) == (2.0, 1.0, 3.0)
