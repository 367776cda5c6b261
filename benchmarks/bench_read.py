"""Benchmark reading results, side by side with the bare Arrow read of the same data (issue 24's targets).

Three measurements, each alternative in a fresh process on the same generated data (invented:
2 candidates x cases x 5 repeats, clusters, a topic slice, a critical flag, versions and
timestamps; the generator of ``bench_run.py``); peak memory is each process's own
``ru_maxrss``. "work" is the time after imports; "process" the whole command.

* ``--rows N`` (default 1,000,000 rows of JSONL): ``pyarrow.json.read_json`` (bare read) next to
  evalspec's read as a run reads it (a file of at most ``batches.WHOLE_FILE_BYTES``, 256 MiB, parsed
  whole by Arrow and typed a column at a time), the same read forced into record batches (as a larger
  file is read), the whole-file reader (``readers.STREAM`` off), and ``evalspec run --no-report``, in
  ``--repeat`` rounds (default 3), each round the five one after the other; every round is
  printed. Targets: evalspec read work <= 2x the bare parse; ``evalspec run`` process <= 2.5x
  the bare read's process. "work" starts once the modules the read uses are imported (for the
  bare read ``pyarrow.json``; for evalspec ``pyarrow.json`` and ``pyarrow.compute`` too, which
  its read imports when it first needs them). The read modes begin once the plan is loaded; ``evalspec run``
  begins the file's scan and parse in threads as the command starts (:mod:`evalspec.results.ahead`), while
  the plan is validated. ``--phases`` adds one ``evalspec run`` timed step
  by step (imports, plan, read, table and checks, attempts, analyses, claim, ledger, writing).
* ``--scale 1000000,2000000,5000000,10000000``: ``evalspec run --no-report`` at several sizes
  of JSONL: seconds and peak memory per row (target: linear in rows, peak <= 1.5 GiB at 10M).
* ``--parquet N``: N rows as a Hive-partitioned Parquet folder (``candidate=A/part-*.parquet``):
  a bare ``pyarrow.dataset`` scan of the columns the plan reads next to ``evalspec run
  --no-report`` reducing the rows while it reads them (targets at 100M: runs, peak <= 2 GiB,
  within 3x the scan), and with ``--in-memory`` the in-memory path on the same data. The plan is
  the bench plan without ``run_variation`` (kept so from when it read each attempt's row and kept the
  rows in memory; it is served by counts now), ``--repeats`` attempts per candidate and case (100M rows at 5 repeats would be 20M
  cells, over the case-table limit: use ``--repeats 20``). ``--compare TREE`` runs another evalspec tree
  (a ``git archive`` of an earlier commit) after this one in each of ``--rounds`` rounds and compares
  its ``claim.json`` byte for byte; each round prints the load average.

evalspec's children set their process up as the ``evalspec`` command does (its run *is* the command:
:mod:`evalspec.cli_runtime`, one OpenBLAS thread unless a thread count is set, fewer garbage
collections, and for the run a fast exit once its outputs are written); the bare reads run with
Arrow's and numpy's defaults.

Data is generated under ``--dir`` (default ``/tmp/stream-bench``), outside the repository, and
reused when present. Every child runs with bytecode cached under ``--dir`` (``PYTHONPYCACHEPREFIX``,
warmed on a small file first), as an installed package runs; without it (``PYTHONDONTWRITEBYTECODE``)
each ``evalspec run`` would compile its own modules again, about 0.2 s. The CPU may be shared: read
the ratios, not the seconds. Usage::

    .venv/bin/python benchmarks/bench_read.py                       # 1M rows, the four rows side by side, 3 rounds
    .venv/bin/python benchmarks/bench_read.py --repeat 5 --phases    # 5 rounds, then one run step by step
    .venv/bin/python benchmarks/bench_read.py --scale 1000000,5000000,10000000
    .venv/bin/python benchmarks/bench_read.py --parquet 10000000 --in-memory
    .venv/bin/python benchmarks/bench_read.py --parquet 100000000 --repeats 20 --dir /tmp/reducer-bench
    .venv/bin/python benchmarks/bench_read.py --parquet 100000000 --repeats 20 --dir /tmp/reducer-bench \
        --compare /tmp/before-tree --rounds 2   # and a `git archive` of an earlier commit, claims compared
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
        try:  # the process as the evalspec command sets it up (one BLAS thread, fewer gc)
            from evalspec import cli_runtime
            cli_runtime.prepare()
        except ImportError:  # (a tree from before evalspec.cli_runtime is measured as it was)
            pass
        from evalspec.results import batches, readers
        readers.STREAM = mode in ("read", "batches")
        if mode == "batches":
            batches.WHOLE_FILE_BYTES = -1  # in record batches, as a file larger than 256 MiB is read
        from evalspec.plan import load_plan
        from evalspec.results import load_results
        import pyarrow.compute, pyarrow.json  # imported by the read when it first needs them: not work
        loaded = load_plan(plan)
        t0 = time.perf_counter()
        n = load_results(loaded.plan, plan, loaded.diagnostic).tidy.n
    print(json.dumps({"work": time.perf_counter() - t0, "rows": n}))
""")


def measured(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``argv``: its wall time, CPU time (user + system, all threads), peak resident memory (MiB) and, when it
    prints one, its work time."""
    wrapper = ("import os, resource, subprocess, sys, time; t0 = time.perf_counter(); "
               "p = subprocess.run(sys.argv[1:], capture_output=True); "
               "sys.stdout.write(p.stdout.decode()); sys.stderr.write(p.stderr.decode()); "
               "ru = resource.getrusage(resource.RUSAGE_CHILDREN); "
               "print('{\"peak_mib\": %f, \"process\": %f, \"cpu\": %f}' % (ru.ru_maxrss / 1024, "
               "time.perf_counter() - t0, ru.ru_utime + ru.ru_stime)); sys.exit(p.returncode)")
    proc = subprocess.run([sys.executable, "-c", wrapper, *argv], cwd=cwd, capture_output=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed:\n{proc.stderr.decode()[-2000:]}")
    res: dict[str, float] = {}
    for line in proc.stdout.decode().splitlines():
        if line.startswith("{"):
            res.update(json.loads(line))
    return res


def _env(base: Path | None = None) -> dict[str, str]:
    """The children's environment: no report, a fixed creation time, this tree first, bytecode cached under ``base``."""
    env = dict(os.environ, EVALSPEC_NO_REPORT="1", SOURCE_DATE_EPOCH="1796126400",
               PYTHONPATH=str(ROOT.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if base is not None:  # as an installed package runs: compiled once, not on every start
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(base / "pycache")
    return env


def _jsonl(base: Path, rows: int) -> Path:
    folder = base / f"jsonl-{rows}"
    if not (folder / "plan.yaml").exists():
        folder.mkdir(parents=True, exist_ok=True)
        print(f"generating {rows:,} rows in {folder} ...", file=sys.stderr)
        generate(folder, rows)
    return folder / "plan.yaml"


def _run(plan: Path, env: dict[str, str] | None = None) -> dict[str, float]:
    return measured([sys.executable, "-m", "evalspec", "run", str(plan), "--no-report", "--out",
                     str(plan.parent / "out")], plan.parent, env or _env())


MODES = (("bare read_json", "bare"), ("evalspec read", "read"), ("evalspec read (batches)", "batches"),
         ("evalspec read (whole-file reader)", "whole"))


def _warm(base: Path) -> None:
    """Each child once on a small file (20,000 rows, 3.5 MiB: the batch path), so its bytecode is cached."""
    small, env = _jsonl(base, 20_000), _env(base)
    for _, mode in MODES:
        measured([sys.executable, "-c", CHILD, mode, str(small)], small.parent, env)
    _run(small, env)


def side_by_side(base: Path, rows: int, repeat: int) -> None:
    """The 1M-row targets: five alternatives on one file, ``repeat`` rounds (every round printed)."""
    plan = _jsonl(base, rows)
    size = (plan.parent / "results.jsonl").stat().st_size
    _warm(base)
    env, py = _env(base), sys.executable
    print(f"{rows:,} rows, {size / 2**20:.0f} MiB of JSONL (seconds; peak memory of each process; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})")
    print(f"{'round':>5} {'':34}{'work':>8}{'process':>9}{'cpu':>7}{'peak MiB':>10}")
    ratios = []
    for k in range(1, repeat + 1):
        res = {name: measured([py, "-c", CHILD, mode, str(plan)], plan.parent, env) for name, mode in MODES}
        res["evalspec run --no-report"] = _run(plan, env)
        for name, r in res.items():
            print(f"{k:5} {name:34}{r.get('work', float('nan')):8.2f}{r['process']:9.2f}{r['cpu']:7.2f}"
                  f"{r['peak_mib']:10.0f}")
        bare, read, run = res["bare read_json"], res["evalspec read"], res["evalspec run --no-report"]
        ratios.append((read["work"] / bare["work"], run["process"] / bare["process"]))
        print(f"{k:5} read work / bare parse work {ratios[-1][0]:.2f}x (CPU {read['cpu'] / bare['cpu']:.2f}x), run "
              f"process / bare read process {ratios[-1][1]:.2f}x (CPU {run['cpu'] / bare['cpu']:.2f}x); batches "
              f"{res['evalspec read (batches)']['work'] / bare['work']:.2f}x the bare parse; load "
              f"{os.getloadavg()[0]:.1f}", flush=True)
    for i, (what, target) in enumerate((("evalspec read work / bare parse work", 2.0),
                                        ("evalspec run process / bare read process", 2.5))):
        got = [r[i] for r in ratios]
        print(f"{what}: {', '.join(f'{x:.2f}' for x in got)}x (target <= {target}x: met in "
              f"{sum(x <= target for x in got)} of {len(got)})")


PHASES = textwrap.dedent("""
    import atexit, json, sys, time
    T, C = time.perf_counter, time.process_time
    start, cpu0, steps, cpu = T(), C(), {}, {}
    def timed(mod, name, label):
        f = getattr(mod, name)
        def g(*a, **k):
            t, c = T(), C()
            try:
                return f(*a, **k)
            finally:
                steps[label] = steps.get(label, 0.0) + T() - t
                cpu[label] = cpu.get(label, 0.0) + C() - c
        setattr(mod, name, g)
    import evalspec.cli, evalspec.commands.run, evalspec.looks, evalspec.results, evalspec.run as r
    import evalspec.results.ahead as ahead
    imported, imported_cpu = T() - start, C() - cpu0
    timed(r, "load_plan_for_run", "plan: load and validate")
    timed(evalspec.results, "read_all", "read the results")
    timed(ahead.ReadAhead, "take", "read: waiting for the parse begun ahead")
    timed(r, "check_data", "read + table + checks")
    timed(r, "_attempts_context", "attempt rule, case columns")
    timed(r, "_analyse", "analyses")
    timed(r, "run_plan", "run_plan (all of the above, decision, claim model)")
    timed(evalspec.looks, "record_look", "ledger: process checks, seal, append")
    timed(r, "write_claim", "write claim.json")
    @atexit.register
    def _out():
        label = "imports before the command starts"
        print(json.dumps({"steps": dict(steps, **{label: imported}), "step_cpu": dict(cpu, **{label: imported_cpu}),
                          "modules": [m for m in sys.modules if m != "__main__"]}))
    sys.argv = ["evalspec"] + sys.argv[1:]
    evalspec.cli.entry()  # (the process set up and ended as the evalspec command's is)
""")


IMPORTS = textwrap.dedent("""
    import importlib, json, sys, time
    t0 = time.perf_counter()
    for name in json.loads(sys.argv[1]):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module that only loads inside its package's import
            pass
    print(json.dumps({"work": time.perf_counter() - t0}))
""")


def phases(plan: Path, base: Path) -> None:
    """One ``evalspec run --no-report``, timed step by step (each step's time includes the imports it makes)."""
    script = base / "phases.py"
    script.write_text(PHASES, encoding="utf-8")
    res = measured([sys.executable, str(script), "run", str(plan), "--no-report", "--out", str(plan.parent / "out")],
                   plan.parent, _env(base))
    steps: dict[str, float] = res["steps"]  # type: ignore[assignment]
    cpu: dict[str, float] = res["step_cpu"]  # type: ignore[assignment]
    imports = measured([sys.executable, "-c", IMPORTS, json.dumps(res["modules"])], plan.parent, _env(base))
    for d in (steps, cpu):
        d["table + checks"] = d.pop("read + table + checks", 0.0) - d.get("read the results", 0.0)
    print(f"evalspec run --no-report, step by step ({res['process']:.2f} s for the whole process, {res['cpu']:.2f} s "
          "of CPU; a step's time includes the imports it makes; the results file is scanned and parsed in threads "
          "from the command's start, so a step's CPU, the process's, includes the part of that read it overlaps):")
    print(f"  {'':52}{'wall':>7}{'cpu':>7}")
    for name, t in steps.items():
        print(f"  {name:52}{t:7.2f}{cpu.get(name, float('nan')):7.2f}")
    print(f"  (importing the {len(res['modules'])} modules the run imported, in its order, in a fresh process: "
          f"{imports['work']:.2f} s; the process {imports['process']:.2f} s, {imports['cpu']:.2f} s of CPU)")


def scale(base: Path, sizes: list[int], in_memory: bool = False) -> None:
    """Linear in rows? ``evalspec run --no-report`` at several sizes (the bench plan).

    Every analysis of the bench plan is served by counts, so from ``STREAM_ROWS`` rows on the rows
    are reduced while read; ``in_memory`` holds every attempt row in memory instead (the path of a
    plan with an analysis that reads attempt rows, such as ``clustered_mean``). Each size runs in a
    fresh process; the load average before each run says how shared the machine was.
    """
    print(f"{'rows':>12}{'process s':>11}{'us/row':>8}{'peak MiB':>10}{'bytes/row':>11}{'load 1 min':>12}"
          f"   ({'in memory' if in_memory else 'streamed from STREAM_ROWS rows on'})")
    per_row = []
    for rows in sizes:
        plan = _jsonl(base, rows)
        load = os.getloadavg()[0]
        r = _run(plan, dict(_env(), EVALSPEC_STREAM_ROWS=str(10**15)) if in_memory else None)
        per_row.append(r["process"] / rows)
        print(f"{rows:12,}{r['process']:11.1f}{r['process'] / rows * 1e6:8.2f}{r['peak_mib']:10.0f}"
              f"{r['peak_mib'] * 2**20 / rows:11.0f}{load:12.2f}", flush=True)
    if len(per_row) > 1:
        print(f"time a row, largest / smallest size: {per_row[-1] / per_row[0]:.2f}x (1.00x: linear)")
    print("target: peak <= 1,536 MiB (1.5 GiB) at 10,000,000 rows")


def _lake(base: Path, rows: int, repeats: int = 5) -> Path:
    """``rows`` invented rows as a Hive-partitioned Parquet folder, written by Arrow in pieces.

    Beside the bench plan (``plan.yaml``) a variant every analysis of which counts serve
    (``plan_counts.yaml``: no ``run_variation``, as when it read each attempt's row), with
    ``attempts.repeats`` set to ``repeats``.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    folder = base / (f"parquet-{rows}" if repeats == 5 else f"parquet-{rows}-r{repeats}")
    if (folder / "plan_counts.yaml").exists():
        return folder / "plan.yaml"
    print(f"generating {rows:,} rows in {folder} ...", file=sys.stderr)
    rng = np.random.default_rng(1)
    cases = max(rows // (2 * repeats), 10)
    clusters = max(cases // 50, 2)
    per_file = 2_000_000 // repeats  # cases per file
    for cand, shift in (("A", 0.1), ("B", 0.0)):
        out = folder / "lake" / f"candidate={cand}"
        out.mkdir(parents=True, exist_ok=True)
        for k, start in enumerate(range(0, cases, per_file)):
            if (out / f"part-{k:04d}.parquet").exists():
                continue  # (an earlier generation stopped part-way)
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
    text = PLAN.replace("results: results.jsonl", "results: lake/")
    (folder / "plan.yaml").write_text(text, encoding="utf-8")
    counts = text.replace("  - {kind: run_variation}\n", "").replace("repeats: 5,", f"repeats: {repeats},")
    assert "run_variation" not in counts and f"repeats: {repeats}," in counts
    (folder / "plan_counts.yaml").write_text(counts, encoding="utf-8")
    return folder / "plan.yaml"


def parquet(base: Path, rows: int, repeats: int, in_memory: bool, compare: Path | None = None,
            rounds: int = 1) -> None:
    """A partitioned Parquet folder: a bare dataset scan next to ``evalspec run`` (reduced while read; in memory).

    ``compare``: another evalspec tree (a ``git archive`` of an earlier commit), whose ``evalspec run``
    follows this tree's in each round, into the same folder, its ``claim.json`` compared byte for byte.
    ``rounds``: the scan and the runs one after the other, that many times (each round printed).
    """
    plan = _lake(base, rows, repeats)
    counts = plan.parent / "plan_counts.yaml"
    env = _env(base)
    _warm(base)
    streamed = dict(env, EVALSPEC_STREAM_ROWS="0")
    other = dict(streamed, PYTHONPATH=str(compare)) if compare is not None else None
    if other is not None:  # (its bytecode cached too)
        _run(_jsonl(base, 20_000), dict(env, PYTHONPATH=str(compare)))
    for r in range(rounds):
        res = {"bare pyarrow.dataset scan": measured([sys.executable, "-c", CHILD, "scan", str(plan)], plan.parent,
                                                     env),
               "evalspec run (streamed)": _run(counts, streamed)}
        same = None
        if other is not None:
            claim = (plan.parent / "out" / "claim.json").read_bytes()
            res[f"compare: {compare.name} (streamed)"] = _run(counts, other)  # type: ignore[union-attr]
            same = claim == (plan.parent / "out" / "claim.json").read_bytes()
        if in_memory:
            res["evalspec run (in memory)"] = _run(counts, dict(env, EVALSPEC_STREAM_ROWS=str(10**15)))
        _parquet_round(rows, repeats, r, rounds, res, same)


def _parquet_round(rows: int, repeats: int, r: int, rounds: int, res: dict[str, dict[str, float]],
                   same: bool | None) -> None:
    print(f"{rows:,} rows of partitioned Parquet, {repeats} repeats, plan without run_variation "
          f"(seconds; peak memory of each process){f', round {r + 1} of {rounds}' if rounds > 1 else ''}; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'':36}{'process':>9}{'CPU s':>8}{'peak MiB':>10}")
    for name, res_r in res.items():
        print(f"{name:36}{res_r['process']:9.1f}{res_r['cpu']:8.1f}{res_r['peak_mib']:10.0f}")
    scan, run = res["bare pyarrow.dataset scan"], res["evalspec run (streamed)"]
    print(f"evalspec run (streamed) / scan: {run['process'] / scan['process']:.2f}x wall (target <= 3x), "
          f"{run['cpu'] / scan['cpu']:.2f}x CPU; peak {run['peak_mib'] / 1024:.2f} GiB (target <= 2 GiB)")
    for name, res_r in res.items():
        if name.startswith("compare: "):
            print(f"{name} / scan: {res_r['process'] / scan['process']:.2f}x wall, {res_r['cpu'] / scan['cpu']:.2f}x "
                  f"CPU; its claim.json {'the same bytes' if same else 'DIFFERS'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--scale", type=str, default=None, help="comma-separated row counts (JSONL)")
    ap.add_argument("--parquet", type=int, default=None, help="rows of partitioned Parquet")
    ap.add_argument("--repeats", type=int, default=5, help="--parquet: attempts per candidate and case (the "
                    "case table is limited to 10M cells: 100M rows need 20)")
    ap.add_argument("--in-memory", action="store_true", help="--parquet: the in-memory path too (<= 10M rows); "
                    "--scale: the in-memory path only")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/stream-bench"))
    ap.add_argument("--repeat", type=int, default=3, help="rounds of the side-by-side default mode")
    ap.add_argument("--phases", action="store_true", help="then one evalspec run timed step by step")
    ap.add_argument("--compare", type=Path, default=None, help="--parquet: another evalspec tree (a git archive of "
                    "an earlier commit) run after this one in each round, its claim compared byte for byte")
    ap.add_argument("--rounds", type=int, default=1, help="--parquet: rounds of the scan and the runs")
    args = ap.parse_args()
    if args.scale:
        scale(args.dir, [int(x) for x in args.scale.split(",")], args.in_memory)
    elif args.parquet:
        parquet(args.dir, args.parquet, args.repeats, args.in_memory, args.compare, args.rounds)
    else:
        side_by_side(args.dir, args.rows, args.repeat)
        if args.phases:
            phases(_jsonl(args.dir, args.rows), args.dir)


if __name__ == "__main__":
    main()
