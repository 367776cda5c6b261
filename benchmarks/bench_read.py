"""Benchmark reading results: ``evalspec run --no-report`` next to a bare ``pyarrow.json.read_json``.

Issue 14's target, measured side by side on the same generated file (invented data, the
generator of ``bench_run.py``: 2 candidates x cases x 5 repeats, clusters, a topic slice,
a critical flag, timestamps): at 1M rows ``evalspec run --no-report`` within 2x of a bare
``pyarrow.json.read_json`` of the same file, and peak memory under 500 MiB.

Three rows, each in a fresh process (peak memory is that process's own ru_maxrss):

* ``bare read``  - ``pyarrow.json.read_json(path)``, nothing else;
* ``evalspec read`` - evalspec's readers and typing (read, type, check the table);
* ``evalspec run`` - ``evalspec run --no-report`` (read, type, check, attempts, every analysis,
  decision, claim written).

"work" is the time after imports; "process" the whole command, imports included. The CPU may
be shared: run it once or twice and read the ratios, not the seconds. Usage::

    .venv/bin/python benchmarks/bench_read.py               # 1,000,000 rows
    .venv/bin/python benchmarks/bench_read.py --rows 200000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[0]
sys.path.insert(0, str(ROOT))

from bench_run import generate  # noqa: E402

CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    mode, plan = sys.argv[1], Path(sys.argv[2])
    if mode == "bare":
        import pyarrow.json as pj
        t0 = time.perf_counter()
        n = pj.read_json(plan.parent / "results.jsonl").num_rows
    elif mode == "read":
        from evalspec.plan import load_plan
        from evalspec.results import load_results
        loaded = load_plan(plan)
        t0 = time.perf_counter()
        n = load_results(loaded.plan, plan, loaded.diagnostic).tidy.n
    print(json.dumps({"work": time.perf_counter() - t0, "rows": n}))
""")


def measure(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``argv``; its wall time, peak memory (MiB) and, when it prints one, its work time."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv} failed:\n{err}")
    res = {"process": wall, "peak_mib": usage.ru_maxrss / 1024}
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            res.update(json.loads(line))
            break
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    args = ap.parse_args()
    py = sys.executable
    env = dict(os.environ, EVALSPEC_NO_REPORT="1", SOURCE_DATE_EPOCH="1796126400")
    with tempfile.TemporaryDirectory() as tmp:
        plan = generate(Path(tmp), args.rows)
        size = (plan.parent / "results.jsonl").stat().st_size
        bare = measure([py, "-c", CHILD, "bare", str(plan)], plan.parent)
        read = measure([py, "-c", CHILD, "read", str(plan)], plan.parent)
        t0 = time.perf_counter()
        run = measure([py, "-m", "evalspec", "run", str(plan), "--no-report", "--out", str(plan.parent / "out")],
                      plan.parent, env)
        run["work"] = run["process"]  # the CLI prints no timing; its whole process is the honest figure
        del t0
    print(f"{args.rows:,} rows, {size / 2**20:.0f} MiB of JSONL (time in seconds; peak memory per process)")
    print(f"{'':16}{'work':>8}{'process':>9}{'peak MiB':>10}")
    for name, r in (("bare read", bare), ("evalspec read", read), ("evalspec run", run)):
        print(f"{name:16}{r['work']:8.2f}{r['process']:9.2f}{r['peak_mib']:10.0f}")
    print(f"evalspec run / bare read: {run['process'] / bare['process']:.2f}x (whole processes; target <= 2x), "
          f"peak {run['peak_mib']:.0f} MiB (target < 500)")
    print(f"evalspec read / bare read (work after imports): {read['work'] / bare['work']:.2f}x")


if __name__ == "__main__":
    main()
