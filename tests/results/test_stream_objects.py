"""Attempt rows on an object store reduced while read: the claim of reading them into memory, byte for byte.

Against a real S3 protocol server on 127.0.0.1 (moto's server mode, as ``test_lake.py``), read
through Arrow's own S3 filesystem. ``EVALSPEC_STREAM_ROWS=0`` forces the streaming reduction
(:mod:`evalspec.results.stream_reduce`); the claims, ``data.files`` (SHA-256 and the object's
location) included, must equal the in-memory path's; a refusal names the object and its line;
nothing is written to the local disk.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")
moto_server = pytest.importorskip("moto.server")
import pyarrow.fs as pafs  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from evalspec.errors import InputError  # noqa: E402
from evalspec.results import batches, stream_read, stream_reduce  # noqa: E402

PLAN = """evalspec: 1
id: object-study
title: Streamed from a bucket
question: Is A better than B?
decision_owner: the study's owner
population: invented cases
data:
  results: {results}
  format: {fmt}
  columns: {{candidate: candidate, repeat: repeat, outcome: passed, model_version: ver, critical: crit}}
candidates:
  A: {{model: m/a, version: v1}}
  B: {{model: m/b, version: v1}}
baseline: B
units: {{case: case_id, cluster: doc}}
attempts: {{repeats: 3, rule: first}}
missing: {{policy: count_as_fail, max_fraction: 0.2}}
analyses:
  - {{kind: proportion}}
  - {{kind: paired_difference, compare: [A, B], resamples: 100, seed: 3}}
  - {{kind: critical_failures}}
  - {{kind: slices}}
slices: [{{name: language, column: lang}}]
decision: {{minimum_improvement: 0.02}}
"""


@pytest.fixture(scope="module")
def s3() -> Any:
    """An S3 server on 127.0.0.1 (moto in server mode) and a filesystem on it."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}
    fs = pafs.S3FileSystem(endpoint_override=env["AWS_ENDPOINT_URL"], access_key="testing", secret_key="testing",
                           region="us-east-1", allow_bucket_creation=True)
    fs.create_dir("lake")
    yield env, fs
    server.stop()


def _point_at(s3: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Arrow's S3 filesystem (through the environment) pointed at the test's server; the server's filesystem."""
    env, fs = s3
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return fs


def _rows(n_cases: int, bad_line: int | None = None) -> list[dict[str, Any]]:
    rows = [{"candidate": c, "case_id": f"c{i}", "doc": f"d{i % 7}", "repeat": r, "passed": (i * 7 + r + (c == "A")) % 3 > 0,
             "ver": "v1", "crit": i % 11 == 0, "lang": "en" if i % 3 else "fr"}
            for i in range(n_cases) for c in "AB" for r in (1, 2, 3) if (i + r) % 13]
    if bad_line is not None:
        rows[bad_line - 1]["passed"] = "perhaps"
    return rows


def _put(fs: Any, key: str, data: bytes) -> None:
    with fs.open_output_stream(f"lake/{key}") as out:
        out.write(data)


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _csv(rows: list[dict[str, Any]]) -> bytes:
    import pyarrow.csv as pcsv

    sink = pa.BufferOutputStream()
    pcsv.write_csv(pa.Table.from_pylist(rows), sink, pcsv.WriteOptions(quoting_style="none"))
    return sink.getvalue().to_pybytes().replace(b'"', b"")  # (the header is quoted: a quote is read whole)


def _parquet(rows: list[dict[str, Any]]) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows), sink, row_group_size=50)
    return sink.getvalue().to_pybytes()


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _claim(plan: Path, monkeypatch: pytest.MonkeyPatch, streamed: bool) -> tuple[str, list[bool]]:
    from evalspec.run import run_plan

    engaged: list[bool] = []
    real = stream_read._stream_object

    def spy(*a: Any, **k: Any) -> Any:
        engaged.append(real(*a, **k))
        return engaged[-1]

    reduce = stream_reduce.stream_results

    def reduced(*a: Any, **k: Any) -> Any:
        table = reduce(*a, **k)
        engaged.append(table is not None)  # (last: the reduction was not handed back to the in-memory path)
        return table

    monkeypatch.setattr(stream_read, "_stream_object", spy)
    monkeypatch.setattr(stream_reduce, "stream_results", reduced)
    monkeypatch.setenv("EVALSPEC_STREAM_ROWS", "0" if streamed else str(10**15))
    return json.dumps(run_plan(plan), sort_keys=True, default=str), engaged


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_streamed_objects_give_the_in_memory_claim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, s3: Any,
                                                   fmt: str) -> None:
    fs = _point_at(s3, monkeypatch)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(batches, "BATCH_BYTES", 2048)  # several batches per object
    monkeypatch.setattr(stream_read, "PARQUET_BATCH_ROWS", 64)
    rows = _rows(120)
    stored = {}
    for part, cut in (("part-0", rows[:300]), ("part-1", rows[300:])):
        data = {"jsonl": _jsonl, "csv": _csv, "parquet": _parquet}[fmt](cut)
        stored[f"s3://lake/{fmt}/day=2026-10-01/{part}.{fmt}"] = data
        _put(fs, f"{fmt}/day=2026-10-01/{part}.{fmt}", data)
    (tmp_path / "plan.yaml").write_text(PLAN.format(results=f"s3://lake/{fmt}/", fmt=fmt), encoding="utf-8")
    before = _files(tmp_path)
    memory, engaged = _claim(tmp_path / "plan.yaml", monkeypatch, streamed=False)
    assert engaged == [False]
    streamed, engaged = _claim(tmp_path / "plan.yaml", monkeypatch, streamed=True)
    assert engaged == [True, True, True]  # both objects streamed, none read whole, the table made from them
    assert streamed == memory
    assert _files(tmp_path) == before  # nothing written locally (run_plan writes no outputs)
    files = json.loads(streamed)["data"]["files"]
    assert [f["path"] for f in files] == sorted(stored)
    for f in files:
        assert f["sha256"] == hashlib.sha256(stored[f["path"]]).hexdigest()
        assert f["location"]["size"] == len(stored[f["path"]]) and f["location"]["uri"] == f["path"]
        assert f["location"]["partition"] == {"day": "2026-10-01"}


def test_a_refusal_names_the_object_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, s3: Any) -> None:
    fs = _point_at(s3, monkeypatch)
    monkeypatch.setenv("EVALSPEC_STREAM_ROWS", "0")
    monkeypatch.setattr(stream_reduce, "EXACT_REFUSAL_ROWS", -1)  # the streaming path's own refusal
    monkeypatch.setattr(batches, "BATCH_BYTES", 2048)  # the bad line is in a later batch
    _put(fs, "bad/results.jsonl", _jsonl(_rows(60, bad_line=100)))
    (tmp_path / "plan.yaml").write_text(PLAN.format(results="s3://lake/bad/results.jsonl", fmt="jsonl"),
                                        encoding="utf-8")
    entered = _entered(monkeypatch)
    from evalspec.run import run_plan

    with pytest.raises(InputError) as err:
        run_plan(tmp_path / "plan.yaml")
    d = err.value.diagnostics[0]
    assert entered == ["s3://lake/bad/results.jsonl"]  # refused while streamed
    assert (d.file, d.line) == ("s3://lake/bad/results.jsonl", 100), d
    assert "perhaps" in str(d.message) + str(d.got), d


def test_the_store_refusing_an_object_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, s3: Any) -> None:
    """An object listed but gone when read (or not readable with these credentials): the store's words, at it."""
    from evalspec.results import lake

    fs = _point_at(s3, monkeypatch)
    monkeypatch.setenv("EVALSPEC_STREAM_ROWS", "0")
    _put(fs, "gone/a.jsonl", _jsonl(_rows(10)))
    real = lake.list_uri

    def listed(uri: str) -> list[Any]:
        found = real(uri)
        return found + [lake.RemoteObject("s3://lake/gone/b.jsonl", "lake/gone/b.jsonl", 100, found[0].mtime)]

    monkeypatch.setattr(lake, "list_uri", listed)
    entered = _entered(monkeypatch)
    (tmp_path / "plan.yaml").write_text(PLAN.format(results="s3://lake/gone/", fmt="jsonl"), encoding="utf-8")
    from evalspec.run import run_plan

    with pytest.raises(InputError) as err:
        run_plan(tmp_path / "plan.yaml")
    d = err.value.diagnostics[0]
    assert entered == ["s3://lake/gone/a.jsonl", "s3://lake/gone/b.jsonl"]
    assert d.file == "s3://lake/gone/b.jsonl" and "the object store refused the request" in d.message, d
    assert "no object at this key" in str(d.hint), d


def _entered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    entered: list[str] = []
    real = stream_read._stream_object

    def spy(red: Any, j: int, obj: Any, fmt: str) -> bool:
        entered.append(obj.uri)
        return real(red, j, obj, fmt)

    monkeypatch.setattr(stream_read, "_stream_object", spy)
    return entered


def test_local_files_and_objects_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, s3: Any) -> None:
    """A plan naming a local file and a bucket: both streamed, ``data.files`` in the in-memory run's order."""
    fs = _point_at(s3, monkeypatch)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    rows = _rows(40)
    (tmp_path / "local.jsonl").write_bytes(_jsonl(rows[:100]))
    _put(fs, "mixed/rest.parquet", _parquet(rows[100:]))
    plan = PLAN.format(results='["local.jsonl", "s3://lake/mixed/rest.parquet"]', fmt="auto")
    (tmp_path / "plan.yaml").write_text(plan, encoding="utf-8")
    memory, _ = _claim(tmp_path / "plan.yaml", monkeypatch, streamed=False)
    streamed, engaged = _claim(tmp_path / "plan.yaml", monkeypatch, streamed=True)
    assert engaged == [True, True] and streamed == memory
    assert [f["path"] for f in json.loads(streamed)["data"]["files"]] == ["local.jsonl", "s3://lake/mixed/rest.parquet"]


def test_a_text_object_reopened_by_the_reader_is_hashed_from_its_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                        s3: Any) -> None:
    """A column that looks like a time only after the first 64 KiB: Arrow's reader is opened again, on a fresh pass."""
    from evalspec.results import lake

    fs = _point_at(s3, monkeypatch)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    rows = _rows(400)
    for r in rows[len(rows) // 2:]:
        r["when"] = "2026-10-01T12:00:00Z"
    data = _jsonl(rows)
    assert data.index(b"when") > 1 << 16
    _put(fs, "late/results.jsonl", data)
    opened: list[int] = []
    real = lake.ObjectReader.__init__

    def counted(self: Any, obj: Any) -> None:
        opened.append(1)
        real(self, obj)

    monkeypatch.setattr(lake.ObjectReader, "__init__", counted)
    (tmp_path / "plan.yaml").write_text(PLAN.format(results="s3://lake/late/results.jsonl", fmt="jsonl"),
                                        encoding="utf-8")
    memory, _ = _claim(tmp_path / "plan.yaml", monkeypatch, streamed=False)
    streamed, engaged = _claim(tmp_path / "plan.yaml", monkeypatch, streamed=True)
    assert engaged == [True, True] and streamed == memory and len(opened) == 2
    assert json.loads(streamed)["data"]["files"][0]["sha256"] == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_an_object_replaced_while_read_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, s3: Any,
                                                  fmt: str) -> None:
    """Replaced by one of the same size after the run pinned its ETag: refused, not analysed as a mixture."""
    from evalspec.results import lake

    fs = _point_at(s3, monkeypatch)
    monkeypatch.setenv("EVALSPEC_STREAM_ROWS", "0")
    rows = _rows(60)
    data = {"jsonl": _jsonl, "parquet": _parquet}[fmt](rows)
    for r in rows:
        r["ver"] = "v2"
    other = {"jsonl": _jsonl, "parquet": _parquet}[fmt](rows)
    assert len(other) == len(data) and other != data
    key = f"swap/results.{fmt}"
    _put(fs, key, data)
    real = lake.pinned

    def swapped(obj: Any) -> Any:
        pin = real(obj)
        _put(fs, key, other)  # same size, other bytes
        return pin

    monkeypatch.setattr(lake, "pinned", swapped)
    (tmp_path / "plan.yaml").write_text(PLAN.format(results=f"s3://lake/{key}", fmt=fmt), encoding="utf-8")
    from evalspec.run import run_plan

    with pytest.raises(InputError) as err:
        run_plan(tmp_path / "plan.yaml")
    d = err.value.diagnostics[0]
    assert d.file == f"s3://lake/{key}" and "changed while evalspec was reading it" in d.message, d


def test_store_etag_reads_what_the_store_sends(s3: Any) -> None:
    from evalspec.results import lake

    _, fs = s3
    _put(fs, "tag/a.jsonl", b'{"a": 1}\n')
    with fs.open_input_stream("lake/tag/a.jsonl") as stream:
        etag = lake.store_etag(stream)
    assert etag and not etag.startswith('"'), etag  # the quotes S3 puts round it are not part of it
    _put(fs, "tag/a.jsonl", b'{"a": 2}\n')
    with fs.open_input_stream("lake/tag/a.jsonl") as stream:
        assert lake.store_etag(stream) not in (None, etag)
    import pyarrow.fs as pafs

    with pafs.LocalFileSystem().open_input_stream(__file__) as local:
        assert lake.store_etag(local) is None  # a local file has none
