"""Texts read as Parquet's own dictionaries code exactly as the texts themselves (``arrow_codes``).

The streaming reduction reads a Parquet file's text columns with ``read_dictionary`` and codes
each batch from its dictionary (:func:`evalspec.results.arrow.dictionary_codes`). The claim's
bytes depend on the codes' first-seen order, so every code and every distinct value must be what
dictionary-encoding the plain texts gives: a dictionary with values no row uses, in another
order, repeated, changing between row groups, a column written without a dictionary (or one that
falls back to plain pages part-way), and nulls.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.results.arrow import arrow_codes, dictionary_codes

_TEXT = st.one_of(st.none(), st.sampled_from(["a", "b", "", "case-1", "ü", "é x", "0", "nan"]),
                  st.text(max_size=3))


def _same(got: object, want: object) -> None:
    assert isinstance(got, tuple) and isinstance(want, tuple)
    assert got[0].dtype == want[0].dtype
    assert np.array_equal(got[0], want[0])
    assert got[1].tolist() == want[1].tolist()
    assert got[2] == want[2]
    g_arrow, w_arrow = getattr(got[1], "arrow", None), getattr(want[1], "arrow", None)
    assert (g_arrow is None) == (w_arrow is None)
    if g_arrow is not None:
        assert g_arrow.to_pylist() == w_arrow.to_pylist()


@st.composite
def _dictionary_arrays(draw: st.DrawFn) -> pa.DictionaryArray:
    """Any dictionary array of texts: unused, shuffled, repeated or null dictionary values, null indices."""
    dictionary = draw(st.lists(_TEXT, min_size=1, max_size=8))
    n = draw(st.integers(0, 40))
    indices = draw(st.lists(st.one_of(st.none(), st.integers(0, len(dictionary) - 1)), min_size=n, max_size=n))
    typ = draw(st.sampled_from([pa.string(), pa.large_string()]))
    itype = draw(st.sampled_from([pa.int8(), pa.int32(), pa.int64()]))
    arr = pa.DictionaryArray.from_arrays(pa.array(indices, type=itype), pa.array(dictionary, type=typ))
    start = draw(st.integers(0, n))
    return arr.slice(start, draw(st.integers(0, n - start)))  # (an offset into the buffers)


@given(_dictionary_arrays())
@settings(max_examples=300)
def test_a_dictionary_array_codes_as_its_texts(arr: pa.DictionaryArray) -> None:
    plain = pa.array(arr.to_pylist(), type=arr.dictionary.type)
    _same(arrow_codes(arr), arrow_codes(plain))
    _same(arrow_codes(pa.chunked_array([arr])), arrow_codes(plain))


def test_a_repeated_or_null_dictionary_value_is_hashed_as_before() -> None:
    repeated = pa.DictionaryArray.from_arrays(pa.array([1, 0, 2]), pa.array(["x", "y", "x"]))
    assert dictionary_codes(repeated) is None
    _same(arrow_codes(repeated), arrow_codes(pa.array(["y", "x", "x"])))
    with_null = pa.DictionaryArray.from_arrays(pa.array([1, 0]), pa.array(["x", None]))
    assert dictionary_codes(with_null) is None
    _same(arrow_codes(with_null), arrow_codes(pa.array([None, "x"])))
    unused = pa.DictionaryArray.from_arrays(pa.array([2, None, 2, 0]), pa.array(["x", "y", "z"]))
    codes, uniques, _ = dictionary_codes(unused)
    assert codes.tolist() == [0, -1, 0, 1] and uniques.tolist() == ["z", "x"]


@given(columns=st.lists(st.lists(_TEXT, min_size=1, max_size=60), min_size=1, max_size=3),
       row_group=st.integers(1, 25), batch=st.integers(1, 30), dictionary=st.sampled_from(["all", "none", "mixed"]),
       page_limit=st.sampled_from([None, 8]))
@settings(max_examples=80)
def test_parquet_read_as_dictionaries_codes_as_its_texts(tmp_path_factory: object, columns: list[list[object]],
                                                        row_group: int, batch: int, dictionary: str,
                                                        page_limit: int | None) -> None:
    n = min(len(c) for c in columns)
    table = pa.table({f"c{i}": pa.array(c[:n], type=pa.string()) for i, c in enumerate(columns)})
    path = tmp_path_factory.mktemp("pq") / "t.parquet"  # type: ignore[attr-defined]
    use = {"all": True, "none": False, "mixed": ["c0"]}[dictionary]
    extra = {"dictionary_pagesize_limit": page_limit} if page_limit else {}  # plain pages part-way
    pq.write_table(table, path, row_group_size=row_group, use_dictionary=use, **extra)
    names = table.column_names
    plain = pq.ParquetFile(path).iter_batches(batch_size=batch)
    coded = pq.ParquetFile(path, read_dictionary=names).iter_batches(batch_size=batch)
    want = [arrow_codes(b.column(c)) for b in plain for c in names]
    # batches of the dictionary reader end at row groups: compare row by row, codes within each batch
    got_rows: list[list[object]] = [[] for _ in names]
    want_rows: list[list[object]] = [[] for _ in names]
    for b in coded:
        for k, c in enumerate(names):
            col = b.column(c)
            assert pa.types.is_dictionary(col.type)
            _same(arrow_codes(col), arrow_codes(pa.array(col.to_pylist(), type=pa.string())))
            codes, uniques, _ = arrow_codes(col)
            got_rows[k].extend(None if i < 0 else uniques[i] for i in codes.tolist())
    for j, w in enumerate(want):
        codes, uniques, _ = w
        want_rows[j % len(names)].extend(None if i < 0 else uniques[i] for i in codes.tolist())
    assert got_rows == want_rows == [table.column(c).to_pylist() for c in names]


@given(st.lists(st.tuples(st.integers(-1, 5), st.integers(1, 30)), max_size=12))
def test_run_firsts_keep_the_first_seen_order(runs: list[tuple[int, int]]) -> None:
    """Each run's first value: the values first seen in their order (what ``pc.unique`` is asked), one per run when
    equal values sit together (a batch's rows of one case), every value where runs are mostly of one."""
    from evalspec.results.arrow import run_firsts

    values = np.array([v for v, k in runs for _ in range(k)], dtype=np.int32)
    got = run_firsts(values)
    assert list(dict.fromkeys(got.tolist())) == list(dict.fromkeys(values.tolist()))
    assert got.size <= values.size
    if all(k >= 2 for _, k in runs):  # (runs of two rows or more: one value a run)
        assert got.size == (int(np.count_nonzero(values[1:] != values[:-1])) + 1 if values.size else 0)
    long_runs = pa.DictionaryArray.from_arrays(pa.array([None if v < 0 else v for v in values.tolist()],
                                                        type=pa.int32()), pa.array(list("abcdef")))
    _same(arrow_codes(long_runs), arrow_codes(pa.array(long_runs.to_pylist(), type=pa.string())))


def test_a_dictionary_in_first_seen_order_gives_its_indices_as_the_codes() -> None:
    indices = pa.array(np.array([0, 1, 1, 2, 0, 2], dtype=np.int32))
    arr = pa.DictionaryArray.from_arrays(indices, pa.array(["x", "y", "z"]))
    codes, uniques, _ = dictionary_codes(arr)
    _same((codes, uniques, True), arrow_codes(pa.array(arr.to_pylist())))
    assert np.shares_memory(codes, np.frombuffer(indices.buffers()[1], dtype=np.int32))  # (not gathered again)
    for other in ([1, 0, 1, 2], [0, 2, 2]):  # another first-seen order, a text no row uses: looked up, not the indices
        arr = pa.DictionaryArray.from_arrays(pa.array(np.array(other, dtype=np.int32)), pa.array(["x", "y", "z"]))
        _same(dictionary_codes(arr), arrow_codes(pa.array(arr.to_pylist())))
