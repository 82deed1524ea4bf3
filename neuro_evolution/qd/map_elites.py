"""MAP_ELITES: mutate uniformly chosen elites, keep the best genome of every behaviour cell.

J.-B. Mouret and J. Clune, "Illuminating search spaces by mapping elites", arXiv:1504.04909
(2015). Variation:

- ``gaussian``: x' = x_i + sigma N(0, I), x_i a uniformly chosen elite;
- ``iso_line`` (Vassiliades & Mouret, "Discovering the elite hypervolume by leveraging
  interspecies correlation", GECCO 2018, Eq. 1): x' = x_i + iso_sigma N(0, I)
  + line_sigma N(0, 1) (x_j - x_i), x_i and x_j two uniformly chosen elites.

While the archive is empty (the first generation) the batch is drawn from
N(center_init, initial_sigma^2 I). pyribs' GaussianEmitter / IsoLineEmitter are the
reference implementations.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from neuro_evolution.core.schema import config_class, option
from neuro_evolution.optimizers.base import OPTIMIZERS
from neuro_evolution.qd.base import QdOptimizer
from neuro_evolution.qd.descriptors import QdConfig

NAME = "MAP_ELITES"


@config_class
class MapElitesConfig(QdConfig):
    """Options of the ``MAP_ELITES`` optimizer."""

    batch_size: int = option(100, doc="genomes per generation", ge=1)
    variation: Literal["gaussian", "iso_line"] = option(
        "iso_line", doc="gaussian: x + sigma N(0, I); iso_line: Vassiliades & Mouret (2018)"
    )
    sigma: float = option(0.1, doc="gaussian: mutation step size", gt=0)
    iso_sigma: float = option(0.01, doc="iso_line: isotropic step size", gt=0)
    line_sigma: float = option(0.2, doc="iso_line: step size along x_j - x_i", ge=0)
    initial_sigma: float = option(1.0, doc="std. dev. of the first batch (empty archive)", gt=0)
    center_init: float = option(
        0.0, doc="mean of every gene of the first batch (old name: initial_centroid)"
    )


@OPTIMIZERS.register(NAME, config=MapElitesConfig)
class MapElites(QdOptimizer):
    """MAP-Elites with Gaussian or iso+line variation; every ask returns ``batch_size`` genomes."""

    NAME = NAME
    config: MapElitesConfig

    @classmethod
    def _batch_bytes(cls, config: Any, genome_size: int) -> int:
        return 8 * genome_size * 4 * config.batch_size

    def _sample(self) -> np.ndarray:
        config, rng = self.config, self._random
        shape = (config.batch_size, self.genome_size)
        cells = self.archive.elite_cells()
        if len(cells) == 0:
            return config.center_init + config.initial_sigma * rng.standard_normal(shape)
        parents = self.archive.genomes[cells[rng.integers(len(cells), size=config.batch_size)]]
        if config.variation == "gaussian":
            return parents + config.sigma * rng.standard_normal(shape)
        others = self.archive.genomes[cells[rng.integers(len(cells), size=config.batch_size)]]
        iso = config.iso_sigma * rng.standard_normal(shape)
        line = config.line_sigma * rng.standard_normal((config.batch_size, 1))
        return parents + iso + line * (others - parents)  # Eq. 1
