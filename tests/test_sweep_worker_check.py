"""A Dask sweep asks its workers, before any worker plugin runs, whether they can import what
the evaluation section needs (jax for ``--vectorize jax``), and refuses in one line naming the
option. jax is installed here, so the refusal is shown with real LocalCluster workers asked
for a module that does not exist."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from distributed import Client, LocalCluster

from neuro_evolution.evaluation.handlers.options import EvaluationConfig
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
