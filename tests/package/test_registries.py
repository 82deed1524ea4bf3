"""Every registry (brain types, optimizers, handlers, observers) keeps one contract.

Its built-in names are listed before any built-in module is imported, a ``get`` imports the
module, a runtime registration joins the names, and a name taken by another class is refused.
Each check runs in a fresh interpreter: ``sys.modules`` starts clean there, and what the check
registers does not leak into the other tests' registries.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# registry -> (its module, its name there)
REGISTRIES = {
    "brains": ("neuro_evolution.brains.base", "BRAINS"),
    "optimizers": ("neuro_evolution.optimizers.base", "OPTIMIZERS"),
    "handlers": ("neuro_evolution.evaluation.pools.options", "HANDLERS"),
    "observers": ("neuro_evolution.observers.registry", "OBSERVERS"),
}

PROBE = """
import importlib, json, sys

registry = getattr(importlib.import_module({module!r}), {attribute!r})
report = {{"names": registry.names()}}
report["loaded_before_get"] = sorted(n for n, m in registry.builtins.items() if m in sys.modules)


def refusal(name, cls):
    try:
        registry.register(name, None)(cls)
    except ValueError as error:
        return str(error)
    return None


class Impostor:
    pass


first = next(iter(registry.builtins))
report["builtin_taken"] = refusal(first, Impostor)  # before the built-in's module is imported
report["classes"] = {{}}
for name, module in registry.builtins.items():
    _, impl = registry.get(name)
    report["classes"][name] = [module in sys.modules, impl.__module__]


class Mine:
    pass


registry.register("mine-for-the-test")(Mine)
registry.register("mine-for-the-test")(Mine)  # the same class again (a module imported twice)
report["names_after_register"] = registry.names()


class Other:
    pass


report["duplicate"] = refusal("mine-for-the-test", Other)
try:
    registry.get(first + "x")
except KeyError as error:
    report["unknown"] = error.args[0]
print(json.dumps(report))
"""


def probe(registry: str) -> dict:
    module, attribute = REGISTRIES[registry]
    code = PROBE.format(module=module, attribute=attribute)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def registries_in_the_package() -> set[tuple[str, str]]:
    """(module, name) of every module-level ``NAME = Registry(...)`` in the package's source."""
    found = set()
    for path in (ROOT / "neuro_evolution").rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Call):
                target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                if ast.unparse(node.value.func) == "Registry" and isinstance(target, ast.Name):
                    found.add((module, target.id))
    return found


def test_every_registry_of_the_package_keeps_the_contract_below() -> None:
    assert registries_in_the_package() == set(REGISTRIES.values())


@pytest.mark.parametrize("registry", sorted(REGISTRIES))
def test_a_registry_keeps_the_contract(registry: str) -> None:
    report = probe(registry)
    module, attribute = REGISTRIES[registry]
    builtins = getattr(importlib.import_module(module), attribute).builtins
    # every built-in name is listed, and no built-in module was imported for it
    assert set(builtins) <= set(report["names"])
    assert report["loaded_before_get"] == []
    # get imports the built-in's module, whose class registered itself under the name
    assert report["classes"] == {name: [True, module] for name, module in builtins.items()}
    # a runtime registration joins the names (once, however often the class registers)
    assert report["names_after_register"].count("mine-for-the-test") == 1
    assert set(report["names_after_register"]) == set(report["names"]) | {"mine-for-the-test"}
    # a name taken by another class is refused, a built-in one too (also before it is loaded)
    assert "'mine-for-the-test' is already registered by <class '__main__.Mine'>" in (
        report["duplicate"] or ""
    )
    first = next(iter(builtins))
    assert f"{first!r} is already registered by <class '{builtins[first]}." in (
        report["builtin_taken"] or ""
    )
    # an unknown name: the "did you mean" and the known names
    assert f"{first + 'x'!r}. Did you mean `{first}`?" in report["unknown"]
    assert "mine-for-the-test" in report["unknown"]
