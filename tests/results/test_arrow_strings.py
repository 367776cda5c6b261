"""``arrow_strings``: its one-join path for ASCII texts gives the array the per-value path gives."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.results.arrow import arrow_strings


def _per_value(values: list[Any]) -> Any:
    """What the array must be, made independently by Arrow from the list: texts and None only, each valid UTF-8."""
    if any(v is not None and not isinstance(v, str) for v in values):
        return None
    try:
        for v in values:
            if v is not None:
                v.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no Arrow string holds it
        return None
    return pa.array(values, type=pa.large_string())


_ASCII = st.text(alphabet=st.characters(max_codepoint=127), max_size=6)  # NUL included
_TEXT = st.one_of(_ASCII,
                  st.text(max_size=4),  # any text, lone surrogates included
                  st.sampled_from(["", "case-1", "é", "\0", "a\0b"]))
_VALUE = st.one_of(_TEXT, _TEXT, _TEXT, st.none(), st.integers(), st.binary(max_size=3))


@settings(derandomize=True, database=None, max_examples=300, deadline=None)
@given(st.one_of(st.lists(_VALUE, max_size=12), st.lists(_ASCII, max_size=12)))
def test_same_array_as_the_per_value_path(values: list[Any]) -> None:
    got, want = arrow_strings(values), _per_value(values)
    if want is None:
        assert got is None
        return
    assert got is not None
    got.validate(full=True)
    assert got.type == want.type == pa.large_string()
    assert got.equals(want)
    assert got.to_pylist() == values


def test_a_column_of_case_ids() -> None:
    values = [f"case-{i:07d}" for i in range(50_000)] + ["", "x"]
    got = arrow_strings(values)
    got.validate(full=True)
    assert got.equals(_per_value(values)) and got.null_count == 0
    assert arrow_strings([]).equals(_per_value([]))
