"""Case ids kept as Arrow texts: :class:`~evalspec.results.values.LazyTexts` reads as the object array it stands for.

A case table's case ids are read into Arrow by the batch reader and stay there
(:meth:`~evalspec.results.values.LazyCoded.of_texts`, ``_labels(..., lazy=True)``): each id is
made a Python ``str`` only where a run reads it. Every way case ids are read is held to the
object array of the same texts; the column's values, its labels, codes and missing rows to
those of the objects' path; and a case table of thousands of ids, out of order, to the claim of
the attempt rows it was reduced from.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalspec.results.values import LazyCoded, LazyTexts, Texts

_TEXT = st.text(alphabet=st.sampled_from(list("ab zé\u00a0-_0")), max_size=4)


def _keys(n: int) -> st.SearchStrategy:
    index = st.integers(-n - 2, n + 1)
    return st.one_of(
        index,
        st.builds(slice, st.none() | index, st.none() | index, st.none() | st.sampled_from([1, 2, -1, -3])),
        st.lists(st.booleans(), min_size=n, max_size=n).map(lambda b: np.array(b, dtype=bool)),
        st.lists(index, max_size=6).map(lambda i: np.array(i, dtype=np.int64)),
        st.lists(st.integers(0, max(n - 1, 0)), max_size=6).map(lambda i: np.array(i, dtype=np.int32)),
    )


def _read(ids: object, key: object) -> tuple[str, object]:
    try:
        got = ids[key]  # type: ignore[index]
    except IndexError:
        return "IndexError", None
    return "ok", got.tolist() if isinstance(got, np.ndarray) else got


@given(st.lists(_TEXT, max_size=12).flatmap(lambda t: st.tuples(st.just(t), _keys(len(t)))))
def test_lazy_texts_read_as_the_object_array(drawn: tuple[list[str], object]) -> None:
    texts, key = drawn
    objects = np.empty(len(texts), dtype=object)
    objects[:] = texts
    lazy = LazyTexts(pa.array(texts, pa.string()))
    assert len(lazy) == len(objects) and lazy.shape == objects.shape and lazy.size == objects.size
    assert lazy.dtype == objects.dtype and lazy.ndim == 1
    assert _read(lazy, key) == _read(objects, key)
    got = lazy[key] if _read(objects, key)[0] == "ok" else None
    if isinstance(got, np.ndarray):
        assert got.dtype == object
    assert lazy.tolist() == texts and list(lazy) == texts
    assert np.asarray(lazy).tolist() == texts and np.asarray(lazy).dtype == object
    assert np.asarray(lazy, dtype=object).tolist() == texts
    assert pickle.loads(pickle.dumps(lazy)).tolist() == texts


def test_a_large_string_array_reads_alike() -> None:
    lazy = LazyTexts(pa.array(["x", "yy", "z"], pa.large_string()))
    assert lazy[-1] == "z" and lazy[np.array([2, 0])].tolist() == ["z", "x"] and lazy[1:].tolist() == ["yy", "z"]
    assert lazy[np.array([-1, 0, -3])].tolist() == ["z", "x", "x"]  # (negative positions count from the end)
    with pytest.raises(IndexError):
        lazy[np.array([0, -4])]


@given(st.lists(st.integers(-1, 4), min_size=1, max_size=20), st.lists(_TEXT, min_size=5, max_size=5, unique=True))
def test_a_column_of_texts_made_late_is_the_column_made_at_once(codes: list[int], texts: list[str]) -> None:
    arrow = pa.array(texts, pa.string())
    objects = np.empty(len(texts), dtype=object)
    objects[:] = texts
    code_array = np.array(codes, dtype=np.int8)
    late = LazyCoded.of_texts(code_array, arrow)
    now = LazyCoded(code_array, Texts.of(objects, arrow))
    lazy = late.lazy_texts()
    assert isinstance(lazy, LazyTexts) and lazy.tolist() == texts
    assert [late[i] for i in range(len(codes))] == [now[i] for i in range(len(codes))]  # (no objects made: ...)
    assert late._uniques is None  # (... each row's text read from Arrow)
    mask = code_array >= 1
    assert late[mask].tolist() == now[mask].tolist() and late[mask].lazy_texts() is not None
    assert np.asarray(late).tolist() == np.asarray(now).tolist()
    uniques = late.uniques
    assert isinstance(uniques, Texts) and uniques.arrow is arrow and uniques.tolist() == texts
    assert late.uniques is uniques  # (made once)
    assert late.lazy_texts() is not None  # (still read from Arrow where asked so)


def _column(texts: list[str], seed: int) -> tuple[LazyCoded, LazyCoded]:
    """The same column twice, read as the batch reader holds it: texts kept in Arrow, and made objects at once."""
    rng = np.random.default_rng(seed)
    codes = np.concatenate([np.arange(len(texts)), rng.integers(-1, len(texts), 50)]).astype(np.int32)
    arrow = pa.array(texts, pa.string())
    objects = np.empty(len(texts), dtype=object)
    objects[:] = texts
    return LazyCoded.of_texts(codes, arrow), LazyCoded(codes, Texts.of(objects, arrow))


@pytest.mark.parametrize("kind", ["in order", "shuffled", "missing words", "spaces", "few"])
def test_labels_of_texts_kept_in_arrow_are_those_of_the_objects(kind: str) -> None:
    from evalspec.results.table import _labels

    n = 2500 if kind != "few" else 300
    texts = [f"case-{i:05d}" for i in range(n)]
    if kind != "in order":
        texts = [texts[i] for i in np.random.default_rng(5).permutation(n)]
    if kind == "missing words":
        texts[7], texts[100], texts[2000] = "NA", "null", "N/A"
    if kind == "spaces":
        texts[3] = "case-x\u00a0"
    lazy, eager = _column(texts, 1)
    codes, labels, missing = _labels(lazy, lazy=True)
    want_codes, want_labels, want_missing = _labels(eager)
    assert codes.tolist() == want_codes.tolist() and missing.tolist() == want_missing.tolist()
    assert codes.dtype == want_codes.dtype
    assert list(labels) == want_labels.tolist() and len(labels) == len(want_labels)
    plain = kind in ("in order", "shuffled", "missing words")
    assert isinstance(labels, LazyTexts) == plain  # (the others are labelled one by one, as objects)
    assert (lazy._uniques is None) == plain  # no Python object made on the fast path
    assert _labels(lazy)[1].tolist() == want_labels.tolist()  # (not lazy: objects, as every other path reads them)


def test_a_case_table_of_thousands_of_ids_out_of_order_gives_the_claim_of_its_attempt_rows(tmp_path: Path,
                                                                                          monkeypatch) -> None:
    from evalspec.results.case_table import load_case_table
    from evalspec.run import load_plan_for_run
    from tests.results.case_table_study import assert_same_claims, reference_case_table, study_rows, write_study

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    folder = write_study(tmp_path, "first", "count_as_fail", rows=study_rows(n_cases=2400), analyses="""  - {kind: proportion}
  - {kind: paired_difference, compare: [A, B], method: cluster_t}
  - {kind: critical_failures}""")
    table = reference_case_table(folder)  # (ids c000 .. c2399: "c1000" sorts before "c999", so they are sorted)
    order = np.random.default_rng(2).permutation(table.num_rows)
    pq.write_table(table.take(pa.array(order)), folder / "cases.parquet")
    handle = load_plan_for_run(folder / "plan_ct.yaml")
    checked = load_case_table(handle.plan, handle.path, handle.diagnostic)
    assert isinstance(checked.case_ids, LazyTexts)  # (the fast path is the one compared below)
    assert list(checked.case_ids) == sorted(f"c{c:03d}" for c in range(2400))
    assert_same_claims(folder)
