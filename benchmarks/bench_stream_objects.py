"""Benchmark object-store results reduced while read against read into memory (issue 24).

The same 1M-row results (``bench_read.py``'s generated data: ``--parquet`` a Hive-partitioned
Parquet folder, ``--jsonl`` one JSONL file) are put in a bucket of an S3 protocol server on
127.0.0.1 (moto in server mode, started here) and run by ``evalspec run --no-report`` with
the plan's count-served analyses, once streamed (``EVALSPEC_STREAM_ROWS=0``) and once in
memory, each in a fresh process; beside them the SHA-256 pass over the objects alone (what
streamed Parquet reads a second time, sequentially). The loopback server is not a network and
shares the CPU: read the ratios. Usage::

    .venv/bin/python benchmarks/bench_stream_objects.py --parquet DIR --jsonl DIR
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_read import _env, measured  # noqa: E402


def _upload(fs: object, local: Path, prefix: str) -> list[str]:
    keys = []
    for path in sorted(local.rglob("*")):
        if path.is_file() and path.suffix in (".parquet", ".jsonl") and not path.relative_to(local).as_posix().startswith("."):
            key = f"bench/{prefix}/{path.relative_to(local).as_posix()}"
            with fs.open_output_stream(key) as out:  # type: ignore[attr-defined]
                out.write(path.read_bytes())
            keys.append(key)
    return keys


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--parquet", type=Path, required=True, help="a folder with lake/ and plan_counts.yaml")
    ap.add_argument("--jsonl", type=Path, required=True, help="a folder with results.jsonl")
    ap.add_argument("--out", type=Path, default=Path("/tmp/s3stream-bench"))
    args = ap.parse_args()
    import moto.server
    import pyarrow.fs as pafs

    server = moto.server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    s3 = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
          "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}
    fs = pafs.S3FileSystem(endpoint_override=s3["AWS_ENDPOINT_URL"], access_key="testing", secret_key="testing",
                           region="us-east-1", allow_bucket_creation=True)
    fs.create_dir("bench")
    plan = (args.parquet / "plan_counts.yaml").read_text(encoding="utf-8")
    for name, local, uri in (("parquet", args.parquet / "lake", "s3://bench/parquet/"),
                             ("jsonl", args.jsonl, "s3://bench/jsonl/results.jsonl")):
        keys = _upload(fs, local, name)
        study = args.out / name
        study.mkdir(parents=True, exist_ok=True)
        (study / "plan.yaml").write_text(re.sub(r"results: \S+", f"results: {uri}", plan), encoding="utf-8")
        t0 = time.perf_counter()
        for key in keys:  # the sequential SHA-256 pass alone
            h = hashlib.sha256()
            with fs.open_input_stream(key) as stream:
                while chunk := stream.read(4 << 20):
                    h.update(chunk)
        digest = time.perf_counter() - t0
        row = {"input": name, "objects": len(keys), "sha256_pass_s": round(digest, 2)}
        for mode, rows in (("streamed", "0"), ("in_memory", str(10**15))):
            env = {**_env(args.out), **s3, "EVALSPEC_STREAM_ROWS": rows}
            res = measured([sys.executable, "-m", "evalspec", "run", "plan.yaml", "--no-report"], study, env)
            row[mode] = {k: round(v, 2) for k, v in res.items()}
            os.replace(study / "out" / "claim.json", study / f"claim-{mode}.json")
        row["claims_identical"] = ((study / "claim-streamed.json").read_bytes()
                                   == (study / "claim-in_memory.json").read_bytes())
        print(json.dumps(row), flush=True)
    server.stop()


if __name__ == "__main__":
    main()
