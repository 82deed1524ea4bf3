"""TensorBoard event files: one scalar per log column per generation (extra ``tensorboard``).

Written with the tensorboard package's own event writer, no TensorFlow or PyTorch needed. A
resumed run appends a new event file to the same folder, starting with a ``SessionLog.START``
at the generation it resumes from: TensorBoard's reader then drops the events of generations
that an interrupted session logged after its last checkpoint, so no step appears twice.
"""

from __future__ import annotations

import time
from pathlib import Path

from neuro_evolution.observers.base import ObservedRun, Observer, row_metrics
from neuro_evolution.observers.options import TensorBoardConfig
from neuro_evolution.observers.registry import register_observer


@register_observer("tensorboard", config=TensorBoardConfig)
class TensorBoardObserver(Observer):
    """Writes each generation's row into ``RUN_DIR/<directory>``."""

    def __init__(self, section: TensorBoardConfig, run_dir: Path, experiment: ObservedRun) -> None:
        from tensorboard.compat.proto.event_pb2 import Event, SessionLog
        from tensorboard.compat.proto.summary_pb2 import Summary
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        self._event, self._summary = Event, Summary
        folder = Path(run_dir) / section.directory
        wait_for_a_later_second(folder)
        self.writer = EventFileWriter(str(folder), flush_secs=5)
        # readers drop earlier events with step >= generation: a resume redoes those
        start = SessionLog(status=SessionLog.START)
        self.writer.add_event(
            Event(step=experiment.generation, wall_time=time.time(), session_log=start)
        )

    def __call__(self, experiment: ObservedRun) -> None:
        row = experiment.log[-1].to_dict()
        values = [
            self._summary.Value(tag=key, simple_value=value)
            for key, value in row_metrics(row).items()
        ]
        event = self._event(
            step=row["generation"], wall_time=time.time(), summary=self._summary(value=values)
        )
        self.writer.add_event(event)
        self.writer.flush()

    def close(self, experiment: ObservedRun) -> None:
        self.writer.close()


def wait_for_a_later_second(folder: Path) -> None:
    """Sleep until the clock's second is later than every event file's in ``folder``.

    Readers take event files in name order, ``events.out.tfevents.<second>.<host>.<pid>...``: a
    resumed session whose file shares its second with the earlier session's, with a pid that sorts
    first ("100012" < "99873"), would be read first, and the earlier session's restart would then
    drop the resumed steps (the likely cause of one failed CI run).
    """
    fields = [path.name.split(".")[3] for path in folder.glob("events.out.tfevents.*")]
    latest = max((int(field) for field in fields if field.isdigit()), default=-1)
    while int(time.time()) <= latest:
        time.sleep(0.05)
