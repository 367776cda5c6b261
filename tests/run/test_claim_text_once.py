"""The claim normalised once for its self-hash and its text, and the C encoder's long lists, give the same bytes.

:func:`evalspec.ledger.sealed_normal` seals a claim and hands back the normalised copy its hash was
taken over, from which ``claim.json`` is written (``dumps(normal, normalized=True)``);
:func:`evalspec.claim._flat_text` writes a list of scalars or of flat dicts with the standard
library's C encoder. Both are checked against the slow, obvious ways: ``json.dumps(indent=2)`` of
:func:`normalize`'s output, a plain recursive normalisation, ``claim_sha256`` of the sealed claim.
"""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.claim import _flat_text, dumps, normalize
from evalspec.ledger import claim_sha256, normal_body, seal_claim, sealed_normal

# texts that could confuse a writer that finds structure in the encoder's output: brackets, separators, the
# line break and NUL the flat writer relies on never appearing raw, quotes and backslashes before them
_tricky = st.sampled_from(["}", "{", "},{", "}\n{", "\x00", "\x01", '"', "\\", '\\"', "}, {", ": ", "\u2028", "é", ""])
_text = st.lists(_tricky | st.text(max_size=4), max_size=3).map("".join)
_scalar = st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=True, allow_infinity=True) \
    | _text
_flat_dict = st.dictionaries(_text, _scalar, max_size=4)
_lists = st.lists(_scalar, max_size=6) | st.lists(_flat_dict, max_size=6) \
    | st.lists(_flat_dict | _scalar | st.lists(_scalar, max_size=2), max_size=5)
_trees = st.recursive(_scalar | _lists, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(_text, inner, max_size=4), max_leaves=30)


def _reference_normal(value: object) -> object:
    """What normalize gives, written the plain way (one call a value)."""
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        return None if not math.isfinite(value) else 0.0 if value == 0 else float(f"{value:.12g}")
    if isinstance(value, dict):
        return {str(k): _reference_normal(v) for k, v in value.items()}
    return [_reference_normal(v) for v in value]  # type: ignore[attr-defined]


def _standard(value: object) -> str:
    return json.dumps(normalize(value), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@given(_trees)
def test_text_and_normal_form_are_the_plain_ones(value: object) -> None:
    """Lists of scalars and of flat dicts (at any depth, with any texts) are written as the standard indent writes them."""
    normal = normalize({"x": value})
    assert normal == _reference_normal({"x": value})
    assert json.dumps(normal) == json.dumps(_reference_normal({"x": value}))  # (0.0 and -0.0, True and 1 told apart)
    assert dumps({"x": value}) == _standard({"x": value}) == dumps(normal, normalized=True)


def test_flat_lists_take_the_c_encoder_and_others_do_not() -> None:
    rows = [{"case": "c}", "cluster": "d\x00{", "net": -0.5, "n": 3, "ok": True, "none": None},
            {"case": '"},{"', "cluster": "\\", "net": 1e-07, "n": 10**19, "ok": False, "none": None}]
    for value in (rows, ["a}", "{b", 1, 2.5, None, True], [{"a": 1}, {"b": 2}]):
        text = _flat_text(value, "\n    ")
        assert text is not None
        assert text == json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).replace("\n", "\n    ")
    # anything else is left to the writer that walks it: an empty dict, a nested container, a NaN
    for value in ([{"a": 1}, {}], [{"a": [1]}, {"a": 2}], [[1], [2]], [{"a": 1}, 2], [1.0, math.nan]):
        assert _flat_text(value, "\n") is None


def test_a_nan_left_unnormalised_is_refused_in_the_writers_words() -> None:
    import pytest

    with pytest.raises(ValueError, match="a claim holds no NaN or infinity"):
        dumps({"x": [1.0, math.inf]}, normalized=True)


@given(st.dictionaries(_text, _trees, max_size=5), st.none() | st.fixed_dictionaries(
    {"file": _text, "seq": st.integers(1, 99), "prev_sha256": _text}))
def test_sealed_once_is_sealed_as_before(claim: dict, ledger: dict | None) -> None:
    """The normalised copy's text is the sealed claim's text, and its hash is the one claim_sha256 takes of it."""
    claim = {**claim, "integrity": {"sha256": "stale", "of": "old"}, "analyses": [{"rate": 1 / 3, "rows": [
        {"case": "c-1", "share": 2 / 3}, {"case": "c-2", "share": math.nan}]}]}
    sealed, normal = sealed_normal(claim, ledger=ledger)
    assert sealed == seal_claim(claim, ledger=ledger)
    assert sealed["integrity"]["sha256"] == claim_sha256(sealed) == claim_sha256(json.loads(dumps(sealed)))
    assert dumps(normal, normalized=True) == dumps(sealed)
    again, normal_again = sealed_normal(claim, ledger=ledger, body=normal_body(claim))
    assert (again, normal_again) == (sealed, normal)


def test_a_run_writes_the_text_of_its_sealed_claim(tmp_path) -> None:
    """Through the ledger: a first look and the same run again write the sealed claim's own text."""
    from evalspec.looks import look_recorded, record_look

    plan = tmp_path / "plan.yaml"
    plan.write_text("id: p\n", encoding="utf-8")
    claim = {"claim_format": 2, "created": "2026-11-20T00:00:00Z", "plan": {"id": "p", "hash": "sha256:x", "lock": {}},
             "data": {"files": []}, "coverage": {"share": 0.1 + 0.2}, "decision": {"verdict": "inconclusive"},
             "analyses": [{"cases": [f"c-{i}" for i in range(5)], "rows": [{"case": "c-1", "net": 1 / 7}] * 3}]}
    sealed, normal = look_recorded(claim, plan)
    assert dumps(normal, normalized=True) == dumps(sealed)
    assert sealed["integrity"]["sha256"] == claim_sha256(sealed)
    again, normal_again = look_recorded(claim, plan)  # the same claim again: the same entry, the same bytes
    assert dumps(normal_again, normalized=True) == dumps(again) == dumps(sealed)
    assert record_look(claim, plan) == sealed


_kept = st.none() | st.booleans() | st.integers(-10**20, 10**20) | _text
_odd = st.floats(allow_nan=True, allow_infinity=True) | st.lists(_scalar, max_size=2) | st.dictionaries(_text, _scalar,
                                                                                                       max_size=2)


@settings(max_examples=40)
@given(st.lists(st.dictionaries(_text, _kept, max_size=3), min_size=64, max_size=70), st.integers(0, 69),
       st.sampled_from(["none", "value", "int key", "not a dict", "dict subclass"]), _odd)
def test_a_long_list_of_normal_dicts_is_kept_and_any_other_is_normalised(rows: list, at: int, odd: str,
                                                                          value: object) -> None:
    """A list of 64 dicts or more, every key a text and every value a text, integer, boolean or null, keeps its
    dicts (shared, a new list); one other value, key or item anywhere makes it normalised item by item."""
    from collections import OrderedDict

    rows = [dict(r) for r in rows]
    at = at % len(rows)
    if odd == "value":
        rows[at]["odd"] = value
    elif odd == "int key":
        rows[at][7] = "seven"
    elif odd == "not a dict":
        rows[at] = value
    elif odd == "dict subclass":
        rows[at] = OrderedDict(rows[at], odd=1.5)
    normal = normalize({"x": rows})
    assert normal == _reference_normal({"x": rows})
    assert json.dumps(normal) == json.dumps(_reference_normal({"x": rows}))
    assert dumps({"x": rows}) == _standard({"x": rows})
    plain = (str, int, bool, type(None))
    kept = all(type(r) is dict and all(type(k) is str and type(v) in plain for k, v in r.items()) for r in rows)
    assert kept == (odd == "none") or odd in ("value", "not a dict")  # (the odd value may be a normal one)
    assert all(a is b for a, b in zip(normal["x"], rows)) == kept and normal["x"] is not rows


@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**13, 10**13).map(float)
       | st.sampled_from([1e12, -1e12, 999999999999.0, 1e12 - 0.5, 0.5, -0.0, 2.0**53, 123456789012.0]))
def test_a_float_is_rounded_as_its_12_digit_text_says(x: float) -> None:
    """Whole numbers below 10**12 are kept as they are (their own 12-digit text), every other float read back
    from its 12-digit text: the same value, and the same text in the claim."""
    from evalspec.claim import _round

    want = None if not math.isfinite(x) else 0.0 if x == 0 else float(f"{x:.12g}")
    got = _round(x)
    assert json.dumps(got) == json.dumps(want) and (got is None) == (want is None)
