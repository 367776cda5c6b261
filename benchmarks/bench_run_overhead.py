"""``evalspec run --no-report`` on each example, beside importing the libraries a run cannot do without.

Issue 14's target: on each bundled example, the whole ``evalspec run PLAN --no-report`` process
within 2x of ``python -c "import numpy, scipy.special, pydantic, yaml, pyarrow.json"`` (a run
cannot avoid those imports, so the ratio is evalspec's own overhead plus the analysis itself).
Each command runs ``--repeat`` times, alternating, each in a fresh process; the best wall time
is kept (the machine may be shared: read the ratios, not the seconds). The examples are copied
to a temporary folder, so nothing in ``examples/`` is written. ``repeated-trials`` runs the
Bayesian Beta-Binomial profile, about 0.65 s of computation: its ratio measures work, not
overhead. Usage::

    .venv/bin/python benchmarks/bench_run_overhead.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "import numpy, scipy.special, pydantic, yaml, pyarrow.json"


def _best(commands: dict[str, tuple[list[str], Path]], repeat: int, env: dict[str, str]) -> dict[str, float]:
    best = {name: float("inf") for name in commands}
    for _ in range(repeat):  # alternate, so load on the machine hits every command alike
        for name, (argv, cwd) in commands.items():
            t0 = time.perf_counter()
            subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    py = sys.executable
    env = dict(os.environ, SOURCE_DATE_EPOCH="1796126400")
    env.pop("EVALSPEC_NO_REPORT", None)
    with tempfile.TemporaryDirectory() as tmp:
        commands: dict[str, tuple[list[str], Path]] = {"imports (baseline)": ([py, "-c", BASELINE], Path(tmp))}
        for example in sorted(p for p in (ROOT / "examples").iterdir() if (p / "plan.yaml").is_file()):
            copy = Path(tmp) / example.name
            shutil.copytree(example, copy, ignore=shutil.ignore_patterns("out", ".evalspec", "*.lock.json"))
            commands[example.name] = ([py, "-m", "evalspec", "run", "plan.yaml", "--no-report", "--out", "out"], copy)
        best = _best(commands, args.repeat, env)
    base = best.pop("imports (baseline)")
    print(f"best of {args.repeat}, fresh processes; baseline: python -c \"{BASELINE}\" {base:.3f} s")
    print(f"{'example':20}{'run s':>8}{'ratio':>8}  target <= 2x")
    for name, t in best.items():
        print(f"{name:20}{t:8.3f}{t / base:8.2f}  {'met' if t / base <= 2 else 'not met'}")


if __name__ == "__main__":
    main()
