"""Import time of ``evalspec.stats`` next to the libraries it cannot do without.

Each statement runs in a fresh interpreter (``python -X importtime`` is not used: it slows
imports down); the wall time of the whole process is measured, best of N, and the ratios to
the baseline ``import numpy, scipy.special`` are printed. ``scipy.stats`` and
``scipy.optimize`` are shown for scale: the kernels used to import them at the top.

Usage::

    .venv/bin/python benchmarks/bench_imports.py            # best of 7
    .venv/bin/python benchmarks/bench_imports.py --repeat 15
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

STATEMENTS = [
    ("python (nothing)", "pass"),
    ("numpy + scipy.special (baseline)", "import numpy, scipy.special"),
    ("evalspec.stats", "import evalspec.stats"),
    ("evalspec.stats: heavy modules loaded?", None),
    ("numpy + scipy.stats + scipy.optimize", "import numpy, scipy.stats, scipy.optimize"),
]

CHECK = (
    "import sys, evalspec.stats; "
    "print(','.join(m for m in ('scipy.stats', 'scipy.optimize', 'pandas') if m in sys.modules) or 'none')"
)


def best_time(statement: str, repeat: int) -> float:
    """Best wall time (s) of a fresh ``python -c statement`` over ``repeat`` runs (after one warm-up)."""
    cmd = [sys.executable, "-c", statement]
    subprocess.run(cmd, check=True)  # warm the file cache
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per statement (best is reported)")
    args = parser.parse_args(argv)

    times: dict[str, float] = {}
    print(f"{'import':42s} {'best (s)':>9s} {'vs baseline':>12s} {'minus bare python':>18s}")
    for label, statement in STATEMENTS:
        if statement is None:
            loaded = subprocess.run([sys.executable, "-c", CHECK], check=True, capture_output=True, text=True)
            print(f"{label:42s} {loaded.stdout.strip():>9s}")
            continue
        times[label] = best_time(statement, args.repeat)
    base = times["numpy + scipy.special (baseline)"]
    bare = times["python (nothing)"]
    for label, t in times.items():
        ratio = t / base
        net = (t - bare) / max(base - bare, 1e-9)
        print(f"{label:42s} {t:9.3f} {ratio:11.2f}x {net:17.2f}x")
    print(f"\n(best of {args.repeat}; 'minus bare python' compares import cost alone, interpreter start-up removed)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
