"""Simulated error rates of the decision rules issue 18 added (the verdict engineer's part; the interval
grids are in ``coverage.py``).

Each function simulates one design the review found wrong and prints how often a verdict claims
what is false, before and after the rule:

* ``sequential``: clusters of lognormal size whose effect falls with size; the confidence
  sequence on per-cluster means, unweighted (each cluster once) and weighted by size (each
  case once): how often it ever misses the case-weighted truth, and ever shows a gain (truth
  negative).
* ``order``: two categories run one after the other, truth 0 overall; the sequence in that
  order and in a random order, and the estimand guard (a final interval that excludes the
  case-weighted estimate is inconclusive): how often a gain is claimed.
* ``missing``: A and B equally good, A times out on cases it would fail (informative missing
  outcomes) under ``missing.policy: exclude``; how often the interval alone says
  worth_acting_on, and how often once a verdict that changes with those cases counted as
  failures is made inconclusive.

* ``small_n`` (study 33): exact enumeration of the primary's one-sided error with few independent
  pass/fail cases, Newcombe's interval against the exact one ``method: auto`` now uses.

Run: ``python benchmarks/verdict_error_rates.py [sequential|order|missing|small_n|all] --reps N``
(defaults keep each under a minute on one core).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np

from evalspec.decision.table import verdict_of
from evalspec.stats.paired import paired_difference_interval
from evalspec.stats.sequential import betting_confidence_sequence


def _clusters(rng: np.random.Generator, g: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster mean differences and sizes: q = 0.45 - 0.2 log n per case (see tests/decision)."""
    sizes = np.maximum(1, np.round(rng.lognormal(np.log(6), 1.0, g))).astype(int)
    q = np.clip(0.45 - 0.2 * np.log(sizes), -0.55, 0.55)
    plus = rng.binomial(sizes, 0.3 + q / 2)
    minus = rng.binomial(sizes - plus, (0.3 - q / 2) / (0.7 - q / 2))
    return (plus - minus) / sizes, sizes


def sequential(reps: int, g: int = 80, seed: int = 1) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    big_m, big_s = _clusters(rng, 400_000)
    truth = float((big_m * big_s).sum() / big_s.sum())
    out = {"truth_per_case": truth, "truth_per_cluster": float(big_m.mean())}
    for name, weighted in (("unweighted", False), ("weighted", True)):
        miss = gain = 0
        for _ in range(reps):
            m, s = _clusters(rng, g)
            cs = betting_confidence_sequence(m, lower=-1, upper=1, grid=500, weights=s / s.max() if weighted else None)
            miss += bool(np.any((cs.low > truth) | (cs.high < truth)))
            gain += bool(np.any(cs.low > 0))
        out[f"{name}_ever_miss"] = miss / reps
        out[f"{name}_ever_gain"] = gain / reps
    return out


def order(reps: int, n: int = 400, seed: int = 2) -> dict[str, float]:
    """Category 1: A alone passes 35 %, B alone 5 %; category 2 the reverse; truth 0."""
    rng = np.random.default_rng(seed)
    claims = {"category_order": 0, "category_order_guarded": 0, "random_order": 0, "random_order_guarded": 0}
    half = n // 2
    for _ in range(reps):
        u1, u2 = rng.random(half), rng.random(half)
        d1 = np.where(u1 < 0.35, 1.0, np.where(u1 < 0.40, -1.0, 0.0))
        d2 = np.where(u2 < 0.35, -1.0, np.where(u2 < 0.40, 1.0, 0.0))
        d = np.r_[d1, d2]
        est = float(d.mean())
        for name, seq in (("category_order", d), ("random_order", rng.permutation(d))):
            cs = betting_confidence_sequence(seq, lower=-1, upper=1, grid=500, times=[n])
            low, high = float(cs.low[-1]), float(cs.high[-1])
            claimed = low > 0
            claims[name] += claimed
            claims[name + "_guarded"] += claimed and low <= est <= high
    return {k: v / reps for k, v in claims.items()}


def missing(reps: int, n: int = 1000, d: float = 0.02, seed: int = 3) -> dict[str, float]:
    """A and B pass 60 % each, independently; A times out (no outcome) on 4.9 % of cases, all ones it fails."""
    rng = np.random.default_rng(seed)
    plain = guarded = 0
    for _ in range(reps):
        a = rng.random(n) < 0.6
        b = rng.random(n) < 0.6
        out = np.zeros(n, dtype=bool)
        fails = np.flatnonzero(~a)
        out[rng.choice(fails, size=min(fails.size, int(0.049 * n)), replace=False)] = True
        keep = ~out
        x, y = a[keep], b[keep]
        t = (int(np.sum(x & y)), int(np.sum(x & ~y)), int(np.sum(~x & y)), int(np.sum(~x & ~y)))
        r = paired_difference_interval(*t)
        v = verdict_of("superiority", r.low, r.high, d, None)
        tf = (int(np.sum(a & b & keep)), int(np.sum(a & ~b & keep)), int(np.sum(~a & b)), int(np.sum(~a & ~b)))
        rf = paired_difference_interval(*tf)
        vf = verdict_of("superiority", rf.low, rf.high, d, None)
        plain += v == "worth_acting_on"
        guarded += v == "worth_acting_on" and vf == v
    return {"worth_acting_on_interval_alone": plain / reps, "worth_acting_on_with_sensitivity": guarded / reps}


def small_n(reps: int, sizes: tuple[int, ...] = (10, 20, 30), grid: int = 30,
            boundaries: tuple[float, ...] = (-0.05, 0.0, 0.05)) -> dict[str, float]:
    """Exact one-sided error of the primary's lower end at the null boundary, Newcombe vs the exact interval.

    Enumerates every 2x2 table of n paired cases (no simulation; ``reps`` is unused). Newcombe: at
    truth 0 (p10 = p01 on a grid, concordant cases split 0/50/100 % between both-pass and both-fail),
    the largest P(lower bound > 0). The exact interval (``method: auto`` up to
    ``EXACT_INTERVAL_MAX_CASES`` cases; it depends on b, c, n only): the largest P(lower bound > d)
    at truth d = p10 - p01 for each boundary d (0: a gain; +m: worth acting on at a margin m; -m:
    non-inferiority), over a grid of the discordance probability. Nominal: 2.5 %.
    """
    import math

    from evalspec.stats.paired import paired_difference_interval
    from evalspec.stats.paired_exact import paired_exact_interval

    out = {}
    for n in sizes:
        worst = 0.0
        for gi in range(1, grid):
            p_disc = gi / grid / 2
            rest = 1 - 2 * p_disc
            for share in (0.0, 0.5, 1.0):
                tot = 0.0
                for b in range(n + 1):
                    for c in range(n + 1 - b):
                        r = n - b - c
                        base = math.comb(n, b) * math.comb(n - b, c) * p_disc ** (b + c) * rest**r
                        for a in range(r + 1):
                            q = base * math.comb(r, a) * share**a * (1 - share) ** (r - a)
                            if q < 1e-15:
                                continue
                            if paired_difference_interval(a, b, c, r - a, confidence_level=0.95).low > 0:
                                tot += q
                worst = max(worst, tot)
        out[f"newcombe n={n} d=0"] = worst
        lowest = min(boundaries)
        lower = {(b, c): paired_exact_interval(b, c, n, 0.95)[0]
                 for b in range(n + 1) for c in range(n + 1 - b) if (b - c) / n > lowest}  # low <= estimate
        for d in boundaries:
            worst = 0.0
            for pi in np.linspace(abs(d), 1.0, 201)[1:]:
                p10, p01 = (pi + d) / 2, (pi - d) / 2
                tot = sum(math.comb(n, b) * math.comb(n - b, c) * p10**b * p01**c * (1 - pi) ** (n - b - c)
                          for (b, c), low in lower.items() if low > d + 1e-12)
                worst = max(worst, tot)
            out[f"exact n={n} d={d:+g}"] = worst
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("which", nargs="?", choices=("sequential", "order", "missing", "small_n", "all"), default="all")
    parser.add_argument("--reps", type=int, default=400)
    args = parser.parse_args(argv)
    for name, fn in (("sequential", sequential), ("order", order), ("missing", missing), ("small_n", small_n)):
        if args.which in (name, "all"):
            t0 = time.perf_counter()
            result = fn(args.reps)
            print(f"{name} ({args.reps} studies, {time.perf_counter() - t0:.1f} s):")
            for k, v in result.items():
                print(f"  {k}: {v:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
