"""The migration's table-driven rules, one step at a time: the section mapper, the nesting of
dotted paths, the notes' lines, the optimizer table and the refusals. (The command line on the
predecessor's own config files: tests/cli/test_migrate.py.)"""

from __future__ import annotations

import pytest

from neuro_evolution.migration import MigrationError, Notes, migrate_config
from neuro_evolution.migration.rules import Drop, map_section, nest, require_section
from neuro_evolution.migration.sections import max_steps_penalty, migrate_optimizer


def test_map_section_follows_each_rule_and_reports_every_dropped_key() -> None:
    notes = Notes()

    def doubled(value: object, where: str, notes: Notes) -> dict[str, object]:
        notes.note(where, "doubled")
        return {"b.twice": 2 * value}  # type: ignore[operator]

    rules = {"kept": "a.kept", "gone": Drop("no meaning here"), "twice": doubled}
    mapped = map_section({"kept": 1, "gone": True, "twice": 3, "odd": "x"}, "s", rules, notes)
    assert mapped == {"a.kept": 1, "b.twice": 6}
    assert notes.lines == [
        "migrate: dropped s.gone=true (no meaning here)",
        "migrate: note: s.twice: doubled",
        'migrate: dropped s.odd="x" (not an option of the predecessor either)',
    ]


def test_nest_builds_sections_from_dotted_paths_in_first_seen_order() -> None:
    tree = nest({"b.y": 1, "a": 2, "b.x.z": 3})
    assert tree == {"b": {"y": 1, "x": {"z": 3}}, "a": 2}
    assert list(tree) == ["b", "a"] and list(tree["b"]) == ["y", "x"]


def test_the_penalty_changes_sign_and_says_so() -> None:
    """The predecessor added max_steps_penalty to a cut episode's return; here it is
    subtracted, so the value is negated with one line (0 passes silently)."""
    notes = Notes()
    assert max_steps_penalty(0, "episode_runner.max_steps_penalty", notes) == {
        "episode_runner.max_steps_penalty": 0
    }
    assert notes.lines == []
    assert max_steps_penalty(-5, "episode_runner.max_steps_penalty", notes) == {
        "episode_runner.max_steps_penalty": 5
    }
    (line,) = notes.lines
    assert line.startswith("migrate: changed episode_runner.max_steps_penalty=-5")


def test_an_unknown_optimizer_type_and_a_missing_section_are_refused_in_one_line() -> None:
    with pytest.raises(MigrationError, match=r"old.json: optimizer.type \"NEAT\" is not an"):
        migrate_optimizer({"type": "NEAT"}, "old.json", Notes())
    with pytest.raises(MigrationError, match="old.json: brain is missing, not an object"):
        require_section({"optimizer": {}}, "brain", "old.json")
    with pytest.raises(MigrationError, match="old.json"):
        migrate_config({"environment": "CartPole-v1"}, "old.json", Notes())
