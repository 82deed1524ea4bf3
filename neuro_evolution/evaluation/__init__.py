"""Running episodes and evaluating populations, in four rooms: ``episodes`` (the rules and the
scalar loop), ``lockstep`` (numpy lockstep), ``jax`` (the compiled program) and ``pools`` (the
handler interface, the in-process, process and Dask pools)."""
