"""A Dask worker that joins a run after the connect-time kernel check is still seen: its first
chunk names it (once) when it runs other kernels than the client, and in portable mode it
refuses the chunk in one line that says how to start it.

Another machine is emulated as in tests/support/test_kernels.py: a worker started with
``OPENBLAS_CORETYPE=Sandybridge`` and numpy's dispatch switched off (``helpers.OTHER_MACHINE``).
Real `dask scheduler` and `dask worker` processes on 127.0.0.1.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from distributed import Client
from helpers import (
    OTHER_MACHINE,
    OTHER_TEXT,
    ExternalCluster,
    external_dask_cluster,
    make_setup,
    start_dask_worker,
)

from neuro_evolution.evaluation.pools.dask_handler import DaskHandler
from neuro_evolution.support.errors import HandlerStartError

pytestmark = pytest.mark.slow  # real clusters


def only_the_late_worker(cluster: ExternalCluster, tmp_path: Path) -> str:
    """Start a worker on the emulated machine, wait until it has joined, then retire the first
    worker, so that every later chunk runs on the new one; its address."""
    with Client(cluster.address, set_as_default=False, timeout="30s") as observer:
        (first,) = observer.scheduler_info()["workers"]
        with (tmp_path / "late.log").open("w") as logs:
            cluster.processes.append(
                start_dask_worker(cluster.address, tmp_path, "late", logs, (), OTHER_MACHINE)
            )
        observer.wait_for_workers(2, timeout=90)
        observer.retire_workers(workers=[first], close_workers=True)
        deadline = time.monotonic() + 60
        while first in observer.scheduler_info()["workers"] and time.monotonic() < deadline:
            time.sleep(0.1)
        (late,) = observer.scheduler_info()["workers"]
    return late


@pytest.mark.timeout(300)
def test_a_late_worker_on_other_kernels_is_named_once(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    setup = make_setup(count=8)
    with (
        external_dask_cluster(tmp_path, workers=1) as cluster,
        DaskHandler(scheduler=cluster.address) as handler,
    ):
        handler.start(setup.template, setup.spec)
        handler.batch_evaluate(setup.genomes, setup.seeds)
        assert "kernels" not in capfd.readouterr().err
        late = only_the_late_worker(cluster, tmp_path)
        for _ in range(2):
            handler.batch_evaluate(setup.genomes, setup.seeds)
    lines = [line for line in capfd.readouterr().err.splitlines() if "kernels" in line]
    assert len(lines) == 1, lines
    assert f"dask: worker {late} joined with other kernels ({OTHER_TEXT}) than" in lines[0]
    assert "results may differ from a run on this machine alone" in lines[0]


@pytest.mark.timeout(300)
def test_a_late_worker_on_other_kernels_is_refused_in_portable_mode(tmp_path: Path) -> None:
    setup = make_setup(count=8)
    with (
        external_dask_cluster(tmp_path, workers=1) as cluster,
        DaskHandler(scheduler=cluster.address, portable_kernels=True) as handler,
    ):
        handler.start(setup.template, setup.spec)
        handler.batch_evaluate(setup.genomes, setup.seeds)  # the first worker is accepted
        late = only_the_late_worker(cluster, tmp_path)
        with pytest.raises(HandlerStartError) as refused:
            handler.batch_evaluate(setup.genomes, setup.seeds)
    (line,) = str(refused.value).splitlines()
    assert line.startswith(
        f"evaluation.portable_kernels: Dask worker {late} joined with other kernels "
        f"({OTHER_TEXT}) than this run's"
    ), line
    assert "dask worker ADDRESS (docs/cluster.md), then resume the run" in line, line
