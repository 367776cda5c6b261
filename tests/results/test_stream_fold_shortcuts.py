"""The streaming fold's shortcuts give what the plain ways give, for any batch (hypothesis).

* ``first_rows`` looks only at the first row of each run of equal codes;
* ``_labels_in_order`` looks each label up once and numbers the new ones in row order, in a dict or in
  ``Labels`` (a ``TextIndex`` while every batch's labels are Arrow texts, a dict from the first that is not);
* ``lowest_bits`` gives the masks themselves when none has more bits than asked for;
* ``stream_finish._sorted`` says "in order already" (None) only for labels in code point order, and
  the state is then copied whole rather than gathered (``CellState.trimmed``);
* a streamed claim is the in-memory one whether the case ids come sorted, reversed or shuffled.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from evalspec.results.stream_batch import Labels, _labels_in_order, first_rows, label_order
from evalspec.results.stream_finish import _sorted
from evalspec.results.stream_state import CellState, lowest_bits

_codes = st.lists(st.integers(-1, 6), max_size=60)


def _first_plain(codes: list[int], m: int) -> list[int]:
    return [codes.index(k) if k in codes else len(codes) for k in range(m)]


@given(_codes, st.booleans())
def test_first_rows_is_each_codes_first_row(codes: list[int], runs: bool) -> None:
    if runs:  # rows of one code together, as a batch's rows of a case usually are
        codes = sorted(codes)
    for dtype in (np.int8, np.int32, np.int64):
        assert first_rows(np.array(codes, dtype=dtype), 7).tolist() == _first_plain(codes, 7)


@given(st.lists(st.lists(st.integers(0, 8), max_size=30), max_size=5), st.integers(-1, 5))
def test_labels_are_numbered_as_a_dict_numbers_them_in_row_order(batches: list[list[int]], odd: int) -> None:
    """Batch after batch, the global codes are those of a dict filled row by row (new labels numbered as first
    seen), in a dict and in ``Labels``; batch ``odd`` holds a label Arrow cannot hold (a lone surrogate), from which
    on ``Labels`` is a dict (until then a ``TextIndex``)."""
    index: dict[str, int] = {}
    held = Labels()
    plain: dict[str, int] = {}
    for j, rows in enumerate(batches):
        name = (lambda r: f"id-{r}" + ("\ud800" if r == 3 else "")) if j == odd else (lambda r: f"id-{r}")
        labels = np.array(sorted({name(r) for r in rows}) + ["unused"], dtype=object)
        local = np.array([list(labels).index(name(r)) for r in rows], dtype=np.int64)
        for r in rows:
            plain.setdefault(name(r), len(plain))
        for order in (None, label_order(labels, local)):
            got = _labels_in_order(dict(index), labels, local, order)
            assert got[local].tolist() == [plain[name(r)] for r in rows]
            assert got[-2] == -1 and got[-1] == -1  # ("unused" in no row; the trailing slot for code -1)
        _labels_in_order(index, labels, local)
        assert _labels_in_order(held, labels, local, label_order(labels, local))[local].tolist() == [
            plain[name(r)] for r in rows]
        assert index == plain and held.labels() == list(plain) and len(held) == len(plain)
        in_text = odd < 0 or j < odd or 3 not in batches[odd]
        assert (held.index is None) == in_text  # (a TextIndex until a label is not Arrow text)
        assert (held.arrow() is not None) == in_text
        if in_text:
            assert held.arrow().to_pylist() == list(plain)


@given(st.lists(st.text(min_size=1, max_size=4), unique=True, max_size=12))
def test_sorted_says_in_order_only_for_sorted_labels(labels: list[str]) -> None:
    order = _sorted(labels)
    plain = sorted(range(len(labels)), key=lambda i: [ord(c) for c in labels[i]])  # code point order
    assert (order is None) == (plain == list(range(len(labels))))
    assert (list(range(len(labels))) if order is None else order.tolist()) == plain


def test_a_state_in_order_is_copied_whole_and_owns_its_arrays() -> None:
    state = CellState(2, ["topic"])
    state.grow(5)
    state.present[:, :3] = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.uint64)
    state.attrs["topic"].first_code[:, :3] = 7
    whole = state.trimmed(3)
    gathered = state.trimmed(3, np.arange(3))
    for a, b in ((whole.present, gathered.present), (whole.attrs["topic"].first_code, gathered.attrs["topic"].first_code)):
        assert a.tolist() == b.tolist() and a.flags.c_contiguous and a.base is None
    state.present[0, 0] = 99
    assert whole.present[0, 0] == 1


def test_streamed_claim_is_the_in_memory_one_whatever_the_id_order(tmp_path, monkeypatch) -> None:
    """Ids written sorted (the copy-whole path), reversed and shuffled (the sorting paths) give the in-memory claim."""
    import json

    from evalspec.claim import dumps
    from evalspec.run import run_plan

    plan_text = (
        "evalspec: 1\nid: order\ntitle: t\nquestion: q?\ndecision_owner: o\npopulation: p\n"
        "data: {results: results.jsonl, columns: {candidate: candidate, repeat: repeat, outcome: passed}}\n"
        "candidates: {A: {model: a, version: v1}, B: {model: b, version: v1}}\nbaseline: B\n"
        "units: {case: case_id, cluster: doc}\nattempts: {repeats: 2, rule: majority}\n"
        "analyses:\n  - {kind: proportion}\n  - {kind: paired_difference, compare: [A, B], resamples: 200, seed: 1}\n"
        "decision: {minimum_improvement: 0.01}\n")
    from evalspec.results import stream_finish
    from evalspec.results.values import LazyTexts

    made: list[object] = []
    real_ids = stream_finish._case_ids

    def spy(*a: object) -> object:
        made.append(real_ids(*a))  # type: ignore[arg-type]
        return made[-1]

    monkeypatch.setattr(stream_finish, "_case_ids", spy)
    rng = np.random.default_rng(3)
    ids = [f"case-{i:03d}" for i in range(120)]
    claims = {}
    for name, order in (("sorted", ids), ("reversed", ids[::-1]), ("shuffled", list(rng.permutation(ids)))):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "plan.yaml").write_text(plan_text, encoding="utf-8")
        rows = [{"candidate": m, "case_id": c, "doc": f"d{int(c[5:]) % 9}", "repeat": r,
                 "passed": bool((int(c[5:]) * 7 + r + (m == "A")) % 3)} for m in ("A", "B") for c in order
                for r in (1, 2)]
        (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        for mode, rows_limit in (("streamed", "0"), ("in memory", str(10**12))):
            monkeypatch.setenv("EVALSPEC_STREAM_ROWS", rows_limit)
            monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796126400")
            claim = json.loads(dumps(run_plan(folder / "plan.yaml", command=["evalspec", "run", "plan.yaml"])))
            claim["data"] = claim["plan"]["path"] = claim["process"] = None  # (the folder's name and contents)
            claims[name, mode] = claim
    first = claims["sorted", "in memory"]
    assert all(claim == first for claim in claims.values())
    # each streamed run's case ids: Arrow texts (made a str only where read), sorted whatever order they came in
    assert len(made) == 3 and all(isinstance(m, LazyTexts) and m.tolist() == ids for m in made)


def test_case_ids_are_lazy_texts_from_arrow_and_objects_otherwise() -> None:
    import pyarrow as pa

    from evalspec.results.stream_finish import _case_ids
    from evalspec.results.values import LazyTexts

    labels = ["c3", "c1", "é", "c2"]
    resort = _sorted(labels)
    assert resort is not None
    lazy = _case_ids(None, pa.array(labels, pa.large_string()), resort)
    plain = _case_ids(labels, None, resort)
    assert isinstance(lazy, LazyTexts) and not isinstance(plain, LazyTexts)
    assert lazy.tolist() == plain.tolist() == sorted(labels)
    assert _case_ids(None, pa.array(sorted(labels)), None).tolist() == sorted(labels)


@given(st.lists(st.integers(0, 2**64 - 1), max_size=8), st.integers(0, 64), st.booleans())
def test_lowest_bits_are_the_lowest_set_bits(masks: list[int], n: int, few: bool) -> None:
    if few:  # (every mask with at most n bits: the masks themselves)
        masks = [m & ((1 << n) - 1) for m in masks]
    got = lowest_bits(np.array(masks, dtype=np.uint64).reshape(1, -1), n).reshape(-1).tolist()
    plain = []
    for m in masks:
        bits = [b for b in range(64) if m >> b & 1][:n]
        plain.append(sum(1 << b for b in bits))
    assert got == plain


@given(st.lists(st.lists(st.tuples(st.integers(0, 2), st.sampled_from(["v1", "v2", None])), max_size=12),
                max_size=4), st.booleans())
def test_versions_rows_and_first_rows_batch_by_batch(batches: list[list[tuple[int, str | None]]], one: bool) -> None:
    """Each candidate's rows of each version and where each was first seen, whether a batch has one version
    (its shortcut) or several, or rows without one."""
    from types import SimpleNamespace

    from evalspec.results.stream_batch import Reducer

    red = Reducer.__new__(Reducer)
    red.names, red.versions, red.version_first = ["A", "B", "C"], {}, {}
    red.version_rows = np.zeros((3, 0), dtype=np.int64)
    rows: dict[tuple[int, str], int] = {}
    first: dict[tuple[int, str], tuple[int, int]] = {}
    for j, batch in enumerate(batches):
        if one:  # (every row of a batch the same version: the shortcut)
            batch = [(c, "v2" if j % 2 else "v1") for c, _ in batch]
        uniques = list(dict.fromkeys(v for _, v in batch if v is not None))
        codes = np.array([-1 if v is None else uniques.index(v) for _, v in batch], dtype=np.int8)
        lines = np.arange(10 * j, 10 * j + len(batch), dtype=np.int64)
        cand = np.array([c for c, _ in batch], dtype=np.int8)
        red._versions(j, lines, cand, SimpleNamespace(codes=codes, uniques=np.array(uniques, dtype=object)))
        for i, (c, v) in enumerate(batch):
            if v is not None:
                rows[c, v] = rows.get((c, v), 0) + 1
                first.setdefault((c, v), (j, int(lines[i])))
    number = red.versions
    assert {(c, v): int(red.version_rows[c, g]) for v, g in number.items() for c in range(3)
            if red.version_rows[c, g]} == rows
    assert {(c, v): at for (c, g), at in red.version_first.items() for v in number if number[v] == g} == first
