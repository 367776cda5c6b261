"""A case table's counts read as numbers (``batches.NUMBERS``, :class:`~evalspec.results.values.LazyNumbers`).

* the column kept as numbers reads, wherever a column is read, as the column the general path makes
  (codes into first-seen values: a row's value, a slice, expanding), for any integers;
* a case table read with its counts as numbers gives the claim it gives without (the general path:
  every count hashed into codes and turned back into integers), and the counts are those numbers;
* a count column that cannot be read as numbers (a null, a negative or too large count, floats,
  texts, booleans) falls back and is refused with the same located problems as without.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.errors import InputError
from tests.results.case_table_study import reference_case_table, write_study

SETTINGS = settings(max_examples=60, derandomize=True, database=None, deadline=None)


def _general_column(arr: Any) -> Any:
    """What the batch reader made of an integer column before: its codes added to a Distinct."""
    from evalspec.results.batches import Distinct, number_codes

    codes, uniques, _ = number_codes(arr)
    dist = Distinct()
    dist.add(codes, uniques)
    return dist.column()


@SETTINGS
@given(values=st.lists(st.integers(-5, 2**40), min_size=1, max_size=40), dtype=st.sampled_from(
    ["int8", "int32", "int64", "uint16", "uint64"]), constant=st.booleans(), few=st.booleans())
def test_numbers_read_as_the_general_paths_column(values: list[int], dtype: str, constant: bool, few: bool) -> None:
    from evalspec.results.batches import kept_numbers
    from evalspec.results.values import LazyNumbers

    if constant:
        values = [values[0]] * len(values)
    if few:
        values = [v % 3 for v in values]
    info = np.iinfo(np.dtype(dtype))
    values = [min(max(v, int(info.min)), int(info.max)) for v in values]
    arr = pa.array(values, type=getattr(pa, dtype)())
    kept = kept_numbers(arr)
    general = _general_column(arr)
    assert isinstance(kept, LazyNumbers)
    assert kept.numbers.tolist() == values and not kept.numbers.flags.writeable
    assert (kept.lo, kept.hi) == (min(values), max(values))
    assert len(kept) == kept.size == len(values) and kept.shape == (len(values),)
    assert kept.codes.tolist() == general.codes.tolist() and kept.codes.dtype == general.codes.dtype
    assert kept.uniques.tolist() == general.uniques.tolist()
    assert [type(v) for v in kept.uniques.tolist()] == [type(v) for v in general.uniques.tolist()]
    assert kept.tolist() == general.tolist() == values
    assert [kept[i] for i in range(len(values))] == [general[i] for i in range(len(values))]
    assert kept[1:].tolist() == general[1:].tolist()
    assert np.asarray(kept).tolist() == np.asarray(general).tolist()
    assert kept.lazy_texts() is None


def _no_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The general path: no column is read as numbers."""
    from evalspec.results import batches

    class Off:  # (what the case table asks for is never seen by the reader)
        def set(self, names: frozenset[str]) -> None:
            return None

        def reset(self, token: None) -> None:
            return None

        def get(self) -> frozenset[str]:
            return frozenset()

    monkeypatch.setattr(batches, "NUMBERS", Off())


def _spy_counts(monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple[str, np.ndarray]]:
    """The column each count was typed from (its class) and the counts it gave."""
    from evalspec.results import case_table

    seen: dict[str, tuple[str, np.ndarray]] = {}
    original = case_table._Typed.integers

    def integers(self: Any, name: str) -> np.ndarray:
        out = original(self, name)
        seen[name] = (type(self.cols[name]).__name__, np.array(out))
        return out

    monkeypatch.setattr(case_table._Typed, "integers", integers)
    return seen


def _claim(folder: Path) -> str:
    from evalspec.run import run_plan

    return json.dumps(run_plan(folder / "plan_ct.yaml", command=["evalspec", "run"]), default=str, sort_keys=True)


def _problems(folder: Path) -> list[tuple[Any, ...]]:
    from evalspec.run import run_plan

    with pytest.raises(InputError) as err:
        run_plan(folder / "plan_ct.yaml")
    return [str(err.value)] + [(d.file, d.line, d.key, d.message, d.hint) for d in err.value.diagnostics]


@pytest.fixture()
def study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, pa.Table]:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    folder = write_study(tmp_path / "study")
    return folder, reference_case_table(folder)


def _with_column(table: pa.Table, name: str, column: Any) -> pa.Table:
    return table.set_column(table.schema.get_field_index(name), name, column)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_counts_as_numbers_give_the_general_paths_claim(study: tuple[Path, pa.Table], monkeypatch: pytest.MonkeyPatch,
                                                        dtype: str) -> None:
    folder, table = study
    counts = [f.name for f in table.schema if pa.types.is_integer(f.type)]
    assert {"attempts", "passes", "missing"} <= set(counts)
    for name in counts:
        table = _with_column(table, name, table.column(name).cast(getattr(pa, dtype)()))
    pq.write_table(table, folder / "cases.parquet")
    with monkeypatch.context() as m:
        seen = _spy_counts(m)
        fast = _claim(folder)
    assert {name: kind for name, (kind, _) in seen.items()} == dict.fromkeys(counts, "LazyNumbers")
    for name in counts:
        assert seen[name][1].dtype == np.int64 and seen[name][1].tolist() == table.column(name).to_pylist()
    with monkeypatch.context() as m:
        _no_numbers(m)
        seen_general = _spy_counts(m)
        general = _claim(folder)
    assert "LazyNumbers" not in {kind for kind, _ in seen_general.values()}
    assert fast == general
    assert all(seen[n][1].tolist() == seen_general[n][1].tolist() for n in counts)


@pytest.mark.parametrize("bad", ["null", "negative", "too_large", "float", "whole_float", "text", "boolean"])
def test_counts_that_are_not_numbers_fall_back_to_the_same_problems(study: tuple[Path, pa.Table],
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    bad: str) -> None:
    folder, table = study
    passes = table.column("passes").to_pylist()
    n = len(passes)
    column = {
        "null": pa.array([None if i == 7 else v for i, v in enumerate(passes)], pa.int64()),
        "negative": pa.array([-1 if i in (3, 9) else v for i, v in enumerate(passes)], pa.int64()),
        "too_large": pa.array([10**9 + 1 if i == 5 else v for i, v in enumerate(passes)], pa.int64()),
        "float": pa.array([0.5 if i == 2 else float(v) for i, v in enumerate(passes)], pa.float64()),
        "whole_float": pa.array([float(v) for v in passes], pa.float64()),
        "text": pa.array([str(v) if i else "two" for i, v in enumerate(passes)], pa.string()),
        "boolean": pa.array([bool(i % 2) for i in range(n)], pa.bool_()),
    }[bad]
    pq.write_table(_with_column(table, "passes", column), folder / "cases.parquet")
    runs = []
    for off in (False, True):
        with monkeypatch.context() as m:
            if off:
                _no_numbers(m)
            seen = _spy_counts(m)
            if bad == "whole_float":  # (read, as floats that are whole numbers: the general path's typing)
                runs.append(_claim(folder))
            else:
                runs.append(_problems(folder))
        assert seen["passes"][0] == ("LazyNumbers" if bad in ("negative", "too_large") and not off else "LazyCoded")
        assert seen["attempts"][0] == ("LazyCoded" if off else "LazyNumbers")
    assert runs[0] == runs[1]
    if bad != "whole_float":
        assert any("passes must be a whole number" in str(p) for p in runs[0])


def test_a_count_column_of_a_partitioned_table_reads_as_its_values(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Two files: each one's counts kept as numbers, concatenated through their codes (the general path's)."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    folder = write_study(tmp_path / "study")
    table = reference_case_table(folder)
    (folder / "cases").mkdir()
    half = table.num_rows // 2
    pq.write_table(table.slice(0, half), folder / "cases" / "part-0.parquet")
    pq.write_table(table.slice(half), folder / "cases" / "part-1.parquet")
    text = (folder / "plan_ct.yaml").read_text().replace("results: cases.parquet", "results: cases")
    (folder / "plan_ct.yaml").write_text(text)
    with monkeypatch.context() as m:
        seen = _spy_counts(m)
        fast = _claim(folder)
    assert seen["passes"][1].tolist() == table.column("passes").to_pylist()
    with monkeypatch.context() as m:
        _no_numbers(m)
        general = _claim(folder)
    assert fast == general


@pytest.mark.parametrize("order", ["in_order", "shuffled"])
def test_read_only_counts_laid_out_as_the_matrix_without_a_copy_in_matrix_order(order: str) -> None:
    """A read-only count column (Arrow's buffer, or one count broadcast) is the matrix reshaped when the rows are in
    matrix order (no copy: the same memory, still read-only), and scattered like any column otherwise; the matrix
    holds the same values either way."""
    from evalspec.results.case_checks import _Cells

    n_cand, n_cases = 2, 6
    cand = np.repeat(np.arange(n_cand), n_cases)
    case = np.tile(np.arange(n_cases), n_cand)
    values = np.arange(n_cand * n_cases, dtype=np.int64) * 3
    if order == "shuffled":
        perm = np.random.default_rng(5).permutation(values.size)
        cand, case, values = cand[perm], case[perm], values[perm]
    expected = np.zeros((n_cand, n_cases), dtype=np.int64)
    expected[cand, case] = values
    cells = _Cells(cand, case, n_cand, n_cases)
    assert cells.in_order == (order == "in_order")
    for read_only in (values.copy(), np.broadcast_to(np.int64(4), values.shape)):
        read_only.flags.writeable = False
        want = expected if read_only.strides != (0,) else np.full((n_cand, n_cases), 4)
        got = cells.matrix(read_only)
        assert got.tolist() == want.tolist() and got.dtype == np.int64
        assert np.shares_memory(got, read_only) == cells.in_order
