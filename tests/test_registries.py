"""Every registry (brain types, optimizers, handlers, observers) keeps one contract, and the
brain registry is the only place that maps a brain type name to code.

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

import gymnasium as gym
import numpy as np
import pytest
from helpers import require

from neuro_evolution.brains import make_template
from neuro_evolution.brains.base import BRAINS, JaxBrain, parse_brain_config

ROOT = Path(__file__).resolve().parents[1]

# registry -> (its module, its name there)
REGISTRIES = {
    "brains": ("neuro_evolution.brains.base", "BRAINS"),
    "optimizers": ("neuro_evolution.optimizers.base", "OPTIMIZERS"),
    "handlers": ("neuro_evolution.evaluation.handlers.options", "HANDLERS"),
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


# a small config of every built-in brain type, for a (4, 4, 1) image and 3 raw outputs
BUILTIN_BRAINS = {
    "CTRNN": {"number_neurons": 3},
    "FFNN": {"hidden_layers": [2]},
    "LSTM": {"hidden_size": 2},
    "conv": {"layers": [{"channels": 2, "kernel": 2, "stride": 2}]},
    "composed": {"parts": [{"type": "conv"}, {"type": "CTRNN", "number_neurons": 2}]},
}
IMAGE = gym.spaces.Box(-2.0, 2.0, (4, 4, 1), dtype=np.float64)
RAW = gym.spaces.Box(-1.0, 1.0, (3,), dtype=np.float64)  # action == raw output


@pytest.mark.parametrize("brain_type", sorted(BUILTIN_BRAINS))
def test_every_builtin_brain_template_makes_its_own_jax_form(brain_type: str) -> None:
    """A built-in type's template makes its JAX form itself, as a user's type does: its
    ``jax_brain()`` returns a JaxBrain whose steps give the numpy batch brain's outputs
    (float64, to 1e-9)."""
    require("jax")
    import jax
    import jax.numpy as jnp

    from neuro_evolution.brains.jax_brains import encode_inputs

    assert set(BUILTIN_BRAINS) == set(BRAINS.builtins)  # a new built-in type joins the list
    config = parse_brain_config({"type": brain_type, **BUILTIN_BRAINS[brain_type]}, "brain")
    template = make_template(config, IMAGE, RAW, np.random.default_rng(1))
    rng = np.random.default_rng(2)
    genomes = rng.normal(0.0, 0.7, (2, template.genome_size))
    observations = rng.normal(0.0, 1.0, (3, 2, *IMAGE.shape))
    batch = template.batch_brain(genomes)
    batch.reset([np.random.default_rng(i) for i in range(2)])
    with jax.enable_x64(True):
        brain = template.jax_brain()
        assert isinstance(brain, JaxBrain)
        params = brain.params(genomes, jnp.float64)
        state = brain.initial_state(params)
        for row in observations:
            state, outputs = brain.step(params, state, encode_inputs(template.io, row, jnp.float64))
            assert np.max(np.abs(np.asarray(outputs) - batch.step(row))) <= 1e-9


def type_name_mappings(names: set[str]) -> list[str]:
    """``path:line`` of every place in the package's source where a string literal equal to one
    of ``names`` is a dict key, a subscript key, or the first argument of a ``register``/``get``
    call, outside the brain registry itself (its ``Registry(...)`` and ``register`` calls)."""
    found = []
    for path in sorted((ROOT / "neuro_evolution").rglob("*.py")):
        tree = ast.parse(path.read_text())
        allowed: set[int] = set()  # ids of the literals that belong to BRAINS
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if [ast.unparse(target) for target in targets] == ["BRAINS"]:
                    allowed |= {id(inner) for inner in ast.walk(node.value)}
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "BRAINS.register":
                allowed |= {id(inner) for inner in node.args}
        keys: list[ast.expr | None] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                keys += node.keys
            elif isinstance(node, ast.Subscript):
                keys.append(node.slice)
            elif isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute):
                keys += [node.args[0]] if node.func.attr in ("register", "get") else []
        for key in keys:
            if isinstance(key, ast.Constant) and key.value in names and id(key) not in allowed:
                found.append(f"{path.relative_to(ROOT)}:{key.lineno}: {key.value!r}")
    return found


def test_no_table_outside_the_brain_registry_names_a_brain_type() -> None:
    """The brain registry is the only place that maps a brain type name to code: no other dict,
    lookup or registration in the package is keyed by a built-in type's name."""
    assert type_name_mappings(set(BRAINS.builtins)) == []
