"""The experiment's config: the tree of sections a JSON file parses into (:mod:`.tree`) and its
generated reference (:mod:`.reference`, ``docs/config.md``). The schema they are written in is
:mod:`neuro_evolution.core.schema`.
"""
