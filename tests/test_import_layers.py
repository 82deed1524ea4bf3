"""The package's import graph: every import runs downward through the layers, and none circles.

Read from the source with ``ast`` (nothing is imported): the imports a module runs when it is
loaded, i.e. at module level, outside ``if TYPE_CHECKING:``; an import inside a function (a
registry loading its built-in types, a lazily imported handler) is not a load-time edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "neuro_evolution"

# Lowest first. A module may import its own group and the groups of lower layers; groups of one
# layer know nothing of each other (brains and optimizers are independent components). A group is
# a top-level module or package, except in SPLIT_PACKAGES, whose modules sit at different layers
# and are groups of their own ("config.schema" is imported by the brains, "config.tree" imports
# them).
LAYERS: list[set[str]] = [
    {"support"},  # imports nothing of the package
    {"", "config", "run"},  # the package inits (the package's own imports support.console)
    {"config.schema"},
    {"config.registry", "config.importing", "normalization"},
    {"hall_of_fame"},
    {"brains", "optimizers"},
    {"novelty"},
    {"evaluation"},
    {"run.validation", "observers"},
    {"config.tree", "run.plots"},
    {"run.directory"},
    {"run.summary"},
    {"config.reference", "run.experiment", "run.status"},
    {"run.checkpoint"},
    {"run.resume"},
    {"cli"},
    {"train", "replay"},
    {"sweep", "compare"},
]
SPLIT_PACKAGES = {"config", "run"}


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def load_time_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """Import statements run when the module loads (not under TYPE_CHECKING, not in functions)."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                found += load_time_imports(node.body)
            found += load_time_imports(node.orelse)
        elif isinstance(node, ast.Try):
            found += load_time_imports(node.body)
            for handler in node.handlers:
                found += load_time_imports(handler.body)
            found += load_time_imports(node.orelse) + load_time_imports(node.finalbody)
        elif isinstance(node, ast.With):
            found += load_time_imports(node.body)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports at load time (``from pkg import mod`` -> mod)."""
    modules = module_files()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for node in load_time_imports(ast.parse(path.read_text()).body):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{name}: use absolute imports"
                base = node.module or ""
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                           for a in node.names]  # fmt: skip
            else:
                targets = [alias.name for alias in node.names]
            edges |= {target for target in targets if target in modules}
        graph[name] = edges - {name}
    return graph


def group(module: str) -> str:
    """The group of a module: ``brains`` for ``neuro_evolution.brains.ctrnn``, ``config.tree``
    for ``neuro_evolution.config.tree`` (a split package), ``""`` for the package itself."""
    parts = module.split(".")[1:]
    if len(parts) > 1 and parts[0] in SPLIT_PACKAGES:
        return ".".join(parts[:2])
    return parts[0] if parts else ""


def layer(module: str) -> int:
    for index, groups in enumerate(LAYERS):
        if group(module) in groups:
            return index
    raise AssertionError(f"{module} is in no layer: add its group to LAYERS")


# The JAX path: the only modules that import jax (or gymnax, brax) when they load; the core
# reaches them only from inside functions, so it imports and runs without the jax extra.
JAX_MODULES = {
    "neuro_evolution.brains.jax_brains",
    "neuro_evolution.evaluation.jax_envs",
    "neuro_evolution.evaluation.jax_episodes",
}
JAX_PACKAGES = {"jax", "jaxlib", "gymnax", "brax"}


def test_only_the_jax_modules_import_jax_and_nothing_else_loads_them() -> None:
    """jax, gymnax and brax are optional: no other module imports them at load time, and no
    module outside the JAX path loads a JAX module at load time."""
    modules = module_files()
    importers = set()
    for name, path in modules.items():
        for node in load_time_imports(ast.parse(path.read_text()).body):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [alias.name for alias in node.names]
            )
            if any(n.split(".")[0] in JAX_PACKAGES for n in names):
                importers.add(name)
    assert importers == JAX_MODULES
    loaders = {
        f"{source} -> {target}"
        for source, targets in import_graph().items()
        for target in targets & JAX_MODULES
        if source not in JAX_MODULES
    }
    assert not loaders, loaders


def test_every_module_has_a_layer() -> None:
    for module in module_files():
        layer(module)


def test_no_import_runs_upward_or_sideways_between_components() -> None:
    """E.g. brains never import evaluation (spaces.py lives in brains/ for that), optimizers
    never import brains, and nothing below the CLI imports the CLI."""
    wrong = [
        f"{source} -> {target}"
        for source, targets in import_graph().items()
        for target in targets
        if group(source) != group(target) and layer(target) >= layer(source)
    ]
    assert not wrong, "imports against the layers:\n" + "\n".join(sorted(wrong))


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as a list of modules, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def test_no_import_circle() -> None:
    """Also inside a group: e.g. optimizers/base.py never imports an optimizer at load time,
    and a package's __init__ never imports a module that imports the package back."""
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle)


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ],
)
def test_find_cycle_finds_a_circle_and_only_a_circle(graph, expected) -> None:
    assert find_cycle(graph) == expected
