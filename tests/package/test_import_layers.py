"""The package's import graph: every import runs downward through the layers, and none circles.

Read from the source with ``ast`` (nothing is imported), every ``import`` statement of a module:
at module level, inside a function (a lazily imported JAX or Dask module) and under
``if TYPE_CHECKING:``. The layers hold for every import that runs, at load time or inside a
function: a module imports its own group and lower layers only. No circle is allowed between
modules, through any of those imports: a function-level or type-only circle is still two modules
that each need the other. An optional extra (jax, dask, onnx, mlflow...) is imported inside the
functions that need it; the package modules that wrap one are reached like any other module, so
no import is exempt.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path
from typing import Literal

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "neuro_evolution"

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
    {"config", "migration"},
    {"run"},
    {"cli"},
    {"export"},
    {"train", "replay", "migrate"},
    {"sweep", "compare"},
    {"pbt"},
]
SPLIT_PACKAGES: set[str] = set()  # packages whose modules would be groups of their own: none

# Where an import statement stands: run when the module loads, inside a function, or only for
# type checkers (under ``if TYPE_CHECKING:``).
Place = Literal["load", "function", "type"]
RUNTIME: frozenset[Place] = frozenset({"load", "function"})
EVERY: frozenset[Place] = frozenset({"load", "function", "type"})


@cache
def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def placed_imports(
    nodes: list[ast.stmt], place: Place = "load", function: str = ""
) -> list[tuple[ast.Import | ast.ImportFrom, Place, str]]:
    """Every import statement under ``nodes``, with its place and the function holding it
    (``""`` outside functions; ``Class.method`` for a method)."""
    found: list[tuple[ast.Import | ast.ImportFrom, Place, str]] = []
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append((node, place, function))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inner: Place = "type" if place == "type" else "function"
            name = f"{function}.{node.name}" if function else node.name
            found += placed_imports(node.body, inner, name)
        elif isinstance(node, ast.ClassDef):
            name = f"{function}.{node.name}" if function else node.name
            found += placed_imports(node.body, place, name)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            found += placed_imports(node.body, "type", function)
            found += placed_imports(node.orelse, place, function)
        else:
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                children = getattr(node, field, None)
                if isinstance(children, list):
                    found += placed_imports(children, place, function)
    return found


@cache
def module_imports(name: str) -> list[tuple[ast.Import | ast.ImportFrom, Place, str]]:
    """The placed import statements of module ``name`` (parsed once per test session)."""
    return placed_imports(ast.parse(module_files()[name].read_text()).body)


# The front door (the package's __init__) re-lists its lazy exports under TYPE_CHECKING for type
# checkers: that block names the top of every layer by design, while at load time the front
# door imports support.console only (and run.status imports it for __version__).
FRONT_DOOR = "neuro_evolution"


def import_sites(places: frozenset[Place] = RUNTIME) -> dict[tuple[str, str], str]:
    """(module, package module it imports) -> where the first such import stands (``line 94,
    in EvaluationConfig.validate``), for the imports in ``places`` (``from pkg import mod``
    imports mod). The front door's TYPE_CHECKING imports are left out."""
    modules = module_files()
    sites: dict[tuple[str, str], str] = {}
    for name in modules:
        for node, place, function in module_imports(name):
            if place not in places or (place == "type" and name == FRONT_DOOR):
                continue
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{name}: use absolute imports"
                base = node.module or ""
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                           for a in node.names]  # fmt: skip
            else:
                targets = [alias.name for alias in node.names]
            where = {"load": "", "function": f", in {function}", "type": ", if TYPE_CHECKING"}
            for target in targets:
                if target in modules and target != name:
                    sites.setdefault((name, target), f"line {node.lineno}{where[place]}")
    return sites


def import_graph(places: frozenset[Place] = RUNTIME) -> dict[str, set[str]]:
    """Module -> the package modules it imports in ``places`` (see :func:`import_sites`)."""
    graph: dict[str, set[str]] = {name: set() for name in module_files()}
    for source, target in import_sites(places):
        graph[source].add(target)
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
    "neuro_evolution.brains.jax_egocentric",
    "neuro_evolution.evaluation.jax.envs",
    "neuro_evolution.evaluation.jax.program",
    "neuro_evolution.evaluation.jax.lockstep",
    "neuro_evolution.measures.jax_forms",
}
JAX_PACKAGES = {"jax", "jaxlib", "gymnax", "brax"}


def test_only_the_jax_modules_import_jax_and_nothing_else_loads_them() -> None:
    """jax, gymnax and brax are optional: no other module imports them at load time, and no
    module outside the JAX path loads a JAX module at load time."""
    modules = module_files()
    importers = set()
    for name in modules:
        for node, place, _ in module_imports(name):
            if place != "load":
                continue
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
        for source, targets in import_graph(frozenset({"load"})).items()
        for target in targets & JAX_MODULES
        if source not in JAX_MODULES
    }
    assert not loaders, loaders


def test_every_module_has_a_layer() -> None:
    for module in module_files():
        layer(module)


def test_no_import_runs_upward_or_sideways_between_components() -> None:
    """At load time or inside a function: e.g. brains never import evaluation (spaces.py lives in
    brains/ for that) or export (a template writes its own export step), optimizers never import
    brains, and nothing below the CLI imports the CLI."""
    wrong = [
        f"{source} -> {target} ({where})"
        for (source, target), where in import_sites(RUNTIME).items()
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


def cycle_line(cycle: list[str], sites: dict[tuple[str, str], str]) -> str:
    """``a -> b (line 3) -> a (line 94, in f)``: the circle and where each of its imports is."""
    steps = [cycle[0]]
    steps += [f"{target} ({sites[source, target]})" for source, target in zip(cycle, cycle[1:])]
    return " -> ".join(steps)


def test_no_import_circle_even_a_function_level_or_type_only_one() -> None:
    """Through load-time, function-level and ``if TYPE_CHECKING:`` imports, also inside a group:
    e.g. optimizers/base.py never imports an optimizer or the cost model, a handler's interface
    (base.py) and the ``evaluation`` section (options.py) do not import each other, a brain
    template does not import the JAX module that reads it, and a package's __init__ never
    imports a module that imports the package back."""
    sites = import_sites(EVERY)
    cycle = find_cycle(import_graph(EVERY))
    assert cycle is None, "import circle: " + cycle_line(cycle, sites)


def test_the_graphs_hold_function_level_and_type_checking_imports() -> None:
    """The layer test reads imports inside functions (environment.py imports the gymnax envs in
    ``EnvironmentConfig.make``); the circle test also the TYPE_CHECKING ones (cli.py has some)."""
    source, target = (
        "neuro_evolution.evaluation.episodes.environment",
        "neuro_evolution.evaluation.jax.envs",
    )
    assert target in import_graph()[source]
    assert "in EnvironmentConfig.make" in import_sites()[source, target]
    assert target not in import_graph(frozenset({"load"}))[source]
    source, target = "neuro_evolution.cli", "neuro_evolution.config.tree"
    assert target in import_graph(EVERY)[source]
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


def test_placed_imports_tells_load_time_function_and_type_only_imports_apart() -> None:
    """An import in a method is a function import named ``Class.method``, one under
    ``if TYPE_CHECKING:`` a type import, one in a module-level ``try`` a load-time import."""
    source = (
        "import a\n"
        "if TYPE_CHECKING:\n    import b\n"
        "try:\n    import c\nexcept ImportError:\n    pass\n"
        "class K:\n    def f(self):\n        import d\n"
    )
    found = [(node.names[0].name, place, function)
             for node, place, function in placed_imports(ast.parse(source).body)]  # fmt: skip
    assert found == [
        ("a", "load", ""),
        ("b", "type", ""),
        ("c", "load", ""),
        ("d", "function", "K.f"),
    ]


# --- docs/architecture.md: the layer table, rendered from LAYERS ----------------------------

ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
LAYERS_BEGIN = "<!-- layers:begin -->"
LAYERS_END = "<!-- layers:end -->"
REGENERATE = "regenerate it with: python tests/package/test_import_layers.py --write"

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
    "evaluation": "four rooms: episodes (envs, wrappers, the episode rules and the scalar loop, "
    "held-out validation), lockstep (numpy lockstep), jax (the jax handler and gymnax lockstep), "
    "pools (the handler interface, in-process, process and Dask pools)",
    "config": "the experiment config: every section, resolved and validated; its reference",
    "run": "the training loop (`Experiment`), its run directory, checkpoints, exact resume, "
    "plots, and reruns of stored evaluations",
    "cli": "command-line plumbing train and sweep share: errors, exit codes, overrides, signals",
    "train": "`python -m neuro_evolution.train`",
    "replay": "`python -m neuro_evolution.replay`",
    "migrate": "`python -m neuro_evolution.migrate`: a predecessor config written as ours",
    "migration": "the predecessor's config options mapped to this package's, or named as dropped",
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
        raise SystemExit("usage: python tests/package/test_import_layers.py --write")
    write_layers()
