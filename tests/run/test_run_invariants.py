"""Invariants of the paired analysis and the claim serialisation, for any data (hypothesis)."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.analyses.context import AnalysisContext
from evalspec.testing import context_from_arrays
from evalspec.analyses.paired import PairedDifferenceParams
from evalspec.analyses.registry import get
from evalspec.claim import dumps, normalize

pairs = st.lists(st.tuples(st.sampled_from([0, 1]), st.sampled_from([0, 1]), st.integers(0, 4)),
                 min_size=2, max_size=40)


def _ctx(rows: list[tuple[int, int, int]], swap: bool = False) -> AnalysisContext:
    n = len(rows)
    a = [r[0] for r in rows]
    b = [r[1] for r in rows]
    if swap:
        a, b = b, a
    return context_from_arrays(["A", "B"], [f"c{i:02d}" for i in range(n)], [0] * n + [1] * n,
                                       list(range(n)) * 2, [float(v) for v in a + b],
                                       clusters=[f"g{r[2]}" for r in rows], baseline="B")


@settings(max_examples=40, deadline=None)
@given(pairs)
def test_paired_difference_invariants(rows: list[tuple[int, int, int]]) -> None:
    params = PairedDifferenceParams(kind="paired_difference", method="newcombe")
    res = get("paired_difference")(_ctx(rows), params)
    t = res["table"]
    n = len(rows)
    assert t["a"] + t["b"] + t["c"] + t["d"] == n == t["n"]
    assert res["estimate"] == (t["b"] - t["c"]) / n
    assert len(res["disagreements"]["candidate_only"]) == t["b"]
    assert len(res["disagreements"]["baseline_only"]) == t["c"]
    assert sum(c["net"] for c in res["clusters"]["contributions"]) == t["b"] - t["c"]
    assert sum(c["cases"] for c in res["clusters"]["contributions"]) == n
    # ranked by signed contribution toward the total (issue 8: a negative cluster must not count as a top one)
    sign = 1 if t["b"] - t["c"] >= 0 else -1
    nets = [sign * c["net"] for c in res["clusters"]["contributions"]]
    assert nets == sorted(nets, reverse=True)
    assert -1 <= res["low"] <= res["estimate"] <= res["high"] <= 1
    # swapping the candidates swaps b and c and mirrors the interval
    sw = get("paired_difference")(_ctx(rows, swap=True), params)
    assert (sw["table"]["b"], sw["table"]["c"]) == (t["c"], t["b"])
    assert np.isclose(sw["low"], -res["high"]) and np.isclose(sw["high"], -res["low"])


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(-1e6, 1e6, allow_nan=False)
                    | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
                    max_leaves=20))
def test_claim_text_is_stable(value: object) -> None:
    text = dumps({"x": value})
    assert text.endswith("\n")
    # serialising what was read back gives the same bytes (rounding to 12 digits is idempotent)
    assert dumps(json.loads(text)) == text
    assert normalize(json.loads(text)) == json.loads(text)


_json_trees = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=5) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=6) | st.integers(-5, 5), inner, max_size=5),
    max_leaves=40)


@settings(max_examples=300, deadline=None)
@given(_json_trees)
def test_claim_text_is_the_standard_indented_json(value: object) -> None:
    """The fast writer gives byte for byte what the standard library's indented encoder gives."""
    expected = json.dumps(normalize({"x": value}), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert dumps({"x": value}) == expected


def test_claim_text_of_numpy_and_enum_values() -> None:
    import enum

    class Kind(str, enum.Enum):  # noqa: UP042 - a str mixin, whose str() is not its text
        A = "a-text"

    value = {"e": Kind.A, "i": np.int64(3), "f": np.float32(0.5), "b": np.bool_(True), "n": float("nan"),
             "arr": np.array([1.0, 2.0]), 7: "int key"}
    assert json.loads(dumps(value)) == {"e": "a-text", "i": 3, "f": 0.5, "b": True, "n": None, "arr": [1.0, 2.0],
                                        "7": "int key"}
