"""Benchmark results where teams keep them: a JSONL file, a Hive-partitioned Parquet folder, an S3 prefix.

Issue 24, "data where teams keep it": the same invented rows (the generator of
``bench_run.py``: 2 candidates x cases x 5 repeats, clusters, a slice, a critical flag,
timestamps) read by ``evalspec run --no-report`` from

* ``jsonl``    - one local JSONL file (the reference);
* ``folder``   - a local Hive-partitioned Parquet dataset (``candidate=A/part-0.parquet``),
  as Spark, Ray Data or ``pyarrow.dataset.write_dataset`` write it;
* ``s3``       - the same dataset in a bucket of an S3 protocol server on 127.0.0.1
  (moto in server mode, started by this script), read through Arrow's S3 filesystem;

next to a bare ``pyarrow.dataset`` scan of the same folder (all columns), each in a fresh
process. The loopback server is not AWS: the ``s3`` row measures evalspec's overhead of
listing and reading objects through the S3 protocol, not a network. The CPU may be shared:
read the ratios. Usage::

    .venv/bin/python benchmarks/bench_lake.py                # 200,000 rows
    .venv/bin/python benchmarks/bench_lake.py --rows 1000000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[0]
sys.path.insert(0, str(ROOT))

from bench_read import measure  # noqa: E402
from bench_run import generate  # noqa: E402

BARE = ("import sys, pyarrow.dataset as ds; "
        "print(ds.dataset(sys.argv[1], format='parquet', partitioning='hive').to_table().num_rows)")


def _dataset(plan: Path) -> Path:
    import pyarrow.dataset as ds
    import pyarrow.json as pj

    table = pj.read_json(plan.parent / "results.jsonl")
    out = plan.parent / "lake"
    ds.write_dataset(table, out, format="parquet", partitioning=["candidate"], partitioning_flavor="hive",
                     basename_template="part-{i}.parquet")
    return out


def _plan_reading(plan: Path, results: str, folder: Path) -> Path:
    text = plan.read_text(encoding="utf-8")
    text = text.replace("results: results.jsonl", f"results: {results!r}").replace("format: jsonl", "format: parquet")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plan.yaml").write_text(text, encoding="utf-8")
    return folder / "plan.yaml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    args = ap.parse_args()
    import pyarrow.fs as pafs
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    aws = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
           "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}
    py = sys.executable
    env = dict(os.environ, SOURCE_DATE_EPOCH="1796126400", **aws)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            plan = generate(Path(tmp), args.rows)
            if "format: jsonl" not in plan.read_text(encoding="utf-8"):
                plan.write_text(plan.read_text(encoding="utf-8").replace("data:\n", "data:\n  format: jsonl\n", 1))
            lake = _dataset(plan)
            fs = pafs.S3FileSystem(endpoint_override=aws["AWS_ENDPOINT_URL"], access_key="bench", secret_key="bench",
                                   region="us-east-1", allow_bucket_creation=True)
            fs.create_dir("bench")
            for path in sorted(lake.rglob("*.parquet")):
                with fs.open_output_stream(f"bench/lake/{path.relative_to(lake).as_posix()}") as out:
                    out.write(path.read_bytes())
            rows = {
                "bare dataset scan": measure([py, "-c", BARE, str(lake)], Path(tmp), env),
                "jsonl": measure([py, "-m", "evalspec", "run", str(plan), "--no-report"], Path(tmp), env),
                "folder": measure([py, "-m", "evalspec", "run", str(_plan_reading(plan, "../lake/", lake.parent / "f")),
                                   "--no-report", "--allow-outside-data"], Path(tmp), env),
                "s3": measure([py, "-m", "evalspec", "run", str(_plan_reading(plan, "s3://bench/lake/", lake.parent / "s")),
                               "--no-report"], Path(tmp), env),
            }
    finally:
        server.stop()
    print(f"{args.rows:,} rows (whole processes, seconds; peak memory per process)")
    print(f"{'':20}{'process':>9}{'peak MiB':>10}{'vs jsonl':>10}")
    for name, r in rows.items():
        print(f"{name:20}{r['process']:9.2f}{r['peak_mib']:10.0f}{r['process'] / rows['jsonl']['process']:9.2f}x")
    print(f"s3 / folder: {rows['s3']['process'] / rows['folder']['process']:.2f}x; "
          f"folder / bare dataset scan: {rows['folder']['process'] / rows['bare dataset scan']['process']:.2f}x")


if __name__ == "__main__":
    main()
