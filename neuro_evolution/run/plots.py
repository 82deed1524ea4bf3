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

from neuro_evolution.evaluation.episodes.trace import ACTIONS, OBSERVATIONS, REWARDS, STATE_PREFIX
from neuro_evolution.run.log_row import LOG_FIELDS
from neuro_evolution.support.atomic import atomic_write_bytes

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def fitness_figure(log: list[dict[str, Any]], title: str) -> Figure:
    """The fitness plot of ``log`` (headless Agg canvas): the legend sits right of the axes,
    never on the data, generations are whole numbers on the x-axis, and each column an optimizer
    adds to the log (:func:`optimizer_columns`) is a panel below the fitness."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    generations = [row["generation"] for row in log]
    metrics = optimizer_columns(log)
    figure = Figure(figsize=(8.5, 4 + 2 * len(metrics)), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    panels = figure.subplots(1 + len(metrics), 1, sharex=True, squeeze=False)[:, 0]
    axes = panels[0]
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
    axes.set_ylabel("fitness")
    axes.set_title(title)
    axes.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, fontsize="small")
    for panel, name in zip(panels[1:], metrics):
        panel.plot(generations, [row[name] for row in log], color="tab:purple")
        panel.set_ylabel(name)
    for panel in panels:
        panel.grid(alpha=0.3)
    panels[-1].set_xlabel("generation")
    panels[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
    return figure


def optimizer_columns(log: list[dict[str, Any]]) -> list[str]:
    """The log's columns that an optimizer adds (QD's coverage, qd_score and qd_best, NSGA2's
    hypervolume): each gets a panel of its own under the fitness."""
    return [name for name in log[-1] if name not in LOG_FIELDS] if log else []


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


FRAMES_SHOWN = 8  # image observations: the frames drawn above the state panels


def is_image(observations: np.ndarray) -> bool:
    """Whether an episode's observations (T, ...) are images: (T, H, W) or (T, H, W, C)."""
    return observations.ndim in (3, 4) and min(observations.shape[1:3]) > 1


def frame_rgb(frame: np.ndarray) -> np.ndarray:
    """One image observation as an (H, W, 3) picture in [0, 1]: (H, W) and (H, W, 1) gray,
    (H, W, 3) colour, (H, W, C) of 0/1 channels (MinAtar: one channel per object kind) each
    channel its own colour on black (the highest channel on top), and any other (H, W, C) (a
    frame stack) its last channel, gray."""
    from matplotlib import colormaps

    values = frame.astype(np.float64)
    if values.ndim == 3 and values.shape[2] == 3:
        return np.clip(values / max(float(values.max()), 1.0), 0.0, 1.0)
    if values.ndim == 3 and values.shape[2] > 1 and np.isin(values, (0.0, 1.0)).all():
        colours = colormaps["tab10"](np.arange(values.shape[2]) % 10)[:, :3]
        picture = np.zeros((*values.shape[:2], 3))
        for channel in range(values.shape[2]):
            picture[values[:, :, channel] > 0] = colours[channel]
        return picture
    gray = values if values.ndim == 2 else values[:, :, -1]
    low, high = float(gray.min()), float(gray.max())
    gray = (gray - low) / (high - low) if high > low else np.zeros_like(gray)
    return np.repeat(gray[:, :, None], 3, axis=2)


def shown_steps(steps: int, count: int = FRAMES_SHOWN) -> list[int]:
    """``count`` steps spread evenly over an episode of ``steps``, first and last included."""
    return sorted({int(round(x)) for x in np.linspace(0, steps - 1, min(count, steps))})


def brain_state_figure(arrays: dict[str, np.ndarray], title: str) -> Figure:
    """One episode of :class:`~neuro_evolution.evaluation.episodes.trace.EpisodeTrace` arrays, steps
    on a shared x-axis: observations, each internal-state array as a heatmap (units x steps),
    actions, and rewards with their running sum. Image observations (MinAtar, Atari) are drawn
    as pictures, a row of frames at evenly spread steps (:func:`frame_rgb`), above the state
    panels, where dotted lines mark those steps."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    states = [name for name in arrays if name.startswith(STATE_PREFIX)]
    images = is_image(arrays[OBSERVATIONS])
    panels = [*([] if images else [OBSERVATIONS]), *states, ACTIONS, REWARDS]
    frames_height = 1.9 if images else 0.0
    height = 1.9 * len(panels) + 0.6 + frames_height
    figure = Figure(figsize=(9, height), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    steps = len(arrays[REWARDS])
    marked = shown_steps(steps) if images else []
    if images:
        ratios = (frames_height, height - frames_height)
        parts: Any = figure.subfigures(2, 1, height_ratios=ratios)  # an array of two
        top, bottom = parts
        draw_frames(top, arrays[OBSERVATIONS], marked, title)
    else:
        bottom = figure
    axes = bottom.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, name in zip(axes, panels):
        draw_panel(figure, ax, name, arrays[name].reshape(steps, -1))
        for step in marked:
            ax.axvline(step, color="0.4", linestyle=":", linewidth=0.8)
    if not images:
        axes[0].set_title(title)
    axes[-1].set_xlabel("step")
    return figure


def draw_frames(figure: Any, observations: np.ndarray, steps: list[int], title: str) -> None:
    """A row of the image observations at ``steps``, each titled with its step."""
    row = figure.subplots(1, FRAMES_SHOWN, squeeze=False)[0]
    for ax, step in zip(row, [*steps, *[None] * FRAMES_SHOWN]):
        ax.set_axis_off()
        if step is not None:
            ax.imshow(frame_rgb(observations[step]), interpolation="nearest")
            ax.set_title(f"step {step}", fontsize="small")
    figure.suptitle(f"{title}: observations", fontsize="medium")


def draw_panel(figure: Any, ax: Any, name: str, values: np.ndarray) -> None:
    """One (steps, units) array on ``ax``: a heatmap for a state or a wide vector, the reward
    with its running sum, or a line per element."""
    steps = len(values)
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


def plot_brain_state(path: str | Path, arrays: dict[str, np.ndarray], title: str) -> None:
    """Draw one episode's brain-state picture as a PNG."""
    save_png(path, brain_state_figure(arrays, title))
