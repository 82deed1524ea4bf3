"""docs/config.md is the reference rendered from the config classes: they cannot drift apart."""

from pathlib import Path

from neuro_evolution.brains import brain_types
from neuro_evolution.config.reference import render_reference

DOC = Path(__file__).resolve().parents[2] / "docs" / "config.md"


def test_config_reference_matches_the_code():
    """Regenerate with: python -m neuro_evolution.config.reference > docs/config.md"""
    assert DOC.read_text() == render_reference()


def test_config_reference_documents_every_section():
    """Every section and registered type appears with its defaults."""
    text = render_reference()
    for needle in ("## `episode_runner`", "`number_fitness_runs`", '"type": "FFNN"', "MU_ES"):
        assert needle in text


def test_a_users_registered_brain_stays_out_of_the_reference():
    """Importing a user's brain (as test_writing_a_brain does) must not change the reference."""
    import examples.elman_brain  # noqa: F401  (registers "Elman"; tests/ is on sys.path)

    assert "Elman" in brain_types()
    assert "Elman" not in render_reference()
    assert DOC.read_text() == render_reference()
