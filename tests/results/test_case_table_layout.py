"""The case table's shortcuts give what the general paths give.

* Rows in matrix order (candidates in the plan's order, cases sorted, every cell once: what
  :func:`~evalspec.results.case_reduce.reduce_rows` writes) are laid out by a reshape, any other
  order by a scatter: a table's rows in any order, with or without some cells, give the claim
  the same rows give in order.
* Case and cluster labels: many distinct texts are checked for spaces at their ends and for
  missing-value words from their first and last bytes (only the texts those leave open are
  asked whole), and are not sorted when already in order; the labels, codes and missing rows
  are the per-value path's for any texts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.results.table import PY_WHITESPACE
from tests.results.case_table_study import claim_bytes, reference_case_table, write_study


@pytest.fixture(autouse=True)
def _fixed_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pa.Table]:
    folder = write_study(tmp_path_factory.mktemp("layout"), "mean", "count_as_fail", analyses="""  - {kind: proportion}
  - {kind: paired_difference, compare: [A, B], method: cluster_t}
  - {kind: critical_failures}
  - {kind: slices}""")
    return folder, reference_case_table(folder)


@settings(max_examples=8)
@given(seed=st.integers(0, 2**32 - 1), drop=st.integers(0, 6), shuffle=st.booleans())
def test_rows_in_any_order_give_the_claim_of_rows_in_order(study: tuple[Path, pa.Table], seed: int, drop: int,
                                                           shuffle: bool) -> None:
    folder, table = study
    rng = np.random.default_rng(seed)
    keep = np.sort(rng.choice(table.num_rows, table.num_rows - drop, replace=False))
    order = rng.permutation(keep) if shuffle else keep[::-1]
    pq.write_table(table.take(pa.array(keep)), folder / "cases.parquet")
    in_order = claim_bytes(folder / "plan_ct.yaml")
    pq.write_table(table.take(pa.array(order)), folder / "cases.parquet")
    other = claim_bytes(folder / "plan_ct.yaml")
    assert in_order.pop("data") != other.pop("data")  # (another file: another SHA-256)
    assert other == in_order


def test_the_whole_table_in_order_gives_the_claim_of_its_rows_reversed(study: tuple[Path, pa.Table]) -> None:
    folder, table = study  # (every cell once, in matrix order: the reshape, the cluster and key checks' shortcuts)
    pq.write_table(table, folder / "cases.parquet")
    in_order = claim_bytes(folder / "plan_ct.yaml")
    pq.write_table(table.take(pa.array(np.arange(table.num_rows)[::-1])), folder / "cases.parquet")
    reversed_ = claim_bytes(folder / "plan_ct.yaml")
    assert in_order.pop("data") != reversed_.pop("data")
    assert reversed_ == in_order


@pytest.mark.parametrize("order", ["in order", "reversed"])
def test_a_case_whose_cluster_differs_is_refused_in_any_order(study: tuple[Path, pa.Table], order: str) -> None:
    from evalspec.errors import InputError
    from evalspec.run import run_plan

    folder, table = study
    docs = table.column("doc").to_pylist()
    row = table.num_rows // 2 + 1  # candidate B's second case
    docs[row] = "d-elsewhere"
    changed = table.set_column(table.schema.get_field_index("doc"), "doc", pa.array(docs))
    idx = np.arange(table.num_rows)
    pq.write_table(changed.take(pa.array(idx if order == "in order" else idx[::-1])), folder / "cases.parquet")
    with pytest.raises(InputError) as err:
        run_plan(folder / "plan_ct.yaml")
    case = table.column("case_id")[row].as_py()
    assert [d.message for d in err.value.diagnostics] == [
        f"the case's cluster differs between rows (case {case!r} is in cluster 'd-elsewhere' elsewhere)"
        if order == "reversed" else
        f"the case's cluster differs between rows (case {case!r} is in cluster {docs[row - table.num_rows // 2]!r}"
        " elsewhere)"]
    flagged = row if order == "in order" else table.num_rows - 1 - (row - table.num_rows // 2)  # (the later row)
    assert err.value.diagnostics[0].line == flagged + 1


def test_the_in_order_table_is_laid_out_without_a_scatter() -> None:
    from evalspec.results.case_checks import _Cells

    cand, case = np.repeat([0, 1], 3), np.tile([0, 1, 2], 2)
    values = np.arange(6) * 10
    ordered, shuffled = _Cells(cand, case, 2, 3), _Cells(cand[::-1], case[::-1], 2, 3)
    assert ordered.in_order and not shuffled.in_order
    assert ordered.matrix(values).tolist() == shuffled.matrix(values[::-1]).tolist() == [[0, 10, 20], [30, 40, 50]]
    assert not _Cells(cand[1:], case[1:], 2, 3).in_order  # a cell without a row: filled, not reshaped
    assert np.isnan(_Cells(cand[1:], case[1:], 2, 3).matrix(values[1:], fill=np.nan)[0, 0])


_SPACES = list(PY_WHITESPACE)
#: Characters whose UTF-8 begins or ends with a byte a space beyond ASCII begins or ends with, but no space.
_NEAR_SPACES = ["©", "\u00c2", "\u1681", "\u2010", "\u3001", "\ua000", "\u0100", "\u2e80", "\u205e", "\u202e"]
_MISSING_WORDS = ["", "na", "NA", "NaN", "nAn", "null", "NULL", "None", "none"]


def _texts(draw: st.DrawFn) -> list[str]:
    base = [f"c-{i:05d}" for i in range(2100)]
    if draw(st.booleans()):  # every missing-value word, and words near them, without a space
        base += _MISSING_WORDS + ["nul", "nulls", "nonE", "N/A", "nana", "©na", "na©", "\u212aNULL"]
    pieces = st.sampled_from(_SPACES + _NEAR_SPACES + _MISSING_WORDS + ["a", "Z", "é", "中", "-", "1"])
    extra = draw(st.lists(st.lists(pieces, min_size=1, max_size=3).map("".join), max_size=25))
    extra += draw(st.lists(st.text(max_size=5), max_size=10))
    return list(dict.fromkeys(base + extra))


@settings(max_examples=25)
@given(data=st.data(), order=st.sampled_from(["sorted", "reversed", "shuffled"]), large=st.booleans(),
       sliced=st.booleans())
def test_identifier_labels_from_edge_bytes_agree_with_the_per_value_path(data: st.DataObject, order: str,
                                                                         large: bool, sliced: bool) -> None:
    from evalspec.results.table import _labels
    from evalspec.results.values import CodedColumn, Texts

    texts = _texts(data.draw)
    if order == "sorted":
        texts.sort(key=lambda t: t.encode())
    elif order == "reversed":
        texts.sort(key=lambda t: t.encode(), reverse=True)
    else:
        texts = [texts[i] for i in np.random.default_rng(len(texts)).permutation(len(texts))]
    typ = pa.large_string() if large else pa.string()
    arrow = pa.array(["pad"] + texts, type=typ).slice(1) if sliced else pa.array(texts, type=typ)
    uniques = np.empty(len(texts), dtype=object)
    uniques[:] = texts
    codes = np.arange(len(texts) * 2, dtype=np.int32) % len(texts)
    fast = CodedColumn.of(codes, Texts.of(uniques, arrow), distinct=True)
    slow = np.asarray(fast).view(np.ndarray).copy()  # a plain object column: the per-value path
    f_codes, f_labels, f_missing = _labels(fast)
    s_codes, s_labels, s_missing = _labels(slow)
    assert f_labels.tolist() == s_labels.tolist()
    assert f_codes.tolist() == s_codes.tolist() and f_missing.tolist() == s_missing.tolist()


@pytest.mark.parametrize("edge", _SPACES)
def test_every_space_at_either_end_is_seen(edge: str) -> None:
    from evalspec.results.table import _plain_texts
    from evalspec.results.values import Texts

    for text in (edge + "x", "x" + edge):
        texts = [f"c-{i:05d}" for i in range(2100)] + [text]
        uniques = np.empty(len(texts), dtype=object)
        uniques[:] = texts
        assert _plain_texts(Texts.of(uniques, pa.array(texts))) is None
    near = [f"c-{i:05d}" for i in range(2100)] + [c + "x" + c for c in _NEAR_SPACES]
    uniques = np.empty(len(near), dtype=object)
    uniques[:] = near
    assert _plain_texts(Texts.of(uniques, pa.array(near))) is not None


def test_a_case_table_read_asks_for_no_huge_pages(study: tuple[Path, pa.Table]) -> None:
    try:
        from numpy._core import multiarray
    except ImportError:  # (NumPy 1)
        from numpy.core import multiarray  # type: ignore[no-redef]
    folder, table = study
    pq.write_table(table, folder / "cases.parquet")
    before = multiarray._set_madvise_hugepage(True)
    try:  # (large arrays from glibc's heap too: glibc has no way to ask that, so it is not asked)
        claim_bytes(folder / "plan_ct.yaml")
        assert multiarray._set_madvise_hugepage(True) is False
    finally:
        multiarray._set_madvise_hugepage(before)


def test_rows_are_located_in_their_file_across_files() -> None:
    from types import SimpleNamespace

    from evalspec.results.case_table import _Rows

    raws = [SimpleNamespace(display=f"part-{j}.parquet", rows=n, lines=np.arange(n) + (2 if j == 1 else 1))
            for j, n in enumerate([3, 0, 4, 1])]
    raws[1].lines = np.zeros(0, dtype=np.int64)
    rows = _Rows(raws)
    expected = [(r.display, int(line)) for r in raws for line in r.lines]
    assert [rows.where(i) for i in range(8)] == expected
    assert rows.where(np.int64(3)) == ("part-2.parquet", 1)
