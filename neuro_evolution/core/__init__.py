"""What every component stands on: the config schema (typed, frozen config classes parsed from
JSON), the typed registries of pluggable types, ``module:Name`` imports, observation
normalization and the hall of fame.

The modules sit at adjacent layers (:mod:`.registry` uses :mod:`.schema`), so this package's
``__init__`` imports nothing.
"""
