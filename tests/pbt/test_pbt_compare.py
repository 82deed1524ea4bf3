"""``compare`` on a PBT folder: group labels show explored floats readably (4 significant
digits, more only where needed to keep two groups apart) and the single-run note advises what
fits a PBT (another PBT), not ``sweep --seeds``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from helpers import pbt_config_data, write_json

from neuro_evolution import compare
from neuro_evolution.pbt import cli as pbt_cli
from neuro_evolution.pbt.lineage import STATE_FILE


def test_compare_on_a_pbt_folder_labels_readably_and_advises_another_pbt(
    tmp_path: Path, capsys: Any
) -> None:
    """4 runs x 2 intervals exploring a log-range max_speed: every label's number has at most
    4 significant digits, the labels are distinct, and the note names the PBT, not a sweep."""
    config = write_json(tmp_path / "pbt.json", pbt_config_data(number_generations=4))
    out = tmp_path / "out"
    assert pbt_cli.main([str(config), "--out", str(out), "--handler", "sequential", "--quiet"]) == 0
    capsys.readouterr()
    assert compare.main([str(out)]) == 0
    printed = capsys.readouterr().out
    (note,) = [line for line in printed.splitlines() if line.startswith("note:")]
    assert "sweep --seeds" not in note and "PBT" in note
    labels = [group.label for group in compare.group_runs(compare.find_runs([out]))]
    assert len(labels) == len(set(labels)) > 1
    speeds = re.findall(r"optimizer\.max_speed=([0-9.e+-]+)", " ".join(labels))
    assert speeds and all(len(re.sub(r"[^0-9]", "", s).lstrip("0")) <= 4 for s in speeds), labels


def test_label_values_add_digits_only_to_keep_values_apart() -> None:
    """0.123456789 and 0.987654321 read 0.1235 and 0.9877; 1.00001 and 1.00002 need 6 digits;
    non-floats stay JSON. The PBT folder mark is the PBT's own state file."""
    assert compare.label_values([0.123456789, 0.987654321]) == ["0.1235", "0.9877"]
    assert compare.label_values([1.00001, 1.00002]) == ["1.00001", "1.00002"]
    assert compare.label_values([8, "a"]) == ["8", '"a"']
    assert compare.PBT_STATE == STATE_FILE
