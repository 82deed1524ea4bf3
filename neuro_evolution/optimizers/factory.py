"""Making an optimizer from its config section, after checking that its memory fits."""

from __future__ import annotations

import numpy as np

from neuro_evolution.optimizers.base import OPTIMIZERS, Optimizer, OptimizerConfig
from neuro_evolution.optimizers.cost import check_memory


def make_optimizer(
    config: OptimizerConfig,
    genome_size: int,
    seed: int,
    gene_units: np.ndarray | None = None,
) -> Optimizer:
    """The optimizer of ``config``'s type for genomes of ``genome_size``, told the genome's
    layout by neuron (``gene_units``, from :meth:`BrainTemplate.gene_units`; None: unknown).

    A config whose memory (:meth:`Optimizer.state_bytes`) exceeds what the machine has
    available is refused with a one-line ConfigError on ``optimizer.type`` before anything is
    allocated (see :func:`neuro_evolution.optimizers.cost.check_memory`).
    """
    _, optimizer_cls = OPTIMIZERS.get(config.type_name())
    check_memory(config, genome_size)
    optimizer = optimizer_cls(config, genome_size, seed)
    optimizer.use_gene_units(gene_units)
    return optimizer
