"""Per-episode measures: what a QD optimizer's descriptors and NSGA-II's objectives are made of.

:mod:`.base` holds the measure config (a source, a key, a reduction), :mod:`.functions` the
shipped trajectory functions, :mod:`.lanes` the lockstep handler's per-lane accumulation and
:mod:`.results` the start-up checks against the env and the (P, M) matrix of a generation.
This ``__init__`` imports nothing, so the episode loops load only what they use.
"""
