"""What a run shows a person: the optimizer's own columns (QD coverage and score, NSGA-II
hypervolume) in the progress bar and in ``fitness.png``, and image observations drawn as
pictures by ``replay --brain-state``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import nsga2_config, qd_config, require, small_config

from neuro_evolution import replay
from neuro_evolution.config.tree import parse_config
from neuro_evolution.run.experiment import Experiment
from neuro_evolution.run.plots import brain_state_figure, fitness_figure, frame_rgb
from neuro_evolution.support.atomic import load_npz


def run_with_progress(tmp_path: Path, config: dict, capsys) -> tuple[Path, str]:
    """A run of ``config`` with its progress bar on; the run directory and what the bar wrote."""
    out = tmp_path / "run"
    Experiment(parse_config(config), run_dir=out).run(progress=True)
    return out, capsys.readouterr().err


def panel_labels(path: Path) -> list[str]:
    """The y labels of ``fitness.png``'s panels, drawn again from the run's log."""
    from neuro_evolution.run.directory import read_log

    figure = fitness_figure(read_log(path / "log.csv"), "run")
    return [axes.get_ylabel() for axes in figure.axes]


@pytest.mark.parametrize(
    ("config", "columns"),
    [
        (qd_config("MAP_ELITES"), ["coverage", "qd_score", "qd_best"]),
        (nsga2_config(), ["hypervolume"]),
    ],
    ids=["MAP_ELITES", "NSGA2"],
)
def test_an_optimizers_columns_are_in_the_progress_bar_and_the_fitness_plot(
    tmp_path, capsys, config, columns
):
    """A QD run's bar shows coverage, QD score and best elite, an NSGA-II run's the hypervolume,
    each at its last logged value; fitness.png has one panel per column under the fitness."""
    from matplotlib.image import imread

    from neuro_evolution.run.directory import read_log

    run, bar = run_with_progress(tmp_path, config, capsys)
    last = read_log(run / "log.csv")[-1]
    for name in columns:
        assert f"{name}={last[name]:.4g}" in bar, (name, bar[-300:])
    assert panel_labels(run) == ["fitness", *columns]
    assert imread(run / "fitness.png").shape[0] == 100 * (4 + 2 * len(columns))


def test_a_single_objective_run_keeps_its_one_panel_and_plain_bar(tmp_path, capsys) -> None:
    run, bar = run_with_progress(tmp_path, small_config(number_generations=2), capsys)
    assert panel_labels(run) == ["fitness"]
    assert "coverage" not in bar and "hypervolume" not in bar


def test_minatar_channels_are_drawn_each_in_its_own_colour_on_black() -> None:
    """A MinAtar frame (10, 10, C) of 0/1 channels: a cell shows its channel's colour, an empty
    cell is black; a gray frame stays gray; a frame stack shows its last frame."""
    from matplotlib import colormaps

    frame = np.zeros((10, 10, 4), dtype=bool)
    frame[3, 4, 2] = True
    frame[7, 1, 0] = True
    picture = frame_rgb(frame)
    tab10 = colormaps["tab10"]
    assert picture.shape == (10, 10, 3)
    np.testing.assert_allclose(picture[3, 4], tab10(2)[:3])
    np.testing.assert_allclose(picture[7, 1], tab10(0)[:3])
    assert picture.sum() == pytest.approx(sum(tab10(2)[:3]) + sum(tab10(0)[:3]))
    gray = frame_rgb(np.array([[0.0, 255.0], [51.0, 102.0]]))
    np.testing.assert_allclose(gray[:, :, 0], [[0.0, 1.0], [0.2, 0.4]])
    stack = np.stack([np.zeros((2, 2)), np.array([[0.0, 10.0], [0.0, 0.0]])], axis=2)
    np.testing.assert_allclose(frame_rgb(stack)[:, :, 1], [[0.0, 1.0], [0.0, 0.0]])


def test_replay_brain_state_on_minatar_draws_frames_beside_the_neuron_states(tmp_path) -> None:
    """``replay --brain-state`` on MinAtar Breakout: the picture shows the observations as
    10 x 10 frames (one per shown step), not as a flattened 400-row strip, above the CTRNN's
    neuron states."""
    require("minatar")
    config = small_config(
        number_generations=1,
        environment={"id": "minatar:MinAtar/Breakout-v1"},
        optimizer={"type": "PGPE", "population_size": 4, "radius_init": 3.0},
        brain={"type": "CTRNN", "number_neurons": 4, "delta_t": 1.0},
        episode_runner={"number_fitness_runs": 1, "max_steps_per_run": 40},
        validation={"episodes": 1},
    )
    run = tmp_path / "run"
    Experiment(parse_config(config), run_dir=run).run()
    folder = tmp_path / "state"
    replay.main([str(run), "--episodes", "1", "--brain-state", str(folder)])
    arrays = load_npz(folder / "episode-0.npz")
    assert arrays["observations"].shape[1:] == (10, 10, 4)
    assert (folder / "episode-0.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    figure = brain_state_figure(arrays, "Breakout")
    pictures = [image for axes in figure.axes for image in axes.get_images()]
    frames = [image for image in pictures if image.get_array().shape == (10, 10, 3)]
    assert 2 <= len(frames) <= 8
    np.testing.assert_allclose(frames[0].get_array(), frame_rgb(arrays["observations"][0]))
    labels = [axes.get_ylabel() for axes in figure.axes]
    assert "neuron_state\n(index)" in labels
    assert not any(label.startswith("observations") for label in labels)
