"""Simulated coverage of the judge-corrected (PPI++) and ranking intervals (issue 25), beside the naive ones.

    python benchmarks/coverage_judge.py [--reps 1000]

PPI++: two candidates with the same true (human-label) pass rate; the judge passes a share of
each candidate's failures (``lenient`` for A, 0.05 for B), cases in clusters with a shared
shift; people label a simple random subset. Coverage of the true difference (0) by the
corrected interval and by the judge-only cluster-robust interval.

Ranking: K candidates, pass rates spread evenly over ``spread`` around 0.6 (``spread = 0``: all
tied, the hardest case for simultaneous coverage), G clusters of 4 cases; share of studies in
which every candidate's rank interval holds its true rank (ties: 1 + the number of strictly
better candidates).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalspec.stats.ppi import ppi_mean_interval  # noqa: E402
from evalspec.stats.ranking import rank_intervals  # noqa: E402


def ppi_cell(reps: int, seed: int, n_cases: int, labelled: int, size: int, lenient: float) -> tuple[float, float, float]:
    """(corrected coverage, naive coverage, mean corrected width)."""
    rng = np.random.default_rng(seed)
    hits = naive = 0
    width = 0.0
    for _ in range(reps):
        cl = np.repeat(np.arange(n_cases // size), size)
        p = 1 / (1 + np.exp(-(0.4 + rng.normal(0, 0.6, n_cases // size)[cl])))
        ya, yb = (rng.random(n_cases) < p).astype(float), (rng.random(n_cases) < p).astype(float)
        fa = np.where(ya == 1, 1.0, (rng.random(n_cases) < lenient).astype(float))
        fb = np.where(yb == 1, 1.0, (rng.random(n_cases) < 0.05).astype(float))
        lab = np.zeros(n_cases, dtype=bool)
        lab[rng.choice(n_cases, labelled, replace=False)] = True
        r = ppi_mean_interval(np.where(lab, ya - yb, np.nan), fa - fb, lab, clusters=cl)
        hits += r.low <= 0 <= r.high
        width += r.high - r.low
        d = fa - fb
        g = n_cases // size
        se = math.sqrt(g / (g - 1) * np.sum((np.bincount(cl, d) - size * d.mean()) ** 2)) / n_cases
        naive += abs(d.mean()) <= 1.96 * se
    return hits / reps, naive / reps, width / reps


def rank_cell(reps: int, seed: int, k: int, g: int, spread: float, resamples: int = 500) -> float:
    rng = np.random.default_rng(seed)
    truth = np.linspace(0.6 - spread / 2, 0.6 + spread / 2, k)
    true_rank = 1 + (truth[None, :] > truth[:, None]).sum(axis=1)
    hits = 0
    for rep in range(reps):
        cl = np.repeat(np.arange(g), 4)
        logit = np.log(truth / (1 - truth))[None, :] + rng.normal(0, 0.5, g)[cl][:, None]
        values = (rng.random((cl.size, k)) < 1 / (1 + np.exp(-logit))).astype(float)
        r = rank_intervals(values, cl, resamples=resamples, seed=rep)
        hits += bool(np.all((r.rank_low <= true_rank) & (true_rank <= r.rank_high)))
    return hits / reps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    print("PPI++ corrected vs judge-only, nominal 95 % (true difference 0)\n")
    print("| cases | labelled | cluster size | judge leniency on A | PPI++ coverage | judge-only coverage | PPI++ width |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n, lab, size, len_a in [(600, 60, 1, 0.05), (600, 60, 1, 0.35), (600, 120, 4, 0.35), (2000, 100, 5, 0.35),
                                (2000, 400, 5, 0.2), (400, 40, 4, 0.35)]:
        cov, nv, w = ppi_cell(args.reps, 1, n, lab, size, len_a)
        print(f"| {n} | {lab} | {size} | {len_a:.2f} | {cov:.3f} | {nv:.3f} | {w:.3f} |")
    print("\nRanking: simultaneous coverage of all true ranks, nominal 95 %\n")
    print("| candidates | clusters (4 cases) | spread | coverage |")
    print("| ---: | ---: | ---: | ---: |")
    for k, g, spread in [(3, 15, 0.0), (5, 30, 0.0), (10, 30, 0.0), (5, 60, 0.05), (10, 60, 0.2)]:
        print(f"| {k} | {g} | {spread:.2f} | {rank_cell(max(200, args.reps // 3), 2, k, g, spread):.3f} |")
    print(f"\n{time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
