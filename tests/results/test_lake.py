"""Results where teams keep them: Hive-partitioned Parquet folders and an S3 bucket.

The S3 tests run against a real S3 protocol server (moto's server mode) on 127.0.0.1, read
through Arrow's own S3 filesystem exactly as a bucket on AWS would be; nothing is mocked in
the client. They skip when moto is not installed (it is in the ``test`` extra).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalspec.errors import InputError
from evalspec.results import lake

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "policy-migration"

pa = pytest.importorskip("pyarrow")
import pyarrow.dataset as ds  # noqa: E402


def _rows_table():
    """The example's rows as an Arrow table, typed as the JSON holds them (text stays text)."""
    lines = (EXAMPLE / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return pa.Table.from_pylist([json.loads(line) for line in lines if line.strip()])


def _evalspec(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "SOURCE_DATE_EPOCH": "1764547200", **(env or {})}
    return subprocess.run([sys.executable, "-m", "evalspec", *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=300)


def _study(tmp_path: Path, results: str) -> Path:
    """The policy-migration example with ``data.results`` pointing at ``results``."""
    study = tmp_path / "study"
    study.mkdir()
    text = (EXAMPLE / "plan.yaml").read_text(encoding="utf-8")
    text = text.replace("results: results.jsonl", f"results: {json.dumps(results)}")
    text = text.replace("format: jsonl", "format: auto" if results.endswith(".jsonl") else "format: parquet")
    (study / "plan.yaml").write_text(text, encoding="utf-8")
    return study


def _partitioned(out: Path) -> None:
    """The example's rows as a Hive-partitioned Parquet dataset: ``out/candidate=A/part-0.parquet``."""
    table = _rows_table()
    ds.write_dataset(table, out, format="parquet", partitioning=["candidate"], partitioning_flavor="hive",
                     basename_template="part-{i}.parquet")


def _numbers(claim_path: Path) -> dict:
    claim = json.loads(claim_path.read_text(encoding="utf-8"))
    return {"analyses": claim["analyses"], "decision": claim["decision"], "coverage": claim["coverage"]}


def _run(study: Path, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], Path]:
    proc = _evalspec("run", "plan.yaml", "--no-report", cwd=study, env=env)
    return proc, study / "out" / "claim.json"


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The numbers of the example read from its own JSONL file."""
    tmp = tmp_path_factory.mktemp("ref")
    study = _study(tmp, "results.jsonl")
    shutil.copy(EXAMPLE / "results.jsonl", study / "results.jsonl")
    proc, claim = _run(study)
    assert proc.returncode == 0, proc.stderr
    return _numbers(claim)


def test_partitioned_folder_reads_as_the_rows_it_holds(tmp_path: Path, reference: dict) -> None:
    study = _study(tmp_path, "lake/")
    _partitioned(study / "lake")
    assert sorted(p.relative_to(study).as_posix() for p in (study / "lake").rglob("*.parquet")) == [
        "lake/candidate=A/part-0.parquet", "lake/candidate=B/part-0.parquet"]
    proc, claim_path = _run(study)
    assert proc.returncode == 0, proc.stderr
    assert _numbers(claim_path) == reference  # the partition folder gave the candidate column
    files = json.loads(claim_path.read_text(encoding="utf-8"))["data"]["files"]
    assert [f["path"] for f in files] == ["lake/candidate=A/part-0.parquet", "lake/candidate=B/part-0.parquet"]
    assert [f["location"] for f in files] == [{"partition": {"candidate": "A"}}, {"partition": {"candidate": "B"}}]


def test_partition_folder_and_column_of_one_name_is_refused(tmp_path: Path) -> None:
    study = _study(tmp_path, "lake/")
    table = _rows_table()
    (study / "lake" / "candidate=A").mkdir(parents=True)
    import pyarrow.parquet as pq

    pq.write_table(table, study / "lake" / "candidate=A" / "part-0.parquet")
    proc, _ = _run(study)
    assert proc.returncode == 2, proc.stderr
    assert "is both in the file and in its partition folder candidate=A" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_spark_style_marker_files_are_skipped(tmp_path: Path, reference: dict) -> None:
    study = _study(tmp_path, "lake/")
    _partitioned(study / "lake")
    (study / "lake" / "_SUCCESS").write_text("")
    (study / "lake" / "candidate=A" / ".part-0.parquet.crc").write_bytes(b"\x00\x01")
    proc, claim_path = _run(study)
    assert proc.returncode == 0, proc.stderr
    assert _numbers(claim_path) == reference


def test_folder_walk_does_not_follow_links(tmp_path: Path) -> None:
    folder = tmp_path / "lake"
    (folder / "model=A").mkdir(parents=True)
    (folder / "model=A" / "x.jsonl").write_text('{"a": 1}\n')
    os.symlink(folder, folder / "model=A" / "loop")  # a loop: listing must end
    os.symlink(folder / "model=A" / "x.jsonl", folder / "linked.jsonl")
    found = lake.folder_tables(folder)
    assert [(p.relative_to(folder).as_posix(), v) for p, v in found] == [("model=A/x.jsonl", (("model", "A"),))]


@settings(max_examples=200, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=8), min_size=1, max_size=5))
def test_partition_values_of_any_path(parts: list[str]) -> None:
    """Every ``key=value`` folder (and only those) becomes a partition, its parts URL-decoded."""
    rel = "/".join(p.replace("/", "_") for p in parts) + "/file.parquet"
    values = lake.partition_values(rel)
    folders = [p.replace("/", "_") for p in parts]
    assert len(values) == sum(1 for f in folders if "=" in f and not f.startswith("="))
    for key, value in values:
        assert isinstance(key, str) and isinstance(value, str)


@pytest.mark.parametrize(("path", "pattern", "expected"), [
    ("b/runs/2026/x.jsonl", "b/runs/**/*.jsonl", True),
    ("b/runs/x.jsonl", "b/runs/**/*.jsonl", True),
    ("b/runs/2026/x.jsonl", "b/runs/*.jsonl", False),
    ("b/runs/x.csv", "b/runs/**/*.jsonl", False),
    ("b/runs/a1.jsonl", "b/runs/a?.jsonl", True),
    ("b/runs/a1.jsonl", "b/runs/a[0-9].jsonl", True),
    ("b/runs/ab.jsonl", "b/runs/a[0-9].jsonl", False),
])
def test_glob_match(path: str, pattern: str, expected: bool) -> None:
    assert lake._match(path, pattern) is expected


# -- a real S3 protocol server on the loopback address ------------------------------------------

moto_server = pytest.importorskip("moto.server")


@pytest.fixture(scope="module")
def s3() -> dict[str, str]:
    """An S3 server on 127.0.0.1 (moto in server mode) and the environment that points Arrow at it."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}
    yield env
    server.stop()


def _upload(env: dict[str, str], local: Path, bucket: str, prefix: str) -> None:
    import pyarrow.fs as pafs

    fs = pafs.S3FileSystem(endpoint_override=env["AWS_ENDPOINT_URL"], access_key=env["AWS_ACCESS_KEY_ID"],
                           secret_key=env["AWS_SECRET_ACCESS_KEY"], region=env["AWS_REGION"],
                           allow_bucket_creation=True)
    fs.create_dir(bucket)
    for path in sorted(local.rglob("*")):
        if path.is_file():
            with fs.open_output_stream(f"{bucket}/{prefix}/{path.relative_to(local).as_posix()}") as out:
                out.write(path.read_bytes())


def test_s3_prefix_gives_the_local_numbers(tmp_path: Path, s3: dict[str, str], reference: dict) -> None:
    _partitioned(tmp_path / "lake")
    _upload(s3, tmp_path / "lake", "evals", "policy/v1")
    study = _study(tmp_path, "s3://evals/policy/v1/")
    proc, claim_path = _run(study, s3)
    assert proc.returncode == 0, proc.stderr
    assert _numbers(claim_path) == reference
    files = json.loads(claim_path.read_text(encoding="utf-8"))["data"]["files"]
    local = {p.relative_to(tmp_path / "lake").as_posix(): p for p in (tmp_path / "lake").rglob("*.parquet")}
    import hashlib

    for f in files:
        rel = f["path"].removeprefix("s3://evals/policy/v1/")
        assert f["sha256"] == hashlib.sha256(local[rel].read_bytes()).hexdigest()  # the bytes read are the bytes stored
        assert f["location"]["uri"] == f["path"] and f["location"]["size"] == local[rel].stat().st_size
        assert f["location"]["partition"] == {"candidate": rel.split("/")[0].split("=")[1]}


def test_s3_glob_and_single_object(tmp_path: Path, s3: dict[str, str], reference: dict) -> None:
    (tmp_path / "up").mkdir()
    shutil.copy(EXAMPLE / "results.jsonl", tmp_path / "up" / "results.jsonl")
    _upload(s3, tmp_path / "up", "single", "runs/2026-10")
    for i, uri in enumerate(("s3://single/runs/2026-10/results.jsonl", "s3://single/runs/**/*.jsonl")):
        (tmp_path / str(i)).mkdir()
        study = _study(tmp_path / str(i), uri)
        proc, claim_path = _run(study, s3)
        assert proc.returncode == 0, proc.stderr
        assert _numbers(claim_path) == reference


@pytest.mark.parametrize(("uri", "words"), [
    ("s3://no-such-bucket/lake/", "s3://no-such-bucket/lake/: no object or prefix at this location"),
    ("s3://evals/policy/none/", "s3://evals/policy/none/: no object or prefix at this location"),
    ("s3://evals/policy/v1/*.csv", "no results object"),
])
def test_s3_problems_name_the_object(tmp_path: Path, s3: dict[str, str], uri: str, words: str) -> None:
    _partitioned(tmp_path / "lake")
    _upload(s3, tmp_path / "lake", "evals", "policy/v1")
    study = _study(tmp_path, uri)
    proc, _ = _run(study, s3)
    assert proc.returncode == 2, proc.stderr
    assert words in proc.stderr
    assert "Traceback" not in proc.stderr


def test_s3_unreachable_endpoint_is_a_clear_error(tmp_path: Path, s3: dict[str, str]) -> None:
    study = _study(tmp_path, "s3://evals/policy/v1/")
    env = {**s3, "AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_MAX_ATTEMPTS": "1"}  # nothing listens on port 9
    proc, _ = _run(study, env)
    assert proc.returncode == 2, proc.stderr
    assert "s3://evals/policy/v1/" in proc.stderr and "Traceback" not in proc.stderr


def test_audit_rereads_objects(tmp_path: Path, s3: dict[str, str]) -> None:
    _partitioned(tmp_path / "lake")
    _upload(s3, tmp_path / "lake", "audited", "v1")
    study = _study(tmp_path, "s3://audited/v1/")
    proc, claim_path = _run(study, s3)
    assert proc.returncode == 0, proc.stderr
    audit = _evalspec("audit", str(claim_path), "--json", cwd=study, env=s3)
    checks = {c["id"]: c for c in json.loads(audit.stdout)["checks"]}
    assert checks["data_fingerprints"]["status"] == "pass", checks["data_fingerprints"]
    assert any("re-read from the object store" in e for e in checks["data_fingerprints"]["evidence"])
    files = json.loads(claim_path.read_text(encoding="utf-8"))["data"]["files"]
    assert all(f["location"]["etag"] for f in files), files  # S3 reports one: recorded, and compared by the audit
    assert all(any(f"ETag {f['location']['etag']} as recorded" in e for e in checks["data_fingerprints"]["evidence"])
               for f in files), checks["data_fingerprints"]["evidence"]
    assert checks["reproduction"]["status"] == "pass", checks["reproduction"]  # re-run reads the bucket again
    # the object changes in the bucket: the audit sees it
    table = _rows_table().slice(0, 10)
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    fs = pafs.S3FileSystem(endpoint_override=s3["AWS_ENDPOINT_URL"], access_key="testing", secret_key="testing",
                           region="us-east-1")
    with fs.open_output_stream("audited/v1/candidate=A/part-0.parquet") as out:
        pq.write_table(table.drop(["candidate"]), out)
    audit = _evalspec("audit", str(claim_path), "--json", cwd=study, env=s3)
    checks = {c["id"]: c for c in json.loads(audit.stdout)["checks"]}
    assert checks["data_fingerprints"]["status"] == "fail"
    assert audit.returncode == 1


def test_list_uri_refuses_tool_logs_on_object_stores(tmp_path: Path) -> None:
    study = _study(tmp_path, "s3://evals/logs/")
    text = (study / "plan.yaml").read_text().replace("format: parquet", "format: inspect")
    (study / "plan.yaml").write_text(text)
    proc, _ = _run(study)
    assert proc.returncode == 2
    assert "inspect logs are read from local files only" in proc.stderr


def test_is_uri() -> None:
    assert lake.is_uri("s3://b/k") and lake.is_uri("gs://b/k") and lake.is_uri("hf://datasets/x")
    assert not lake.is_uri("results.jsonl") and not lake.is_uri("C:/x") and not lake.is_uri("file:///tmp/x")
    with pytest.raises(InputError):
        lake.list_uri("nosuchscheme://x/y")


# -- many files are typed as fast as one -----------------------------------------------------

_values = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["a", "b", "1", "", "ü"]),
                    st.floats(allow_nan=True, allow_infinity=False, width=16))


@settings(max_examples=300, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_values, max_size=12), min_size=2, max_size=5), st.booleans(), st.sampled_from(
    ["first-seen", "reversed", "lazy"]))
def test_concatenated_coded_columns_factorize_as_the_plain_concatenation(files: list[list], coded_last: bool,
                                                                        order: str) -> None:
    """Merging the readers' codes of several files gives :func:`factorize`'s codes of the plain concatenation.

    Codes in first-seen order (every reader's) take the linear path; a part whose uniques are
    in another order (``reversed``) takes the general one; ``lazy``: parts read in batches.
    """
    import numpy as np

    from evalspec.results.values import CodedColumn, LazyCoded
    from evalspec.results.table import concat_columns, factorize

    def plain(values: list) -> np.ndarray:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out

    parts = []
    for i, values in enumerate(files):
        col = plain(values)
        if coded_last or i < len(files) - 1:
            codes, uniques = factorize(col)
            if order == "reversed" and i == 0 and len(uniques) > 1:  # the same values, numbered last-seen first
                codes, uniques = np.where(codes >= 0, len(uniques) - 1 - codes, -1), uniques[::-1].copy()
            if order == "lazy" and None not in uniques.tolist():
                col = LazyCoded(codes.astype(np.int8), uniques)
            else:
                col = CodedColumn.of(codes.astype(np.int32), uniques, distinct=True)
        parts.append(col)
    merged = concat_columns(parts)
    want_codes, want_uniques = factorize(np.concatenate([plain(v) for v in files]))
    got_codes, got_uniques = factorize(merged)
    assert got_codes.tolist() == want_codes.tolist()
    assert [(type(u), repr(u)) for u in got_uniques] == [(type(u), repr(u)) for u in want_uniques]
    if coded_last:  # every part coded: the values as one coded file holds them
        expected = [None if c < 0 else want_uniques[c] for c in want_codes]
    else:  # a plain part: the parts concatenated, value for value
        expected = np.concatenate([np.asarray(p) for p in parts]).tolist()
    assert [(type(u), repr(u)) for u in np.asarray(merged).tolist()] == [(type(u), repr(u)) for u in expected]
