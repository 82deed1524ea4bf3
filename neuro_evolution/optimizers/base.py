"""The optimizer interface: ask for genomes, tell their fitness; all state is explicit data.

An optimizer owns every bit of randomness it uses (DEAP's operators draw from Python's global
``random`` and numpy's global generator: implementations swap their own saved generator state
in around those calls), so ``state()`` after generation g plus ``load_state`` reproduces the rest
of the run exactly.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

import numpy as np

from neuro_evolution.config.schema import ConfigBase, register_polymorphic
from neuro_evolution.hall_of_fame import HallOfFame
from neuro_evolution.optimizers.registry import OPTIMIZERS
from neuro_evolution.support.frozen import FrozenABCMeta

OptimizerState = dict[str, "np.ndarray | int | float | str | bool"]


class OptimizerConfig(ConfigBase):
    """Base of every optimizer's config section; the section's ``type`` picks the class."""

    __slots__ = ()

    def type_name(self) -> str:
        """The registered name of this config's optimizer."""
        return OPTIMIZERS.name_of(type(self))


register_polymorphic(OptimizerConfig, OPTIMIZERS.parse_config)  # ``optimizer`` picks its class


class Optimizer(metaclass=FrozenABCMeta):
    """Ask/tell evolution strategy over float64 genomes; higher fitness is better."""

    def __init__(self, config: Any, genome_size: int, seed: int):
        self.config = config
        self.genome_size = genome_size

    @abstractmethod
    def ask(self) -> np.ndarray:
        """The (P, genome_size) genomes to evaluate this generation."""

    @abstractmethod
    def tell(self, fitness: np.ndarray, hall_of_fame: HallOfFame) -> None:
        """Selection fitness of the genomes of the last ``ask``, in the same order.

        ``hall_of_fame`` is already updated with this generation's raw fitness.
        """

    def center(self) -> np.ndarray | None:
        """The genome this optimizer stands behind: its search distribution's mean.

        ``None`` for optimizers without one (MU_ES): the run then stands behind its hall of
        fame's best. Validation and replay score this genome, never a lucky sample.
        """
        return None

    @classmethod
    def state_bytes(cls, config: Any, genome_size: int) -> int:
        """Peak bytes this optimizer holds for ``genome_size`` genes (state and per-generation
        temporaries), computed without allocating: start-up refuses a config that cannot fit."""
        raise NotImplementedError(
            f"{cls.__name__} does not declare state_bytes(config, genome_size)"
        )

    @abstractmethod
    def state(self) -> OptimizerState:
        """Everything the next ``ask`` depends on, as arrays and scalars (no pickle)."""

    @abstractmethod
    def load_state(self, state: OptimizerState) -> None:
        """Continue exactly from a :meth:`state` snapshot."""


class MultiObjectiveOptimizer(Optimizer):
    """An optimizer told a matrix of objectives (NSGA2): one row per asked genome, one column
    per objective, every column maximized (turn raw values and their senses into this with
    :func:`neuro_evolution.optimizers.pareto.to_maximization`).

    ``tell(fitness)`` is the one-objective case: a one-column matrix, so such an optimizer
    still runs wherever a single fitness is all there is.
    """

    @abstractmethod
    def tell_objectives(
        self, objectives: np.ndarray, hall_of_fame: HallOfFame | None = None
    ) -> None:
        """The (P, M) maximization objectives of the genomes of the last ``ask``, in order."""

    def tell(self, fitness: np.ndarray, hall_of_fame: HallOfFame) -> None:
        """One objective: ``fitness`` (P,) told as a (P, 1) matrix."""
        values = np.asarray(fitness, dtype=np.float64)
        if values.ndim != 1:
            raise ValueError(
                f"fitness: expected shape (P,), got {values.shape}; tell a (P, M) matrix of"
                " several objectives with tell_objectives"
            )
        self.tell_objectives(values[:, None], hall_of_fame)

    @abstractmethod
    def front(self) -> tuple[np.ndarray, np.ndarray]:
        """(genomes (K, G), objectives (K, M)) of the non-dominated survivors, best first by
        the first objective; empty before the first tell."""
