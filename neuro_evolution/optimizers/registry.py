"""The optimizers by name: MU_ES, CMA_ES, SEP_CMA_ES, PGPE, OPENAI_ES, SNES, NSGA2 and the QD
optimizers MAP_ELITES and CMA_ME built in, a user's added with register_optimizer.

A built-in optimizer's module is imported when its name is first looked up, so listing the
names imports none of them. ``@register_optimizer("NAME", config=NameConfig)`` on an
:class:`~neuro_evolution.optimizers.base.Optimizer` subclass adds one; the optimizer contract
tests (``tests/test_optimizer_contract.py``) run on every registered name.
"""

from __future__ import annotations

from typing import Any

from neuro_evolution.config.registry import Registry

OPTIMIZERS: Registry[Any] = Registry(
    "optimizer",
    {
        "CMA_ES": "neuro_evolution.optimizers.cma_es",
        "CMA_ME": "neuro_evolution.qd.cma_me",
        "MAP_ELITES": "neuro_evolution.qd.map_elites",
        "MU_ES": "neuro_evolution.optimizers.mu_plus_lambda",
        "NSGA2": "neuro_evolution.optimizers.nsga2",
        "OPENAI_ES": "neuro_evolution.optimizers.openai_es",
        "PGPE": "neuro_evolution.optimizers.pgpe",
        "SEP_CMA_ES": "neuro_evolution.optimizers.sep_cma_es",
        "SNES": "neuro_evolution.optimizers.snes",
    },
    what="optimizer type",
    known="types",
)
register_optimizer = OPTIMIZERS.register
