"""Benchmark ``evalspec run`` (claim only): wall time and peak memory, next to just reading.

For each example and for a generated 1,000,000-row results file (invented data: 2
candidates x 100,000 cases x 5 repeats in 2,000 clusters; as JSONL and as CSV), three
things run side by side,
each in a fresh Python process so that peak memory (ru_maxrss) belongs to it alone:

* ``by hand`` — what a hand-written reader costs (``json.loads`` per line, ``csv.DictReader``);
* ``read``  — evalspec's readers only (:func:`evalspec.results.read_all`);
* ``run``   — the whole run without writing: read, type, check, attempts, every analysis,
  decision, claim (:func:`evalspec.run.run_plan`).

The ratio run/read says how far the cost is dominated by reading the file. Usage::

    .venv/bin/python benchmarks/bench_run.py            # examples + 1M rows
    .venv/bin/python benchmarks/bench_run.py --rows 200000 --skip-examples
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent("""
    import json, resource, sys, time
    from pathlib import Path
    mode, plan_path = sys.argv[1], Path(sys.argv[2])
    import yaml
    if mode != "json":  # imports are not the work being measured
        import evalspec.run, evalspec.results, evalspec.plan, evalspec.analyses.registry as reg
        import pyarrow.json, scipy.stats
        reg.kinds()
    t0 = time.perf_counter()
    if mode == "json":  # the hand-written reader: json.loads per line, or csv.DictReader
        import csv
        data = yaml.safe_load(plan_path.read_text())
        path = plan_path.parent / data["data"]["results"]
        with path.open(newline="") as fh:
            if path.suffix == ".csv":
                rows = list(csv.DictReader(fh))
            else:
                rows = [json.loads(line) for line in fh]
        n = len(rows)
    elif mode == "read":
        from evalspec.plan import load_plan
        from evalspec.results import read_all
        loaded = load_plan(plan_path)
        n = sum(r.rows for r in read_all(loaded.plan, plan_path))
    else:
        from evalspec.run import run_plan
        claim = run_plan(plan_path)
        n = sum(f["rows"] for f in claim["data"]["files"])
    dt = time.perf_counter() - t0
    print(json.dumps({"seconds": dt, "rows": n,
                      "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
""")

PLAN = """\
evalspec: 1
id: bench-1m
title: Benchmark, 1M invented rows
question: How fast is evalspec run on a million rows?
decision_owner: nobody (benchmark)
population: invented
data:
  results: results.jsonl
  columns: {candidate: candidate, repeat: repeat, outcome: passed, model_version: model_version,
            timestamp: ts, critical: critical}
candidates:
  A: {model: bench/a, version: v1}
  B: {model: bench/b, version: v1}
baseline: B
units: {case: case_id, cluster: doc}
attempts: {repeats: 5, rule: majority}
missing: {policy: count_as_fail, max_fraction: 0.05}
analyses:
  - {kind: proportion}
  - {kind: paired_difference, compare: [A, B], resamples: 1000, seed: 1}
  - {kind: critical_failures}
  - {kind: run_variation}
  - {kind: slices, names: [topic]}
decision:
  minimum_improvement: 0.01
  critical_failures: {max_rate: 0.05}
slices: [{name: topic, column: topic}]
record: [model_version, timestamp]
"""


def generate(folder: Path, rows: int) -> Path:
    """Write an invented results file of about ``rows`` rows and its plan; return the plan path."""
    import numpy as np

    rng = np.random.default_rng(1)
    repeats = 5
    cases = max(rows // (2 * repeats), 10)
    clusters = max(cases // 50, 2)
    difficulty = rng.normal(1.0, 1.0, cases)
    topics = np.array(["a", "b", "c", "d"])
    with (folder / "results.jsonl").open("w") as fh:
        for cand, shift in (("A", 0.1), ("B", 0.0)):
            p = 1 / (1 + np.exp(-(difficulty + shift)))
            draws = rng.random((cases, repeats)) < p[:, None]
            lines = []
            for i in range(cases):
                doc = i % clusters
                head = (f'{{"candidate": "{cand}", "case_id": "case-{i:07d}", "doc": "doc-{doc:05d}", '
                        f'"topic": "{topics[doc % 4]}", "critical": {"true" if i % 97 == 0 else "false"}, '
                        f'"model_version": "v1", "ts": "2026-10-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:'
                        f'{i % 60:02d}Z"')
                for r in range(repeats):
                    lines.append(f'{head}, "repeat": {r + 1}, "passed": {"true" if draws[i, r] else "false"}}}\n')
            fh.write("".join(lines))
    (folder / "plan.yaml").write_text(PLAN, encoding="utf-8")
    return folder / "plan.yaml"


def as_csv(plan: Path) -> Path:
    """The same invented rows as CSV, with a plan reading them (another folder)."""
    import csv

    folder = plan.parent / "csv"
    folder.mkdir(exist_ok=True)
    with (plan.parent / "results.jsonl").open() as src, (folder / "results.csv").open("w", newline="") as dst:
        first = json.loads(src.readline())
        writer = csv.DictWriter(dst, fieldnames=list(first), lineterminator="\n")
        writer.writeheader()
        writer.writerow(first)
        writer.writerows(json.loads(line) for line in src)
    (folder / "plan.yaml").write_text(PLAN.replace("results.jsonl", "results.csv"), encoding="utf-8")
    return folder / "plan.yaml"


def measure(mode: str, plan: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(plan)], capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise SystemExit(f"{mode} failed on {plan}:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(name: str, plan: Path) -> None:
    res = {mode: measure(mode, plan) for mode in ("json", "read", "run")}
    rows = res["run"]["rows"]
    print(f"{name:<22} {rows:>9} rows | by hand {res['json']['seconds']:7.2f} s | read "
          f"{res['read']['seconds']:7.2f} s {res['read']['peak_mib']:7.0f} MiB | run {res['run']['seconds']:7.2f} s "
          f"{res['run']['peak_mib']:7.0f} MiB | run/read {res['run']['seconds'] / res['read']['seconds']:5.2f}x "
          f"| read/by hand {res['read']['seconds'] / res['json']['seconds']:5.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of the generated file (default 1,000,000)")
    ap.add_argument("--skip-examples", action="store_true")
    args = ap.parse_args()
    print("(seconds of work after imports, each in a fresh process; peak memory is that process's ru_maxrss)")
    if not args.skip_examples:
        for plan in sorted((ROOT / "examples").glob("*/plan.yaml")):
            report(plan.parent.name, plan)
    with tempfile.TemporaryDirectory() as tmp:
        plan = generate(Path(tmp), args.rows)
        report(f"generated {args.rows:,}", plan)
        report("same as CSV", as_csv(plan))


if __name__ == "__main__":
    main()
