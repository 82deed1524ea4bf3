"""docs/config.md is the reference rendered from the config classes: they cannot drift apart."""

from pathlib import Path

from neuro_evolution.config_reference import render_reference

DOC = Path(__file__).resolve().parent.parent / "docs" / "config.md"


def test_config_reference_matches_the_code():
    """Regenerate with: python -m neuro_evolution.config_reference > docs/config.md"""
    assert DOC.read_text() == render_reference()


def test_config_reference_documents_every_section():
    """Every section and registered type appears with its defaults."""
    text = render_reference()
    for needle in ("## `episode_runner`", "`number_fitness_runs`", '"type": "FFNN"', "MU_ES"):
        assert needle in text
