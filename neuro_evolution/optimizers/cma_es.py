"""CMA_ES: covariance matrix adaptation with a full covariance and lazy eigendecomposition.

N. Hansen, "The CMA Evolution Strategy: A Tutorial", arXiv:1604.00772 (2016), the (mu/mu_W,
lambda)-CMA-ES of its Appendix A with non-negative weights, or with ``active`` its negative
weights for the lambda - mu worst (Eq. 46-53; pycma's default); pycma is the reference
implementation. Shared parts live in :mod:`cma_common`; this file holds C = B D^2 B^T.

Cost per generation: sampling and the rank-mu update are O(lambda n^2). The eigendecomposition
C = B D^2 B^T is O(n^3), so it is recomputed only every max(1, floor(1 / (10 n (c1 + cmu))))
generations (Appendix B.2; pycma does the same), which keeps the amortised cost O(n^2): about 14
generations apart at n = 3,000, lambda = 40. Between decompositions, sampling and C^(-1/2) use
the last B and D. The schedule (last decomposition) is part of the saved state.

Memory: C and B are n x n float64 (8 n^2 bytes each), plus the decomposition's work arrays, so
a genome of 162,800 genes would need ~1 TiB; :meth:`CmaEs.state_bytes` lets start-up refuse it
(SEP_CMA_ES keeps only the diagonal, O(n)).
"""

from __future__ import annotations

import numpy as np

from neuro_evolution.core.schema import config_class
from neuro_evolution.optimizers.base import OPTIMIZERS
from neuro_evolution.optimizers.cma_common import ActiveCmaConfig, CmaBase
from neuro_evolution.optimizers.declared_state import Array, Value

NAME = "CMA_ES"
# n x n float64 arrays alive at the peak (during a decomposition): C, numpy's copy of it, LAPACK
# syevd's 2 n^2 work array and the returned eigenvectors (the old B is dropped first).
PEAK_MATRICES = 5
_BLOCK = 256  # rows of C per block of the triangular rank-mu update


@config_class
class CmaEsConfig(ActiveCmaConfig):
    """Options of the ``CMA_ES`` optimizer (full covariance; O(genome size^2) memory)."""


@OPTIMIZERS.register(NAME, config=CmaEsConfig)
class CmaEs(CmaBase):
    """CMA-ES with full covariance; every ``ask`` returns ``population_size`` genomes."""

    NAME = NAME
    COVARIANCE = (
        Array("C", ("genome_size", "genome_size")),
        Array("B", ("genome_size", "genome_size")),
        Array("D", ("genome_size",)),
        Value("eigen_generation", int),
    )
    C: np.ndarray  # the covariance (set by _reset_covariance)
    B: np.ndarray
    D: np.ndarray
    eigen_generation: int

    def __init__(self, config: CmaEsConfig, genome_size: int, seed: int):
        super().__init__(config, genome_size, seed, diagonal=False)
        self._reset_covariance(0)

    @property
    def eigen_gap(self) -> int:
        """Generations between decompositions (Appendix B.2): 1/(10 n (c1 + cmu)), at least 1;
        it follows lambda across restarts."""
        p = self.params
        return max(1, int(1 / (10 * self.genome_size * (p.c1 + p.cmu))))

    @classmethod
    def state_bytes(cls, config: CmaEsConfig, genome_size: int) -> int:
        """Peak bytes: ``PEAK_MATRICES`` n x n float64 arrays plus one generation's samples."""
        return PEAK_MATRICES * 8 * genome_size**2 + cls._sample_bytes(config, genome_size)

    def _scale(self, z: np.ndarray) -> np.ndarray:
        return (z * self.D) @ self.B.T  # Eq. (39): y = B D z, one row per sample

    def _whiten(self, y: np.ndarray) -> np.ndarray:
        return self.B @ ((self.B.T @ y) / self.D)  # C^(-1/2) = B D^-1 B^T (Eq. 43)

    def _whitened_norms(self, rows: np.ndarray) -> np.ndarray:
        return np.linalg.norm((rows @ self.B) / self.D, axis=1)  # ||D^-1 B^T y||

    def _adapt_covariance(self, best: np.ndarray, hsig: float, worst: np.ndarray) -> None:
        assert self._steps is not None
        p, selected = self.params, self._steps[best]
        delta = (1 - hsig) * p.cc * (2 - p.cc)  # delta(h_sigma), below Eq. (47)
        # Eq. (47) with w_i >= 0 summing to 1: C <- (1 + c1 delta - c1 - cmu) C
        #   + c1 pc pc^T + cmu sum_i w_i y_i y_i^T, as one product of (mu + 1) x n rows.
        rows = np.vstack([np.sqrt(p.c1) * self.pc, np.sqrt(p.cmu * p.weights)[:, None] * selected])
        decay = 1 + p.c1 * delta - p.c1 - p.cmu
        negative = self._active_rows(worst)  # active: minus cmu sum_i |w°_i| y_i y_i^T
        if negative is not None:
            decay -= self._active_decay()  # cmu sum_j w_j over all lambda weights
        for start in range(0, self.genome_size, _BLOCK):  # the lower triangle, block by block
            stop = min(start + _BLOCK, self.genome_size)
            block = self.C[start:stop, :stop]
            block *= decay
            block += rows[:, start:stop].T @ rows[:, :stop]
            if negative is not None:
                block -= negative[:, start:stop].T @ negative[:, :stop]
        if self.generation + 1 - self.eigen_generation >= self.eigen_gap:
            self._decompose()
            self.eigen_generation = self.generation + 1

    def _decompose(self) -> None:
        """B, D from C (reads its lower triangle); eigenvalues rounded below 0 are clipped."""
        self.B = np.empty((0, 0))  # drop the old B before eigh allocates its arrays
        eigenvalues, self.B = np.linalg.eigh(self.C)
        floor = max(float(eigenvalues[-1]), 0.0) * 1e-20 + np.finfo(np.float64).tiny
        self.D = np.sqrt(np.maximum(eigenvalues, floor))

    def _reset_covariance(self, generation: int) -> None:
        n = self.genome_size
        # Only the lower triangle (i >= j) of C is kept up to date: the rank-mu update then
        # costs half, and eigh reads nothing else. Entries above the diagonal are stale.
        self.C = np.eye(n)
        self.B = np.eye(n)  # eigenvectors of C at the last decomposition (columns)
        self.D = np.ones(n)  # square roots of its eigenvalues
        self.eigen_generation = generation  # generation count when B, D were computed

    def _variances(self) -> np.ndarray:
        return np.diag(self.C).copy()

    def _principal_axis(self, index: int) -> np.ndarray:
        return self.D[index] * self.B[:, index]

    def _condition(self) -> float:
        return float((self.D.max() / self.D.min()) ** 2)
