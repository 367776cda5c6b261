"""Fuzzed plans through `evalspec run`, and hand-edited claims through `evalspec report`:
exit 0/1/2 with a located message, never 70 or a traceback."""

from __future__ import annotations

import copy
import json
import random
import shutil
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from fuzz_strategies import BASE_ROWS, FUZZ, check_one_set, check_outcome, hostile_values, plan_variant, \
    plant_old_set, run_cli

_YAML_VALUES = ["-1", "0", "2.5", "null", "[]", "{}", "yes", "x y", "2026-13-40", "2026-10-01", '"', "[a, b",
                "&x 1", "*nope", "1e999", ".nan", ".inf", "-.inf", '"nan"', "99999999999999999999", "'$x$'",
                "[first, majority]", "{kind: proportion}", "A", "B", "doc", "case_id", "passed", "~"]


@st.composite
def plan_texts(draw: Any) -> str:
    lines = plan_variant(draw(st.sampled_from(["binary", "score", "clustered", "slices"]))).splitlines()
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["value", "value", "value", "delete", "duplicate", "indent", "truncate"]))
        if op == "value" and ":" in lines[i]:
            key = lines[i].split(":", 1)[0]
            lines[i] = key + ": " + draw(st.sampled_from(_YAML_VALUES))
        elif op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "indent":
            lines[i] = "  " + lines[i]
        elif op == "truncate":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    return "\n".join(lines) + "\n"


def _rows_text() -> str:
    return "".join(json.dumps(r) + "\n" for r in BASE_ROWS)


@FUZZ
@given(text=plan_texts())
def test_fuzzed_plans_never_crash_the_run(tmp_path_factory: Any, text: str) -> None:
    folder = tmp_path_factory.mktemp("plan")
    (folder / "results.jsonl").write_text(_rows_text(), encoding="utf-8")
    (folder / "plan.yaml").write_text(text, encoding="utf-8")
    plant_old_set(folder / "out")
    result = run_cli(folder, ["run", "plan.yaml", "--no-report"])
    event(f"exit {result.exit_code}")
    check_outcome(result)
    check_one_set(folder / "out", result.exit_code)


@pytest.fixture(scope="module")
def good_claim(tmp_path_factory: Any) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("claim")
    (folder / "results.jsonl").write_text(_rows_text(), encoding="utf-8")
    (folder / "plan.yaml").write_text(plan_variant("binary"), encoding="utf-8")
    result = run_cli(folder, ["run", "plan.yaml", "--no-report"])
    assert result.exit_code == 0, result.output
    return json.loads((folder / "out" / "claim.json").read_text(encoding="utf-8"))


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, path + (i,))
    return out


@FUZZ
@given(seed=st.integers(0, 2**32 - 1), new=st.lists(hostile_values, min_size=1, max_size=3))
def test_hand_edited_claims_never_crash_the_report(tmp_path_factory: Any, good_claim: dict[str, Any], seed: int,
                                                    new: list[Any]) -> None:
    claim = copy.deepcopy(good_claim)
    rnd = random.Random(seed)
    paths = [p for p in _paths(claim) if p]
    for value in new:
        path = rnd.choice(paths)
        target = claim
        try:
            for k in path[:-1]:
                target = target[k]
            target[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    folder = tmp_path_factory.mktemp("report")
    (folder / "claim.json").write_text(json.dumps(claim), encoding="utf-8")
    result = run_cli(folder, ["report", "claim.json", "--format", "html"])
    event(f"exit {result.exit_code}")
    check_outcome(result)
    if result.exit_code:
        assert not (folder / "report.html").exists()
    shutil.rmtree(folder, ignore_errors=True)
