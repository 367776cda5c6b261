"""Benchmark the pre-aggregated path: ``evalspec run`` on a case table, side by side with reading that table.

The target (issue 24): the pre-aggregated path for 1B attempt rows' worth of cases within 2x
reading the case table. The case table of 1B attempt rows is generated directly (invented: 2
candidates x ``--cases`` cases x ``--attempts`` attempts each, in clusters of 50 cases, a
language slice, a critical flag, rule ``mean``; 5,000,000 cases x 100 attempts x 2 candidates
= 1,000,000,000 attempt rows in 10,000,000 case-table rows, the most evalspec analyses in one
run), as Parquet under ``--dir`` (default ``/tmp/casetable-bench``, outside the repository;
reused when present). Each measurement runs in a fresh process, so peak memory
(``ru_maxrss``) is its own; "work" is the time after imports, "cpu" the CPU seconds of that work
(every thread of the process: on a shared machine the steadier measure of what each costs), "main"
those of the main thread alone (with a second core free, the work takes about the larger of "main"
and half of "cpu").

* ``bare read`` — ``pyarrow.parquet.read_table`` of the table (every column the plan reads), the
  reference of the ratios; ``1 thread`` the same read with ``use_threads=False`` (on a busy
  2-core machine Arrow's threads can make the default read the slower one). The target line
  divides by the faster of the two, so a slow threaded read never flatters the run;
* ``evalspec read`` — evalspec's reading, typing and checks of the table
  (:func:`evalspec.results.case_table.load_case_table`), in record batches (the default), and
  ``whole-file`` with the readers' whole-file path instead;
* ``evalspec run`` — the whole run without the report: read, check, the attempt rule on the
  counts, proportion, critical failures, slices, the decision and the claim
  (:func:`evalspec.run.run_plan`); with ``--paired`` also a paired difference (cluster t), whose
  claim lists every disagreeing case (so the claim, and its validation, grow with the cases).
* Every evalspec child sets its process up as the ``evalspec`` command does
  (:func:`evalspec.cli_runtime.prepare`: one OpenBLAS thread unless a thread count is set, fewer
  garbage collections); the bare reads run with Arrow's and numpy's defaults.
* ``--compare TREE`` adds the ``evalspec run`` of another evalspec source tree (``PYTHONPATH=TREE``),
  run alternately with this one, so before and after are measured side by side in one run.

The CPU may be shared: read the ratios, not the seconds. Usage::

    .venv/bin/python benchmarks/bench_case_table.py                    # 1B attempts' worth (5M cases)
    .venv/bin/python benchmarks/bench_case_table.py --cases 500000     # 100M attempts' worth
    .venv/bin/python benchmarks/bench_case_table.py --cases 1000000 --dir /tmp/ct-1m --compare /tmp/old-tree
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from pathlib import Path

PLAN = """evalspec: 1
id: case-table-bench
title: Pre-aggregated benchmark (invented)
question: Is A better than B?
decision_owner: benchmark
population: invented cases
data:
  results: cases.parquet
  format: case_table
  columns: {candidate: model, repeat: attempt, outcome: passed, critical: crit}
candidates:
  A: {model: m/a}
  B: {model: m/b}
baseline: B
units: {case: case_id, cluster: doc}
attempts: {repeats: ATTEMPTS, rule: mean}
missing: {policy: count_as_fail, max_fraction: 0.05}
analyses:
  - {kind: proportion}
  - {kind: critical_failures}
  - {kind: slices}PAIRED
slices: [{name: language, column: lang}]
decision: {minimum_improvement: 0.01}
"""

CHILD = textwrap.dedent("""
    import json, resource, sys, time
    from pathlib import Path
    mode, plan = sys.argv[1], Path(sys.argv[2])
    if not mode.startswith("bare"):  # the process as the evalspec command sets it up (one BLAS thread, fewer gc)
        try:  # (a tree from before evalspec.cli_runtime, run by --compare, is measured as it was)
            from evalspec import cli_runtime
            cli_runtime.prepare()
        except ImportError:
            pass
    import pyarrow.parquet as pq
    if not mode.startswith("bare"):
        import evalspec.run, evalspec.results.case_table, evalspec.analyses.registry as reg
        import scipy.stats
        reg.kinds()
    t0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
    if mode == "bare":
        n = pq.read_table(plan.parent / "cases.parquet").num_rows
    elif mode == "bare1":
        n = pq.read_table(plan.parent / "cases.parquet", use_threads=False).num_rows
    elif mode in ("read", "whole"):
        from evalspec.results import readers
        readers.STREAM = mode == "read"  # "whole": the whole-file reader instead of record batches
        from evalspec.run import load_plan_for_run
        h = load_plan_for_run(plan)
        n = int(evalspec.results.case_table.load_case_table(h.plan, plan, h.diagnostic).attempts.sum())
    else:
        claim = evalspec.run.run_plan(plan)
        n = sum(c["rows"] for c in claim["coverage"]["candidates"].values())
    work, cpu, main = time.perf_counter() - t0, time.process_time() - c0, time.thread_time() - m0
    print(json.dumps({"n": n, "work": work, "cpu": cpu, "main": main, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
""")


def generate(folder: Path, cases: int, attempts: int, seed: int = 24) -> Path:
    """The case table of ``2 x cases x attempts`` attempt rows (rule mean: counts only), written once."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    plan = folder / "plan.yaml"
    plan.write_text(PLAN.replace("ATTEMPTS", str(attempts)).replace("PAIRED", ""), encoding="utf-8")
    (folder / "plan_paired.yaml").write_text(PLAN.replace("ATTEMPTS", str(attempts)).replace(
        "PAIRED", "\n  - {kind: paired_difference, compare: [A, B], method: cluster_t}"), encoding="utf-8")
    target = folder / "cases.parquet"
    marker = folder / f"made-{cases}x{attempts}"
    if target.exists() and marker.exists():
        return plan
    for old in folder.glob("made-*"):
        old.unlink()
    rng = np.random.default_rng(seed)
    ids = pa.array([f"case-{i:08d}" for i in range(cases)], pa.string())
    doc = pa.array([f"doc-{i // 50:06d}" for i in range(cases)], pa.string())
    lang = pa.array(np.where(np.arange(cases) % 3 == 0, "de", "en"), pa.string())
    crit = pa.array(np.arange(cases) % 97 == 0)
    difficulty = rng.beta(2, 2, cases)
    with pq.ParquetWriter(target, schema=_schema()) as writer:
        for name, shift in (("A", 0.02), ("B", 0.0)):
            p = np.clip(difficulty + shift, 0, 1)
            missing = rng.binomial(attempts, 0.002, cases)
            passes = rng.binomial(attempts - missing, p)
            zeros = np.zeros(cases, dtype=np.int64)
            writer.write_table(pa.table({
                "model": pa.array([name] * cases, pa.string()), "case_id": ids, "doc": doc,
                "attempts": np.full(cases, attempts, dtype=np.int64), "extra_attempts": zeros, "missing": missing,
                "passes": passes, "duplicate_attempts": zeros, "unreadable": zeros, "crit": crit,
                "distinct_crit": np.ones(cases, dtype=np.int64), "lang": lang,
                "distinct_lang": np.ones(cases, dtype=np.int64)}, schema=_schema()))
    marker.write_text("")
    return plan


def _schema() -> object:
    import pyarrow as pa

    i64 = pa.int64()
    return pa.schema([("model", pa.string()), ("case_id", pa.string()), ("doc", pa.string()), ("attempts", i64),
                      ("extra_attempts", i64), ("missing", i64), ("passes", i64), ("duplicate_attempts", i64),
                      ("unreadable", i64), ("crit", pa.bool_()), ("distinct_crit", i64), ("lang", pa.string()),
                      ("distinct_lang", i64)])


def measure(mode: str, plan: Path, tree: Path | None = None) -> dict:
    import os
    import time

    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree if tree is not None else Path(__file__).resolve().parents[1])  # the tree measured
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(plan.resolve())], capture_output=True, text=True,
                         check=False, env=env, cwd=plan.parent)  # (not this folder: `-c` imports from the cwd first)
    wall = time.perf_counter() - t0
    if out.returncode:
        raise SystemExit(f"{mode} failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["process"] = wall
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=5_000_000, help="cases per candidate (default 5,000,000)")
    ap.add_argument("--attempts", type=int, default=100, help="attempts per candidate and case (default 100)")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/casetable-bench"))
    ap.add_argument("--paired", action="store_true", help="add a paired_difference analysis to the plan")
    ap.add_argument("--compare", type=Path, help="another evalspec source tree whose run is measured beside this one")
    ap.add_argument("--repeat", type=int, default=1, help="measure every mode this many times, alternately (best kept)")
    ap.add_argument("--no-whole", action="store_true", help="leave out the whole-file read (slow and big at 10M rows)")
    args = ap.parse_args()
    plan = generate(args.dir, args.cases, args.attempts)
    if args.paired:
        plan = plan.parent / "plan_paired.yaml"
    modes = [("bare", "bare read", None), ("bare1", "  1 thread", None), ("read", "evalspec read", None),
             ("whole", "  whole-file", None), ("run", "evalspec run", None)]
    if args.no_whole:
        modes = [m for m in modes if m[0] != "whole"]
    if args.compare is not None:
        modes.append(("run", f"run ({args.compare.name})", args.compare))
    rows: dict[str, dict] = {}
    for _ in range(args.repeat):  # alternately, so a change of the machine's load touches every mode alike
        for mode, label, tree in modes:
            r = measure(mode, plan, tree)
            if label not in rows or r["work"] < rows[label]["work"]:
                rows[label] = r
    bare = rows["bare read"]
    print(f"case table: {2 * args.cases:,} rows for {2 * args.cases * args.attempts:,} attempt rows "
          f"({(args.dir / 'cases.parquet').stat().st_size / 2**20:,.0f} MiB Parquet)")
    print(f"{'':16}{'work s':>9}{'cpu s':>8}{'main s':>8}{'process s':>11}{'peak MiB':>10}{'work x':>8}{'cpu x':>7}"
          f"{'process x':>11}")
    for label, r in rows.items():
        print(f"{label:16}{r['work']:9.2f}{r['cpu']:8.2f}{r['main']:8.2f}{r['process']:11.2f}{r['peak_mib']:10.0f}"
              f"{r['work'] / bare['work']:8.2f}{r['cpu'] / bare['cpu']:7.2f}{r['process'] / bare['process']:11.2f}")
    fast = min(("bare read", "  1 thread"), key=lambda k: rows[k]["work"])
    print(f"target: evalspec run work <= 2x the faster bare read ({fast.strip()}, {rows[fast]['work']:.2f} s): "
          f"{rows['evalspec run']['work'] / rows[fast]['work']:.2f}x"
          + "".join(f"; {label} {r['work'] / rows[fast]['work']:.2f}x" for label, r in rows.items()
                    if label.startswith("run (")))
    print(f"(load average {' '.join(f'{x:.1f}' for x in __import__('os').getloadavg())} at the end)")


if __name__ == "__main__":
    main()
