"""Write one genome's whole policy as an ONNX model or a numpy-only ``.py`` + ``.npz`` pair.

Every file is written to a temporary name in its folder and renamed into place, so a failure
leaves no half-written export; everything that can be refused is refused before any write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neuro_evolution.core.schema import to_dict
from neuro_evolution.export.graph import PolicyGraph
from neuro_evolution.export.policy import policy_graph
from neuro_evolution.export.selection import Chosen, choose
from neuro_evolution.run.replay_members import named_member
from neuro_evolution.support.atomic import atomic_savez, atomic_write_bytes, atomic_write_text
from neuro_evolution.support.errors import UserError

FORMATS = ("onnx", "numpy")
SUFFIXES = {"onnx": ".onnx", "numpy": ".py"}  # the file --out names, per format
FORMAT_VERSION = 1
EXTRA = "pip install -e '.[export]'"


def output_path(format: str, out: Path) -> Path:
    """``--out`` with the format's suffix added when it has none (``policy`` -> ``policy.onnx``
    or ``policy.py``): the name ``replay --exported`` and :func:`load_policy` accept."""
    if format in SUFFIXES and out.suffix == "" and not out.is_dir():
        return out.with_name(out.name + SUFFIXES[format])
    return out


def check_format(format: str, out: Path) -> None:
    """UserError for an unknown format, a missing package, or an ``--out`` that cannot be
    written (checked before anything is computed)."""
    if format not in FORMATS:
        raise UserError(f"--format must be one of {', '.join(FORMATS)}, got {format!r}")
    if out.is_dir():
        example = out / ("policy.onnx" if format == "onnx" else "policy.py")
        raise UserError(f"--out {out} is a folder: name the file to write, e.g. {example}")
    if format == "onnx":
        try:
            import onnx  # noqa: F401
        except ImportError:
            raise UserError(f"--format onnx needs the onnx package: {EXTRA}") from None
        if out.suffix != ".onnx":
            raise UserError(
                f"--out {out}: --format onnx writes an ONNX model; name a .onnx file (e.g. "
                f"{out.with_suffix('.onnx')})"
            )
    elif out.suffix != ".py" or not out.stem.isidentifier():
        raise UserError(
            f"--out {out}: --format numpy writes a Python module, so name a .py file whose "
            "name is a Python identifier (e.g. cartpole_policy.py); its .npz goes beside it"
        )
    if not out.parent.is_dir():
        raise UserError(f"--out {out}: the folder {out.parent} does not exist")


def metadata(chosen: Chosen, run_dir: Path, graph: PolicyGraph) -> dict[str, Any]:
    """Where the policy came from and how to step it (stored in the exported files)."""
    config = chosen.config
    return {
        "format_version": FORMAT_VERSION,
        "producer": "neuro_evolution.export",
        "run": str(run_dir.resolve()),
        "genome": chosen.label,
        "description": chosen.description,
        "environment": to_dict(config.environment),
        "brain": chosen.template.config.type_name(),
        "observation_normalization": chosen.scaler is not None,
        "states": [state.name for state in graph.states],
    }


def describe(chosen: Chosen) -> str:
    """One line for the files' doc strings."""
    return (
        f"{chosen.template.config.type_name()} policy for {chosen.config.environment.label}: "
        f"{chosen.description}"
    )


def export_run(
    run_dir: str | Path,
    format: str,
    out: str | Path,
    hall_of_fame: int | None = None,
    elite: int | str | None = None,
    cell: str | None = None,
    front: int | None = None,
) -> list[Path]:
    """Export the chosen genome's policy (see :mod:`neuro_evolution.export`): the candidate, or
    the one named by ``hall_of_fame`` or a member option (``elite`` K or I,J, ``cell`` I,J,
    ``front`` K); the written paths."""
    run_dir, out = Path(run_dir), output_path(format, Path(out))
    check_format(format, out)
    member = named_member({"--elite": elite, "--cell": cell, "--front": front})
    chosen = choose(run_dir, hall_of_fame, member)
    env = chosen.config.environment.make()
    try:
        space = env.observation_space
    finally:
        env.close()
    graph = policy_graph(chosen.template, chosen.genome, chosen.scaler, space)
    info, doc = metadata(chosen, run_dir, graph), describe(chosen)
    if format == "onnx":
        from neuro_evolution.export.onnx_model import model_bytes

        atomic_write_bytes(out, model_bytes(graph, info, doc))
        return [out]
    from neuro_evolution.export.numpy_file import policy_files

    source, arrays = policy_files(graph, info, doc, out.stem)
    npz = out.with_suffix(".npz")
    atomic_savez(npz, arrays)
    atomic_write_text(out, source)
    return [out, npz]
