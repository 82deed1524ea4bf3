"""The package's import graph: every import runs downward through the layers, and none circles.

Read from the source with ``ast`` (nothing is imported). The layers hold for the imports a module
runs when it is loaded, i.e. at module level, outside ``if TYPE_CHECKING:``; an import inside a
function (a registry loading its built-in types, a lazily imported handler) is not a load-time
edge. No circle is allowed even through ``if TYPE_CHECKING:`` imports (a type-only circle is
still two modules that each need the other to be understood).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "neuro_evolution"

# Lowest first. A group is a top-level module or package (a folder): the folders are the layers.
# A module may import its own group and the groups of lower layers; groups of one layer know
# nothing of each other (brains and optimizers are independent components).
LAYERS: list[set[str]] = [
    {"support"},  # imports nothing of the package
    {"envs"},  # the envs the package ships: Gymnasium, numpy and support only
    {""},  # the package's init (the lazy front door imports support.console)
    {"core"},
    {"measures", "observers"},
    {"brains", "optimizers"},
    {"qd", "moo"},
    {"evaluation"},
    {"config"},
    {"run"},
    {"cli"},
    {"train", "replay"},
    {"sweep", "compare", "export"},
    {"pbt"},
]
SPLIT_PACKAGES: set[str] = set()  # packages whose modules would be groups of their own: none


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def load_time_imports(
    body: list[ast.stmt], type_checking: bool = False
) -> list[ast.Import | ast.ImportFrom]:
    """Import statements run when the module loads (not in functions), and with
    ``type_checking`` also those under ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If):
            if type_checking or "TYPE_CHECKING" not in ast.unparse(node.test):
                found += load_time_imports(node.body, type_checking)
            found += load_time_imports(node.orelse, type_checking)
        elif isinstance(node, ast.Try):
            found += load_time_imports(node.body, type_checking)
            for handler in node.handlers:
                found += load_time_imports(handler.body, type_checking)
            found += load_time_imports(node.orelse, type_checking)
            found += load_time_imports(node.finalbody, type_checking)
        elif isinstance(node, ast.With):
            found += load_time_imports(node.body, type_checking)
    return found


# The front door (the package's __init__) re-lists its lazy exports under TYPE_CHECKING for type
# checkers: that block names the top of every layer by design, while at load time the front
# door imports support.console only (and run.status imports it for __version__).
FRONT_DOOR = "neuro_evolution"


def import_graph(type_checking: bool = False) -> dict[str, set[str]]:
    """Module -> the package modules it imports at load time (``from pkg import mod`` -> mod);
    with ``type_checking`` also under ``if TYPE_CHECKING:`` (except the front door's)."""
    modules = module_files()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        body = ast.parse(path.read_text()).body
        for node in load_time_imports(body, type_checking and name != FRONT_DOOR):
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


# The JAX path: the only modules that import jax (or gymnax, brax) or a JAX module when they load;
# the core reaches them only from inside functions (a template's ``jax_brain``, the jax handler),
# so it imports and runs without the jax extra.
JAX_MODULES = {
    "neuro_evolution.brains.jax_brains",
    "neuro_evolution.brains.jax_conv",
    "neuro_evolution.evaluation.jax_envs",
    "neuro_evolution.evaluation.jax_episodes",
    "neuro_evolution.evaluation.jax_lockstep",
    "neuro_evolution.measures.jax_forms",
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
    assert importers and importers <= JAX_MODULES, importers - JAX_MODULES
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


def test_no_import_circle_even_a_type_only_one() -> None:
    """Also inside a group and through ``if TYPE_CHECKING:`` imports: e.g. optimizers/base.py
    never imports an optimizer or the cost model, a handler's interface (base.py) and the
    ``evaluation`` section (options.py) do not import each other, and a package's __init__
    never imports a module that imports the package back."""
    cycle = find_cycle(import_graph(type_checking=True))
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_the_type_only_graph_holds_the_type_checking_imports() -> None:
    """The circle test reads the TYPE_CHECKING imports (cli.py has some), the layer test not."""
    source, target = "neuro_evolution.cli", "neuro_evolution.config.tree"
    assert target in import_graph(type_checking=True)[source]
    assert target not in import_graph()[source]


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ],
)
def test_find_cycle_finds_a_circle_and_only_a_circle(graph, expected) -> None:
    assert find_cycle(graph) == expected


# --- docs/architecture.md: the layer table, rendered from LAYERS ----------------------------

ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
LAYERS_BEGIN = "<!-- layers:begin -->"
LAYERS_END = "<!-- layers:end -->"
REGENERATE = "regenerate it with: python tests/test_import_layers.py --write"

# What each group of LAYERS is for, as docs/architecture.md shows it (one line each).
GROUP_PURPOSES: dict[str, str] = {
    "support": "errors, frozen classes, the seed derivation, atomic writes, signal handling, "
    "console lines: what every layer may use",
    "envs": "envs the package ships (double-pole balancing), registered with Gymnasium on import",
    "": "the lazy front door: `from neuro_evolution import Experiment` loads only what it names",
    "core": "what every component stands on: the config schema, the typed registries, "
    "`module:Name` imports, observation normalization, the hall of fame",
    "measures": "what an episode yields beside its return: the recorder interface and its "
    "recorders (observation statistics, behaviour, measures), the measure configs, the shipped "
    "functions, the start-up checks",
    "observers": "mirrors of the log in TensorBoard and MLflow",
    "brains": "the networks: template (masks, genome layout) and brain (one step), batch brains, "
    "conv front ends and composed brains, JAX brains",
    "optimizers": "the evolution strategies behind one ask / tell(Evaluations) interface, "
    "novelty search; explicit state",
    "qd": "quality diversity: descriptors, grid/CVT archives of elites, MAP_ELITES, CMA_ME, "
    "`archive.npz`/`archive.png`",
    "moo": "several objectives: NSGA2, its operators, non-dominated sorting, hypervolume, "
    "`pareto.npz`/`pareto.png`",
    "evaluation": "envs, wrappers, the episode rules and loops, held-out validation, and the "
    "handlers that run them",
    "config": "the experiment config: every section, resolved and validated; its reference",
    "run": "the training loop (`Experiment`), its run directory, checkpoints, exact resume, "
    "plots, and reruns of stored evaluations",
    "cli": "command-line plumbing train and sweep share: errors, exit codes, overrides, signals",
    "train": "`python -m neuro_evolution.train`",
    "replay": "`python -m neuro_evolution.replay`",
    "sweep": "many runs (seeds x settings) on one shared pool or cluster",
    "pbt": "population-based training: runs that copy the best runs' exact checkpoints and "
    "explore their settings",
    "compare": "`python -m neuro_evolution.compare`: a sweep's picture and table",
    "export": "`python -m neuro_evolution.export`: a genome's whole policy as ONNX or a "
    "numpy-only file, and validation replayed through it",
}


def group_files(name: str) -> list[str]:
    """The files of group ``name``, relative to the package (``brains/ctrnn.py``)."""
    files = module_files()
    return sorted(
        path.relative_to(PACKAGE).as_posix() for module, path in files.items()
        if group(module) == name
    )  # fmt: skip


def render_layers() -> str:
    """The layer table of docs/architecture.md: one row per group, the highest layer first."""
    lines = [
        "| layer | group | what it is for | files |",
        "| ---: | --- | --- | --- |",
    ]
    for index in reversed(range(len(LAYERS))):
        for name in sorted(LAYERS[index]):
            shown = f"`{name}`" if name else "`neuro_evolution`"
            files = ", ".join(f"`{path}`" for path in group_files(name))
            lines.append(f"| {index} | {shown} | {GROUP_PURPOSES[name]} | {files} |")
    return "\n".join(lines)


def layers_block(text: str) -> str | None:
    """What stands between the layer markers of ``text`` (None without both markers)."""
    if LAYERS_BEGIN not in text or LAYERS_END not in text.split(LAYERS_BEGIN, 1)[1]:
        return None
    return text.split(LAYERS_BEGIN, 1)[1].split(LAYERS_END, 1)[0]


def write_layers() -> None:
    """Put ``render_layers()`` between the markers of docs/architecture.md."""
    text = ARCHITECTURE.read_text()
    if layers_block(text) is None:
        raise SystemExit(f"{ARCHITECTURE}: no {LAYERS_BEGIN} ... {LAYERS_END} block")
    head, rest = text.split(LAYERS_BEGIN, 1)
    tail = rest.split(LAYERS_END, 1)[1]
    ARCHITECTURE.write_text(f"{head}{LAYERS_BEGIN}\n{render_layers()}\n{LAYERS_END}{tail}")


def test_every_group_says_what_it_is_for() -> None:
    """A group added to LAYERS needs a line in GROUP_PURPOSES (and a gone one loses its line)."""
    groups = set().union(*LAYERS)
    assert not groups - set(GROUP_PURPOSES), (
        f"add to GROUP_PURPOSES: {sorted(groups - set(GROUP_PURPOSES))}"
    )
    assert not set(GROUP_PURPOSES) - groups, (
        f"not in LAYERS: {sorted(set(GROUP_PURPOSES) - groups)}"
    )


def test_architecture_doc_shows_the_layers_as_they_are() -> None:
    """docs/architecture.md's layer table is LAYERS rendered, with every group's files."""
    block = layers_block(ARCHITECTURE.read_text())
    assert block is not None, f"docs/architecture.md lacks {LAYERS_BEGIN} ... {LAYERS_END}"
    assert block == f"\n{render_layers()}\n", (
        f"docs/architecture.md's layer table is stale; {REGENERATE}"
    )


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/test_import_layers.py --write")
    write_layers()
