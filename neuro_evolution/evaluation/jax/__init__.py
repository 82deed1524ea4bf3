"""JAX: envs behind one small interface, a gymnax env's lockstep lanes, a whole generation as one
compiled program, and the jax handler that runs it."""
