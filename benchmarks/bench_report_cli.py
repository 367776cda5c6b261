"""Whole-process `evalspec report --format pdf` against `--format html`, side by side, per example.

The target (issue 14): on each bundled example, writing the PDF takes at most twice as long as
writing the HTML, each measured as the whole command (interpreter start, imports, plots,
templates, WeasyPrint, file write), the same claim for both. The claims are made first with
``evalspec run --no-report`` from a copy of each example (``SOURCE_DATE_EPOCH`` fixed).

On Linux the PDF command forks a worker that imports WeasyPrint while the plots are drawn
(:mod:`evalspec.report.pdf_worker`); the column ``pdf 1p`` is the same command typesetting in
one process (``EVALSPEC_NO_PDF_WORKER=1``), as on macOS and Windows or from a process with
threads. The commands alternate (html, pdf, pdf 1p, html, ...) so that load from other work on
the machine falls on all alike; each is timed ``--repeat`` times and the best wall time is kept,
with the CPU time (user + system, the worker included) of that run beside it: CPU time does not
depend on what else runs, wall time is what a user waits for.

Usage: ``python benchmarks/bench_report_cli.py [--repeat N] [--examples a,b]``. Prints one row
per example and the ratios pdf/html (wall and CPU) against the 2x target.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 2.0
EPOCH = "1796126400"


def _evalspec() -> list[str]:
    exe = Path(sys.executable).with_name("evalspec")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "evalspec"]


def _timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _claim(example: Path, work: Path, env: dict[str, str]) -> Path:
    folder = work / example.name
    shutil.copytree(example, folder, ignore=shutil.ignore_patterns("out", "*.lock.json", "__pycache__"))
    plans = sorted(folder.glob("*.yaml"))
    plan = folder / "plan.yaml" if (folder / "plan.yaml").exists() else plans[0]
    subprocess.run(_evalspec() + ["run", plan.name, "--no-report", "--out", "out"], cwd=folder, env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return folder / "out" / "claim.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each command (best is kept)")
    parser.add_argument("--examples", default="", help="comma-separated example names (default: all)")
    args = parser.parse_args()
    wanted = [n for n in args.examples.split(",") if n]
    examples = sorted(p.parent for p in (ROOT / "examples").glob("*/plan.yaml")
                      if not wanted or p.parent.name in wanted)
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH, "MPLBACKEND": "Agg"}
    print(f"{'example':20} {'html s':>7} {'pdf s':>7} {'pdf/html':>8} {'pdf 1p s':>8} {'1p/html':>7} "
          f"{'html cpu':>8} {'pdf cpu':>8} {'1p cpu':>7} {'target':>7}")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for example in examples:
            claim = _claim(example, work, env)
            best: dict[str, tuple[float, float]] = {}
            for _ in range(args.repeat):
                for kind, fmt, extra in (("html", "html", {}), ("pdf", "pdf", {}),
                                         ("1p", "pdf", {"EVALSPEC_NO_PDF_WORKER": "1"})):
                    out = work / f"{example.name}-{kind}"
                    wall, cpu = _timed(_evalspec() + ["report", str(claim), "--format", fmt, "--out", str(out)],
                                       work, {**env, **extra})
                    if kind not in best or wall < best[kind][0]:
                        best[kind] = (wall, cpu)
            (hw, hc), (pw, pc), (ow, oc) = best["html"], best["pdf"], best["1p"]
            ratio = pw / hw
            worst = max(worst, ratio)
            print(f"{example.name:20} {hw:7.2f} {pw:7.2f} {ratio:8.2f} {ow:8.2f} {ow / hw:7.2f} {hc:8.2f} {pc:8.2f} "
                  f"{oc:7.2f} {'met' if ratio <= TARGET else 'MISSED':>7}", flush=True)
    print(f"\nworst pdf/html {worst:.2f} (target <= {TARGET:g}). Best of {args.repeat} alternating runs per "
          f"command; 'cpu' is the command's user+system time in the same run (its PDF worker included);\n"
          "'1p': the PDF typeset in one process (EVALSPEC_NO_PDF_WORKER=1).")


if __name__ == "__main__":
    main()
