"""What an episode yields beside its return: the recorder interface and per-episode measures.

:mod:`.recorder` holds the :class:`~.recorder.Recorder` interface that the scalar, lockstep and
JAX episode loops call alike, and its built-in recorders: :mod:`.observations` (observation
statistics), :mod:`.behavior` (novelty's behaviour) and :mod:`.recording` (the measures), with
their JAX forms in :mod:`.jax_forms`. The measures themselves: :mod:`.base` holds the measure
config (a source, a key, a reduction), :mod:`.functions` the shipped trajectory functions,
:mod:`.lanes` the lockstep handler's per-lane accumulation and :mod:`.results` the start-up
checks against the env and the (P, M) matrix of a generation. This ``__init__`` imports nothing,
so the episode loops load only what they use.
"""
