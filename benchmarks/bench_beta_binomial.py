"""Benchmark: the Beta-Binomial profile's grid engine against PyMC's NUTS, side by side.

Runs in one process, on one simulated data set at the setting of "Characterizing LLM
performance via a Bayesian lens" (2 conditions x 100 questions x 100 trials):

* ``grid``  -- evalspec's default engine (adaptive quadrature), best and median of 5 warm runs;
* ``nuts``  -- the paper's PyMC model, 4 chains, by default the paper's 50,000 warm-up and
               200,000 draws in all (``--tune``/``--draws`` per chain to shorten), one run,
               compile time included (as a user pays it);

then prints the ratio of their times and the largest gap between them, in posterior standard
deviations, over every reported summary (mean, sd, HDI ends of mu, kappa, gamma-bar and the
Beta variance per condition; theta_i means). It also times the grid at 100, 10,000 and
1,000,000 questions (the cost should be flat: the data enter through distinct (y, J) pairs).

``--coverage N`` instead runs the recovery table: N replications per design, coverage of the
95 % HDIs of mu, kappa and the Beta variance with its Monte Carlo standard error.

Measured once on the shared 2-core development machine (numpy 2.4, scipy 1.17, PyMC 5.28; load
average 4.5-8 from other test suites, so absolute times are several times a quiet machine's):
grid best 1.72 s (median 1.85 s) for 2 x 100 x 100; PyMC NUTS at the paper's setting 598 s on one
core, compile included: 349x (median 324x). Largest gap: 0.057 sd over the mu, kappa, gamma-bar
and variance summaries (gamma-bar's lower HDI end, read off draws), 0.139 sd over theta_i's 400
HDI ends (Monte Carlo error in both engines); means, sds and the quadrature HDIs below 0.046 sd.
Grid, one condition: 0.34 s at 100 questions, 0.98 s at 10,000, 0.63 s (median 1.07 s) at
1,000,000. The table and the recovery coverage are in docs/beta_binomial.md.

Usage: ``python benchmarks/bench_beta_binomial.py [--tune T --draws D] [--skip-nuts]``,
``python benchmarks/bench_beta_binomial.py --coverage 400``. Set
``PYTENSOR_FLAGS=base_compiledir=...`` to keep PyTensor's compile cache somewhere writable.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

# this folder holds coverage.py, which would shadow the coverage package numba (under PyMC) imports
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from evalspec.stats.beta_binomial import beta_binomial_posterior, beta_binomial_profile  # noqa: E402

PARAMS = ("mu", "kappa", "gamma_bar", "variance")


def simulate(n_q: int, trials: int, mu: float, kappa: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    theta = rng.beta(mu * kappa, (1 - mu) * kappa, size=n_q)
    return rng.binomial(trials, theta), np.full(n_q, trials)


def paper_data() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    # exact: high accuracy, heterogeneous questions; rephrased: lower, more homogeneous (the paper's pattern)
    return {"exact": simulate(100, 100, 0.86, 0.5, 1), "rephrased": simulate(100, 100, 0.75, 2.0, 2)}


def timed(fn, repeat: int) -> tuple[float, float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times), out


def gaps(grid, nuts) -> list[tuple[float, str]]:
    out = []
    for name, g in grid.conditions.items():
        n = nuts.conditions[name]
        for p in PARAMS:
            gs, ns = g.summary(p), n.summary(p)
            for field in ("mean", "sd", "low", "high"):
                out.append((abs(getattr(gs, field) - getattr(ns, field)) / gs.sd, f"{name} {p} {field}"))
        th = np.abs(g.theta.mean - n.theta.mean) / g.theta.sd
        out.append((float(th.max()), f"{name} theta_i mean (worst question)"))
        for end in ("low", "high"):
            th = np.abs(getattr(g.theta, end) - getattr(n.theta, end)) / g.theta.sd
            out.append((float(th.max()), f"{name} theta_i {end} (worst question)"))
    return sorted(out, reverse=True)


def speed(args: argparse.Namespace) -> None:
    data = paper_data()
    beta_binomial_profile(data, seed=0)  # warm: imports and first-call costs
    best, med, grid = timed(lambda: beta_binomial_profile(data, seed=1), 5)
    print(f"grid, 2 x 100 x 100: best {best:.3f} s, median {med:.3f} s (5 warm runs)")
    for name, post in grid.conditions.items():
        print(f"  {name}: " + ", ".join(f"{p} {post.summary(p).mean:.4g} [{post.summary(p).low:.4g}, "
                                         f"{post.summary(p).high:.4g}]" for p in PARAMS))
    if args.load_nuts:  # the (mu, log kappa) draws and time of an earlier NUTS run of this script
        nuts, t_nuts = load_nuts(args.load_nuts, data)
        print(f"PyMC NUTS draws loaded from {args.load_nuts} (their run took {t_nuts:.1f} s, compile included)")
    elif not args.skip_nuts:
        t0 = time.perf_counter()
        nuts = beta_binomial_profile(data, engine="nuts", seed=1, chains=4, tune=args.tune, nuts_draws=args.draws,
                                     cores=args.cores, progressbar=False)
        t_nuts = time.perf_counter() - t0
        print(f"PyMC NUTS, 4 chains x ({args.tune} tune + {args.draws} draws), cores={args.cores}: {t_nuts:.1f} s "
              "(compile included)")
        if args.save_nuts:
            np.savez_compressed(args.save_nuts, seconds=t_nuts, **{
                f"{k}__{c}": post.draws[k] for c, post in nuts.conditions.items() for k in ("mu", "log_kappa")})
    if args.load_nuts or not args.skip_nuts:
        for name, post in nuts.conditions.items():
            print(f"  {name}: diagnostics " + "; ".join(d.finding for d in post.diagnostics))
        print(f"ratio NUTS / grid (best): {t_nuts / best:.0f}x  (median: {t_nuts / med:.0f}x)")
        ranked = gaps(grid, nuts)
        print("largest gaps between the engines, in posterior sd:")
        for value, what in ranked[:6]:
            print(f"  {value:.3f}  {what}")
        hyper = [v for v, w in ranked if "theta" not in w]
        print(f"largest gap over mu, kappa, gamma-bar, variance summaries: {max(hyper):.3f} sd; "
              f"over everything incl. theta_i: {ranked[0][0]:.3f} sd")
    for n_q in (100, 10_000, 1_000_000):
        y, j = simulate(n_q, 100, 0.86, 0.5, 3)
        best, med, _ = timed(lambda y=y, j=j: beta_binomial_posterior(y, j, seed=1), 3)
        print(f"grid, one condition, {n_q:>9,} questions x 100 trials: best {best:.3f} s, median {med:.3f} s")


def load_nuts(path: str, data):
    """A NUTS profile rebuilt from saved (mu, log kappa) draws: derived quantities by the same code."""
    from evalspec.stats.beta_binomial import BetaBinomialPrior, BetaBinomialProfile
    from evalspec.stats.beta_binomial.counts import _counts
    from evalspec.stats.beta_binomial.posterior import _derive

    saved = np.load(path)
    conds = {}
    for c, (i, (y, j)) in zip(data, enumerate(data.values())):
        y, j = _counts(y, j)
        rng = np.random.default_rng(np.random.SeedSequence(1).spawn(len(data) + 1)[i])
        conds[c] = _derive(y, j, saved[f"mu__{c}"], saved[f"log_kappa__{c}"], 0.95, rng, quad=None, ppc_draws=500,
                           engine="nuts", diagnostics=[], prior=BetaBinomialPrior(), seed=1)
    return BetaBinomialProfile(conditions=conds, contrasts=(), engine="nuts", hdi_prob=0.95, seed=1), \
        float(saved["seconds"])


def coverage(reps: int) -> None:
    designs = [
        ("truths from the prior, 30 q x 10 trials", lambda rng: (rng.beta(1, 1), math.exp(rng.normal(0, 1.5))), 30, 10),
        ("mu 0.7, kappa 3, 40 q x 20 trials", lambda rng: (0.7, 3.0), 40, 20),
        ("mu 0.86, kappa 0.5, 100 q x 100 trials", lambda rng: (0.86, 0.5), 100, 100),
        ("mu 0.5, kappa 20, 20 q x 5 trials", lambda rng: (0.5, 20.0), 20, 5),
    ]
    print(f"recovery: coverage of the 95% HDIs, {reps} replications per design (MC se {math.sqrt(.95 * .05 / reps):.3f})")
    print("| design | mu | kappa | Beta variance | gamma-bar* |")
    print("| --- | --- | --- | --- | --- |")
    for label, draw, n_q, trials in designs:
        rng = np.random.default_rng(7)
        hits = dict.fromkeys((*PARAMS,), 0)
        for rep in range(reps):
            mu, kappa = draw(rng)
            theta = rng.beta(mu * kappa, (1 - mu) * kappa, size=n_q)
            y = rng.binomial(trials, theta)
            post = beta_binomial_posterior(y, np.full(n_q, trials), seed=rep, draws=4000, ppc_draws=50)
            # gamma-bar's "truth" for these questions: mean_i J theta_i (1 - theta_i) at the true theta_i
            truth = {"mu": mu, "kappa": kappa, "variance": mu * (1 - mu) / (kappa + 1),
                     "gamma_bar": float(np.mean(trials * theta * (1 - theta)))}
            for p in PARAMS:
                s = post.summary(p)
                hits[p] += s.low <= truth[p] <= s.high
        cells = [f"{hits[p] / reps:.3f}" for p in ("mu", "kappa", "variance", "gamma_bar")]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("* gamma-bar against mean_i J_i theta_i (1 - theta_i) at the simulated theta_i.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tune", type=int, default=50_000, help="NUTS warm-up per chain (the paper: 50,000)")
    ap.add_argument("--draws", type=int, default=50_000, help="NUTS draws per chain (the paper: 200,000 in all)")
    ap.add_argument("--cores", type=int, default=1, help="processes for the 4 chains (default 1: a shared machine)")
    ap.add_argument("--skip-nuts", action="store_true")
    ap.add_argument("--save-nuts", metavar="NPZ", help="save the NUTS (mu, log kappa) draws and time")
    ap.add_argument("--load-nuts", metavar="NPZ", help="compare with saved NUTS draws instead of sampling")
    ap.add_argument("--coverage", type=int, default=0, metavar="N", help="run the recovery table instead")
    args = ap.parse_args()
    os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + str(Path(__file__).resolve().parents[1] / ".cache"
                                                                     / "pytensor"))
    if args.coverage:
        coverage(args.coverage)
    else:
        speed(args)


if __name__ == "__main__":
    main()
