"""JAX form of the egocentric front end (see ``egocentric.py``): the same index table, so the
window is the same copy of the observation's values."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from neuro_evolution.brains.base import BrainTemplate, JaxBrain, Params, State


class EgocentricJaxBrain(JaxBrain):
    """Stateless and weightless; its one parameter, ``rows`` (P,), carries the brain axis."""

    PARAMS_AXIS = 0

    def __init__(self, template: BrainTemplate, table: np.ndarray, channels: int, channel: int):
        super().__init__(template)
        self.table, self.channels, self.channel = np.asarray(table), channels, channel

    def params(self, genomes: np.ndarray, dtype: Any) -> Params:
        genomes = self.template.check_genomes(genomes)
        return {"rows": jnp.zeros((genomes.shape[0],), dtype=dtype)}

    def initial_state(self, params: Params) -> State:
        return jnp.zeros((0, params["rows"].shape[0]), dtype=params["rows"].dtype)

    def step(self, params, state, inputs, noise=None):
        x = inputs.astype(params["rows"].dtype)
        cells = jnp.argmax(x[:, self.channel :: self.channels], axis=1)
        padded = jnp.concatenate([x, jnp.zeros((x.shape[0], 1), dtype=x.dtype)], axis=1)
        return state, jnp.take_along_axis(padded, jnp.asarray(self.table)[cells], axis=1)
