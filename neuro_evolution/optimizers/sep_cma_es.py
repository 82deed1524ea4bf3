"""SEP_CMA_ES: CMA-ES with a diagonal covariance, O(n) time per sample and O(n) memory.

R. Ros and N. Hansen, "A Simple Modification in CMA-ES Achieving Linear Time and Space
Complexity", PPSN X (2008): the update of N. Hansen's tutorial (arXiv:1604.00772, Eq. 47) is
applied to the diagonal of C only, with learning rates c1, cmu multiplied by (n + 2)/3. pycma's
``CMA_diagonal=True`` is the reference implementation. Shared parts live in :mod:`cma_common`.

For genomes too large for full CMA-ES (whose covariance is n x n); it cannot learn
correlations between genes, only a scale per gene.
"""

from __future__ import annotations

import numpy as np

from neuro_evolution.core.schema import config_class
from neuro_evolution.optimizers.base import OPTIMIZERS
from neuro_evolution.optimizers.cma_common import ActiveCmaConfig, CmaBase
from neuro_evolution.optimizers.declared_state import Array

NAME = "SEP_CMA_ES"
_CHUNK = 16_384  # genes per block of the weighted sums: mu x block stays in cache


@config_class
class SepCmaEsConfig(ActiveCmaConfig):
    """Options of the ``SEP_CMA_ES`` optimizer (diagonal covariance; O(genome size) memory)."""


def weighted_sums(
    weights: np.ndarray, steps: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(sum_i w_i y_i, sum_i w_i y_i^2) over ``steps[rows]``, column block by column block.

    One pass over the selected steps instead of a copy, a product and a squared copy: at a
    million genes that is the bulk of a tell.
    """
    n = steps.shape[1]
    linear, squares = np.empty(n), np.empty(n)
    for start in range(0, n, _CHUNK):
        block = steps[:, start : start + _CHUNK][rows]
        linear[start : start + _CHUNK] = weights @ block
        block *= block
        squares[start : start + _CHUNK] = weights @ block
    return linear, squares


@OPTIMIZERS.register(NAME, config=SepCmaEsConfig)
class SepCmaEs(CmaBase):
    """sep-CMA-ES; every ``ask`` returns ``population_size`` genomes."""

    NAME = NAME
    COVARIANCE = (Array("C", ("genome_size",), key="C_diagonal"),)
    C: np.ndarray  # the diagonal covariance (set by _reset_covariance)
    D: np.ndarray

    def __init__(self, config: SepCmaEsConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed, diagonal=True)
        self._reset_covariance(0)
        self._weighted_squares = np.zeros(0)  # sum_i w_i y_i^2 of the current tell

    @classmethod
    def state_bytes(cls, config: SepCmaEsConfig, genome_size: int) -> int:
        """Mean, paths, C, D and temporaries (O(n)) plus one generation's samples."""
        return 8 * genome_size * 8 + cls._sample_bytes(config, genome_size)

    def _scale(self, z: np.ndarray) -> np.ndarray:
        return z * self.D  # Eq. (39) with B = I

    def _whiten(self, y: np.ndarray) -> np.ndarray:
        return y / self.D  # C^(-1/2) y with B = I (Eq. 43)

    def _recombine(self, best: np.ndarray) -> np.ndarray:
        assert self._steps is not None
        y_w, self._weighted_squares = weighted_sums(self.params.weights, self._steps, best)
        return y_w

    def _whitened_norms(self, rows: np.ndarray) -> np.ndarray:
        return np.linalg.norm(rows / self.D, axis=1)

    def _adapt_covariance(self, best: np.ndarray, hsig: float, worst: np.ndarray) -> None:
        p = self.params
        delta = (1 - hsig) * p.cc * (2 - p.cc)  # delta(h_sigma), below Eq. (47)
        # Eq. (47) on the diagonal, (y y^T)_jj = y_j^2; the sum over the mu best was made
        # with <y>_w by _recombine.
        negative = self._active_rows(worst)  # active: minus cmu sum_i |w°_i| y_i^2
        if negative is None:
            self.C *= 1 + p.c1 * delta - p.c1 - p.cmu
        else:
            self.C *= 1 + p.c1 * delta - p.c1 - p.cmu - self._active_decay()
        self.C += p.c1 * self.pc**2
        self.C += p.cmu * self._weighted_squares
        if negative is not None:
            self.C -= np.sum(negative**2, axis=0)
        self._weighted_squares = np.zeros(0)
        self.D = np.sqrt(self.C)

    def _reset_covariance(self, generation: int) -> None:
        self.C = np.ones(self.genome_size)  # the diagonal of C
        self.D = np.ones(self.genome_size)  # sqrt(C): exact every generation, nothing to defer

    def _variances(self) -> np.ndarray:
        return self.C

    def _principal_axis(self, index: int) -> np.ndarray:
        axis = np.zeros(self.genome_size)
        axis[index] = self.D[index]  # B = I: the axes are the coordinates
        return axis

    def _condition(self) -> float:
        return float(self.C.max() / self.C.min())

    def _loaded(self) -> None:
        """D = sqrt(C) for the loaded diagonal C."""
        super()._loaded()
        self.D = np.sqrt(self.C)
