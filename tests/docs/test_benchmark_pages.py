"""Every benchmark script has its page under docs/benchmarks/, listed in the site's navigation,
with "Results" that name the machine and when they were recorded (or say that none are), and
"How to replicate" with the script's command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(path.stem.removeprefix("bench_") for path in ROOT.glob("scripts/bench_*.py"))
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def section(text: str, heading: str) -> str:
    """The text under ``## heading`` up to the next ``## ``."""
    assert f"\n## {heading}\n" in text, f"no '## {heading}' section"
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize("name", SCRIPTS)
def test_each_benchmark_script_has_a_page_with_results_and_how_to_replicate(name: str) -> None:
    page = ROOT / "docs" / "benchmarks" / f"{name}.md"
    assert page.is_file(), f"scripts/bench_{name}.py has no page: write {page.relative_to(ROOT)}"
    text = page.read_text()
    results = section(text, "Results")
    assert "machine" in results, f"{page.name}: Results do not name the machine"
    unrecorded = "No figures of this script are recorded" in results  # says so, and why
    assert unrecorded or DATE.search(results), f"{page.name}: Results give no date (YYYY-MM-DD)"
    assert f"python scripts/bench_{name}.py" in section(text, "How to replicate")
    assert f"benchmarks/{name}.md" in (ROOT / "mkdocs.yml").read_text(), "not in the nav"
    assert f"({name}.md)" in (ROOT / "docs" / "benchmarks" / "index.md").read_text()


def test_the_scripts_are_found() -> None:
    assert {"solve", "memory", "qd", "pixels", "scale"} <= set(SCRIPTS)
