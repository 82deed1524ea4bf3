"""The documentation names every module of the package, and no module that is gone.

The module list is computed from the files, so a new module fails here until the layout in
docs/architecture.md says what it holds and its layer table shows it (the table is rendered from
LAYERS and the files: ``python tests/package/test_import_layers.py --write``). Paths that
README.md and every page under docs/ mention must exist, so a moved module cannot leave stale
names behind.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "neuro_evolution"
README = ROOT / "README.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
DOCS = [README, *sorted((ROOT / "docs").rglob("*.md"))]


def package_files() -> set[str]:
    """Every module file of the package, relative to it (``brains/ctrnn.py``)."""
    return {path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")}


def layout_block(text: str) -> str:
    """The first code block of the "## Layout" section of docs/architecture.md."""
    assert "\n## Layout\n" in text, "docs/architecture.md has no '## Layout' section"
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"^```\n(.*?)^```", section, re.DOTALL | re.MULTILINE)
    assert match, "docs/architecture.md's Layout section has no code block"
    return match.group(1)


def layout_files(block: str) -> list[str]:
    """The files a layout tree names, relative to the package.

    The tree starts with ``neuro_evolution/`` and indents two spaces per level; a line's first
    word is a file (``*.py``) or a folder (``*/``), followed by what it holds. A line whose first
    word is neither continues the description above it.
    """
    lines = block.splitlines()
    assert lines and lines[0].split()[0] == "neuro_evolution/", "the layout starts elsewhere"
    folders: list[str] = []  # the folders open at each depth below the package
    files = []
    for line in lines[1:]:
        words = line.split()
        if not words or not words[0].endswith((".py", "/")):
            continue
        indent = len(line) - len(line.lstrip(" "))
        assert indent >= 2 and indent % 2 == 0, f"layout line {line!r}: two spaces per level"
        depth = indent // 2 - 1
        assert depth <= len(folders), f"layout line {line!r} is indented below no folder"
        del folders[depth:]
        if words[0].endswith("/"):
            folders.append(words[0][:-1])
        else:
            files.append("/".join([*folders, words[0]]))
    return files


def test_the_layout_lists_every_module_once_and_no_other() -> None:
    """Each module of the package has its line in the layout of docs/architecture.md, and each
    line a module."""
    listed = layout_files(layout_block(ARCHITECTURE.read_text()))
    twice = sorted({name for name in listed if listed.count(name) > 1})
    missing = sorted(package_files() - set(listed))
    gone = sorted(set(listed) - package_files())
    where = "the Layout section of docs/architecture.md"
    assert not missing, f"add to {where}, with what each holds: {missing}"
    assert not gone, f"listed in {where} but not in the package: {gone}"
    assert not twice, f"listed twice in {where}: {twice}"


def mentions(text: str, module: str) -> bool:
    """Whether ``text`` names ``module`` (``brains/ctrnn.py``, or ``neuro_evolution/...``) as a
    path of its own: ``cli.py`` is not named by ``sweep/cli.py`` or ``bench_cli.py``."""
    pattern = rf"(?<![\w/.-])(?:neuro_evolution/)?{re.escape(module)}(?![\w/])"
    return re.search(pattern, text) is not None


def test_the_architecture_shows_every_module() -> None:
    """docs/architecture.md names every module (its layer table lists every group's files)."""
    text = ARCHITECTURE.read_text()
    missing = sorted(module for module in package_files() if not mentions(text, module))
    assert not missing, (
        f"docs/architecture.md does not show {missing}; put the module's group in LAYERS and "
        "regenerate the table with: python tests/package/test_import_layers.py --write"
    )


def test_mentions_tell_a_module_from_one_of_the_same_name_elsewhere() -> None:
    assert mentions("see `cli.py`.", "cli.py")
    assert mentions("(`neuro_evolution/cli.py`)", "cli.py")
    assert not mentions("see `sweep/cli.py` and `bench_cli.py`", "cli.py")
    assert not mentions("`neuro_evolution/brains/ctrnn.pyc`", "brains/ctrnn.py")


def stale_references(text: str) -> list[str]:
    """Names of package modules and repository files in ``text`` that do not exist."""
    stale = []
    for path in re.findall(r"(?<![\w/])neuro_evolution/[\w/]+\.py\b", text):
        if not (ROOT / path).is_file():
            stale.append(path)
    for dotted in re.findall(r"(?<![\w.])neuro_evolution(?:\.\w+)+", text):
        where = PACKAGE
        for name in dotted.split(".")[1:]:
            if (where / name).is_dir():
                where = where / name
            elif (where / f"{name}.py").is_file():
                break  # a module: what follows is one of its names
            else:
                init = where / "__init__.py"
                # the front door exports names in quotes (``__all__``), a subpackage names them
                exported = f'"{name}"' if where == PACKAGE else name
                if not init.is_file() or exported not in init.read_text():
                    stale.append(dotted)
                break
    tracked = {path.name for path in ROOT.rglob("*.py") if ".git" not in path.parts}
    for name in re.findall(r"`([\w./-]+\.py)`", text):
        if name.startswith("neuro_evolution/"):
            continue  # checked above
        if "/" in name:
            exists = (ROOT / name).is_file() or (PACKAGE / name).is_file()
        else:
            exists = name in tracked
        if not exists:
            stale.append(name)
    return stale


def test_readme_and_docs_name_only_files_and_modules_that_exist() -> None:
    """E.g. ``neuro_evolution/seeds.py`` or ``neuro_evolution.results`` after a move."""
    stale = {
        doc.relative_to(ROOT).as_posix(): found
        for doc in DOCS
        if (found := stale_references(doc.read_text()))
    }
    assert not stale, f"stale names (fix the path or drop the mention): {stale}"


def test_stale_references_are_found() -> None:
    text = (
        "`neuro_evolution/seeds.py`, neuro_evolution.results, `configtools.py`, "
        "`handlers/vectorised.py`; fine: `neuro_evolution/support/seeds.py`, "
        "neuro_evolution.evaluation.episodes.wrappers:RewardOffset, `ctrnn.py`, "
        "`evaluation/episodes/runner.py`, "
        "neuro_evolution.Experiment"
    )
    assert stale_references(text) == [
        "neuro_evolution/seeds.py",
        "neuro_evolution.results",
        "configtools.py",
        "handlers/vectorised.py",
    ]
