"""Command line: ``python -m neuro_evolution.export RUN --format onnx|numpy --out PATH``."""

from __future__ import annotations

import sys
from pathlib import Path

from neuro_evolution.cli import ArgumentParser, run_cli
from neuro_evolution.export.writer import FORMATS, export_run

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
        help="stored archive elite K (QD runs: cells ascending), or with I,J the elite of grid "
        "cell I,J",
    )
    parser.add_argument("--cell", metavar="I,J", help="runs with a grid archive: the elite of I,J")
    parser.add_argument(
        "--front", type=int, metavar="K", help="stored Pareto front member K (NSGA2 runs)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args = build_parser().parse_args(argv)

    def run() -> int:
        written = export_run(
            args.run_dir, args.format, args.out, args.hall_of_fame, args.elite, args.cell,
            args.front,
        )  # fmt: skip
        for path in written:
            print(f"wrote {path} ({path.stat().st_size:,} bytes)")
        return 0

    return run_cli(run, PROGRAM)


if __name__ == "__main__":
    sys.exit(main())
