"""The CPU kernels numpy and OpenBLAS picked in this process, and the portable kernel set.

numpy dispatches its float64 kernels by the CPU's instruction set when it is imported, and
OpenBLAS its matrix kernels by the CPU model; on x86 some of them round differently
(docs/architecture.md, "Across machines"). So a run records the set it trained with
(``kernels`` in training_status.json), and a resume, replay or export on another set says so in
one line.

The portable set is one that every x86-64 CPU with AVX2 and FMA3 can run: numpy's dispatch capped
at X86_V3 (no AVX-512 kernels) and OpenBLAS's Haswell kernels. Both are chosen when numpy loads,
so portable mode is two environment variables (:func:`portable_variables`) set before Python
starts; a command asked for it starts itself again with them (:func:`require_portable`), and the
processes it starts (mp workers, a LocalCluster's workers) inherit them.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from neuro_evolution.support.errors import UserError

# numpy's dispatch targets above AVX2: numpy 2.4 groups them as X86_V4 and two AVX-512 sets,
# earlier releases name each AVX-512 set (numpy warns about a name it does not dispatch)
ABOVE_AVX2 = "X86_V4 AVX512_ICL AVX512_SPR"
ABOVE_AVX2_BEFORE_2_4 = (
    "AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"
)
PORTABLE_BLAS = "openblas Haswell"
NEEDED_FEATURES = ("AVX2", "FMA3")  # what the portable set runs on
KERNELS_DOC = "docs/architecture.md#across-machines"


def numpy_cpu() -> tuple[list[str], dict[str, bool]]:
    """numpy's dispatch targets (built in, in order) and the CPU features it found."""
    import numpy as np

    umath = getattr(np, "_core", None) or np.core  # numpy 2, numpy 1.26
    umath = umath._multiarray_umath
    return list(umath.__cpu_dispatch__), dict(umath.__cpu_features__)


@functools.cache
def kernel_set() -> dict[str, Any]:
    """This process's kernels: numpy's dispatched targets the CPU runs (e.g. ``["X86_V3"]``) and
    the BLAS library's name and core type (e.g. ``"openblas Haswell"``)."""
    import threadpoolctl

    dispatch, features = numpy_cpu()  # numpy loaded: threadpoolctl sees its OpenBLAS
    blas = [
        f"{info.get('internal_api', '?')} {info.get('architecture', '?')}"
        for info in threadpoolctl.threadpool_info()
        if info.get("user_api") == "blas"
    ]
    return {
        "numpy": [name for name in dispatch if features.get(name)],
        "blas": blas[0] if blas else "none",
    }


def kernel_text(kernels: dict[str, Any]) -> str:
    """``numpy X86_V3, openblas Haswell``: a kernel set as one line shows it."""
    numpy_kernels = kernels.get("numpy")
    numpy_text = " ".join(numpy_kernels) if numpy_kernels else "baseline only"
    return f"numpy {numpy_text}, {kernels.get('blas', '?')}"


def cpu_has(names: Sequence[str]) -> bool:
    """Whether this CPU has every one of the features ``names`` (numpy's names)."""
    features = numpy_cpu()[1]
    return all(features.get(name) for name in names)


def is_portable(kernels: dict[str, Any]) -> bool:
    """Whether ``kernels`` is the portable set (X86_V3 numpy kernels at most, OpenBLAS Haswell)."""
    above = set(f"{ABOVE_AVX2} {ABOVE_AVX2_BEFORE_2_4}".split())
    return not above & set(kernels.get("numpy", [])) and kernels.get("blas") == PORTABLE_BLAS


def portable_variables() -> dict[str, str]:
    """The environment variables that make numpy and OpenBLAS load the portable kernels."""
    version = tuple(
        int(part) for part in metadata.version("numpy").split(".")[:2] if part.isdigit()
    )
    return {
        "NPY_DISABLE_CPU_FEATURES": ABOVE_AVX2 if version >= (2, 4) else ABOVE_AVX2_BEFORE_2_4,
        "OPENBLAS_CORETYPE": "Haswell",
    }


def require_portable(module: str, where: str, restart: bool) -> None:
    """Make this process run the portable kernels: nothing where it already does; with
    ``restart`` (a command run from the command line) start ``python -m module`` again with the
    same arguments and :func:`portable_variables`; otherwise (``main(argv)`` called from
    Python, numpy already loaded) a one-line UserError naming ``where`` and the way out."""
    if is_portable(kernel_set()):
        return
    machine = kernel_text(kernel_set())
    if not cpu_has(NEEDED_FEATURES):
        raise UserError(
            f"{where}: the portable kernels need an x86-64 CPU with AVX2 and FMA3; this one runs "
            f"{machine}: train without portable kernels ({KERNELS_DOC})"
        )
    variables = portable_variables()
    started_portable = all(os.environ.get(k) == v for k, v in variables.items())
    if started_portable:
        raise UserError(
            f"{where}: this process started with the portable variables, yet runs {machine}; "
            f"portable kernels need numpy's dispatched kernels and OpenBLAS ({KERNELS_DOC})"
        )
    if restart:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(
            sys.executable, [sys.executable, "-m", module, *sys.argv[1:]], os.environ | variables
        )
    assignments = " ".join(f'{key}="{value}"' for key, value in variables.items())
    raise UserError(
        f"{where}: this process already loaded numpy with {machine}; the portable kernels are "
        f"chosen before Python starts: run the command as python -m {module}, or start Python "
        f"with {assignments}"
    )


def other_kernels_line(recorded: Any, what: str) -> str | None:
    """The one line saying that ``what`` was written with other kernels than this process
    runs, or None where they are the same (or none were recorded: an earlier release)."""
    if not isinstance(recorded, dict):
        return None
    current = kernel_set()
    if recorded.get("numpy") == current["numpy"] and recorded.get("blas") == current["blas"]:
        return None
    return (
        f"{what} was trained with the kernels {kernel_text(recorded)}; this process runs "
        f"{kernel_text(current)}, so its numbers may differ in the last bits and then take "
        f"another path ({KERNELS_DOC}; portable kernels give one set on every AVX2 machine)"
    )
