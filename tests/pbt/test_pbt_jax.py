"""PBT with the jax handler inside: each run's requests are one compiled program in the PBT's
process, and a PBT stopped mid-interval and run again ends identical to one that went
straight through."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from helpers import pbt_config_data, pbt_run_files, require, stopped_then_resumed, write_json

require("jax")

from neuro_evolution.pbt import cli as pbt_cli  # noqa: E402


def test_a_pbt_on_the_jax_handler_stopped_mid_interval_resumes_to_a_straight_run(
    tmp_path: Path,
) -> None:
    """2 runs x 3 intervals on gymnax's CartPole, every run on the jax handler: the lineage
    (bytes), every run's log (wall time aside), config and optimizer state of a PBT stopped
    inside its second interval and continued equal a straight jax PBT's, and a copy was made."""
    data = pbt_config_data(
        environment={"id": "CartPole-v1", "backend": "gymnax"},
        evaluation={"handler": "jax"},
        pbt_runs=2,
        pbt_quantile=0.5,
        # one population size: each new request shape would compile another program
        pbt_explore={"optimizer.max_speed": {"range": [0.05, 1.0], "log": True}},
    )
    config = write_json(tmp_path / "pbt.json", data)
    straight = tmp_path / "straight"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert pbt_cli.main([str(config), "--out", str(straight), "--handler", "jax"]) == 0
    assert "jax: one compiled program per request" in printed.getvalue()
    assert printed.getvalue().count(" copies run-") == 2
    stopped = tmp_path / "stopped"
    stopped_then_resumed(config, stopped, ["--handler", "jax"])
    assert pbt_run_files(stopped) == pbt_run_files(straight)
