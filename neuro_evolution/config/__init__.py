"""The config machinery: the schema (typed, frozen config classes parsed from JSON), the
registries of pluggable types, ``module:Name`` imports, the experiment's config tree and its
generated reference (``docs/config.md``).

The modules sit at different layers (brains use :mod:`.schema`; :mod:`.tree` uses the brains),
so this package's ``__init__`` imports nothing.
"""
