"""scripts/check_docs_numbers.py: the numbers of an old README that no page holds any more."""

from __future__ import annotations

from pathlib import Path

from helpers import script_module

check = script_module("check_docs_numbers")


def test_numbers_are_figures_not_digits_inside_names() -> None:
    text = "QD score 1,393,250 at 0.9956, -0.460 on LunarLander-v3 and ZDT1; 44.7M steps, 2.8x."
    assert check.numbers(text) == {"1,393,250", "0.9956", "0.460", "44.7", "2.8"}


def test_a_number_that_moved_is_found_and_one_that_was_dropped_is_listed() -> None:
    old = "solved after 864 evaluations\nmedian 2,296 (10/10 seeds)\n"
    new = "the median was 2,296 over 10/10 seeds"
    assert check.missing_numbers(old, new) == [("864", 1, "solved after 864 evaluations")]
    assert check.missing_numbers(old, new + " and 864 before") == []


def test_the_command_line_reads_an_old_readme_from_a_path(tmp_path: Path, capsys) -> None:
    old = tmp_path / "OLD.md"
    old.write_text("a figure no page has: 98,765,431.25\n")
    assert check.main([str(old)]) == 1
    assert capsys.readouterr().out == "98,765,431.25\tline 1: a figure no page has: 98,765,431.25\n"
