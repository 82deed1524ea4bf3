"""MA_ES and LM_MA_ES run no IPOP/BIPOP schedule: their inherited ``restarts`` section is refused
in one line (at start-up, before a run directory exists) instead of being accepted and ignored."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import small_config, write_json

from neuro_evolution import train
from neuro_evolution.core.schema import ConfigError
from neuro_evolution.optimizers import OPTIMIZERS


@pytest.mark.parametrize("name", ["MA_ES", "LM_MA_ES"])
def test_a_restarts_section_is_refused_in_one_line(name: str, tmp_path: Path, capsys) -> None:
    section = {"type": name, "population_size": 8, "restarts": {"kind": "ipop"}}
    with pytest.raises(ConfigError, match=rf"optimizer.restarts: {name} has no IPOP/BIPOP"):
        OPTIMIZERS.parse_config(section, "optimizer")
    config = write_json(tmp_path / "c.json", small_config(optimizer=section))
    out = tmp_path / "run"
    assert train.main([str(config), "--out", str(out), "--quiet"]) == 2
    error = capsys.readouterr().err.strip()
    assert "optimizer.restarts" in error and "\n" not in error
    assert not out.exists()


@pytest.mark.parametrize("name", ["MA_ES", "LM_MA_ES"])
def test_periodic_fresh_starts_are_still_taken(name: str) -> None:
    OPTIMIZERS.parse_config({"type": name, "restart_every_generations": 5}, "optimizer")
