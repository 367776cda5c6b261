"""The attempt rows' per-row codes are int32 (``Tidy``: 4 bytes a row, not 8): the claim is the one int64 gives.

NumPy 2 keeps int32 in arithmetic with a Python integer (NEP 50), so a consumer that multiplies
codes without casting first could overflow silently. Each study below runs twice, with the
codes as built (int32) and with :data:`evalspec.results.table.CODE_TYPE` set to int64, and the
claim bytes must be equal; so must they with int8 codes, which overflow at these sizes in any
product left uncast (a stand-in for int32 at 2**31, which no test can reach): every attempt rule, both missing-outcome policies, extra and fewer
repeats, unpaired cases, an inconsistent case attribute and the other readings of the verdict.
The examples run the other analysis kinds the same way.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from evalspec.claim import dumps
from evalspec.results import table

ROOT = Path(__file__).resolve().parents[2]

PLAN = """\
evalspec: 1
id: narrow-codes
title: Narrow codes
question: Do int32 codes change anything?
decision_owner: nobody (test)
population: invented
data:
  results: results.jsonl
  columns: {{candidate: candidate, repeat: repeat, outcome: passed, model_version: model_version,
            timestamp: ts, critical: critical}}
candidates:
  A: {{model: t/a, version: v1}}
  B: {{model: t/b, version: v1}}
baseline: B
units: {{case: case_id, cluster: doc}}
attempts: {{repeats: 3, rule: {rule}{extra}}}
missing: {{policy: {policy}, max_fraction: 0.2}}
analyses:
  - {{kind: proportion}}
  - {{kind: paired_difference, compare: [A, B], resamples: 200, seed: 1}}
  - {{kind: critical_failures}}
  - {{kind: run_variation}}
  - {{kind: slices, names: [topic]}}
decision:
  minimum_improvement: 0.01
  critical_failures: {{max_rate: 0.5}}
slices: [{{name: topic, column: topic}}]
"""

STUDIES = [("majority", "", "count_as_fail"), ("best_of_k", ", k: 2", "exclude"), ("first", "", "exclude"),
           ("mean", "", "count_as_fail"), ("pass_at_k", ", k: 2", "exclude"),
           ("majority_answer", ", answer: ans, target: tgt", "count_as_fail")]


def _rows() -> str:
    """Invented attempt rows with everything the checks and readings treat specially (fixed seed)."""
    rng = np.random.default_rng(7)
    lines = []
    for cand, shift in (("A", 0.15), ("B", 0.0)):
        for i in range(120):
            if cand == "B" and i % 17 == 0:
                continue  # unpaired cases
            repeats = 4 if i % 23 == 0 else 2 if i % 19 == 0 else 3  # extra and fewer repeats
            for r in range(1, repeats + 1):
                u = rng.random()
                passed = None if u < 0.04 else bool(u < 0.5 + shift)
                topic = "z" if (i == 5 and r == 2) else "abc"[i % 3]  # one case's topic differs between rows
                lines.append(json.dumps({
                    "candidate": cand, "case_id": f"case-{i:03d}", "doc": f"doc-{i % 13:02d}", "topic": topic,
                    "critical": i % 11 == 0, "model_version": "v1", "ts": f"2026-10-01T10:{i % 60:02d}:00Z",
                    "repeat": r, "passed": passed, "ans": str(int(rng.integers(0, 3))), "tgt": "1"}))
    return "\n".join(lines) + "\n"


def _claim(plan: Path) -> str:
    from evalspec.run import run_plan

    return dumps(run_plan(plan))


def _as(plan: Path, monkeypatch: pytest.MonkeyPatch, dtype: type) -> str:
    with monkeypatch.context() as mp:
        mp.setattr(table, "CODE_TYPE", dtype)
        return _claim(plan)


@pytest.mark.parametrize(("rule", "extra", "policy"), STUDIES)
def test_int32_codes_give_the_int64_claim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rule: str, extra: str,
                                          policy: str) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796299200")
    (tmp_path / "results.jsonl").write_text(_rows(), encoding="utf-8")
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.format(rule=rule, extra=extra, policy=policy), encoding="utf-8")
    narrow, wide = _claim(plan), _as(plan, monkeypatch, np.int64)
    assert narrow == wide
    # int8 codes (every code here fits: 120 cases, 13 clusters) overflow in any product left uncast
    assert _as(plan, monkeypatch, np.int8) == wide
    claim = json.loads(narrow)
    codes = {d["code"] for d in claim["deviations"]}
    assert {"extra_repeats", "fewer_repeats", "unpaired_cases", "inconsistent_case_attribute"} <= codes


@pytest.mark.parametrize("example", sorted(p.name for p in (ROOT / "examples").iterdir() if (p / "plan.yaml").exists()))
def test_int32_codes_give_the_int64_claim_on_the_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          example: str) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796299200")
    shutil.copytree(ROOT / "examples" / example, tmp_path / example,
                    ignore=shutil.ignore_patterns("out", ".evalspec", "*.lock*"))
    plan = tmp_path / example / "plan.yaml"
    assert _claim(plan) == _as(plan, monkeypatch, np.int64)


def test_the_tidy_codes_are_int32(tmp_path: Path) -> None:
    from evalspec.run import check_data, load_plan_for_run

    (tmp_path / "results.jsonl").write_text(_rows(), encoding="utf-8")
    (tmp_path / "plan.yaml").write_text(PLAN.format(rule="majority", extra="", policy="count_as_fail"),
                                        encoding="utf-8")
    tidy = check_data(load_plan_for_run(tmp_path / "plan.yaml"))[0].tidy
    assert {str(a.dtype) for a in (tidy.cand, tidy.case, tidy.repeat, tidy.cluster)} == {"int32"}
