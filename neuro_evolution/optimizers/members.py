"""Stored members: genomes an optimizer keeps in its run directory together with their training
evaluation, so that ``replay`` can rerun one and ``export`` can export it.

An optimizer declares what it stores with :meth:`Optimizer.stored_members` (its config section
and the run directory -> a :class:`StoredMembers`, or None: it stores none, the default).
Replay and export read members only through that declaration and name no optimizer or file. A
member is named on the command line by one of :data:`MEMBER_FLAGS`: ``--elite K`` and
``--cell I,J`` name an archive's elites, ``--front K`` a Pareto front's members; a declaration
lists the flags it answers to.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from neuro_evolution.core.normalization import ObservationScaler, scaler_from_arrays
from neuro_evolution.measures.base import MeasureConfig

if TYPE_CHECKING:
    from neuro_evolution.brains.base import BrainTemplate

# The command-line options of replay and export that name a stored member.
MEMBER_FLAGS = ("--elite", "--cell", "--front")


def row_scaler(data: dict[str, np.ndarray], row: int) -> ObservationScaler | None:
    """The observation scaler stored for row ``row`` of per-member arrays (their
    ``observation_*`` arrays; None when there are none)."""
    return scaler_from_arrays({k: v[row] for k, v in data.items() if k.startswith("observation_")})


def named_values(names: Sequence[str], values: np.ndarray | None) -> str:
    """``name value, ...`` of measures."""
    return ", ".join(f"{n} {v:.6g}" for n, v in zip(names, values if values is not None else ()))


@dataclasses.dataclass(frozen=True)
class Member:
    """One stored genome with what its training evaluation was and what it scored.

    Replayed with its episode base ``seed``, the run's episodes and its ``scaler``, recording
    ``measures``, the evaluation gives back ``stored_fitness`` and ``stored_measures``.
    """

    genome: np.ndarray
    seed: int  # the evaluation's episode base seed
    scaler: ObservationScaler | None  # the observation scaler it was evaluated with
    template: BrainTemplate
    measures: tuple[MeasureConfig, ...]  # the measures the evaluation recorded, in order
    stored_fitness: float | None  # None where the file keeps no fitness
    stored_measures: np.ndarray  # the stored values of ``measures``
    label: str  # how an export names it: the flag without dashes and its value, "elite 5"
    description: str  # one phrase for an export's doc string, "archive elite 5 (cell 12)"

    def replay_line(self, fitness: float, measures: np.ndarray) -> str:
        """The line replay prints: the replayed ``fitness`` and ``measures`` next to the stored
        ones."""
        names = [measure.name for measure in self.measures]
        stored = "" if self.stored_fitness is None else f" (stored {self.stored_fitness:.10g})"
        return (
            f"{self.label} (base seed {self.seed}): fitness {fitness:.10g}{stored}; measures "
            f"{named_values(names, measures)} (stored {named_values(names, self.stored_measures)})"
        )


class StoredMembers(ABC):
    """The members one run directory holds for its optimizer, named by the options ``flags``
    (a subset of :data:`MEMBER_FLAGS`)."""

    flags: tuple[str, ...] = ()

    @abstractmethod
    def member(self, flag: str, value: str) -> Member:
        """The member ``flag value`` names (``flag`` one of :attr:`flags`, ``value`` as typed);
        a one-line UserError naming the flag (or the missing file) when there is none."""
