"""Issue 13: one definition of what a results file means, whichever path reads it.

The fast (pyarrow) and exact (line-by-line Python) readers are run on the same generated
files and must give the same columns, value by value and type by type; so must the same
rows written with CRLF line ends, a byte-order mark or blank lines (which take the exact
path). Plus the cases fuzzing found: ids >= 2**63, U+0085/U+2028 inside strings, a quoted
CSV field over 128 KiB, Parquet binary ids and native timestamps.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalspec.results.formats.csv import read_csv_arrow as _read_csv_arrow
from evalspec.results.formats.csv import read_csv_python as _read_csv_python
from evalspec.results.formats.jsonl import read_jsonl_arrow as _read_jsonl_arrow
from evalspec.results.formats.jsonl import read_jsonl_python as _read_jsonl_python
from evalspec.results.readers import read_file

pytest.importorskip("pyarrow")

from tests.arrow_paths import arrow_paths  # noqa: E402,F401 - the fixture below

pytestmark = pytest.mark.usefixtures("arrow_paths")  # small files too go through Arrow here

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

_text = st.text(alphabet=st.sampled_from(list("ab xyz019-_.,:é\u2028\u0085\u00a0'\"\\/") + ["\u2029", "\t"]),
                max_size=8)
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), _text,
                    st.floats(allow_nan=False, allow_infinity=False, width=64))


def _typed(col: np.ndarray) -> list[tuple[str, Any]]:
    return [(type(v).__name__, v) for v in col.tolist()]


def _same(a: tuple[dict[str, np.ndarray], np.ndarray], b: tuple[dict[str, np.ndarray], np.ndarray]) -> None:
    assert list(a[1]) == list(b[1])
    assert sorted(a[0]) == sorted(b[0])
    for key in a[0]:
        assert _typed(a[0][key]) == _typed(b[0][key]), key


@st.composite
def tables(draw: Any) -> list[dict[str, Any]]:
    names = draw(st.lists(st.sampled_from(["id", "case", "score", "flag", "note"]), min_size=1, max_size=4,
                          unique=True))
    kinds = {n: draw(st.sampled_from(["int", "float", "text", "bool", "mixed"])) for n in names}
    strategy = {"int": st.integers(-(2**70), 2**70), "float": st.floats(allow_nan=False, allow_infinity=False),
                "text": _text, "bool": st.booleans(), "mixed": _scalar}
    rows = draw(st.lists(st.fixed_dictionaries({n: st.one_of(st.none(), strategy[kinds[n]]) for n in names}),
                         min_size=1, max_size=12))
    return rows


def _jsonl(rows: list[dict[str, Any]], end: str = "\n") -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + end for r in rows).encode("utf-8")


@SETTINGS
@given(tables())
def test_jsonl_fast_and_exact_paths_agree(rows: list[dict[str, Any]]) -> None:
    data = _jsonl(rows)
    exact = _read_jsonl_python(data, "r.jsonl")
    fast = _read_jsonl_arrow(data, "r.jsonl")
    if fast is not None:
        _same(fast, exact)


@SETTINGS
@given(tables(), st.sampled_from(["crlf", "bom", "bom+crlf"]))
def test_jsonl_line_ends_and_bom_do_not_change_values(rows: list[dict[str, Any]], variant: str) -> None:
    plain = _read_jsonl_python(_jsonl(rows), "r.jsonl")
    data = _jsonl(rows, "\r\n" if "crlf" in variant else "\n")
    if "bom" in variant:
        data = b"\xef\xbb\xbf" + data
    from evalspec.results.formats.jsonl import read_jsonl as _read_jsonl

    columns, lines, _ = _read_jsonl(data, "r.jsonl")
    _same((columns, lines), plain)


def _csv(rows: list[dict[str, Any]], names: list[str]) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    for r in rows:
        w.writerow(["" if r.get(n) is None else ("true" if r[n] is True else "false" if r[n] is False else r[n])
                    for n in names])
    return buf.getvalue().encode("utf-8")


@SETTINGS
@given(tables())
def test_csv_fast_and_exact_paths_agree(rows: list[dict[str, Any]]) -> None:
    names = list(rows[0])
    data = _csv(rows, names)
    exact = _read_csv_python(data, "r.csv")
    fast = _read_csv_arrow(data)
    if fast is not None:
        _same(fast, exact)


def test_ids_beyond_2_63_stay_exact(tmp_path: Path) -> None:
    big = [2**63, 2**63 + 1, 2**64 + 7]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps({"id": b, "x": 1}) + "\n" for b in big), encoding="utf-8")
    raw = read_file(tmp_path / "r.jsonl", "jsonl")
    assert raw.columns["id"].tolist() == big


def test_line_separators_inside_strings_are_characters(tmp_path: Path) -> None:
    rows = [{"id": "a\u2028b", "n": 1}, {"id": "c\u0085d", "n": 2}, {"id": "e\u2029f", "n": 3}]
    for end in ("\n", "\r\n"):
        (tmp_path / "r.jsonl").write_bytes(_jsonl(rows, end))
        raw = read_file(tmp_path / "r.jsonl", "jsonl")
        assert raw.columns["id"].tolist() == ["a\u2028b", "c\u0085d", "e\u2029f"]
        assert raw.lines.tolist() == [1, 2, 3]


def test_quoted_csv_field_over_128_kib(tmp_path: Path) -> None:
    long = "x" * 200_000
    (tmp_path / "q.csv").write_text(f'id,note\n1,"{long}, with a comma"\n', encoding="utf-8")
    (tmp_path / "u.csv").write_text(f"id,note\n1,{long}\n", encoding="utf-8")
    assert read_file(tmp_path / "q.csv", "csv").columns["note"].tolist() == [long + ", with a comma"]
    assert read_file(tmp_path / "u.csv", "csv").columns["note"].tolist() == [long]


def test_integral_floats_are_ints_on_every_path(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"s": 2.0}\n{"s": 2.5}\n', encoding="utf-8")
    (tmp_path / "b.jsonl").write_text('{"s": 2.0}\r\n{"s": 2.5}\r\n', encoding="utf-8")
    (tmp_path / "c.csv").write_text("s\n2.0\n2.5\n", encoding="utf-8")
    for name, fmt in (("a.jsonl", "jsonl"), ("b.jsonl", "jsonl"), ("c.csv", "csv")):
        col = read_file(tmp_path / name, fmt).columns["s"].tolist()
        assert [(type(v), v) for v in col] == [(int, 2), (float, 2.5)], name


def test_parquet_binary_ids_are_text_and_timestamps_are_accepted(tmp_path: Path) -> None:
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({
        "case": pa.array([b"q018", b"q019"], type=pa.binary()),
        "ts": pa.array([dt.datetime(2026, 10, 1, 12, 0, 0), dt.datetime(2026, 10, 1, 12, 0, 1, 500000)],
                       type=pa.timestamp("us")),
        "ts_tz": pa.array([dt.datetime(2026, 10, 1, 12, 0, tzinfo=dt.timezone.utc)] * 2,
                          type=pa.timestamp("ms", tz="Europe/Paris")),
        "day": pa.array([dt.date(2026, 10, 1)] * 2, type=pa.date32()),
    })
    pq.write_table(table, tmp_path / "r.parquet")
    raw = read_file(tmp_path / "r.parquet", "parquet")
    assert raw.columns["case"].tolist() == ["q018", "q019"]
    assert raw.columns["ts"].tolist() == ["2026-10-01T12:00:00.000000Z", "2026-10-01T12:00:01.500000Z"]
    assert raw.columns["ts_tz"].tolist() == ["2026-10-01T12:00:00.000000Z"] * 2
    assert raw.columns["day"].tolist() == ["2026-10-01"] * 2
    from evalspec.results.table import parse_timestamp

    assert parse_timestamp(raw.columns["ts"][1]) == dt.datetime(2026, 10, 1, 12, 0, 1, 500000, tzinfo=dt.timezone.utc)


def test_parquet_binary_that_is_not_utf8_is_located(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from evalspec.errors import InputError

    pq.write_table(pa.table({"case": pa.array([b"ok", b"\xff\xfe"], type=pa.binary())}), tmp_path / "r.parquet")
    with pytest.raises(InputError) as exc:
        read_file(tmp_path / "r.parquet", "parquet", display="r.parquet")
    assert exc.value.render() == ("r.parquet:2: a binary value is not UTF-8 text (got b'\\xff\\xfe'); store "
                                  "identifiers and labels as text")


def test_the_fast_paths_are_taken_on_plain_files() -> None:
    """So the agreement properties above compare two paths, not one with itself."""
    rows = [{"id": "a\u2028b", "n": 1.0, "f": True}, {"id": None, "n": 2.5, "f": False}]
    assert _read_jsonl_arrow(_jsonl(rows), "r.jsonl") is not None
    assert _read_csv_arrow(_csv(rows, ["id", "n", "f"])) is not None


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
@given(tables(), st.sampled_from(["lf", "crlf", "bom", "blank", "array-line", "no-final-newline"]))
def test_a_file_read_while_scanned_gives_the_exact_values(tmp_path: Path, rows: list[dict[str, Any]],
                                                          shape: str) -> None:
    """``read_file`` parses a JSONL file beside its scan; odd files still get the exact path's answer."""
    from evalspec.errors import InputError

    data = _jsonl(rows, "\r\n" if shape == "crlf" else "\n")
    if shape == "bom":
        data = b"\xef\xbb\xbf" + data
    elif shape == "blank":
        data += b"\n" + _jsonl(rows[:1])
    elif shape == "array-line":
        data += b"[1, 2]\n"
    elif shape == "no-final-newline":
        data = data.rstrip(b"\n")
    path = tmp_path / "r.jsonl"
    path.write_bytes(data)
    try:
        exact: Any = _read_jsonl_python(data.replace(b"\r\n", b"\n").removeprefix(b"\xef\xbb\xbf"), "r.jsonl")
    except InputError as exc:
        exact = exc
    try:
        raw: Any = read_file(path, "jsonl", display="r.jsonl")
    except InputError as exc:
        assert isinstance(exact, InputError) and str(exc) == str(exact)
        return
    assert not isinstance(exact, InputError)
    import hashlib

    assert raw.sha256 == hashlib.sha256(data).hexdigest()
    _same((raw.columns, raw.lines), exact)


def test_a_small_file_is_read_without_arrow_and_gives_the_same_raw_file(tmp_path: Path) -> None:
    """Under SMALL_FILE_BYTES the exact path alone reads the file: same columns, lines and hash as Arrow's."""
    import subprocess
    import sys

    from evalspec.results import readers

    rows = [{"case": f"c{i}", "ok": i % 3 == 0, "score": i / 7, "t": "2026-10-01T00:00:00Z"} for i in range(50)]
    path = tmp_path / "r.jsonl"
    path.write_bytes(_jsonl(rows))
    arrow = read_file(path, "jsonl")  # this module reads through Arrow (arrow_paths)
    readers.SMALL_FILE_BYTES = 1 << 20
    try:
        small = read_file(path, "jsonl")
    finally:
        readers.SMALL_FILE_BYTES = 0
    assert small.sha256 == arrow.sha256 and list(small.lines) == list(arrow.lines)
    _same((small.columns, small.lines), (arrow.columns, arrow.lines))
    probe = ("import sys; from pathlib import Path; from evalspec.results.readers import read_file; "
             f"read_file(Path({str(path)!r}), 'jsonl'); print('pyarrow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"  # a small file costs no pyarrow import
