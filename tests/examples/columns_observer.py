"""A user's own observer, registered from outside the package (a config's ``imports``) and
switched on by an entry of the ``observers`` list: ``{"type": "columns", "file": ...,
"columns": [...]}``.

After every generation it writes the chosen log columns of every row so far to
``RUN_DIR/<file>`` (CSV, rewritten atomically, so a resumed run's file holds each generation
once).
"""

from __future__ import annotations

from pathlib import Path

from neuro_evolution.core.schema import config_class, option
from neuro_evolution.observers.base import ObservedRun, Observer
from neuro_evolution.observers.options import ObserverConfig
from neuro_evolution.observers.registry import register_observer
from neuro_evolution.support.atomic import atomic_write_text

NAME = "columns"


@config_class
class ColumnsConfig(ObserverConfig):
    """Options of the ``columns`` observer."""

    file: str = option("columns.csv", doc="the CSV file, in the run directory")
    columns: tuple[str, ...] = option(("generation", "fitness_mean"), doc="log columns to copy")


@register_observer(NAME, config=ColumnsConfig)
class ColumnsObserver(Observer):
    """Copies some columns of the run's log into a CSV file of its own."""

    def __init__(self, section: ColumnsConfig, run_dir: Path, experiment: ObservedRun) -> None:
        self.path = Path(run_dir) / section.file
        self.columns = section.columns

    def __call__(self, experiment: ObservedRun) -> None:
        rows = [row.to_dict() for row in experiment.log]
        lines = [",".join(self.columns)]
        lines += [",".join(repr(row[column]) for column in self.columns) for row in rows]
        atomic_write_text(self.path, "\n".join(lines) + "\n")
