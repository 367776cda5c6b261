"""Small CI run of the coverage study in ``benchmarks/coverage.py`` (marked slow, about 10-20 s).

Fixed seeds and a few cells of the full grid. Thresholds leave about 2.5 Monte Carlo standard
errors of room below the value the seeded run gives (stated next to each), so they fail on a
real regression of a method, not on chance. The full grid and its tables are the project's
coverage page.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
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


def test_design_draws_disagreements_in_both_directions(cov) -> None:  # noqa: ANN001
    """The old study drew one direction per cluster; now both occur inside clusters, even at ICC 0."""
    rng = np.random.default_rng(5)
    for icc in (0.0, 0.3):
        sizes = cov.cluster_sizes(rng, 40, "equal")
        x, y, labels = cov.draw_pairs(rng, sizes, 0.8, 0.05, icc)
        b = np.bincount(labels, weights=x * (1 - y))
        c = np.bincount(labels, weights=(1 - x) * y)
        assert np.sum((b > 0) & (c > 0)) >= (10 if icc == 0 else 2), icc
        # candidates agree more often than independent draws would
        assert np.mean(x == y) > 0.8 * 0.75 + 0.2 * 0.25 + 0.02
    dom = cov.cluster_sizes(rng, 10, "dominant")
    assert dom[0] == dom.sum() / 2
    assert cov.cluster_sizes(rng, 200, "unequal").std() > 5


@pytest.mark.slow
def test_cr2_holds_where_bootstrap_and_row_level_fail(cov) -> None:  # noqa: ANN001
    # G = 10, unequal sizes, ICC 0.3, 400 replicates (MC sd ~1.1 points at 95 %)
    r = cov.simulate_cell(cov.Cell(10, "unequal", 0.3), 400, seed=11, resamples=400)
    assert r.reps == 400
    assert r.coverage("cr2") >= 0.915, r.hits  # seeded run: see the assertion message on failure
    assert r.coverage("newcombe") < 0.75, r.hits  # ignoring clusters
    assert r.coverage("boot_pct") < r.coverage("cr2"), r.hits  # few clusters: the bootstrap under-covers
    assert r.coverage("rate_wilson_cluster") >= 0.915 and r.coverage("rate_wilson") < 0.75, r.hits


@pytest.mark.slow
def test_dominant_cluster_cr2_honest_cr1_not(cov) -> None:  # noqa: ANN001
    r = cov.simulate_cell(cov.Cell(30, "dominant", 0.3), 300, seed=12, resamples=300)
    assert r.coverage("cr2") >= 0.92, r.hits
    assert r.coverage("cr1") < 0.85, r.hits


@pytest.mark.slow
def test_clustered_mcnemar_and_bound_small_grid(cov) -> None:  # noqa: ANN001
    m = cov.simulate_mcnemar_cell(cov.Cell(30, "unequal", 0.3, delta=0.0), 800, seed=13)
    assert 0.03 <= m.coverage("durkalski") <= 0.075, m.hits  # nominal 5 %, MC sd 0.8 points
    assert m.coverage("mcnemar") > 0.12, m.hits
    # 5 % failure rate, 100 clusters of 10, ICC 0.3: seeded run 93.3 % (cluster-aware) vs 79.2 % (independent)
    b = cov.simulate_bound_cell(cov.Cell(100, "equal", 0.3, p=0.95, delta=0.0), 600, seed=14)
    assert b.coverage("bound_cluster") >= 0.905 and b.coverage("bound_independent") < 0.85, b.hits


def test_markdown_renders(cov) -> None:  # noqa: ANN001
    cells = [cov.Cell(10, d, icc) for d in cov.DESIGNS for icc in (0.0, 0.3)]
    grids = {
        "main": [cov.simulate_cell(c, 8, seed=1, resamples=100) for c in cells],
        "mcnemar": [cov.simulate_mcnemar_cell(cov.Cell(10, "equal", 0.3, delta=0.0), 8, seed=2)],
        "bound": [cov.simulate_bound_cell(cov.Cell(10, "equal", 0.3, p=0.98, delta=0.0), 8, seed=3)],
    }
    text = cov.render_markdown(grids, reps=8, resamples=100, seconds=1.0)
    assert "| ICC | G | n̄ | reps | CR2-BM t |" in text
    assert "### Dominant cluster sizes" in text and "## Conclusions" in text
    assert "Durkalski" in text and "rare failure rate" in text and "| 2 % |" in text
    assert "seed 0" not in text


def test_write_atomic(cov, tmp_path: Path) -> None:  # noqa: ANN001
    target = tmp_path / "docs" / "coverage.md"
    cov.write_atomic(target, "first")
    cov.write_atomic(target, "second")
    assert target.read_text() == "second"
    assert [p.name for p in target.parent.iterdir()] == ["coverage.md"]
