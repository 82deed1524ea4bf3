"""Population-based training over runs: ``python -m neuro_evolution.pbt CONFIG.json``.

A population of ordinary runs trains in intervals on one shared pool (each interval is a
sweep session); between intervals the runs ranked lowest by held-out validation take the exact
checkpoint of a top-ranked run and explore its settings (Jaderberg et al. 2017,
arXiv:1711.09846). :mod:`.section` reads the config's ``pbt`` section, :mod:`.space` holds the
explored settings, :mod:`.transfer` copies a checkpoint into another run, :mod:`.lineage` the
controller's state and lineage file, :mod:`.loop` the intervals, :mod:`.plot` ``pbt.png`` and
:mod:`.cli` the command line.
"""
