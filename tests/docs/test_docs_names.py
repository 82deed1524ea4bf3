"""Every code name and repository path that the README, the docs pages and the package's
docstrings mention exists.

A page goes stale when code moves under it. This test reads README.md, every ``docs/**.md``
page and every module, class and function docstring of the package, and resolves, by importing
and looking up attributes (not by matching text):

- dotted names of the package, ``neuro_evolution.run.experiment.Experiment`` or the short form
  ``run.experiment.Experiment`` (the first part a folder or module of the package);
- references in a config's ``module:Name`` form, ``neuro_evolution.measures.functions:name``;
- ``Class.attribute`` in backticks, for a class the package defines (``LogRow.to_dict``);
- repository paths in backticks: ``configs/cartpole.json``, ``scripts/bench_qd.py``,
  ``docs/qd.md``, ``tests/qd/test_qd_runs.py``, ``neuro_evolution/qd/base.py``.

A docstring's names are read the same way (Sphinx roles such as :func:`~neuro_evolution.x.f`
included), and two more forms: a relative target, ``:mod:`.options``` (one dot: the module's
package or the module itself, each further dot one package up), and a path with a folder,
``brains/conv_ops.py`` (from the repository, the package, the docstring's folder or the one
above). A bare file name (``purecma.py``) may name another project's file and is not read.
"""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "neuro_evolution"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
REPOSITORY_FOLDERS = ("neuro_evolution", "configs", "scripts", "tests", "docs", ".ci")

CODE_SPAN = re.compile(r"`([^`\n]+)`")
DOTTED = re.compile(
    r"(?<![\w.:/-])((?:neuro_evolution\.)?[a-z_]\w*(?:\.\w+)+)(?::([A-Za-z_][\w.]*)(?![\w/-]))?"
)
ATTRIBUTE = re.compile(r"^([A-Z]\w*)\.(\w+)(?:\(.*\))?$")
PATH = re.compile(
    r"(?<![\w./-])((?:" + "|".join(map(re.escape, REPOSITORY_FOLDERS)) + r")/[\w./-]*)"
)
GLOB = re.compile(r"[*?\[{<]|\.\.\.")  # a pattern of paths, not one path


@cache
def package_parts() -> frozenset[str]:
    """The first parts a short dotted name may start with: the package's folders and modules."""
    names = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    names |= {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    return frozenset(names)


@cache
def package_classes() -> dict[str, tuple[str, ...]]:
    """Class name -> the modules of the package that define a class of that name."""
    found: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, []).append(".".join(parts))
    return {name: tuple(modules) for name, modules in found.items()}


def resolve(dotted: str) -> Any:
    """The object ``dotted`` names: the longest importable module prefix, then attributes.
    LookupError naming what is missing."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            target: Any = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name is not None and module_name.startswith(error.name):
                continue
            raise
        for index, name in enumerate(parts[cut:], start=cut):
            if not hasattr(target, name):
                raise LookupError(f"{'.'.join(parts[:index])} has no {name!r}")
            target = getattr(target, name)
        return target
    raise LookupError(f"no module {parts[0]!r}")


def dotted_problem(name: str, attribute: str | None) -> str | None:
    """Why the dotted name (and ``:attribute``) does not resolve; None when it does, or when
    it is not a name of the package."""
    first = name.split(".")[0]
    if first != "neuro_evolution":
        if first not in package_parts():
            return None
        short, name = name, f"neuro_evolution.{name}"
    try:
        target = resolve(name)
        if attribute:
            resolve_attribute(target, attribute)
    except LookupError as error:
        if first != "neuro_evolution" and not attribute and is_config_path(short):
            return None
        return str(error)
    return None


def resolve_attribute(target: Any, dotted: str) -> None:
    for name in dotted.split("."):
        if not hasattr(target, name):
            raise LookupError(f"{getattr(target, '__name__', target)} has no {name!r}")
        target = getattr(target, name)


def attribute_problem(class_name: str, attribute: str) -> str | None:
    """Why ``Class.attribute`` names nothing; None when a package class of that name has it, or
    when no package class has that name (a Gymnasium or numpy class, say)."""
    modules = package_classes().get(class_name)
    if not modules:
        return None
    for module in modules:
        cls = getattr(importlib.import_module(module), class_name)
        if hasattr(cls, attribute) or attribute in getattr(cls, "__dataclass_fields__", {}):
            return None
        if attribute in getattr(cls, "__annotations__", {}):
            return None
    return f"{class_name} ({', '.join(modules)}) has no {attribute!r}"


def path_problem(path: str) -> str | None:
    """Why a repository path names nothing. ``neuro_evolution/DoublePole-v0`` is an env id (a
    path in the package ends in ``.py`` or ``/``)."""
    if path.startswith("neuro_evolution/") and not path.endswith((".py", "/")):
        return None
    return None if (ROOT / path).exists() else f"no such file or folder: {path}"


@cache
def config_sections_and_fields() -> tuple[frozenset[str], frozenset[str]]:
    """The experiment config's section names, and every field name a config class declares."""
    from neuro_evolution.config.tree import ExperimentConfig

    fields: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                fields |= {
                    item.target.id
                    for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                }
    sections = frozenset(ExperimentConfig.__dataclass_fields__)
    return sections, frozenset(fields)


def is_config_path(name: str) -> bool:
    """``evaluation.max_lanes``: a config section followed by config fields; also the ``pbt``
    section of a PBT config (``pbt.interval``) and ``config.random_seed`` (a config's key)."""
    from neuro_evolution.pbt.section import SECTION as PBT_SECTION

    sections, fields = config_sections_and_fields()
    first, *rest = name.split(".")
    if first == "config" and rest:  # the whole config: its first key is a section or a field
        first, *rest = rest
    return first in sections | {PBT_SECTION} and all(part in fields for part in rest)


def stale_names(text: str) -> list[str]:
    """What ``text`` names in backticks that does not exist."""
    problems: list[str] = []
    for span in CODE_SPAN.findall(text):
        span = span.strip()
        attribute = ATTRIBUTE.match(span)
        if attribute:
            problem = attribute_problem(attribute.group(1), attribute.group(2))
            problems += [f"`{span}`: {problem}"] if problem else []
            continue
        if GLOB.search(span):
            continue
        for path in PATH.findall(span):
            if problem := path_problem(path):
                problems.append(f"`{span}`: {problem}")
        for name, reference in DOTTED.findall(span):
            if name.endswith((".py", ".json", ".md", ".csv", ".npz", ".png", ".txt", ".yml")):
                continue  # a file name, checked as a path
            if problem := dotted_problem(name, reference or None):
                problems.append(f"`{span}`: {problem}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_name_and_path_a_page_mentions_exists(page: Path) -> None:
    """Each backticked code name and repository path of the page resolves."""
    problems = stale_names(page.read_text())
    assert not problems, "stale names (fix the name or drop the mention):\n" + "\n".join(problems)


def test_a_name_that_does_not_exist_is_found() -> None:
    """The checker is red on a function, method, module or file that is not there, and quiet on
    the same names that are."""
    stale = (
        "`neuro_evolution.run.experiment.no_such_function`, `run.directory.LogRow.no_such`, "
        "`LogRow.to_dictionary`, `neuro_evolution.measures.functions:no_fuel`, "
        "`optimizers.no_module.Thing`, `configs/no_such.json`, `scripts/bench_nothing.py`, "
        "`evaluation.no_such_option`"
    )
    assert len(stale_names(stale)) == 8, stale_names(stale)
    fine = (
        "`neuro_evolution.run.experiment.Experiment`, `run.directory.LogRow.to_dict`, "
        "`LogRow.to_dict`, `neuro_evolution.measures.functions:lunar_lander_fuel`, "
        "`Experiment.step`, `configs/cartpole.json`, `scripts/bench_qd.py`, `gym.Env.step`, "
        "`np.random.default_rng`, `docs/`, `pip install -e .`, `evaluation.max_lanes`, "
        "`configs/popgym_*.json`, `neuro_evolution/DoublePole-v0`"
    )
    assert stale_names(fine) == []


# --- the package's docstrings ----------------------------------------------------------------

RELATIVE_ROLE = re.compile(r":\w+:`~?(\.+\w[\w.]*)`")  # :mod:`.options`, :func:`..lane_memory.f`
FOLDER_PATH = re.compile(r"(?<![\w./-])((?:[\w-]+/)+[\w-]+\.py)(?![\w/])")  # brains/conv_ops.py


@cache
def package_docstrings() -> list[tuple[Path, str, str]]:
    """(file, ``module`` or ``module:name``, docstring) of every module, class and function of
    the package that has a docstring."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        module = ".".join(parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                text = ast.get_docstring(node, clean=False)
                if text:
                    where = module if isinstance(node, ast.Module) else f"{module}:{node.name}"
                    found.append((path, where, text))
    return found


def relative_problem(path: Path, target: str) -> str | None:
    """Why the relative target ``.options`` (``..lane_memory.f``) of a docstring in ``path``
    names nothing; None when it resolves."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    package = module if parts[-1] == "__init__" else module.rsplit(".", 1)[0]
    dots = len(target) - len(target.lstrip("."))
    above = package.rsplit(".", dots - 1)[0] if dots > 1 else package
    bases = [module, above] if dots == 1 and module != package else [above]
    for base in bases:
        try:
            resolve(f"{base}.{target.lstrip('.')}")
        except LookupError:
            continue
        return None
    return f"no {target.lstrip('.')!r} in {' or '.join(bases)}"


def docstring_problems(path: Path, text: str) -> list[str]:
    """What the docstring ``text`` of the module file ``path`` names that does not exist (reST's
    double backticks read as single ones, so the spans pair up)."""
    text = text.replace("``", "`")
    problems = stale_names(text)
    for target in RELATIVE_ROLE.findall(text):
        if problem := relative_problem(path, target):
            problems.append(f"`{target}`: {problem}")
    for span in CODE_SPAN.findall(text):
        for name in FOLDER_PATH.findall(span):
            places = (ROOT, PACKAGE, path.parent, path.parent.parent)
            if not any((place / name).exists() for place in places):
                problems.append(f"`{name}`: no such file")
    return problems


def test_every_name_and_path_a_docstring_mentions_exists() -> None:
    """Each code name, relative target and folder path of every docstring of the package
    resolves (a deleted module named in a package's docstring is stale)."""
    problems = [
        f"{where}: {problem}"
        for path, where, text in package_docstrings()
        for problem in docstring_problems(path, text)
    ]
    assert not problems, "stale names in docstrings:\n" + "\n".join(problems)


def test_a_stale_name_in_a_docstring_is_found() -> None:
    """The docstring checker is red on a deleted sibling module, a missing method, a missing
    module path and a moved function, and quiet on the names that are there."""
    handlers = PACKAGE / "evaluation" / "pools" / "__init__.py"
    vectorized = PACKAGE / "evaluation" / "lockstep" / "handler.py"
    stale = (
        ":mod:`.registry`, :meth:`NSGA2.tell_evaluations`, ``export/recurrent.py``, "
        ":func:`~neuro_evolution.export.recurrent.ctrnn_step`, :func:`..no_such_module.f`"
    )
    assert len(docstring_problems(handlers, stale)) == 5, docstring_problems(handlers, stale)
    fine = (
        ":mod:`.options`, :data:`.options.HANDLERS`, :meth:`NSGA2.tell`, ``export/graph.py``, "
        "``brains/conv_ops.py``, :func:`~neuro_evolution.run.genome_choice.choose_genome`, "
        "``pbt.interval``, ``config.random_seed``, Hansen's ``purecma.py``"
    )
    assert docstring_problems(handlers, fine) == []
    assert docstring_problems(vectorized, ":func:`..episodes.runner.template_shapes`") == []
