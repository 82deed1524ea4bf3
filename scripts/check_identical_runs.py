"""Train shortened shipped configs and fingerprint what they write, to hold a refactor to
byte-identical behaviour.

``python scripts/check_identical_runs.py record OUT.json`` trains each config for a few
generations (sequential handler: the log is the same on every handler; a run named
``config.json@handler`` uses that handler, to hold its episode loop too) and writes, per run,
the SHA-256 of every file of its run directory: ``log.csv`` without its wall-time column, the
candidate, the hall of fame, every checkpoint, the optimizer's own files and the JSON files
(``training_status.json`` without its version and time fields). A checkpoint is compared array
by array, its JSON metadata without the wall time (which no two runs share). Plots are left out.
``python scripts/check_identical_runs.py compare OUT.json`` trains the same runs again and prints
every file whose fingerprint changed; it exits 1 when one did.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# run -> generations: every optimizer family, memory, pixels, novelty and several objectives;
# ``@handler`` runs the lockstep and JAX episode loops (observation statistics, measures, novelty).
RUNS = {
    "cartpole.json": 4,
    "cartpole_ffnn.json": 3,
    "lunarlander.json": 2,
    "qd_lunarlander_cma_me.json": 2,
    "qd_lunarlander_map_elites.json": 2,
    "nsga2_lunarlander.json": 2,
    "double_pole_nonmarkov.json": 3,
    "double_pole_markov.json": 3,
    "minatar_breakout.json": 2,
    "popgym_repeat_previous.json": 2,
    "mountaincar_novelty.json": 2,
    "cartpole.json@vectorized": 3,
    "qd_lunarlander_map_elites.json@vectorized": 2,
    "minatar_breakout_jax.json@jax": 2,
}
SKIPPED_SUFFIXES = (".png",)
# JSON keys that differ between two identical runs: clock times, versions, and the checkpoint's
# digest and size in training_status.json (its metadata holds the wall time).
VOLATILE_KEYS = (
    "versions",
    "created",
    "updated",
    "wall_time",
    "package_version",
    "sha256",
    "bytes",
)


def log_without_wall_time(text: str) -> str:
    """``log.csv`` with its wall_time column removed."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or "wall_time" not in rows[0]:
        return text
    drop = rows[0].index("wall_time")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow(row[:drop] + row[drop + 1 :])
    return out.getvalue()


def without_volatile(value: object) -> object:
    """A JSON value without the keys that hold versions or clock times."""
    if isinstance(value, dict):
        return {
            key: without_volatile(item)
            for key, item in value.items()
            if not any(word in key for word in VOLATILE_KEYS)
        }
    if isinstance(value, list):
        return [without_volatile(item) for item in value]
    return value


def stable_json(text: str) -> bytes:
    """A JSON text without its volatile keys, in a canonical form."""
    return json.dumps(without_volatile(json.loads(text)), sort_keys=True).encode()


def checkpoint_bytes(path: Path) -> bytes:
    """A checkpoint's arrays (name, dtype, shape, bytes), its JSON strings made stable."""
    parts = []
    with np.load(path, allow_pickle=False) as arrays:
        for name in sorted(arrays.files):
            value = arrays[name]
            data, dtype = value.tobytes(), value.dtype.str
            if value.dtype.kind == "U" and value.ndim == 0 and str(value).startswith("{"):
                data, dtype = stable_json(str(value)), "json"  # its width follows the wall time
            parts.append(f"{name}|{dtype}|{value.shape}|".encode() + data)
    return b"\n".join(parts)


def fingerprint(path: Path) -> str:
    """SHA-256 of the file's stable content."""
    data = path.read_bytes()
    if path.parent.name == "checkpoints" and path.suffix == ".npz":
        data = checkpoint_bytes(path)
    elif path.name == "log.csv":
        data = log_without_wall_time(data.decode()).encode()
    elif path.suffix == ".json":
        data = stable_json(data.decode())
    return hashlib.sha256(data).hexdigest()


def train(config: Path, generations: int, out: Path, handler: str) -> dict[str, str]:
    """Train ``config`` for ``generations`` with ``handler`` into ``out``; the fingerprints of
    what it wrote."""
    command = [
        sys.executable,
        "-m",
        "neuro_evolution.train",
        str(config),
        "--generations",
        str(generations),
        "--handler",
        handler,
        "--out",
        str(out),
        "--quiet",
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{config}: train exited {done.returncode}: {done.stderr.strip()}")
    return {
        str(path.relative_to(out)): fingerprint(path)
        for path in sorted(out.rglob("*"))
        if path.is_file() and path.suffix not in SKIPPED_SUFFIXES
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["record", "compare"])
    parser.add_argument("fingerprints", type=Path)
    parser.add_argument("--configs", nargs="*", default=list(RUNS))
    parser.add_argument(
        "--config-dir",
        type=Path,
        default=ROOT / "configs",
        help="where the config files are (the recorded version's, when a change renamed what a "
        "config names)",
    )
    args = parser.parse_args()
    found: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for config in args.configs:
            name, _, handler = config.partition("@")
            found[config] = train(
                args.config_dir / name,
                RUNS[config],
                Path(scratch) / config,
                handler or "sequential",
            )
            print(f"{config}: {len(found[config])} files", flush=True)
    if args.mode == "record":
        args.fingerprints.write_text(json.dumps(found, indent=1, sort_keys=True))
        return 0
    recorded = json.loads(args.fingerprints.read_text())
    changed = 0
    for config, files in found.items():
        before = recorded.get(config, {})
        for name in sorted(set(before) | set(files)):
            if before.get(name) != files.get(name):
                changed += 1
                state = "new" if name not in before else "gone" if name not in files else "changed"
                print(f"DIFFERS {config}: {name} ({state})")
    print(f"{changed} files differ across {len(found)} runs")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
