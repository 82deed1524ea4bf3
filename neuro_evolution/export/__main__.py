"""Command line: ``python -m neuro_evolution.export RUN --format onnx|numpy --out PATH``."""

from __future__ import annotations

import sys
from pathlib import Path

from neuro_evolution.cli import ArgumentParser, run_cli
from neuro_evolution.export.writer import FORMATS, export_run
from neuro_evolution.support.errors import UserError

PROGRAM = "neuro_evolution.export"


def build_parser() -> ArgumentParser:
    """The ``export`` argument parser."""
    parser = ArgumentParser(
        PROGRAM, description="Export the whole policy of one genome of a training run."
    )
    parser.add_argument("run_dir", type=Path, help="a run directory written by train")
    parser.add_argument(
        "--format", required=True, help=f"{' or '.join(FORMATS)} (numpy: a .py + .npz pair)"
    )
    parser.add_argument(
        "--out", type=Path, required=True, help="the .onnx file, or the numpy policy's .py file"
    )
    parser.add_argument(
        "--hall-of-fame",
        "--rank",
        type=int,
        metavar="K",
        help="hall-of-fame entry K (0: best training fitness) instead of the candidate",
    )
    parser.add_argument(
        "--elite",
        metavar="K|I,J",
        help="QD runs: archive elite K (cells ascending), or with I,J the elite of grid cell I,J",
    )
    parser.add_argument("--cell", metavar="I,J", help="QD runs, grid archive: the elite of I,J")
    parser.add_argument("--front", type=int, metavar="K", help="NSGA2 runs: Pareto front member K")
    return parser


def elite_or_cell(elite: str | None, cell: str | None) -> tuple[int | None, str | None]:
    """``--elite K`` names an elite by index, ``--elite I,J`` (like ``--cell I,J``) by cell."""
    if elite is None:
        return None, cell
    if cell is not None:
        raise UserError("--elite and --cell: name one elite, not two")
    if "," in elite:
        return None, elite
    try:
        return int(elite), None
    except ValueError:
        raise UserError(f"--elite must be an index K or a cell I,J, got {elite!r}") from None


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args = build_parser().parse_args(argv)

    def run() -> int:
        elite, cell = elite_or_cell(args.elite, args.cell)
        written = export_run(
            args.run_dir, args.format, args.out, args.hall_of_fame, elite, cell, args.front
        )
        for path in written:
            print(f"wrote {path} ({path.stat().st_size:,} bytes)")
        return 0

    return run_cli(run, PROGRAM)


if __name__ == "__main__":
    sys.exit(main())
