"""Reading a config of the predecessor project and writing one of this package.

The predecessor (``neuroevolution-ai/NeuroEvolution-CTRNN_new``) read one JSON file with the
sections ``environment`` (a Gym id), ``random_seed``, ``number_generations``, ``optimizer``,
``brain``, ``episode_runner`` and an optional ``novelty``. :func:`migrate_config` maps every
option that has a meaning here and reports each one it drops or changes (one :class:`Notes`
line each); ``python -m neuro_evolution.migrate`` is its command line.

- ``rules``: the notes and the table-driven section mapper every section uses;
- ``environments``: env ids, the predecessor's ``environment_attributes`` and env wrappers;
- ``brains``: CTRNN, feed-forward, LSTM and the two composed brains;
- ``sections``: top level, optimizer, episode runner and novelty.
"""

from __future__ import annotations

from neuro_evolution.migration.rules import MigrationError, Notes
from neuro_evolution.migration.sections import migrate_config

__all__ = ["MigrationError", "Notes", "migrate_config"]
