"""A brain template owns its JAX form, and the brain registry is the only place that maps a
brain type name to code: every built-in type's template makes its JAX form itself, and no other
table in the package is keyed by a type name."""

from __future__ import annotations

import ast
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from helpers import require

from neuro_evolution.brains import make_template
from neuro_evolution.brains.base import BRAINS, JaxBrain, parse_brain_config

ROOT = Path(__file__).resolve().parents[2]


# a small config of every built-in brain type, for a (4, 4, 2) image and 3 raw outputs
BUILTIN_BRAINS = {
    "CTRNN": {"number_neurons": 3},
    "FFNN": {"hidden_layers": [2]},
    "LSTM": {"hidden_size": 2},
    "conv": {"layers": [{"channels": 2, "kernel": 2, "stride": 2}]},
    "composed": {"parts": [{"type": "conv"}, {"type": "CTRNN", "number_neurons": 2}]},
    # a front end without weights: checked as the first part of a composed brain
    "egocentric": {
        "type": "composed",
        "parts": [{"type": "egocentric", "size": 3}, {"type": "FFNN", "hidden_layers": [2]}],
    },
}
IMAGE = gym.spaces.Box(-2.0, 2.0, (4, 4, 2), dtype=np.float64)
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
