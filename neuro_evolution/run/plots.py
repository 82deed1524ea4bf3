"""The run's pictures: ``fitness.png`` (fitness and held-out validation per generation) and
``replay --brain-state``'s picture of one episode (observations, brain state, actions, rewards).

Drawn on matplotlib's headless Agg canvas; matplotlib is imported when a plot is drawn, not when
the module loads, so workers never pay for it. During a run ``fitness.png`` is drawn in a
background thread (:class:`BackgroundPlot`), overlapping the next generation's evaluation: a
drawing takes a few hundred milliseconds of the main process, which would otherwise stall every
worker of a fast generation.
"""

from __future__ import annotations

import io
import math
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from neuro_evolution.evaluation.trace import ACTIONS, OBSERVATIONS, REWARDS, STATE_PREFIX
from neuro_evolution.support.atomic import atomic_write_bytes

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def fitness_figure(log: list[dict[str, Any]], title: str) -> Figure:
    """The fitness plot of ``log`` (headless Agg canvas): the legend sits right of the axes,
    never on the data, and generations are whole numbers on the x-axis."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    generations = [row["generation"] for row in log]
    figure = Figure(figsize=(8.5, 4), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    mean = np.array([row["fitness_mean"] for row in log])
    std = np.array([row["fitness_std"] for row in log])
    axes.fill_between(generations, mean - std, mean + std, alpha=0.2, label="mean ± std")
    axes.plot(generations, mean, label="mean")
    axes.plot(generations, [row["fitness_max"] for row in log], label="max")
    axes.plot(generations, [row["fitness_min"] for row in log], label="min", alpha=0.6)
    axes.plot(generations, [row["best_so_far"] for row in log], "k--", label="best so far")
    validated = [
        (row["generation"], row["validation_mean"])
        for row in log
        if row.get("validation_mean") is not None and not math.isnan(row["validation_mean"])
    ]
    if validated:
        x, y = zip(*validated)
        axes.plot(x, y, "o-", color="tab:red", label="validation (held-out)")
    axes.set_xlabel("generation")
    axes.set_ylabel("fitness")
    axes.set_title(title)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, fontsize="small")
    axes.grid(alpha=0.3)
    return figure


def save_png(path: str | Path, figure: Figure) -> None:
    """Write ``figure`` as a PNG, atomically."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    atomic_write_bytes(path, buffer.getvalue())


def plot_fitness(path: str | Path, log: list[dict[str, Any]], title: str) -> None:
    """Draw ``fitness.png`` from the log."""
    save_png(path, fitness_figure(log, title))


_DRAWING = threading.Lock()  # one fitness drawing at a time per process (a sweep has many runs)


class BackgroundPlot:
    """Draws ``fitness.png`` of a snapshot of the log in a daemon thread, one drawing at a time.

    The error of a failed drawing is raised by the next :meth:`check` or :meth:`wait`, so a plot
    that cannot be written still fails the run, one generation later.
    """

    def __init__(self, path: str | Path, title: str) -> None:
        self.path = Path(path)
        self.title = title
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def busy(self) -> bool:
        """Whether a drawing is running."""
        return self._thread is not None and self._thread.is_alive()

    def start(self, rows: list[dict[str, Any]]) -> None:
        """Start drawing ``rows`` (plain dicts the caller no longer changes)."""
        self.wait()
        self._thread = threading.Thread(
            target=self._draw, args=(rows,), name="fitness-plot", daemon=True
        )
        self._thread.start()

    def _draw(self, rows: list[dict[str, Any]]) -> None:
        try:
            with _DRAWING:
                plot_fitness(self.path, rows, self.title)
        except BaseException as error:  # raised in the main thread by check() / wait()
            self._error = error

    def check(self) -> None:
        """Raise the error of a drawing that has finished and failed."""
        if self._thread is not None and not self._thread.is_alive():
            self.wait()

    def wait(self) -> None:
        """Wait for the running drawing; raise its error if it failed."""
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()
        error, self._error = self._error, None
        if error is not None:
            raise error


def brain_state_figure(arrays: dict[str, np.ndarray], title: str) -> Figure:
    """One episode of :class:`~neuro_evolution.evaluation.trace.EpisodeTrace` arrays, steps on a
    shared x-axis: observations, each internal-state array as a heatmap (units x steps),
    actions, and rewards with their running sum."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    states = [name for name in arrays if name.startswith(STATE_PREFIX)]
    panels = [OBSERVATIONS, *states, ACTIONS, REWARDS]
    figure = Figure(figsize=(9, 1.9 * len(panels) + 0.6), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    steps = len(arrays[REWARDS])
    for ax, name in zip(axes, panels):
        values = arrays[name].reshape(steps, -1)
        if name.startswith(STATE_PREFIX) or values.shape[1] > 12:
            limit = float(np.max(np.abs(values))) or 1.0  # symmetric: 0 is white
            image = ax.imshow(
                values.T,
                aspect="auto",
                interpolation="nearest",
                cmap="coolwarm",
                vmin=-limit,
                vmax=limit,
                extent=(-0.5, steps - 0.5, values.shape[1] - 0.5, -0.5),
            )
            figure.colorbar(image, ax=ax, pad=0.01)
            ax.set_ylabel(f"{name.removeprefix(STATE_PREFIX)}\n(index)")
        elif name == REWARDS:
            ax.plot(values[:, 0], color="tab:blue")
            ax.set_ylabel("reward", color="tab:blue")
            running = ax.twinx()
            running.plot(np.cumsum(values[:, 0]), color="tab:orange")
            running.set_ylabel("return so far", color="tab:orange")
        else:
            for index in range(values.shape[1]):
                ax.plot(values[:, index], label=f"[{index}]")
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="x-small")
            ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    axes[0].set_title(title)
    axes[-1].set_xlabel("step")
    return figure


def plot_brain_state(path: str | Path, arrays: dict[str, np.ndarray], title: str) -> None:
    """Draw one episode's brain-state picture as a PNG."""
    save_png(path, brain_state_figure(arrays, title))
