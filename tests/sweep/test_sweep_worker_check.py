"""A Dask sweep asks its workers, before any worker plugin runs, whether they can import what
the evaluation section needs (jax for ``--vectorize jax``), and refuses in one line naming the
option. jax is installed here, so workers that lack it are real ``dask worker`` processes whose
preload blocks ``import jax`` (``sys.modules["jax"] = None``), and the check itself is also
shown on LocalCluster workers asked for a module that does not exist."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from distributed import Client, LocalCluster
from helpers import external_dask_cluster, require, small_config

from neuro_evolution.evaluation.pools.options import EvaluationConfig
from neuro_evolution.support.errors import UserError
from neuro_evolution.sweep.pools import JAX_EXTRA, check_worker_modules, worker_modules


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster, set_as_default=False) as connected,
    ):
        yield connected


@pytest.mark.slow  # a real cluster
def test_workers_that_cannot_import_a_needed_module_are_refused_in_one_line(
    client: Client,
) -> None:
    """Both workers lack the module: one line naming the option, the count and the extra."""
    modules = {"no_such_module_for_this_test": ("--vectorize jax", JAX_EXTRA)}
    with pytest.raises(UserError) as refused:
        check_worker_modules(client, modules)
    line = str(refused.value)
    assert "\n" not in line
    assert line.startswith("--vectorize jax: 2 of 2 Dask workers cannot import no_such_module")
    assert JAX_EXTRA in line and "drop --vectorize jax" in line


@pytest.mark.slow  # a real cluster
def test_workers_that_import_every_needed_module_pass(client: Client) -> None:
    """Modules every worker has (numpy, and jax where installed) raise nothing."""
    check_worker_modules(client, {"numpy": ("--vectorize jax", JAX_EXTRA)})


def test_only_a_dask_section_with_vectorize_jax_needs_jax_on_the_workers() -> None:
    """``worker_modules`` names jax for dask + vectorize jax, nothing otherwise."""
    assert worker_modules(EvaluationConfig(handler="dask", vectorize="jax")) == {
        "jax": ("--vectorize jax", JAX_EXTRA)
    }
    assert worker_modules(EvaluationConfig(handler="dask", vectorize=True)) == {}
    assert worker_modules(EvaluationConfig(handler="mp", vectorize="jax")) == {}


@pytest.mark.slow  # a real cluster
def test_a_sweep_on_workers_without_jax_is_refused_in_one_line_and_leaves_no_folder(
    tmp_path: Path,
) -> None:
    """``sweep --handler dask --vectorize jax`` on two real workers that cannot import jax:
    exit 2, one stderr line naming --vectorize jax (no worker-plugin traceback), no --out."""
    require("jax")
    blocker = tmp_path / "no_jax.py"
    blocker.write_text('import sys\n\nsys.modules["jax"] = None  # this worker lacks jax\n')
    config = tmp_path / "gymnax.json"
    data = small_config(number_generations=1)
    data["environment"] = {"id": "CartPole-v1", "backend": "gymnax"}
    config.write_text(json.dumps(data))
    out = tmp_path / "sweeps" / "jax"
    with external_dask_cluster(tmp_path, workers=2, worker_options=("--preload", str(blocker))) as (
        cluster
    ):
        result = subprocess.run(
            [sys.executable, "-m", "neuro_evolution.sweep", str(config), "--handler", "dask"]
            + ["--scheduler", cluster.address, "--vectorize", "jax", "--out", str(out)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.strip().splitlines() if "dask: connecting" not in line]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith(
        "neuro_evolution.sweep: error: --vectorize jax: 2 of 2 Dask workers cannot import jax"
    ), lines[0]
    assert not out.exists() and not out.parent.exists()
