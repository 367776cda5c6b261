"""No input makes `evalspec validate` crash: every outcome is exit 0, 1 or 2 with a message.

Hypothesis feeds arbitrary bytes, line-level mutations of a valid plan, and arbitrary
YAML values grafted into it; an internal error (exit 70) or a traceback fails the test.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalspec.cli import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "examples" / "policy-migration" / "plan.yaml").read_text(encoding="utf-8")
LINES = EXAMPLE.splitlines()
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _validate(data: bytes, tmp: Path) -> None:
    plan = tmp / "plan.yaml"
    plan.write_bytes(data)
    result = CliRunner().invoke(cli, ["validate", str(plan)])
    assert result.exit_code in (0, 1, 2), result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), repr(result.exception)
    if result.exit_code:
        assert "plan.yaml" in result.output  # every problem names the file


@FAST
@given(st.binary(max_size=400))
def test_arbitrary_bytes(tmp_path_factory: Any, data: bytes) -> None:
    _validate(data, tmp_path_factory.mktemp("b"))


@FAST
@given(st.text(alphabet=st.sampled_from(list("ab:- \n\t#&*![]{},'\"|>%@`?~0.")), max_size=200))
def test_yaml_punctuation_soup(tmp_path_factory: Any, text: str) -> None:
    _validate(text.encode("utf-8"), tmp_path_factory.mktemp("p"))


@FAST
@given(seed=st.integers(0, 2**32 - 1), edits=st.integers(1, 4))
def test_line_mutations_of_a_valid_plan(tmp_path_factory: Any, seed: int, edits: int) -> None:
    rnd = random.Random(seed)
    lines = list(LINES)
    for _ in range(edits):
        i = rnd.randrange(len(lines))
        op = rnd.choice(["delete", "duplicate", "indent", "dedent", "swap", "value", "truncate"])
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "indent":
            lines[i] = "  " + lines[i]
        elif op == "dedent":
            lines[i] = lines[i].lstrip()
        elif op == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif op == "value" and ":" in lines[i]:
            key = lines[i].split(":", 1)[0]
            lines[i] = key + ": " + rnd.choice(["-1", "2.5", "null", "[]", "{}", "yes", "x y", "2026-13-40",
                                                '"', "[a, b", "&x 1", "*nope", "1e999", ".nan"])
        elif op == "truncate":
            lines[i] = lines[i][: rnd.randrange(len(lines[i]) + 1)]
    _validate("\n".join(lines).encode("utf-8"), tmp_path_factory.mktemp("m"))


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True) | st.text(max_size=8)
    | st.dates(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8,
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, path + (i,))
    return out


@FAST
@given(pick=st.integers(0, 10**6), value=_values)
def test_any_value_anywhere(tmp_path_factory: Any, pick: int, value: Any) -> None:
    data = yaml.safe_load(EXAMPLE)
    paths = [p for p in _paths(data) if p]
    path = paths[pick % len(paths)]
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    text = yaml.safe_dump(data, allow_unicode=True)
    _validate(text.encode("utf-8"), tmp_path_factory.mktemp("v"))
