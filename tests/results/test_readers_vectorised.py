"""The vectorised typing paths (Arrow, on many distinct values) give the per-value answer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.results.table import _is_missing, _micros, arrow_pays, missing_mask, parse_times, parse_timestamp

pytest.importorskip("pyarrow")  # loaded: the Arrow paths run for more than 2,000 values (arrow_pays)

from tests.arrow_paths import arrow_paths  # noqa: E402,F401 - the fixture below

pytestmark = pytest.mark.usefixtures("arrow_paths")  # small files too go through Arrow here


def test_arrow_is_used_for_many_values_once_loaded() -> None:
    assert arrow_pays(2001) and not arrow_pays(2000)

TIMES = ["2026-10-01T10:01:00Z", "2026-10-01T10:01:00+01:00", "2026-10-01T10:01:00", "2026-02-30T00:00:00Z",
         "0001-01-01T00:00:00+01:00", "2026-10-01T24:00:00Z", "2026-10-01T10:01:60Z", "2026-1-01T10:01:00Z",
         "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", " 2026-10-01T10:01:00Z", "2026-13-01T00:00:00Z",
         "2024-02-29T23:59:59Z", "2023-02-29T00:00:00Z", "", "nope"]


def _one_by_one(texts: list) -> list:
    return [None if parse_timestamp(x) is None else _micros(parse_timestamp(x)) for x in texts]


@settings(max_examples=20, deadline=None, derandomize=True)
@given(st.lists(st.datetimes().map(lambda d: d.isoformat(timespec="seconds") + "Z"), max_size=50))
def test_parse_times_agrees_with_parse_timestamp(generated: list) -> None:
    texts = generated + TIMES * 130  # more than 2,000 distinct values: the Arrow path runs
    assert parse_times(texts) == _one_by_one(texts)


def test_parse_times_on_mixed_types_and_the_fast_shape() -> None:
    texts = TIMES * 200
    assert parse_times(texts) == _one_by_one(texts)
    mixed = texts + [None, 5]
    assert parse_times(mixed) == _one_by_one(mixed)


def test_missing_mask_agrees_with_is_missing() -> None:
    values = ["", " ", "NA", "na ", "NaN", "null", "None", "none", "x", "0", "n/a", "Null "] * 300
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    assert missing_mask(arr).tolist() == [_is_missing(v) for v in values]
    mixed = np.empty(len(values) + 3, dtype=object)
    mixed[:] = values + [None, 1.5, float("nan")]
    assert missing_mask(mixed).tolist() == [_is_missing(v) for v in mixed.tolist()]


def test_texts_read_by_arrow_carry_their_arrow_form_and_type_the_same() -> None:
    """A JSONL column's distinct texts keep their Arrow array; typing them gives the per-value answer."""
    import json

    from evalspec.results.readers import read_file
    from evalspec.results.values import Texts
    from evalspec.results.table import factorize, times_micros

    # more than 2,000 distinct values in each column: the Arrow paths run
    times = TIMES + [f"2026-10-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{i // 60 % 60:02d}Z" for i in range(3000)]
    labels = ["", "NA", "x", "None", " null", "n/a"] + [f"id-{i}" for i in range(3000)]
    rows = [{"t": t, "m": m} for t, m in zip(times, labels)]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.jsonl"
        path.write_bytes(data)
        raw = read_file(path, "jsonl")
    for name, values in (("t", times[:len(rows)]), ("m", labels[:len(rows)])):
        codes, uniques = factorize(raw.columns[name])
        assert isinstance(uniques, Texts) and uniques.arrow is not None and len(uniques) > 2000
        assert uniques.arrow.to_pylist() == uniques.tolist()
        assert [uniques[c] for c in codes.tolist()] == values
        plain = np.asarray(uniques).view(np.ndarray).copy()
        assert missing_mask(uniques).tolist() == missing_mask(plain).tolist() == [_is_missing(v) for v in plain]
        assert times_micros(uniques).tolist() == times_micros(plain).tolist()
    assert uniques[1:].arrow is None  # a slice holds other values: it does not keep the Arrow form


def test_whitespace_list_is_what_str_strip_removes() -> None:
    from evalspec.results.table import PY_WHITESPACE

    assert PY_WHITESPACE == "".join(chr(c) for c in range(0x110000) if chr(c).isspace())


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.lists(st.text(max_size=6), max_size=30), st.booleans())
def test_identifier_labels_in_arrow_agree_with_the_per_value_path(extra: list, edge_space: bool) -> None:
    """Case and cluster labels sorted by Arrow are the ones the per-value path gives (any text)."""
    import pyarrow as pa

    from evalspec.results.values import CodedColumn, Texts
    from evalspec.results.table import _labels, _plain_texts

    texts = list(dict.fromkeys([f"c-{i:05d}" for i in range(2500)] + ["é", "Z", "a", "NA", "", "null", "中"]
                               + extra + ([" padded"] if edge_space else [])))
    uniques = np.empty(len(texts), dtype=object)
    uniques[:] = texts
    codes = np.arange(len(texts) * 2, dtype=np.int32) % len(texts)
    fast = CodedColumn.of(codes, Texts.of(uniques, pa.array(texts, type=pa.string())), distinct=True)
    slow = np.asarray(fast).view(np.ndarray).copy()  # a plain object column: the per-value path
    assert (_plain_texts(fast.uniques) is not None) == all(t == t.strip() for t in texts)
    f_codes, f_labels, f_missing = _labels(fast)
    s_codes, s_labels, s_missing = _labels(slow)
    assert f_labels.tolist() == s_labels.tolist()
    assert f_codes.tolist() == s_codes.tolist() and f_missing.tolist() == s_missing.tolist()


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(st.integers(0, 9999), st.integers(0, 19), st.integers(0, 39), st.integers(0, 29),
                          st.integers(0, 69), st.integers(0, 69)), min_size=1, max_size=300))
def test_times_of_the_fast_shape_agree_with_parse_timestamp_for_any_digits(parts: list) -> None:
    """Every text of the shape ``YYYY-MM-DDTHH:MM:SSZ``, valid or not (year 0000, month 13, 30 February, 29
    February of a year that is not leap, hour 24, second 60), reads as :func:`parse_timestamp` reads it."""
    texts = [f"{y:04d}-{m:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}Z" for y, m, d, hh, mm, ss in parts]
    texts += ["2024-02-29T23:59:59Z", "2100-02-29T00:00:00Z", "2000-02-29T00:00:00Z", "0000-01-01T00:00:00Z",
              "1969-12-31T23:59:59Z", "1600-03-01T00:00:00Z"] + TIMES
    texts += [f"2026-10-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z" for i in range(2100)]
    assert arrow_pays(len(texts))  # (Arrow's path)
    assert parse_times(texts) == _one_by_one(texts)


_SHAPE = "2026-10-01T12:34:56Z"
#: Bytes a text of the fast shape might hold instead: digits, separators, a non-ASCII digit ("٣", two bytes in
#: UTF-8), bytes just outside the digits ("/" and ":"), a space, a line break.
_NEAR = ["0", "9", "5", "-", "T", ":", "Z", "z", "t", "/", " ", "\n", "٣", "é", ""]


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.lists(st.one_of(st.none(), st.lists(st.tuples(st.integers(0, 19), st.sampled_from(_NEAR)), max_size=3)),
                min_size=1, max_size=40),
       st.integers(0, 3), st.booleans())
def test_the_fast_shape_read_from_bytes_is_the_regular_expressions(edits: list, cut: int, large: bool) -> None:
    """Which texts :func:`_iso_z_micros` reads (from their bytes) are those a regular expression of the shape matches
    in Arrow, whatever a text holds (one byte off, a multi-byte character, a line break, longer or shorter, null),
    in a sliced array too; and those it reads give :func:`parse_timestamp`'s time."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from evalspec.results.table import _iso_z_micros

    texts: list = []
    for e in edits:
        if e is None:
            texts.append(None)
            continue
        chars = list(_SHAPE)
        for at, ch in e:
            chars[at] = ch
        texts.append("".join(chars))
    texts += [_SHAPE, _SHAPE + "\n", _SHAPE[:-1], "2026-02-30T00:00:00Z", "2024-02-29T23:59:60Z"]
    arr = pa.array(["x"] * cut + texts, type=pa.large_string() if large else pa.string()).slice(cut)
    same, micros = _iso_z_micros(arr)
    regex = pc.match_substring_regex(arr, r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$").to_pylist()
    expected = [bool(r) and parse_timestamp(t) is not None for r, t in zip(regex, texts)]
    assert same.tolist() == expected
    assert micros.tolist() == [_micros(parse_timestamp(t)) for t, s in zip(texts, expected) if s]



@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from([None, "", "NA", " ", "v1", "v2", 1, 2.5, float("nan"), "x"]), min_size=0, max_size=60))
def test_the_checks_missing_mask_without_a_gather_is_the_per_row_answer(values: list) -> None:
    """The checks' missing-value mask skips the gather of every row only where no value is missing (no None, no
    missing text); either way it is the per-row answer."""
    from evalspec.results.checks import _none_mask

    col = np.empty(len(values), dtype=object)
    col[:] = values
    assert _none_mask(col).tolist() == [v is None or _is_missing(v) for v in values]
