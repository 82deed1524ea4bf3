"""One run: the experiment loop, its validation, the run directory on disk (log, hall of fame,
candidate, plots), checkpoints, ``training_status.json`` and exact resume."""
