"""A JSONL or CSV file parsed whole by Arrow (``batches.WHOLE_FILE_BYTES``) gives the values of the batch reader
and of the whole-file readers: the same values, of the same types, in the same first-seen codes.

Generated files mix value types in a column, integers that Arrow reads as floats, texts that look like times
(also first after the 64 KiB that are sniffed), nested values, missing keys and nulls, so that every branch of
the batch reader (and its fall-back to the whole-file reader) is taken.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

pytest.importorskip("pyarrow")

from evalspec.errors import InputError  # noqa: E402
from evalspec.results import batches, readers  # noqa: E402

_value = st.one_of(
    st.integers(-5, 5), st.sampled_from([0.5, 2.0, -0.0, 1e300, 2.0**53 + 2]), st.booleans(), st.none(),
    st.sampled_from(["x", "y", "é", "", " x", "2026-10-01T12:00:00Z", "2026-10-02", "1"]),
    st.just([1, 2]),
)
_line = st.dictionaries(st.sampled_from(["a", "b", "c"]), _value, max_size=3)
_PAD = "".join(json.dumps({"a": i % 3, "b": f"p{i % 5}", "c": i % 2 == 0}) + "\n" for i in range(2500))  # 100 KiB


def _typed(col: Any) -> list[tuple[str, Any]]:
    return [(type(v).__name__, v) for v in list(col)]


def _columns(path: Path, fmt: str, mode: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]] | None:
    """The typed values of each column as ``mode`` reads ``path`` (None: the batch reader gave it up)."""
    monkeypatch.setattr(batches, "WHOLE_FILE_BYTES", 1 << 30 if mode == "table" else -1)
    monkeypatch.setattr(batches, "BATCH_BYTES", 4096)  # (a table parsed whole: in blocks of this size, its chunks)
    if mode == "reader":
        monkeypatch.setattr(readers, "STREAM", False)
        raw = readers.read_file(path, fmt, "r")
        return {name: _typed(col) for name, col in raw.columns.items()}
    streamed = batches.stream_table(path, fmt, "r")
    return None if streamed is None else {name: _typed(col) for name, col in streamed.columns.items()}


@settings(max_examples=60, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_line, min_size=1, max_size=30), pad=st.booleans())
def test_a_jsonl_file_parsed_whole_reads_as_the_batches_and_the_whole_file_reader_read_it(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, lines: list[dict[str, Any]],
        pad: bool) -> None:
    path = tmp_path_factory.mktemp("whole") / "r.jsonl"
    path.write_text((_PAD if pad else "") + "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    try:
        reader = _columns(path, "jsonl", "reader", monkeypatch)
    except InputError:  # (a line the exact reader refuses: the batch reader gives it up, and the same refusal)
        assert _columns(path, "jsonl", "table", monkeypatch) is None
        return
    table = _columns(path, "jsonl", "table", monkeypatch)
    in_batches = _columns(path, "jsonl", "batches", monkeypatch)
    assert table is None or table == reader
    assert in_batches is None or in_batches == reader
    if all(set(line) == {"a", "b", "c"} and all(isinstance(v, str) for v in line.values()) for line in lines):
        assert table is not None  # plain texts are read whole, not handed on


@settings(max_examples=30, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.lists(st.sampled_from(["x", "1", "2.0", "", " y", "true", "n/a", "é"]), min_size=3,
                              max_size=3), min_size=1, max_size=30))
def test_a_csv_file_parsed_whole_reads_as_the_whole_file_reader_reads_it(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, rows: list[list[str]]) -> None:
    path = tmp_path_factory.mktemp("whole") / "r.csv"
    path.write_text("a,b,c\n" + "".join(",".join(r) + "\n" for r in rows), encoding="utf-8")
    reader = _columns(path, "csv", "reader", monkeypatch)
    table = _columns(path, "csv", "table", monkeypatch)
    assert table is not None and table == reader


def test_a_time_first_seen_past_the_sniffed_head_stays_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Arrow would read the column as times: it is parsed again with it as text, and read, not handed on."""
    path = tmp_path / "r.jsonl"
    path.write_text(_PAD + "".join(json.dumps({"a": 1, "b": "q", "c": True, "t": "2026-10-01T12:00:00Z"}) + "\n"
                                   for _ in range(3)), encoding="utf-8")
    table = _columns(path, "jsonl", "table", monkeypatch)
    assert table is not None and table["t"][-1] == ("str", "2026-10-01T12:00:00Z")
    assert table == _columns(path, "jsonl", "reader", monkeypatch)


def test_the_case_table_limit_read_whole_names_the_same_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file parsed whole is refused at the same row, with the same words, as one read in batches."""
    from evalspec.results import table
    from evalspec.run import run_plan

    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "run"))
    from run_helpers import plan_text

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(readers, "SMALL_FILE_BYTES", 0)
    monkeypatch.setattr(table, "MAX_CASE_CELLS", 20)  # 2 candidates: 10 cases
    rows = [{"candidate": c, "case_id": f"q{i:03d}", "doc": "d", "repeat": r, "passed": True, "model_version": "v1",
             "ts": "2026-10-01T12:00:00Z"} for i in range(200) for c in ("A", "B") for r in (1, 2)]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "plan.yaml").write_text(plan_text("results.jsonl"), encoding="utf-8")
    refusals = []
    for whole in (1 << 30, -1):
        monkeypatch.setattr(batches, "WHOLE_FILE_BYTES", whole)
        monkeypatch.setattr(batches, "BATCH_BYTES", 512)
        with pytest.raises(InputError) as exc:
            run_plan(tmp_path / "plan.yaml")
        refusals.append((str(exc.value), [d.as_json() for d in exc.value.diagnostics]))
    assert refusals[0] == refusals[1] and refusals[0][0].startswith("results.jsonl:41: ")


_odd_line = st.one_of(
    _line.map(lambda d: json.dumps(d).encode()),
    st.sampled_from([b'{"a": 1, "a": 2}', b"[1, 2]", b"3", b"{}", b'{"a": "\xff\xfe"}', b'{"a": 1', b"",
                     b'{"\xc3\xa9": 1}', b'{"a": {"b": 1}}', b'{"a": 18446744073709551616}', b"\xef\xbb\xbf{}",
                     b'{"a": "x"}\r', b'{"b": null}', b'{"a": NaN}', b'{"a": 1e400}']),
)


@settings(max_examples=60, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_odd_line, min_size=1, max_size=12), pad=st.booleans())
def test_odd_jsonl_parsed_whole_is_read_as_the_whole_file_reader_reads_it_or_handed_on(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, lines: list[bytes],
        pad: bool) -> None:
    """Broken JSON, non-objects, duplicate keys, bad UTF-8, a BOM, carriage returns, huge numbers: the table path
    gives the whole-file reader's values or hands the file on (None), never another error."""
    path = tmp_path_factory.mktemp("odd") / "r.jsonl"
    path.write_bytes((_PAD.encode() if pad else b"") + b"\n".join(lines) + b"\n")
    try:
        reader: Any = _columns(path, "jsonl", "reader", monkeypatch)
    except InputError as exc:  # the exact reader's located refusal
        reader = exc
    table = _columns(path, "jsonl", "table", monkeypatch)
    event("read whole" if table is not None else "handed on")
    if table is not None:
        assert table == reader


@settings(max_examples=40, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=3000), repeat=st.sampled_from([1, 1, 3000]))
def test_the_scan_counts_newlines_and_commas_as_bytes_count_them(tmp_path_factory: pytest.TempPathFactory,
                                                                 data: bytes, repeat: int) -> None:
    """:func:`~evalspec.results.files.scan` (counted in NumPy, 4 MiB at a time) agrees with ``bytes`` on any
    bytes, across its blocks (up to 9 MB), and hashes them all."""
    import hashlib

    from evalspec.results.files import scan

    body = (data + b"\n,\r\"") * repeat if repeat > 1 else data
    path = tmp_path_factory.mktemp("scan") / "r.bin"
    path.write_bytes(body)
    src = scan(path, "r")
    assert (src.size, src.newlines, src.commas) == (len(body), body.count(b"\n"), body.count(b","))
    assert (src.has_cr, src.has_quote, src.sha256) == (b"\r" in body, b'"' in body, hashlib.sha256(body).hexdigest())
    assert scan(path, "r", count_commas=False).commas == -1


def test_the_scan_counts_across_its_4_mib_blocks(tmp_path: Path) -> None:
    import hashlib

    from evalspec.results.files import scan

    body = b"".join(bytes([i % 256]) * (i % 7) + b"\n," for i in range(2_000_000))  # about 10 MB: three blocks
    (tmp_path / "r.bin").write_bytes(body)
    src = scan(tmp_path / "r.bin", "r")
    assert len(body) > 2 * (4 << 20)
    assert (src.newlines, src.commas, src.sha256) == (body.count(b"\n"), body.count(b","),
                                                      hashlib.sha256(body).hexdigest())
