"""Sweeps: many runs (seeds x settings) on one shared pool or cluster.

``python -m neuro_evolution.sweep CONFIG.json --seeds 1-10 --set optimizer.sigma=0.1,0.3``;
:mod:`.grid` expands the runs, :mod:`.pools` shares the workers, :mod:`.scheduler` drives the
runs, :mod:`.cli` is the command line.
"""
