"""Issue 13: results that used to crash `evalspec run` (exit 70) are located errors (exit 2).

Each case is one signature found by fuzzing, with the exact first line of the message.
"""

from __future__ import annotations

from typing import Any

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hardening_helpers import SCORE, Space, base_rows, first_line, plan_text


def mutate(i: int, *, scores: bool = False, **kw: Any) -> list[dict[str, Any]]:
    rows = base_rows()
    if scores:
        for r in rows:
            r["passed"] = 0.9
    rows[i].update(kw)
    return rows


CASES = [
    ("nested list in the case id", mutate(2, case_id=["x"]), None,
     "results.jsonl:3: case_id: a list or object where one value belongs (got ['x']); give this column one plain "
     "value (text, number or true/false) per row, or flatten the nested value into its own column"),
    ("nested object in the cluster", mutate(4, doc={"a": 1}), None,
     "results.jsonl:5: doc: a list or object where one value belongs (got {'a': 1}); give this column one plain "
     "value (text, number or true/false) per row, or flatten the nested value into its own column"),
    ("nested list as the outcome", mutate(2, passed=[1]), None,
     "results.jsonl:3: passed: a list or object where one value belongs (got [1]); give this column one plain "
     "value (text, number or true/false) per row, or flatten the nested value into its own column"),
    ("superscript repeat", mutate(2, repeat="²"), None,
     "results.jsonl:3: repeat: the repeat number is not an integer (got '²'); number the repeats of a case 1, 2, 3, ..."),
    ("double minus repeat", mutate(2, repeat="--1"), None,
     "results.jsonl:3: repeat: the repeat number is not an integer (got '--1'); number the repeats of a case 1, 2, "
     "3, ..."),
    ("huge repeat", mutate(2, repeat=1e20), None,
     "results.jsonl:3: repeat: the repeat number is out of range (at most 1,000,000 in size) (got 1e+20); number the "
     "repeats of a case 1, 2, 3, ..."),
    ("2**62 repeat", mutate(2, repeat=2**62), None,
     "results.jsonl:3: repeat: the repeat number is out of range (at most 1,000,000 in size) (got 4611686018427387904); "
     "number the repeats of a case 1, 2, 3, ..."),
    ("timestamp before year 1 in UTC", mutate(2, ts="0001-01-01T00:00:00+01:00"), None,
     "results.jsonl:3: ts: the timestamp is outside the years 1 to 9999 once converted to UTC (got "
     "'0001-01-01T00:00:00+01:00'); write times like 2026-10-01T12:00:00Z"),
    ("score with a decimal comma", mutate(2, scores=True, passed="8,5"), "score",
     "results.jsonl:3: passed: the score is not a number (got '8,5'); scores must be numbers; leave missing outcomes "
     "empty (null)"),
    ("score n/a", mutate(5, scores=True, passed="n/a"), "score",
     "results.jsonl:6: passed: the score is not a number (got 'n/a'); scores must be numbers; leave missing outcomes "
     "empty (null)"),
    ("score 1e308", mutate(5, scores=True, passed=1e308), "score",
     "results.jsonl:6: passed: the score is infinite or larger than 1e+12 in size (got 1e+308); scores must be finite "
     "numbers on a sensible scale; rescale them or leave a missing score empty (null)"),
    ("a 20,000-character case id", mutate(2, case_id="x" * 20_000), None,
     "results.jsonl:3: case_id: the case label is longer than the 500 characters evalspec accepts (got "
     "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...); use a short identifier; keep long text in a "
     "column the plan does not name"),
]


@pytest.mark.parametrize(("rows", "outcome", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_value_is_located(space: Space, rows: list[dict[str, Any]], outcome: str | None, expected: str) -> None:
    plan = plan_text().replace("  columns:", SCORE) if outcome == "score" else None
    space.write(rows, plan)
    result = space.cli("run", "plan.yaml")
    assert result.exit_code == 2
    assert first_line(result) == expected
    assert not (space.path / "out" / "claim.json").exists()


def test_infinite_score_in_a_clustered_mean_column(space: Space) -> None:
    rows = base_rows()
    for i, r in enumerate(rows):
        r["quality"] = float(i)
    rows[6]["quality"] = float("inf")
    text = "".join(__import__("json").dumps(r) + "\n" for r in rows).replace("Infinity", "1e999")
    plan = plan_text().replace("  - {kind: paired_difference, method: newcombe}",
                               "  - {kind: paired_difference, method: newcombe}\n"
                               "  - {kind: clustered_mean, score: quality, correction: CR0}")
    space.write(plan=plan, raw=text.encode())
    result = space.cli("run", "plan.yaml")
    assert result.exit_code == 2, result.output
    assert first_line(result) == (
        "results.jsonl:7: quality: the score is infinite or larger than 1e+12 in size (got inf); scores must be finite "
        "numbers on a sensible scale; rescale them or leave a missing score empty (null)")


def test_non_utf8_byte_located_on_the_fast_path(space: Space) -> None:
    raw = "".join(__import__("json").dumps(r) + "\n" for r in base_rows()).encode()
    lines = raw.split(b"\n")
    lines[6] = lines[6].replace(b'"d', b'"\xff', 1)
    space.write(raw=b"\n".join(lines))
    result = space.cli("run", "plan.yaml")
    assert result.exit_code == 2
    assert first_line(result) == ("results.jsonl:7: corrupt line: is not valid UTF-8; each line must be one JSON "
                                  "object; fix or remove the line and run again")


def test_duplicate_key_in_a_json_line(space: Space) -> None:
    raw = "".join(__import__("json").dumps(r) + "\n" for r in base_rows())
    raw = raw.replace('"repeat": 2, "passed": true', '"repeat": 2, "passed": true, "passed": false', 1)
    space.write(raw=raw.encode())
    result = space.cli("run", "plan.yaml")
    assert result.exit_code == 2
    assert first_line(result) == ("results.jsonl:2: corrupt line: names the key 'passed' twice; each line must be "
                                  "one JSON object; fix or remove the line and run again")


def test_unknown_column_hint_names_columns_only(space: Space) -> None:
    (space.path / "results.csv").write_text("root:$6$secret:19000:0:99999:7:::,x\nA,1\n", encoding="utf-8")
    (space.path / "plan.yaml").write_text(plan_text("results.csv"), encoding="utf-8")
    result = space.cli("run", "plan.yaml")
    assert result.exit_code == 2
    assert "secret" not in result.stderr and "19000" not in result.stderr
    assert "columns found in results.csv: x (and 1 name not shown: not a plain column name)" in result.stderr


def test_a_control_character_in_a_value_cannot_split_a_message(space: Space) -> None:
    """Found by the fuzz suite: a carriage return in a model version broke the hint into lines."""
    space.write(mutate(0, model_version="0\r0"))
    result = space.cli("run", "plan.yaml")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "0\\x0d0" in lines[0], lines


_LONE = st.sampled_from(["\ud800", "\udfff", "a\udc80b", "\ud83d"])  # lone UTF-16 halves, as JSON's \\uXXXX allows


@settings(max_examples=12, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(value=_LONE, column=st.sampled_from(["doc", "case_id", "model_version"]), row=st.integers(0, 15))
def test_lone_surrogates_in_ids_and_labels_never_crash(space: Space, value: str, column: str, row: int) -> None:
    """Issue 22: a lone surrogate in a cluster id, a case id or a version is refused at its line or read
    and written as valid UTF-8 (a claim that cannot be encoded used to end in exit 70)."""
    rows = base_rows()
    rows[row % len(rows)][column] = value
    raw = "".join(json.dumps(r) + "\n" for r in rows)  # ensure_ascii: the surrogate travels as \\udXXX
    space.write(raw=raw.encode("ascii"))
    result = space.cli("run", "plan.yaml", "--no-report")
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 0:
        text = (space.path / "out" / "claim.json").read_bytes().decode("utf-8")  # strict UTF-8
        json.loads(text)
    else:
        assert first_line(result).startswith("results.jsonl"), first_line(result)
