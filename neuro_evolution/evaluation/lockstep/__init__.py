"""Numpy lockstep: P env copies and one batch brain stepped together (the vectorized handler),
and the memory a wave of lanes needs, checked at start-up."""
