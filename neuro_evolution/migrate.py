"""``python -m neuro_evolution.migrate OLD_CONFIG --out NEW_CONFIG``: a config of the
predecessor project (its ``configurations/*.json``) as a config of this package.

Every option with a meaning here is mapped (see :mod:`neuro_evolution.migration`); each one
dropped or changed is one ``migrate: ...`` line on stderr. The written config loads as it is
(it is validated before it is written, and written atomically). Bad input -- a missing file,
not JSON, not the predecessor's layout, an env that does not exist here -- is one line naming
the file and the fix, exit code 2, and nothing is written.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from neuro_evolution.cli import ArgumentParser, one_line_warnings, run_cli
from neuro_evolution.config.tree import parse_config
from neuro_evolution.migration import MigrationError, Notes, migrate_config
from neuro_evolution.migration.environments import FIX, RENAMED
from neuro_evolution.support.atomic import atomic_write_json
from neuro_evolution.support.errors import USER_ERRORS, ConfigError, first_line

PROGRAM = "neuro_evolution.migrate"
SOURCE_HINT = "pass a config of the predecessor (its configurations/*.json)"


def build_parser() -> ArgumentParser:
    """The command line: the old config and ``--out``."""
    parser = ArgumentParser(
        PROGRAM,
        description="Write a config of this package from a config of the predecessor project "
        "(neuroevolution-ai/NeuroEvolution-CTRNN_new); every option dropped or changed is "
        "one line on stderr.",
    )
    parser.add_argument("old_config", type=Path, help="the predecessor's config (JSON)")
    parser.add_argument("--out", type=Path, required=True, help="the config to write")
    return parser


def read_old_config(path: Path) -> Any:
    """The JSON value of ``path``; a missing, unreadable or non-JSON file is one line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MigrationError(f"{path}: no such file; {SOURCE_HINT}") from None
    except IsADirectoryError:
        raise MigrationError(f"{path}: a folder, not a file; {SOURCE_HINT}") from None
    except UnicodeDecodeError:
        raise MigrationError(f"{path}: not a text file; {SOURCE_HINT}") from None
    except OSError as error:
        raise MigrationError(f"{path}: cannot read it ({error.strerror})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise MigrationError(
            f"{path}: not JSON (line {error.lineno} column {error.colno}: {error.msg}); "
            f"{SOURCE_HINT}"
        ) from None


def check_loads(config: dict[str, Any], old_env: Any, source: str) -> None:
    """The written config must load here; an env that cannot be made is named as such."""
    try:
        parse_config(config)
    except ConfigError as error:
        if error.path.startswith("environment") and old_env in RENAMED:
            raise MigrationError(
                f"{source}: environment {old_env!r} is {RENAMED[old_env]} here, which this "
                "installation does not register; update neuro_evolution"
            ) from None
        if error.path.startswith("environment"):
            raise MigrationError(
                f"{source}: environment {old_env!r} does not exist here ({first_line(error)}); "
                f"{FIX}"
            ) from None
        raise MigrationError(
            f"{source}: the migrated config does not load here: {first_line(error)}"
        ) from None


def migrate_file(old: Path, out: Path) -> int:
    """Migrate ``old`` to ``out``; the notes go to stderr only once ``out`` is written."""
    if out.resolve() == old.resolve():
        raise MigrationError(f"{out}: --out names the old config itself; write another file")
    data = read_old_config(old)
    notes = Notes()
    try:
        config = migrate_config(data, str(old), notes)
        check_loads(config, data.get("environment"), str(old))
    except USER_ERRORS as error:
        message = first_line(error)
        if not message.startswith(str(old)):
            message = f"{old}: {message}"
        raise MigrationError(message) from None
    atomic_write_json(out, config)
    for line in notes.lines:
        print(line, file=sys.stderr)
    print(f"wrote {out}; train it with python -m neuro_evolution.train {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 written, 2 bad input)."""
    args = build_parser().parse_args(argv)
    with one_line_warnings(PROGRAM):
        return run_cli(lambda: migrate_file(args.old_config, args.out), PROGRAM)


if __name__ == "__main__":
    sys.exit(main())
