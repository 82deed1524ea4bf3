"""The package's front door: ``from neuro_evolution import NAME`` for the curated API."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import neuro_evolution


@pytest.mark.parametrize("name", sorted(set(neuro_evolution.__all__) - {"__version__"}))
def test_every_exported_name_is_the_object_of_its_defining_module(name: str) -> None:
    """The front door re-exports, it does not copy: the name is its module's object."""
    module = importlib.import_module(neuro_evolution._EXPORTS[name])
    assert getattr(neuro_evolution, name) is getattr(module, name)


def test_all_lists_exactly_the_exported_names() -> None:
    assert set(neuro_evolution.__all__) == {"__version__", *neuro_evolution._EXPORTS}


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Experimentt'"):
        neuro_evolution.Experimentt  # noqa: B018


def test_importing_the_package_loads_no_component_and_no_optional_stack() -> None:
    """Workers import the package first: it must stay cheap (names load on first use)."""
    code = (
        "import sys, neuro_evolution; "
        "print(sorted(m for m in sys.modules if m.startswith(('neuro_evolution.', 'dask', "
        "'matplotlib', 'jax', 'gymnasium'))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "['neuro_evolution.support', 'neuro_evolution.support.console']"


def test_the_registration_functions_register_into_their_registries() -> None:
    """A user's brain type, optimizer or handler registers through the front door."""
    from neuro_evolution.brains.base import BRAINS
    from neuro_evolution.evaluation.pools.base import HANDLERS
    from neuro_evolution.optimizers.base import OPTIMIZERS

    registries = {
        "register_brain": BRAINS,
        "register_optimizer": OPTIMIZERS,
        "register_handler": HANDLERS,
    }
    for name, registry in registries.items():
        assert getattr(neuro_evolution, name).__self__ is registry
