"""The test suite's own rules: test modules share code through helpers.py only (never by importing
another test module or conftest, which holds fixtures and hooks), and one guard, helpers.require,
decides whether a test needing an optional extra runs: it skips only what is not installed; every
mark a test carries is registered, so ``-m "not slow"`` selects what it says.

The layout is read from the source with ``ast`` (nothing is imported); every import counts, also
one inside a function.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

import helpers
import pytest

TESTS = Path(__file__).resolve().parents[1]
# Support modules test modules may import (besides helpers.py): none of them imports a test module.
SUPPORT = {
    "helpers", "brain_references", "conv_reference", "fault_injection", "examples", "export_cases",
    "population_reference",
}  # fmt: skip
BUILT_IN_MARKS = {"parametrize", "skip", "skipif", "xfail", "usefixtures", "filterwarnings"}


def suite_files() -> list[Path]:
    """Every Python file of the suite: test modules, conftest, helpers, support modules."""
    return sorted(TESTS.rglob("*.py"))


def imported_modules(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, top-level module name) of every import in ``tree``, at any depth."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def called_names(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, name) of every call ``name(...)`` or ``anything.name(...)`` in ``tree``."""
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name:
                calls.append((node.lineno, name))
    return calls


def test_no_module_of_the_suite_imports_a_test_module_or_conftest() -> None:
    """Shared code lives in helpers.py (or a support module); a test module importing another
    runs that module's tests' set-up twice and hides what is shared."""
    offenders = [
        f"{path.relative_to(TESTS)}:{line} imports {name}"
        for path in suite_files()
        for line, name in imported_modules(ast.parse(path.read_text()))
        if name == "conftest" or name.startswith("test_")
    ]
    assert not offenders, offenders


def test_support_modules_are_the_named_ones() -> None:
    """Every non-test module at the top of tests/ is conftest or one of SUPPORT (a new shared
    module is named here, so the rule above cannot be dodged by a file called anything else)."""
    names = {path.stem for path in TESTS.glob("*.py")} | {
        path.name for path in TESTS.iterdir() if (path / "__init__.py").is_file()
    }
    others = {name for name in names if not name.startswith("test_")} - {"conftest"}
    assert others == SUPPORT


def test_every_mark_is_built_in_or_registered() -> None:
    """``pytest.mark.NAME`` names a built-in mark or one of pyproject.toml's ``markers`` (what
    ``--strict-markers`` checks; pytest 9.0-9.2 ignore that option when it comes from addopts,
    pytest-dev/pytest#14442), so a misspelt ``slow`` cannot put a test in the fast loop."""
    pyproject = tomllib.loads((TESTS.parent / "pyproject.toml").read_text())
    lines = pyproject["tool"]["pytest"]["ini_options"]["markers"]
    registered = {line.split(":")[0].split("(")[0].strip() for line in lines}
    unknown = [
        f"{path.relative_to(TESTS)}:{node.lineno} pytest.mark.{node.attr}"
        for path in suite_files()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and ast.unparse(node.value) == "pytest.mark"
        and node.attr not in BUILT_IN_MARKS | registered
    ]
    assert not unknown, unknown


def test_conftest_holds_only_fixtures_and_hooks() -> None:
    """Each function conftest.py defines is a fixture or a ``pytest_`` hook; it defines no class."""
    tree = ast.parse((TESTS / "conftest.py").read_text())
    offenders = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            offenders.append(node.name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            fixture = any("fixture" in ast.unparse(d) for d in node.decorator_list)
            if not fixture and not node.name.startswith("pytest_"):
                offenders.append(node.name)
    assert not offenders, offenders


def test_only_helpers_decides_whether_a_package_is_installed() -> None:
    """No ``pytest.importorskip`` (it also skips a package that is installed but broken) and no
    ``find_spec`` call outside helpers.py: an extra is guarded by ``require(extra)``."""
    offenders = [
        f"{path.relative_to(TESTS)}:{line} calls {name}"
        for path in suite_files()
        if path.name != "helpers.py"
        for line, name in called_names(ast.parse(path.read_text()))
        if name in ("importorskip", "find_spec")
    ]
    assert not offenders, offenders


def test_require_skips_an_extra_that_is_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not installed (no module found): the test is skipped, the message names the extra."""
    monkeypatch.setitem(helpers.EXTRAS, "absent", ("numpy", "no_such_module_for_this_test"))
    assert not helpers.installed("absent")
    with pytest.raises(pytest.skip.Exception, match=r"needs the absent extra \(no_such_module"):
        helpers.require("absent")


def test_require_fails_for_an_installed_extra_that_cannot_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed but broken (gymnax without the six it imports): the import error propagates,
    so the tests fail instead of skipping."""
    (tmp_path / "broken_extra_module.py").write_text("import no_such_dependency_for_this_test\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "broken_extra_module", raising=False)
    monkeypatch.setitem(helpers.EXTRAS, "broken", ("broken_extra_module",))
    assert helpers.installed("broken")
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency_for_this_test"):
        try:
            helpers.require("broken")
        except pytest.skip.Exception as skipped:  # a skip would pass this test unseen
            pytest.fail(f"an installed extra was skipped: {skipped.msg}")


def test_require_refuses_an_unknown_extra() -> None:
    """A misspelt extra is an error whether or not anything is installed, never a skip."""
    with pytest.raises(ValueError, match=r"unknown extra 'box2D'; known: box2d, mujoco"):
        helpers.require("box2D")


@pytest.mark.parametrize(
    "environment",
    [
        {"id": "neuro_evolution.envs:neuro_evolution/ReacherMemory-v0"},
        {"id": "neuro_evolution/ReacherMemory-v0"},  # registered by the line above's import
        {"entry_point": "neuro_evolution.envs.reacher_memory:ReacherMemoryEnv"},
        {"id": "Reacher-v5"},
    ],
    ids=["module-id", "id", "entry-point", "gymnasium"],
)
def test_a_mujoco_env_needs_the_mujoco_extra_in_every_form(environment: dict[str, str]) -> None:
    """ReacherMemory is Reacher-v5: named by module:id, by its registered id or by its entry
    point, it needs the mujoco extra, so its tests and configs skip where mujoco is missing."""
    helpers.environment_extras({"id": "neuro_evolution.envs:neuro_evolution/DoublePole-v0"})
    assert helpers.environment_extras(environment) == ["mujoco"]


def test_this_packages_envs_without_a_simulator_need_no_extra() -> None:
    """The double pole and Latency envs are plain Python: no extra, so their tests always run."""
    for env_id in ("DoublePoleNonMarkov-v0", "Latency-v0"):
        environment = {"id": f"neuro_evolution.envs:neuro_evolution/{env_id}"}
        assert helpers.environment_extras(environment) == []
