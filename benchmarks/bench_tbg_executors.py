"""Benchmark ``evalspec tbg sample``: shards run in-process (``--executor local``) vs as Ray tasks.

Issue 24 asks how the Ray executor compares with the local one on this machine. Side by side,
in one run, the same reference run (model, prompts, grid, K, seed, shard layout) is made twice
into fresh folders, each in its own process:

* ``local`` - ``evalspec tbg sample --executor local``: the shards one after another, the model
  loaded once;
* ``ray``   - ``evalspec tbg sample --executor ray``: each shard a Ray task. With no cluster
  running (``RAY_ADDRESS`` unset and no ``ray start`` on this machine) Ray starts a local
  instance with one worker per core, and every task loads the model itself.

Prints shards per second of each (wall time of the whole command, Ray's start included), the
ratio, and whether the two runs wrote the same answers (they must: the draws depend only on the
seed, the prompt, the temperature, the sample and the step, never on where a shard ran).
On a 2-core machine Ray can at best use both cores, against one thread of torch per shard
locally; on a cluster, the shards spread over its nodes. Usage::

    python benchmarks/bench_tbg_executors.py                       # tiny random-weight model
    python benchmarks/bench_tbg_executors.py --model smollm2 --prompts 4
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _answers(folder: Path) -> list[str]:
    """Every answer line the run wrote, in a fixed order (the shard files hold only the draws)."""
    return sorted(line for path in sorted((folder / "shards").glob("*.jsonl"))
                  for line in path.read_text(encoding="utf-8").splitlines()
                  if not line.startswith('{"shard"'))  # a shard's closing line holds its timing


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="tiny:1")
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--temperatures", default="paper")
    ap.add_argument("--max-new-tokens", type=int, default=32)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        prompts = Path(tmp) / "prompts.jsonl"
        prompts.write_text("".join(json.dumps({"id": f"p{i}", "text": f"Count to {i + 3}:"}) + "\n"
                                   for i in range(args.prompts)), encoding="utf-8")
        times, folders = {}, {}
        for executor in ("local", "ray"):
            out = Path(tmp) / executor
            argv = [sys.executable, "-m", "evalspec", "tbg", "sample", "--model", args.model, "--prompts", str(prompts),
                    "--temperatures", args.temperatures, "-k", str(args.samples), "--max-new-tokens",
                    str(args.max_new_tokens), "--temperature-block", "2", "--prompt-chunk", "2", "--threads", "1",
                    "--out", str(out), "--executor", executor, "-q"]
            t0 = time.perf_counter()
            proc = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, RAY_DISABLE_USAGE_STATS="1"))
            times[executor] = time.perf_counter() - t0
            if proc.returncode != 0:
                raise SystemExit(f"{executor} failed:\n{proc.stderr[-2000:]}")
            folders[executor] = out
        shards = len(list((folders["local"] / "shards").glob("*.jsonl")))
        same = _answers(folders["local"]) == _answers(folders["ray"])
    print(f"model {args.model}, {args.prompts} prompts x K={args.samples}, grid {args.temperatures}, "
          f"{args.max_new_tokens} new tokens, {shards} shards")
    for executor in ("local", "ray"):
        rate = shards / times[executor] if shards else float("nan")
        print(f"{executor:6} {times[executor]:7.1f} s   {rate:6.2f} shards/s")
    print(f"ray / local wall time: {times['ray'] / times['local']:.2f}x; same answers: {same}")


if __name__ == "__main__":
    main()
