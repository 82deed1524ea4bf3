"""scripts/bench_coco.py: our optimizers and pycma's on COCO's bbob suite, through the real
cocoex observer and cocopp's reader (tiny budgets: one or two problems at d = 2)."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from helpers import require, script_module

require("coco")

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(
    r"coco d=(\d+) group=([\w-]+) algorithm=([\w-]+) area=(\d\.\d{4}) solved=(\d\.\d{4}) "
    r"ratio=(\d+\.\d{3}|nan)"
)


@pytest.fixture(scope="module")
def coco() -> ModuleType:
    return script_module("bench_coco")


@pytest.fixture(scope="module")
def sphere_run(coco, tmp_path_factory) -> tuple[Path, str]:
    """CMA_ES and pycma on bbob f1 (sphere), d = 2, instance 1, 500 d evaluations."""
    out = tmp_path_factory.mktemp("coco")
    argv = ["--optimizers", "CMA_ES", "--dimensions", "2", "--budget-multiplier", "500",
            "--functions", "1", "--instances", "1", "--out", str(out), "--no-report"]  # fmt: skip
    stdout = run_main(coco, argv)
    return out, stdout


def run_main(coco: ModuleType, argv: list[str]) -> str:
    """main(argv)'s stdout; it must return 0."""
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert coco.main(argv) == 0
    return buffer.getvalue()


def test_the_observer_writes_coco_data_for_every_algorithm(sphere_run) -> None:
    """One COCO result folder per algorithm, with the .info index and f1's .dat files."""
    out, _ = sphere_run
    for algorithm in ("CMA_ES", "pycma-BIPOP"):
        folder = out / algorithm
        info = (folder / "bbobexp_f1.info").read_text()
        assert f"algId = '{algorithm}'" in info
        dat = (folder / "data_f1" / "bbobexp_f1_DIM2.dat").read_text().splitlines()
        assert len([line for line in dat if line and not line.startswith("%")]) > 5


def test_our_cma_es_reaches_the_final_target_on_the_sphere_within_the_budget(
    coco, sphere_run
) -> None:
    """In the COCO data read back by cocopp, CMA_ES reaches f - f_opt < 1e-8 on f1 in d = 2
    within 1,000 evaluations (telling it f, not -f, misses it), and no algorithm spent more
    than the budget."""
    out, _ = sphere_run
    for algorithm in ("CMA_ES", "pycma-BIPOP"):
        evaluations = coco.runtimes(out / algorithm)[(2, 1)]
        assert evaluations.shape == (1, len(coco.TARGETS))
        last = evaluations[0, -1]  # the 1e-8 target
        assert math.isfinite(last) and 10 < last <= 1000, (algorithm, last)
        assert np.all(np.diff(evaluations[0]) >= 0)  # harder targets take no fewer evaluations


def test_printed_lines_have_the_format_and_the_ratio_is_area_over_pycmas(coco, sphere_run) -> None:
    """One line per (group, algorithm) with data; the reference's ratio is 1, ours is its area
    over the reference's, and both agree with the ECDF recomputed from the COCO data."""
    out, stdout = sphere_run
    lines = [LINE.fullmatch(line) for line in stdout.splitlines()]
    assert all(lines), stdout
    rows = {(m[2], m[3]): (float(m[4]), float(m[5]), m[6]) for m in lines if m}
    assert set(rows) == {(g, a) for g in ("all", "separable") for a in ("CMA_ES", "pycma-BIPOP")}
    ours, reference = rows["all", "CMA_ES"], rows["all", "pycma-BIPOP"]
    assert reference[2] == "1.000"
    assert float(ours[2]) == pytest.approx(ours[0] / reference[0], abs=2e-3)
    assert ours[1] == reference[1] == 1.0  # every target reached on the sphere
    area, solved = coco.ecdf(coco.runtimes(out / "CMA_ES")[(2, 1)], 2, 500)
    assert (round(area, 4), round(solved, 4)) == ours[:2]


def test_ecdf_area_counts_log_evaluations_per_dimension_within_the_budget(coco) -> None:
    """area: 1 at <= d evaluations, 1 - log10(evals / d) / log10(K) later, 0 past K d or never;
    solved: the fraction reached within K d."""
    d, multiplier = 5, 100
    evaluations = np.array([[3.0, d, 10 * d, 100 * d, 100 * d + 1, np.nan]])
    area, solved = coco.ecdf(evaluations, d, multiplier)
    assert area == pytest.approx((1 + 1 + 0.5 + 0 + 0 + 0) / 6)
    assert solved == pytest.approx(4 / 6)
    assert all(math.isnan(v) for v in coco.ecdf(np.zeros((0, 51)), d, multiplier))


def test_budget_refuses_the_evaluation_past_the_limit_and_after_the_target(coco) -> None:
    """Budget evaluates until ``limit`` evaluations, then raises BudgetSpent; also as soon as
    COCO's final target is hit."""

    class Problem:
        evaluations = 0
        final_target_hit = False

        def __call__(self, x: np.ndarray) -> float:
            self.evaluations += 1
            return float(x.sum())

    problem = Problem()
    budget = coco.Budget(problem, 3)
    assert [budget(np.ones(2)) for _ in range(3)] == [2.0, 2.0, 2.0]
    with pytest.raises(coco.BudgetSpent):
        budget(np.ones(2))
    assert problem.evaluations == 3
    target = coco.Budget(Problem(), 10)
    target.problem.final_target_hit = True
    with pytest.raises(coco.BudgetSpent):
        target(np.ones(2))


def test_pycma_options_reach_the_reference_and_are_named_in_the_output(coco, tmp_path) -> None:
    """--pycma-options: the reference runs with them (a tiny popsize changes its data) and the
    output names them."""
    argv = ["--optimizers", "", "--dimensions", "2", "--budget-multiplier", "50",
            "--functions", "1", "--instances", "1", "--no-report"]  # fmt: skip
    default = run_main(coco, [*argv, "--out", str(tmp_path / "a")])
    changed = run_main(coco, [*argv, "--out", str(tmp_path / "b"), "--pycma-options",
                              '{"popsize": 3, "CMA_active": false}'])  # fmt: skip
    assert changed.splitlines()[0] == (
        'reference: pycma-BIPOP options={"CMA_active": false, "popsize": 3}'
    )
    assert "reference:" not in default
    a = coco.runtimes(tmp_path / "a" / "pycma-BIPOP")[(2, 1)]
    b = coco.runtimes(tmp_path / "b" / "pycma-BIPOP")[(2, 1)]
    assert not np.array_equal(a, b, equal_nan=True)


def test_set_changes_our_sections_and_names_the_algorithm_by_it(coco, tmp_path) -> None:
    """--set active=true: our CMA_ES runs with the active update under the name
    CMA_ES-active=true (its COCO folder and its summary lines), beside the plain one."""
    argv = ["--optimizers", "CMA_ES", "--dimensions", "2", "--budget-multiplier", "50",
            "--functions", "10", "--instances", "1", "--no-reference", "--no-report"]  # fmt: skip
    plain = run_main(coco, [*argv, "--out", str(tmp_path / "plain")])
    active = run_main(coco, [*argv, "--set", "active=true", "--out", str(tmp_path / "active")])
    assert "algorithm=CMA_ES " in plain and "algorithm=CMA_ES-active=true " in active
    info = (tmp_path / "active" / "CMA_ES-active=true" / "bbobexp_f10.info").read_text()
    assert "algId = 'CMA_ES-active=true'" in info
    runs = {
        name: coco.runtimes(tmp_path / name / folder)[(2, 10)]
        for name, folder in (("plain", "CMA_ES"), ("active", "CMA_ES-active=true"))
    }
    assert not np.array_equal(runs["plain"], runs["active"], equal_nan=True)  # the option acts


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--optimizers", "CMA_E"], "--optimizers: .*Did you mean.*CMA_ES"),
        (["--dimensions", "2,7"], r"--dimensions: \[7\] not in the bbob suite's"),
        (["--dimensions", "2,x"], "--dimensions: comma-separated integers"),
        (["--budget-multiplier", "1"], "--budget-multiplier must be >= 2, got 1"),
        (["--pycma-options", '{"CMA_activ": false}'], "Did you mean 'CMA_active'"),
        (["--pycma-options", '{"seed": 3}'], "'seed' is set by this script"),
        (["--pycma-options", "[1]"], "a JSON object of pycma options"),
        (["--pycma-options", "{"], "not JSON"),
        (["--set", "active"], r"--set: expected KEY=VALUE \(e.g. active=true\), got 'active'"),
        (["--set", "activ=true"], r"--set: optimizer.activ: .*Did you mean `active`"),
        (["--set", "active=3"], r"--set: optimizer.active: must be"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(coco, tmp_path, capsys, argv, message) -> None:
    """An unusable argument: one line on stderr naming it, exit status 2, nothing written."""
    assert coco.main([*argv, "--out", str(tmp_path / "out")]) == coco.EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1
    assert re.search(message, captured.err), captured.err
    assert not (tmp_path / "out").exists()


def test_the_script_exits_2_on_an_unknown_optimizer(tmp_path) -> None:
    """Run as a command: exit status 2 and the suggestion on one line."""
    command = [sys.executable, str(ROOT / "scripts/bench_coco.py"), "--optimizers", "CMA_E",
               "--out", str(tmp_path)]  # fmt: skip
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "CMA_ES" in result.stderr


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")  # cocopp: fewer than 15 instances, offline
def test_cocopp_writes_its_report_with_the_best_2009_reference(coco, tmp_path) -> None:
    """Without --no-report: cocopp's index, its ECDF (pprldmany) and aRT (pptables) pages,
    with the best-2009 data it ships loaded as the reference."""
    argv = ["--optimizers", "CMA_ES", "--dimensions", "2", "--budget-multiplier", "20",
            "--functions", "1", "--instances", "1", "--out", str(tmp_path)]  # fmt: skip
    stdout = run_main(coco, argv)
    index = tmp_path / "report" / "index.html"
    assert stdout.splitlines()[-1] == f"report: {index}"
    pages = {path.name for path in (tmp_path / "report").rglob("*.html")}
    assert {"index.html", "pprldmany.html", "pptables.html"} <= pages
    assert "best2009" in (tmp_path / "report" / "cocopp.log").read_text()
