"""Several objectives: NSGA-II (:mod:`.nsga2`), its variation operators (:mod:`.operators`),
non-dominated sorting, crowding and hypervolume (:mod:`.pareto`), the objective configs
(:mod:`.objectives`) and a run's ``pareto.npz`` / ``pareto.png`` (:mod:`.files`).
"""
