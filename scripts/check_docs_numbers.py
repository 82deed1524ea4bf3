"""List the numbers of an old README that no longer appear in the README or under docs/.

When the README became a front page, its research narrative moved to the pages under docs/.
Nothing of substance may be lost on the way: every figure the old README gave must be on some
page. This prints each number of the old README (with the line it stood on) that neither
README.md nor any docs/**/*.md holds; the output is empty when nothing was lost.

A number is a token such as ``1,393,250``, ``0.9956`` or ``44.7`` (in ``44.7M``); a sign does
not count (``-0.460`` is ``0.460``), and digits inside a name (``LunarLander-v3``, ``ZDT1``)
are no number.

Usage: python scripts/check_docs_numbers.py [OLD_README]
(default: the README of commit 420d6a6, the last one before the front page, via ``git show``).
Exit code 0 when nothing is missing, 1 otherwise.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OLD_COMMIT = "420d6a6"
NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?")


def numbers(text: str) -> set[str]:
    """The numbers in ``text``, as written (thousands separators kept)."""
    return {whole + (fraction or "") for whole, fraction in NUMBER.findall(text)}


def new_text(root: Path = ROOT) -> str:
    """README.md and every page under docs/."""
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    return "\n".join(page.read_text(encoding="utf-8") for page in pages if page.is_file())


def old_readme(path: str | None) -> str:
    """The old README: the file at ``path``, or README.md at :data:`OLD_COMMIT`."""
    if path is not None:
        return Path(path).read_text(encoding="utf-8")
    command = ["git", "show", f"{OLD_COMMIT}:README.md"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout


def missing_numbers(old: str, new: str) -> list[tuple[str, int, str]]:
    """(number, line number, line) for each number of ``old`` that ``new`` lacks, in order."""
    present = numbers(new)
    missing = []
    seen: set[str] = set()
    for index, line in enumerate(old.splitlines(), start=1):
        for number in sorted(numbers(line) - present - seen, key=line.index):
            seen.add(number)
            missing.append((number, index, line.strip()))
    return missing


def main(argv: list[str] | None = None) -> int:
    """Print the missing numbers; exit code 1 if there are any."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", nargs="?", help=f"the old README (default: {OLD_COMMIT})")
    args = parser.parse_args(argv)
    missing = missing_numbers(old_readme(args.old), new_text())
    for number, line_number, line in missing:
        print(f"{number}\tline {line_number}: {line}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
