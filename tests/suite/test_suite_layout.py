"""The suite's folders mirror the package: a test module sits in the folder named for the package
folder it tests (``tests/brains/`` for ``neuro_evolution/brains/``) or in one of the few folders
for what is not one package folder; a module whose package imports all come from one package
folder sits in that folder's; a package folder's sub-packages (the rooms of ``evaluation/``) are
mirrored one level down the same way; file names are unique across folders (pytest imports each
test module by its file name, with its own folder on ``sys.path``).

Imports are read from the source with ``ast`` (nothing is imported), also one inside a function.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
PACKAGE = TESTS.parent / "neuro_evolution"
# Folders for what is not one package folder.
OTHER_FOLDERS = {
    "cli": "the command lines (train, replay, compare) and their start-up refusals",
    "docs": "README.md, the docs pages and their examples, the site, the tutorials",
    "package": "the package as a whole: its front door, its import layers, its registries",
    "scripts": "the scripts of scripts/",
    "suite": "the test suite's own rules",
}


def package_folders() -> set[str]:
    """The names of the package's top-level folders (each a Python package)."""
    return {path.parent.name for path in PACKAGE.glob("*/__init__.py")}


def suite_test_modules() -> list[Path]:
    """Every test module of the suite, at any depth."""
    return sorted(TESTS.rglob("test_*.py"))


def imported_names(tree: ast.Module) -> Iterator[str]:
    """Every dotted name an absolute import of ``tree`` reaches: ``M`` for ``import M``,
    ``M.NAME`` for each NAME of ``from M import NAME`` (a submodule or an attribute of M)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def package_groups(tree: ast.Module) -> set[str]:
    """What ``tree`` imports of the package, one name per top-level part: ``brains`` for
    ``neuro_evolution.brains.ctrnn``, ``train`` for ``neuro_evolution.train``, each imported
    name for ``from neuro_evolution import NAME``, ``neuro_evolution`` for the package alone."""
    groups = set()
    for name in imported_names(tree):
        parts = name.split(".")
        if parts[0] == "neuro_evolution":
            groups.add(parts[1] if len(parts) > 1 else parts[0])
    return groups


def test_every_test_module_sits_in_a_package_folder_or_a_named_other_folder() -> None:
    """No test module at the top of tests/; each one's folder is a package folder's name or one
    of OTHER_FOLDERS."""
    allowed = package_folders() | set(OTHER_FOLDERS)
    offenders = [
        str(path.relative_to(TESTS))
        for path in suite_test_modules()
        if path.parent == TESTS or path.parent.relative_to(TESTS).parts[0] not in allowed
    ]
    assert not offenders, f"move each into tests/FOLDER/ ({sorted(allowed)}): {offenders}"


def test_every_package_folder_has_its_test_folder() -> None:
    """``neuro_evolution/NAME/`` has ``tests/NAME/`` holding at least one test module."""
    missing = sorted(
        name for name in package_folders() if not any((TESTS / name).glob("test_*.py"))
    )
    assert not missing, missing


def test_a_module_importing_one_package_folder_sits_in_that_folders_test_folder() -> None:
    """A test module whose package imports all come from ``neuro_evolution/NAME/`` is in
    ``tests/NAME/`` or one of its room folders."""
    folders = package_folders()
    offenders = []
    for path in suite_test_modules():
        groups = package_groups(ast.parse(path.read_text()))
        (group,) = groups if len(groups) == 1 else ("",)
        if group in folders and path.relative_to(TESTS).parts[0] != group:
            offenders.append(f"{path.relative_to(TESTS)} belongs in tests/{group}/")
    assert not offenders, offenders


def test_test_module_names_are_unique_across_folders() -> None:
    """Two test modules with one file name cannot both be imported by it."""
    counts = Counter(path.name for path in suite_test_modules())
    duplicates = [name for name, count in counts.items() if count > 1]
    assert not duplicates, f"rename one of each: {duplicates}"


def rooms(folder: str) -> set[str]:
    """The sub-packages of ``neuro_evolution/FOLDER/`` (evaluation's ``episodes``, ``pools``...)."""
    return {path.parent.name for path in (PACKAGE / folder).glob("*/__init__.py")}


def rooms_imported(tree: ast.Module, folder: str) -> set[str]:
    """The rooms of ``folder`` that ``tree`` imports: ``pools`` for
    ``neuro_evolution.evaluation.pools.base`` or ``from neuro_evolution.evaluation import
    pools``."""
    known, found = rooms(folder), set()
    for name in imported_names(tree):
        parts = name.split(".")
        if parts[:2] == ["neuro_evolution", folder] and len(parts) > 2 and parts[2] in known:
            found.add(parts[2])
    return found


def test_test_folders_below_a_package_folder_are_its_rooms() -> None:
    """``tests/NAME/SUB/`` exists only for a sub-package ``neuro_evolution/NAME/SUB/``."""
    offenders = [
        str(path.relative_to(TESTS))
        for name in package_folders()
        for path in (TESTS / name).glob("*/")
        if path.is_dir() and path.name != "__pycache__" and path.name not in rooms(name)
    ]
    assert not offenders, f"name each for a sub-package of its package folder: {offenders}"


def test_a_module_in_a_room_folder_imports_that_room() -> None:
    """A test module in ``tests/NAME/ROOM/`` imports ``neuro_evolution.NAME.ROOM``."""
    offenders = []
    for name in package_folders():
        for room in rooms(name):
            for path in sorted((TESTS / name / room).glob("test_*.py")):
                if room not in rooms_imported(ast.parse(path.read_text()), name):
                    offenders.append(str(path.relative_to(TESTS)))
    assert not offenders, f"each imports nothing of its room; move it up: {offenders}"


def test_a_module_importing_one_room_sits_in_that_rooms_folder() -> None:
    """A test module of ``tests/NAME/`` whose imports of ``NAME`` all come from one room is in
    ``tests/NAME/ROOM/``; one that joins several rooms stays in ``tests/NAME/``."""
    offenders = []
    for name in package_folders():
        for path in sorted((TESTS / name).glob("test_*.py")):
            imported = rooms_imported(ast.parse(path.read_text()), name)
            if len(imported) == 1:
                room = imported.pop()
                offenders.append(f"{path.relative_to(TESTS)} belongs in tests/{name}/{room}/")
    assert not offenders, offenders
