"""The record-batch reader's distinct values in C number them exactly as a Python dict does (first seen).

:class:`~evalspec.results.text_index.TextIndex` (texts, found by hash and compared by bytes)
and :class:`~evalspec.results.batches.Distinct` (texts and other values across batches) against
the plain first-seen numbering, with every hash made equal too (so each lookup meets
collisions), texts of one length and of many, sliced Arrow arrays, and values of several
types in one column; :class:`~evalspec.results.batches.Watch` refuses at the row the per-value
watch refused at.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

from evalspec.results import text_index  # noqa: E402
from evalspec.results.batches import Distinct, Watch  # noqa: E402
from evalspec.results.text_index import TextIndex, text_hashes  # noqa: E402

_texts = st.text(alphabet=st.sampled_from("ab\u00e9 0"), max_size=9)
_batch = st.lists(_texts, max_size=40).map(lambda xs: list(dict.fromkeys(xs)))


def _arrow(texts: list[str], how: int) -> Any:
    if how == 0:
        return pa.array(texts, pa.string())
    if how == 1:
        return pa.array(texts, pa.large_string())
    return pa.array(["pad", *texts, "tail"], pa.string()).slice(1, len(texts))  # an offset into the buffers


@settings(max_examples=150, derandomize=True, database=None, deadline=None)
@given(batches=st.lists(st.tuples(_batch, st.integers(0, 2)), max_size=8), collide=st.booleans())
def test_text_index_numbers_texts_as_a_dict_does(batches: list[tuple[list[str], int]], collide: bool) -> None:
    with pytest.MonkeyPatch.context() as mp:
        if collide:  # every text the same hash: only the byte comparison tells them apart
            mp.setattr(text_index, "text_hashes", lambda arr: np.full(len(arr), 7, dtype=np.uint64))
        _numbers_as_a_dict(batches)


def _numbers_as_a_dict(batches: list[tuple[list[str], int]]) -> None:
    index, ref = TextIndex(), {}
    for texts, how in batches:
        arr = _arrow(texts, how)
        assert index.find(arr).tolist() == [ref.get(t, -1) for t in texts]
        ids, new = index.add(arr)
        assert new.tolist() == [t not in ref for t in texts]
        for t in texts:
            ref.setdefault(t, len(ref))
        assert ids.tolist() == [ref[t] for t in texts]
        assert len(index) == len(ref) and index.arrow().to_pylist() == list(ref)


@settings(max_examples=100, derandomize=True, database=None, deadline=None)
@given(pool=st.lists(_texts, min_size=1, max_size=30))
def test_equal_texts_hash_alike_in_any_batch(pool: list[str]) -> None:
    whole = dict(zip(pool, text_hashes(pa.array(pool)).tolist()))
    for t in pool:  # alone (one length: the fixed-width path), beside a longer text (the general path)
        assert text_hashes(pa.array([t])).tolist() == [whole[t]]
        assert text_hashes(pa.array([t, t + "xyz"])).tolist()[0] == whole[t]


def test_many_texts_grow_the_table() -> None:
    index = TextIndex()
    texts = [f"case-{i:07d}" for i in range(30_000)] + [str(i) for i in range(5_000)]
    for start in range(0, len(texts), 4096):
        index.add(pa.array(texts[start:start + 4096]))
    assert len(index) == len(texts)
    probe = pa.array(texts[::7] + ["case-x", ""])
    assert index.find(probe).tolist() == list(range(0, len(texts), 7)) + [-1, -1]


_value = st.one_of(_texts, st.integers(-3, 3), st.booleans(), st.sampled_from([1.5, 2.0, -0.0]), st.none())


def _reference(batches: list[list[Any]]) -> tuple[list[list[int]], list[Any]]:
    index: dict[Any, int] = {}
    values: list[Any] = []
    out = []
    for vals in batches:
        codes = []
        for v in vals:
            if v is None:
                codes.append(-1)
                continue
            key = v if v.__class__ is str else (v.__class__, v)
            if key not in index:
                index[key] = len(values)
                values.append(v)
            codes.append(index[key])
        out.append(codes)
    return out, values


def _as_uniques(vals: list[Any], arrow: bool) -> Any:
    if arrow:
        return pa.array(vals, pa.string())
    out = np.empty(len(vals), dtype=object)
    out[:] = vals
    return out


@settings(max_examples=150, derandomize=True, database=None, deadline=None)
@given(batches=st.lists(st.tuples(st.lists(_value, max_size=12), st.booleans()), max_size=6))
def test_distinct_numbers_values_first_seen(batches: list[tuple[list[Any], bool]]) -> None:
    """Text batches as Arrow arrays, others as object arrays (repeats and None among them), in any order."""
    dist = Distinct()
    inputs = []
    for vals, arrow in batches:
        texts_only = arrow and vals and all(v.__class__ is str for v in vals)
        vals = list(dict.fromkeys(vals)) if texts_only else vals
        inputs.append(vals)
        uniques = _as_uniques(vals, bool(texts_only))
        got = dist.add(np.arange(len(vals), dtype=np.int32), uniques)
        ref_codes, ref_values = _reference(inputs)
        assert got.tolist() == ref_codes[-1]
        assert dist.count == len(ref_values) and dist.values == ref_values
    col = dist.column()
    ref_codes, ref_values = _reference(inputs)
    assert col.codes.tolist() == [c for codes in ref_codes for c in codes]
    assert col.uniques.tolist() == ref_values
    if ref_values and all(v.__class__ is str for v in ref_values):
        assert col.uniques.arrow.to_pylist() == ref_values  # the texts keep their Arrow form


class _Refused(Exception):
    pass


def _per_value_watch(files: list[list[list[str]]], limit: int) -> tuple[int, int] | None:
    """(file, row) at which the per-value watch refused: the first row of the value one too many."""
    earlier: set[str] = set()
    for f, batches in enumerate(files):
        mine: list[str] = []
        extra, row = 0, 0
        for vals in batches:
            for v in vals:
                if v not in mine:
                    mine.append(v)
                    if v not in earlier:
                        extra += 1
                        if len(earlier) + extra > limit:
                            return f, row
                row += 1
        earlier.update(mine)
    return None


@settings(max_examples=120, derandomize=True, database=None, deadline=None)
@given(files=st.lists(st.lists(st.lists(st.sampled_from([f"c{i}" for i in range(12)]), max_size=10), max_size=4),
                      min_size=1, max_size=3), limit=st.integers(0, 12))
def test_watch_refuses_at_the_row_of_the_value_one_too_many(files: list[list[list[str]]], limit: int) -> None:
    watch = Watch(column="case", limit=limit, refuse=lambda display, line, unit: _Refused(display, line))
    got = None
    try:
        for f, batches in enumerate(files):
            dist, rows = Distinct(), 0
            for vals in batches:
                uniq = list(dict.fromkeys(vals))
                codes = np.array([uniq.index(v) for v in vals], dtype=np.int32)
                gcodes = dist.add(codes, pa.array(uniq, pa.string()))
                watch.see(dist, gcodes, rows, f"file{f}", "row")
                rows += len(vals)
            watch.finish(dist)
    except _Refused as exc:
        got = (int(exc.args[0][4:]), exc.args[1])
    assert got == _per_value_watch(files, limit)
