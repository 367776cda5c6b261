"""A text column's dictionary encoding without hashing, where the column is one sorted block of distinct texts
repeated (a case table's case ids in ``ORDER BY`` candidate, case), or with only the first text of each run
hashed, where runs of equal texts are long (its candidates, its clusters): the same encoding Arrow's hashing
gives, for such columns and for every column that only nearly is one."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.results import batches
from evalspec.results.batches import _repeated_block, _runs, dictionary_encode, number_codes

_TEXTS = st.text(alphabet=st.sampled_from(["a", "b", "z", "é", " ", "\u3000", "0", "\x00"]), max_size=4)


def _same(col: pa.Array) -> None:
    ours, arrows = dictionary_encode(col), col.dictionary_encode()
    assert ours.equals(arrows)
    assert ours.type == arrows.type and ours.dictionary.type == arrows.dictionary.type
    ours.validate(full=True)


def _array(values: list[str | None], large: bool, cut: int) -> pa.Array:
    typ = pa.large_string() if large else pa.string()
    arr = pa.array(["pad"] * cut + values, typ)
    return arr.slice(cut) if cut else arr  # (a slice: its texts start past its buffers' start)


@settings(max_examples=150, derandomize=True, database=None)
@given(block=st.lists(_TEXTS, min_size=1, max_size=12, unique=True), k=st.integers(1, 4), large=st.booleans(),
       cut=st.integers(0, 2), change=st.one_of(st.none(), st.tuples(st.integers(0, 47), _TEXTS)))
def test_the_encoding_is_arrows_for_repeated_blocks_and_near_misses(block: list[str], k: int, large: bool, cut: int,
                                                                     change: tuple[int, str] | None) -> None:
    values: list[str | None] = sorted(block, key=lambda t: t.encode()) * k  # the fast path's own shape ...
    if change is not None:  # ... and one text changed anywhere, which may or may not keep that shape
        at, text = change
        values[at % len(values)] = text
    col = _array(values, large, cut)
    _same(col)
    if change is None:
        assert _repeated_block(col) == len(block)  # (told without hashing)


@settings(max_examples=100, derandomize=True, database=None)
@given(values=st.lists(st.one_of(st.none(), _TEXTS), max_size=40), large=st.booleans(), cut=st.integers(0, 2))
def test_any_column_is_encoded_as_arrow_encodes_it(values: list[str | None], large: bool, cut: int) -> None:
    _same(_array(values, large, cut))


def test_which_columns_take_the_path_without_hashing() -> None:
    ids = [f"case-{i:03d}" for i in range(300)]
    assert _repeated_block(pa.array(ids * 2)) == 300  # sorted distinct ids, once per candidate
    assert _repeated_block(pa.array(ids)) == 300
    assert _repeated_block(pa.array(["A"] * 10)) == 1  # one text throughout
    assert _repeated_block(pa.array(["A"] * 5 + ["B"] * 5)) is None  # runs: "A" is not repeated
    assert _repeated_block(pa.array(ids + ids[:-1] + ["case-999"])) is None  # the last text differs
    assert _repeated_block(pa.array(ids[::-1] * 2)) is None  # descending: not known distinct without hashing
    assert _repeated_block(pa.array(ids + ids[:150])) is None  # not whole repeats
    assert _repeated_block(pa.array(ids[:2] + ids[:2] + ["case-000"])) is None
    assert _repeated_block(pa.array(["b", "a", "b", "a"])) is None  # (b > a: the block of distinct texts is "b")
    assert _repeated_block(pa.array(["a", None, "a", None])) is None  # nulls: hashed
    assert _repeated_block(pa.array(["é", "e"] * 2)) is None  # byte order: "é" (0xC3...) sorts after "e"
    assert _repeated_block(pa.array(["e", "é"] * 2)) == 2


def test_long_columns_are_checked_past_the_first_look(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(batches, "_FIRST_LOOK", 4)  # (several passes over a column of 2 x 100 texts)
    ids = [f"c{i:03d}" for i in range(100)]
    assert _repeated_block(pa.array(ids * 2)) == 100
    for at in (3, 57, 99, 100, 150, 199):
        changed = ids * 2
        changed[at] = "c0505"
        col = pa.array(changed)
        assert _repeated_block(col) is None, at
        _same(col)
    unsorted = ids[:60] + ids[61:62] + ids[60:61] + ids[62:]
    col = pa.array(unsorted * 2)
    assert _repeated_block(col) is None
    _same(col)
    for at in range(99):  # a text repeated inside the block, at every place a pass may start or end
        doubled = ids[:at + 1] + ids[at:99]
        col = pa.array(doubled * 2)
        assert _repeated_block(col) is None, at
        _same(col)


@settings(max_examples=100, derandomize=True, database=None)
@given(runs=st.lists(st.tuples(_TEXTS, st.integers(1, 30)), min_size=1, max_size=12), large=st.booleans(),
       cut=st.integers(0, 2), change=st.one_of(st.none(), st.tuples(st.integers(0, 400), st.one_of(st.none(), _TEXTS))))
def test_columns_of_runs_are_encoded_as_arrow_encodes_them(runs: list[tuple[str, int]], large: bool, cut: int,
                                                           change: tuple[int, str | None] | None) -> None:
    values: list[str | None] = [text for text, length in runs for _ in range(length)]  # (a text may recur later)
    if change is not None:
        at, text = change
        values[at % len(values)] = text
    col = _array(values, large, cut)
    _same(col)
    starts = _runs(col)
    if starts is not None:  # (where it answers, the starts are those of the runs)
        assert starts.tolist() == [i for i in range(len(values)) if i == 0 or values[i] != values[i - 1]]


def test_which_columns_are_encoded_run_by_run(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert _runs(pa.array(["A"] * 50 + ["B"] * 50)).tolist() == [0, 50]
    assert _runs(pa.array(["d1"] * 9 + ["d2"] * 9 + ["d1"] * 9)).tolist() == [0, 9, 18]
    assert _runs(pa.array(["a", "b"] * 40)) is None  # (runs of one: hashed whole)
    assert _runs(pa.array(["a"] * 40 + [None])) is None
    monkeypatch.setattr(batches, "_FIRST_LOOK", 8)  # long runs first, short ones after the first look
    col = pa.array(["x"] * 20 + [str(i) for i in range(200)])
    assert _runs(col) is None
    _same(col)


def _same_codes(col: pa.Array) -> None:
    from evalspec.results.arrow import arrow_codes

    ours, arrows = number_codes(col), arrow_codes(col)
    assert ours[0].dtype == arrows[0].dtype and ours[0].tolist() == arrows[0].tolist()
    assert [(type(v), v) for v in ours[1].tolist()] == [(type(v), v) for v in arrows[1].tolist()]
    assert ours[2] == arrows[2]


@settings(max_examples=100, derandomize=True, database=None)
@given(value=st.integers(-2**63, 2**63 - 1), n=st.integers(1, 30), typ=st.sampled_from(
    [pa.int64(), pa.int32(), pa.int8(), pa.uint64(), pa.bool_(), pa.float64()]),
       change=st.one_of(st.none(), st.tuples(st.integers(0, 29), st.one_of(st.none(), st.integers(-3, 3)))),
       cut=st.integers(0, 2))
def test_number_columns_of_one_value_are_coded_as_arrow_codes_them(value: int, n: int, typ: pa.DataType,
                                                                   change: tuple[int, int | None] | None,
                                                                   cut: int) -> None:
    if pa.types.is_boolean(typ):
        value = bool(value % 2)
    elif pa.types.is_floating(typ):
        value = float(value % 7)
    else:
        lo, hi = (0, 2**64 - 1) if typ == pa.uint64() else (-(2 ** (typ.bit_width - 1)), 2 ** (typ.bit_width - 1) - 1)
        value = min(max(value, lo), hi)
    values: list = [value] * (n + cut)
    if change is not None:
        values[change[0] % len(values)] = None if change[1] is None else type(value)(abs(change[1]))
    col = pa.array(values, typ).slice(cut)
    _same_codes(col)


def test_which_number_columns_are_coded_without_hashing(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[int] = []
    from evalspec.results import arrow

    real = arrow.arrow_codes
    monkeypatch.setattr(batches, "arrow_codes", lambda col, *a: calls.append(len(col)) or real(col, *a))
    for col in (pa.array([0] * 50), pa.array([True] * 50), pa.array([7] * 50, pa.uint8())):
        _same_codes(col)
    assert calls == [1, 1, 1]  # (only the first value coded by Arrow)
    calls.clear()
    for col in (pa.array([0] * 49 + [1]), pa.array([0] * 49 + [None]), pa.array([0.0] * 50), pa.array([1])):
        _same_codes(col)
    assert calls == [50, 50, 50, 1]
