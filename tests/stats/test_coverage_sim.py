"""Small CI run of the coverage simulation in ``benchmarks/coverage.py``.

Fixed seeds, 200 replicates per cell (Monte Carlo sd of a coverage near 95 % is 1.5
points); every threshold below leaves at least about 3 sd of room. The full grid and its
table are in ``docs/coverage.md``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "coverage.py"


@pytest.fixture(scope="module")
def cov():  # noqa: ANN201 -- the benchmark module
    spec = importlib.util.spec_from_file_location("evalspec_bench_coverage", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


REPS = 200


def test_wald_undercovers_at_small_n(cov) -> None:  # noqa: ANN001
    r = cov.simulate_cell(cov.Cell(20, 1, 0.0, 0.97), REPS, seed=1, resamples=300)
    assert r.reps == REPS
    assert r.coverage("wald") < 0.75  # x = n (prob 0.54) gives the zero-width interval [1, 1]
    assert r.coverage("paired_wald") < 0.85
    for method in ("wilson", "clopper_pearson", "jeffreys", "mid_p"):
        assert r.coverage(method) > 0.9, method
    assert r.coverage("paired_newcombe") > 0.9 and r.coverage("paired_tango") > 0.9


def test_independent_rows_hold_the_level(cov) -> None:  # noqa: ANN001
    r = cov.simulate_cell(cov.Cell(100, 1, 0.0, 0.5), REPS, seed=2, resamples=300)
    for method in ("wilson", "clopper_pearson", "paired_newcombe", "paired_tango", "paired_boot_bca"):
        assert r.coverage(method) > 0.9, method
    assert r.coverage("clopper_pearson") >= r.coverage("wald")  # exact is conservative


def test_row_level_intervals_undercover_under_clustering(cov) -> None:  # noqa: ANN001
    r = cov.simulate_cell(cov.Cell(500, 10, 0.3, 0.5), REPS, seed=3, resamples=300)
    for method in ("wilson", "clopper_pearson", "paired_newcombe", "paired_tango"):
        assert r.coverage(method) < 0.85, method
    for method in ("cluster_t_cr1", "paired_cluster_t_cr1", "paired_boot_percentile", "paired_boot_bca"):
        assert r.coverage(method) > 0.9, method
    # the honest intervals are wider, not luckier
    assert r.mean_width("paired_boot_bca") > 1.5 * r.mean_width("paired_newcombe")


def test_markdown_table_renders(cov) -> None:  # noqa: ANN001
    cells = [cov.Cell(20, 1, 0.0, 0.9), cov.Cell(20, 10, 0.3, 0.9)]
    results = cov.run_grid(cells, reps=20, resamples=200, processes=1)
    text = cov.render_markdown(results, reps=20, resamples=200, seconds=1.0)
    assert "| n | m | G | ICC | p |" in text
    assert "Row-level intervals under-cover under clustering" in text
    assert text.count("\n| 20 |") == 4  # two rows in each of the two tables


def test_write_atomic(cov, tmp_path: Path) -> None:  # noqa: ANN001
    target = tmp_path / "docs" / "coverage.md"
    cov.write_atomic(target, "first")
    cov.write_atomic(target, "second")
    assert target.read_text() == "second"
    assert [p.name for p in target.parent.iterdir()] == ["coverage.md"]
