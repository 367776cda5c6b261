"""Benchmark reading tool logs: the inspect_ai adapter next to reading the same rows as JSONL.

A generated inspect_ai ``.eval`` log (invented data: N sample-epochs, each member padded
with an events list like real logs, DEFLATE members as older inspect versions write) is
read three ways, side by side, in one process:

* ``by hand``  — ``zipfile`` + ``json.loads`` of every sample member, nothing else;
* ``adapter``  — evalspec's inspect_ai adapter (rows, provenance, checks of the shape);
* ``jsonl``    — evalspec's JSONL reader on the tidy table ``evalspec convert`` writes.

The ratios say what the adapter costs above decompressing and parsing the log, and how
much slower a log is than its converted table. Usage::

    .venv/bin/python benchmarks/bench_logs.py --samples 20000
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def make_log(path: Path, n: int, events: int) -> None:
    header = {"version": 2, "status": "success",
              "eval": {"task": "bench", "model": "vendor/model", "created": "2026-11-29T10:00:00+00:00",
                       "packages": {"inspect_ai": "0.3.285"}}}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("_journal/start.json", json.dumps(header))
        for i in range(n):
            case, epoch = i // 3, i % 3 + 1
            sample = {"id": f"c{case:06d}", "epoch": epoch, "input": "What is 1 + 1?", "target": "2",
                      "output": {"model": "model-2026-10-01", "choices": [{"message": {"content": "2"}}]},
                      "scores": {"match": {"value": "C" if (i * 7919) % 10 < 7 else "I", "answer": "2"}},
                      "metadata": {"doc": f"d{case // 4}"}, "started_at": "2026-11-29T10:00:01+00:00",
                      "total_time": 0.5, "events": [{"event": "model", "n": k, "text": "x" * 80}
                                                    for k in range(events)]}
            zf.writestr(f"samples/c{case:06d}_epoch_{epoch}.json", json.dumps(sample))
        zf.writestr("header.json", json.dumps(header))
    path.write_bytes(buf.getvalue())


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--events", type=int, default=20, help="events per sample (real logs hold many)")
    args = ap.parse_args()
    from evalspec.commands.convert import tidy_text
    from evalspec.results.adapters import Options, read_logs
    from evalspec.results.readers import read_file

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "bench.eval"
        make_log(log, args.samples, args.events)

        def by_hand() -> None:
            with zipfile.ZipFile(log) as zf:
                for name in zf.namelist():
                    if name.startswith("samples/"):
                        json.loads(zf.read(name))

        def adapter() -> None:
            read_logs([log], "inspect", Options())

        table = Path(tmp) / "bench.jsonl"
        table.write_text(tidy_text(read_logs([log], "inspect", Options()), "jsonl"), encoding="utf-8")

        def jsonl() -> None:
            read_file(table, "jsonl")

        t_hand, t_adapter, t_jsonl = best_of(by_hand), best_of(adapter), best_of(jsonl)
    print(f"{args.samples} sample-epochs, {args.events} events each, log {log.name}")
    print(f"  by hand (zipfile + json.loads): {t_hand:8.3f} s")
    print(f"  evalspec inspect adapter:       {t_adapter:8.3f} s   adapter / by hand = {t_adapter / t_hand:.2f}")
    print(f"  evalspec JSONL reader (table):  {t_jsonl:8.3f} s   adapter / jsonl   = {t_adapter / t_jsonl:.1f}")


if __name__ == "__main__":
    main()
