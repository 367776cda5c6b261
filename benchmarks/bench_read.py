"""Benchmark reading results, side by side with the bare Arrow read of the same data (issue 24's targets).

Three measurements, each alternative in a fresh process on the same generated data (invented:
2 candidates x cases x 5 repeats, clusters, a topic slice, a critical flag, versions and
timestamps; the generator of ``bench_run.py``); peak memory is each process's own
``ru_maxrss``. "work" is the time after imports; "process" the whole command.

* ``--rows N`` (default 1,000,000 rows of JSONL): ``pyarrow.json.read_json`` (bare read) next to
  evalspec's read in record batches, its whole-file read, and ``evalspec run --no-report``.
  Targets: evalspec read work <= 2x the bare parse; ``evalspec run`` process <= 2.5x the bare
  read's process.
* ``--scale 1000000,2000000,5000000,10000000``: ``evalspec run --no-report`` at several sizes
  of JSONL: seconds and peak memory per row (target: linear in rows, peak <= 1.5 GiB at 10M).
* ``--parquet N``: N rows as a Hive-partitioned Parquet folder (``candidate=A/part-*.parquet``):
  a bare ``pyarrow.dataset`` scan of the columns the plan reads next to ``evalspec run
  --no-report`` (targets at 100M: runs, peak <= 2 GiB, within 3x the scan).

Data is generated under ``--dir`` (default ``/tmp/stream-bench``), outside the repository, and
reused when present. The CPU may be shared: read the ratios, not the seconds. Usage::

    .venv/bin/python benchmarks/bench_read.py                       # 1M rows, the four rows side by side
    .venv/bin/python benchmarks/bench_read.py --scale 1000000,5000000,10000000
    .venv/bin/python benchmarks/bench_read.py --parquet 10000000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[0]
sys.path.insert(0, str(ROOT))

from bench_run import PLAN, generate  # noqa: E402

CHILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    mode, plan = sys.argv[1], Path(sys.argv[2])
    if mode == "bare":
        import pyarrow.json as pj
        t0 = time.perf_counter()
        n = pj.read_json(plan.parent / "results.jsonl").num_rows
    elif mode == "scan":  # a bare pyarrow.dataset scan of the columns the plan reads
        import pyarrow.dataset as ds
        t0 = time.perf_counter()
        cols = ["candidate", "case_id", "doc", "topic", "critical", "model_version", "ts", "repeat", "passed"]
        data = ds.dataset(plan.parent / "lake", format="parquet", partitioning="hive")
        n = sum(b.num_rows for b in data.to_batches(columns=cols))
    else:
        from evalspec.results import readers
        readers.STREAM = mode == "read"
        from evalspec.plan import load_plan
        from evalspec.results import load_results
        loaded = load_plan(plan)
        t0 = time.perf_counter()
        n = load_results(loaded.plan, plan, loaded.diagnostic).tidy.n
    print(json.dumps({"work": time.perf_counter() - t0, "rows": n}))
""")


def measured(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``argv``: its wall time, its own peak resident memory (MiB) and, when it prints one, its work time."""
    wrapper = ("import os, resource, subprocess, sys, time; t0 = time.perf_counter(); "
               "p = subprocess.run(sys.argv[1:], capture_output=True); "
               "sys.stdout.write(p.stdout.decode()); sys.stderr.write(p.stderr.decode()); "
               "print('{\"peak_mib\": %f, \"process\": %f}' % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / "
               "1024, time.perf_counter() - t0)); sys.exit(p.returncode)")
    proc = subprocess.run([sys.executable, "-c", wrapper, *argv], cwd=cwd, capture_output=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed:\n{proc.stderr.decode()[-2000:]}")
    res: dict[str, float] = {}
    for line in proc.stdout.decode().splitlines():
        if line.startswith("{"):
            res.update(json.loads(line))
    return res


def _env() -> dict[str, str]:
    return dict(os.environ, EVALSPEC_NO_REPORT="1", SOURCE_DATE_EPOCH="1796126400",
                PYTHONPATH=str(ROOT.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _jsonl(base: Path, rows: int) -> Path:
    folder = base / f"jsonl-{rows}"
    if not (folder / "plan.yaml").exists():
        folder.mkdir(parents=True, exist_ok=True)
        print(f"generating {rows:,} rows in {folder} ...", file=sys.stderr)
        generate(folder, rows)
    return folder / "plan.yaml"


def _run(plan: Path) -> dict[str, float]:
    return measured([sys.executable, "-m", "evalspec", "run", str(plan), "--no-report", "--out",
                     str(plan.parent / "out")], plan.parent, _env())


def side_by_side(base: Path, rows: int) -> None:
    """The 1M-row targets: four alternatives on one file."""
    plan = _jsonl(base, rows)
    size = (plan.parent / "results.jsonl").stat().st_size
    py = sys.executable
    res = {name: measured([py, "-c", CHILD, mode, str(plan)], plan.parent, _env())
           for name, mode in (("bare read_json", "bare"), ("evalspec read (batches)", "read"),
                              ("evalspec read (whole file)", "whole"))}
    res["evalspec run --no-report"] = _run(plan)
    print(f"{rows:,} rows, {size / 2**20:.0f} MiB of JSONL (seconds; peak memory of each process)")
    print(f"{'':28}{'work':>8}{'process':>9}{'peak MiB':>10}")
    for name, r in res.items():
        print(f"{name:28}{r.get('work', float('nan')):8.2f}{r['process']:9.2f}{r['peak_mib']:10.0f}")
    bare, read, run = res["bare read_json"], res["evalspec read (batches)"], res["evalspec run --no-report"]
    print(f"evalspec read work / bare parse work: {read['work'] / bare['work']:.2f}x (target <= 2x)")
    print(f"evalspec run process / bare read process: {run['process'] / bare['process']:.2f}x (target <= 2.5x)")
    whole = res["evalspec read (whole file)"]
    print(f"batches / whole file: work {read['work'] / whole['work']:.2f}x, peak {read['peak_mib'] / whole['peak_mib']:.2f}x")


def scale(base: Path, sizes: list[int]) -> None:
    """Linear in rows? ``evalspec run --no-report`` at several sizes."""
    print(f"{'rows':>12}{'process s':>11}{'us/row':>8}{'peak MiB':>10}{'bytes/row':>11}")
    for rows in sizes:
        r = _run(_jsonl(base, rows))
        print(f"{rows:12,}{r['process']:11.1f}{r['process'] / rows * 1e6:8.2f}{r['peak_mib']:10.0f}"
              f"{r['peak_mib'] * 2**20 / rows:11.0f}", flush=True)


def _lake(base: Path, rows: int) -> Path:
    """``rows`` invented rows as a Hive-partitioned Parquet folder, written by Arrow in pieces."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    folder = base / f"parquet-{rows}"
    if (folder / "plan.yaml").exists():
        return folder / "plan.yaml"
    print(f"generating {rows:,} rows in {folder} ...", file=sys.stderr)
    rng = np.random.default_rng(1)
    repeats = 5
    cases = max(rows // (2 * repeats), 10)
    clusters = max(cases // 50, 2)
    per_file = 2_000_000 // repeats  # cases per file
    for cand, shift in (("A", 0.1), ("B", 0.0)):
        out = folder / "lake" / f"candidate={cand}"
        out.mkdir(parents=True, exist_ok=True)
        for k, start in enumerate(range(0, cases, per_file)):
            i = np.arange(start, min(cases, start + per_file))
            difficulty = np.sin(i * 0.7) + 1.0
            p = 1 / (1 + np.exp(-(difficulty + shift)))
            passed = rng.random((i.size, repeats)) < p[:, None]
            ii = np.repeat(i, repeats)
            doc = ii % clusters
            ts = pc.strftime(pa.array(1790812800 + ii % 86400).cast(pa.timestamp("s")),  # 2026-10-01T..Z
                             format="%Y-%m-%dT%H:%M:%SZ")

            def label(prefix: str, values: np.ndarray, width: int) -> pa.Array:
                return pc.binary_join_element_wise(prefix, pc.utf8_lpad(pa.array(values).cast(pa.string()), width,
                                                                        "0"), "")

            table = pa.table({
                "case_id": label("case-", ii, 8),
                "doc": label("doc-", doc, 6),
                "topic": pa.array(np.array(["a", "b", "c", "d"])[doc % 4].tolist()),
                "critical": pa.array(ii % 97 == 0),
                "model_version": pa.array(["v1"] * ii.size),
                "ts": ts,
                "repeat": pa.array(np.tile(np.arange(1, repeats + 1), i.size)),
                "passed": pa.array(passed.reshape(-1)),
            })
            pq.write_table(table, out / f"part-{k:04d}.parquet", row_group_size=200_000)
    (folder / "plan.yaml").write_text(PLAN.replace("results: results.jsonl", "results: lake/"), encoding="utf-8")
    return folder / "plan.yaml"


def parquet(base: Path, rows: int) -> None:
    """A partitioned Parquet folder: a bare dataset scan next to ``evalspec run``."""
    plan = _lake(base, rows)
    scan = measured([sys.executable, "-c", CHILD, "scan", str(plan)], plan.parent, _env())
    run = _run(plan)
    print(f"{rows:,} rows of partitioned Parquet (seconds; peak memory of each process)")
    print(f"{'':28}{'process':>9}{'peak MiB':>10}")
    print(f"{'bare pyarrow.dataset scan':28}{scan['process']:9.1f}{scan['peak_mib']:10.0f}")
    print(f"{'evalspec run --no-report':28}{run['process']:9.1f}{run['peak_mib']:10.0f}")
    print(f"evalspec run / scan: {run['process'] / scan['process']:.2f}x (target <= 3x), peak "
          f"{run['peak_mib'] / 1024:.2f} GiB (target <= 2 GiB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--scale", type=str, default=None, help="comma-separated row counts (JSONL)")
    ap.add_argument("--parquet", type=int, default=None, help="rows of partitioned Parquet")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/stream-bench"))
    args = ap.parse_args()
    if args.scale:
        scale(args.dir, [int(x) for x in args.scale.split(",")])
    elif args.parquet:
        parquet(args.dir, args.parquet)
    else:
        side_by_side(args.dir, args.rows)


if __name__ == "__main__":
    main()
