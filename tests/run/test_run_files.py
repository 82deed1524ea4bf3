"""Nothing a run writes uses pickle: every file of a run directory is a known, checked format.

A run directory from elsewhere must not be able to run code when it is loaded, so each file is
parsed completely as what its name says: ``.npz`` members are plain ``.npy`` arrays without
object dtypes (header checked, size exact, loaded with ``allow_pickle=False``), ``.json`` and
``.csv`` are UTF-8 text that parses, ``.png`` is a chain of CRC-checked chunks ending at IEND.
Any other file fails the test.
"""

from __future__ import annotations

import csv
import io
import json
import re
import stat
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from helpers import small_config

from neuro_evolution import train
from neuro_evolution.run.plots import fitness_figure

PICKLE_PROTOCOL = re.compile(rb"\x80[\x02-\x05]")  # PROTO opcode + version: a pickle's start
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def check_npz(path: Path) -> None:
    """Every member is a .npy of a non-object dtype, exactly header + data, loadable unpickled."""
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            assert info.filename.endswith(".npy"), f"{path.name}: member {info.filename}"
            data = archive.read(info)
            stream = io.BytesIO(data)
            version = np.lib.format.read_magic(stream)
            read_header = (
                np.lib.format.read_array_header_1_0
                if version == (1, 0)
                else np.lib.format.read_array_header_2_0
            )
            shape, _, dtype = read_header(stream)
            assert not dtype.hasobject, f"{path.name}: {info.filename} holds objects"
            header = data[: stream.tell()]
            assert not PICKLE_PROTOCOL.search(header), f"{path.name}: {info.filename}"
            expected = stream.tell() + int(np.prod(shape)) * dtype.itemsize
            assert len(data) == expected, f"{path.name}: {info.filename} has extra bytes"
    with np.load(path, allow_pickle=False) as arrays:
        for key in arrays.files:
            arrays[key]  # noqa: B018 - reading is the check


def check_text(path: Path) -> str:
    """UTF-8 text without a pickle's protocol bytes."""
    data = path.read_bytes()
    assert not PICKLE_PROTOCOL.search(data), path.name
    return data.decode("utf-8")


def check_png(path: Path) -> None:
    """The PNG signature, then chunks with correct CRCs up to IEND, and nothing after it."""
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE), path.name
    position = len(PNG_SIGNATURE)
    kind = b""
    while kind != b"IEND":
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        body = data[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", data[position + 8 + length : position + 12 + length])
        assert crc == zlib.crc32(kind + body), f"{path.name}: bad {kind!r} chunk"
        position += 12 + length
    assert position == len(data), f"{path.name}: {len(data) - position} bytes after IEND"


def check_run_directory(run_dir: Path) -> list[str]:
    """Check every file below ``run_dir``; return their relative paths."""
    names = []
    for path in sorted(p for p in run_dir.rglob("*") if p.is_file()):
        suffix = path.suffix
        if suffix == ".npz":
            check_npz(path)
        elif suffix == ".json":
            json.loads(check_text(path))
        elif suffix == ".csv":
            assert list(csv.DictReader(io.StringIO(check_text(path)))), path.name
        elif suffix == ".png":
            check_png(path)
        elif path.name == "failure.txt":  # the traceback of a failed generation
            check_text(path)
        else:
            raise AssertionError(f"{path.relative_to(run_dir)}: unexpected file in a run directory")
        names.append(str(path.relative_to(run_dir)))
    return names


def test_no_file_of_a_run_directory_uses_pickle(tmp_path: Path) -> None:
    """A run with checkpoints, a hall of fame, a novelty archive and a CTRNN with random masks
    writes only checked npz/JSON/CSV/PNG files (and does write each kind)."""
    data = small_config(
        number_generations=4,
        brain={"type": "CTRNN", "number_neurons": 4, "w_mask": "random", "w_mask_param": 0.5},
        checkpoint={"every_generations": 2, "keep": 2},
        novelty={"behavioral_max_length": 5},
    )
    config = tmp_path / "config.json"
    config.write_text(json.dumps(data))
    run_dir = tmp_path / "run"
    assert train.main([str(config), "--out", str(run_dir), "--quiet"]) == 0
    names = check_run_directory(run_dir)
    for expected in ("config.json", "log.csv", "hall_of_fame.npz", "training_status.json"):
        assert expected in names
    assert "fitness.png" in names
    assert len([n for n in names if n.startswith("checkpoints/")]) == 2


@pytest.mark.slow
def test_run_files_honour_the_umask_so_others_can_read_them(tmp_path: Path) -> None:
    """Under umask 022 every file and folder a real train process writes is readable by others
    (the atomic writer used to keep its temporary file's 0600 mode); under 077 none is."""
    data = small_config(number_generations=2, checkpoint={"every_generations": 1, "keep": 2})
    config = tmp_path / "config.json"
    config.write_text(json.dumps(data))
    for umask, others_read in ((0o022, True), (0o077, False)):
        run_dir = tmp_path / f"run-{umask:03o}"
        args = [sys.executable, "-m", "neuro_evolution.train", str(config), "--out", str(run_dir)]
        subprocess.run([*args, "--quiet"], check=True, umask=umask, capture_output=True)
        paths = [run_dir, *run_dir.rglob("*")]
        assert len([p for p in paths if p.is_file()]) >= 6
        for path in paths:
            mode = stat.S_IMODE(path.stat().st_mode)
            assert bool(mode & stat.S_IROTH) == others_read, f"{path}: {mode:o}"
            assert mode & ~(0o777 & ~umask) == 0, f"{path}: {mode:o} ignores umask {umask:03o}"


def test_fitness_plot_keeps_the_legend_off_the_data_and_ticks_whole_generations() -> None:
    """The legend is drawn outside the axes (it used to cover CartPole's curves) and a short run
    has only whole-number generation ticks (it used to show 0.5, 1.5, ...)."""
    log = [
        {
            "generation": g,
            "fitness_mean": 10.0 * g,
            "fitness_std": 1.0,
            "fitness_max": 12.0 * g,
            "fitness_min": 5.0 * g,
            "best_so_far": 12.0 * g,
            "validation_mean": 9.0 * g if g % 2 else None,
        }
        for g in range(4)
    ]
    figure = fitness_figure(log, "CartPole-v1")
    figure.canvas.draw()
    axes = figure.axes[0]
    renderer = figure.canvas.get_renderer()
    legend = axes.get_legend().get_window_extent(renderer)
    assert not legend.overlaps(axes.get_window_extent(renderer))
    assert figure.bbox.contains(legend.x1 - 1, legend.y0 + 1)  # and not cut off
    ticks = [t for t in axes.get_xticks() if axes.get_xlim()[0] <= t <= axes.get_xlim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks


def test_the_plot_waits_for_its_interval_and_a_closed_run_shows_its_last_generation(tmp_path):
    """No drawing for the first generations (the first one waits ``plot_every`` s); closing a run
    that stopped early draws every generation it completed."""
    from neuro_evolution.config.tree import parse_config
    from neuro_evolution.run.experiment import Experiment

    experiment = Experiment(parse_config(small_config(number_generations=10)))
    experiment.start()
    experiment.attach_run_directory(tmp_path / "run")
    experiment.step()
    experiment.step()
    plot = tmp_path / "run" / "fitness.png"
    assert not plot.exists()
    experiment.close()
    drawn = plot.read_bytes()
    assert drawn.startswith(b"\x89PNG")
    experiment.run_directory.plot_every = 0.0
    experiment.run_directory.write_generation(
        experiment.log, experiment.hall_of_fame, experiment.template
    )
    assert plot.read_bytes() == drawn  # the same two generations


def test_the_hall_of_fame_file_equals_the_hall_of_fame_after_every_generation(tmp_path):
    """It is rewritten only when an update changed the entries, and never falls behind."""
    from neuro_evolution.config.tree import parse_config
    from neuro_evolution.run.directory import load_hall_of_fame
    from neuro_evolution.run.experiment import Experiment

    experiment = Experiment(parse_config(small_config(number_generations=12)))
    experiment.start()
    experiment.attach_run_directory(tmp_path / "run")
    unchanged = 0
    try:
        while not experiment.done:
            before = experiment.hall_of_fame.changes
            experiment.step()
            unchanged += experiment.hall_of_fame.changes == before
            saved, _ = load_hall_of_fame(tmp_path / "run" / "hall_of_fame.npz")
            assert np.array_equal(saved.genomes, experiment.hall_of_fame.genomes)
            assert np.array_equal(saved.fitness, experiment.hall_of_fame.fitness)
    finally:
        experiment.close()
    assert unchanged  # some generation changed nothing (and was not written)


def test_the_plot_is_drawn_in_the_background_as_a_direct_drawing_would_draw_it(tmp_path):
    """A due plot does not hold up the generation: ``write_generation`` returns while the drawing
    runs (here held back by the drawing lock), and the file equals a direct drawing's."""
    from neuro_evolution.config.tree import parse_config
    from neuro_evolution.run import plots
    from neuro_evolution.run.experiment import Experiment

    experiment = Experiment(parse_config(small_config(number_generations=10)))
    experiment.start()
    experiment.attach_run_directory(tmp_path / "run")
    directory = experiment.run_directory
    directory.plot_every = 0.0
    plot = tmp_path / "run" / "fitness.png"
    try:
        with plots._DRAWING:
            experiment.step()
            assert directory._background.busy and not plot.exists()
        directory._background.wait()
        rows = [row.to_dict() for row in experiment.log]
        plots.plot_fitness(tmp_path / "direct.png", rows, directory.title)
        assert plot.read_bytes() == (tmp_path / "direct.png").read_bytes()
    finally:
        experiment.close()


def test_a_background_drawing_that_fails_fails_the_next_generation(tmp_path):
    """A plot that cannot be written raises its error in the main thread (the next generation's
    write), as a drawing in the main thread did."""
    from neuro_evolution.config.tree import parse_config
    from neuro_evolution.run.experiment import Experiment

    experiment = Experiment(parse_config(small_config(number_generations=10)))
    experiment.start()
    experiment.attach_run_directory(tmp_path / "run")
    experiment.run_directory.plot_every = 0.0
    (tmp_path / "run" / "fitness.png").mkdir()  # os.replace onto a directory fails
    try:
        experiment.step()
        experiment.run_directory._background._thread.join()
        with pytest.raises(OSError):
            experiment.step()
    finally:
        (tmp_path / "run" / "fitness.png").rmdir()
        experiment.close()
