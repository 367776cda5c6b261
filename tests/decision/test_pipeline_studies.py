"""Crafted studies of issue 8 run end to end: a results file and a plan through ``run_plan``, and the
report's first page, so the verdict and its caveats are checked where a decision owner reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

PLAN = """\
evalspec: 1
id: crafted
title: Crafted study
question: Should we move from B to A?
decision_owner: test owner
population: invented cases
data:
  results: results.jsonl
  columns: {{candidate: candidate, repeat: repeat, outcome: passed, critical: critical}}
candidates:
  A: {{model: m-a}}
  B: {{model: m-b}}
baseline: B
units: {{case: case_id, cluster: doc}}
attempts: {{repeats: {repeats}, rule: {rule}}}
analyses:
  - {{kind: paired_difference}}
  - {{kind: critical_failures}}
decision:
  minimum_improvement: 0.03
  minimum_units: 2
  critical_failures: {{max_rate: 0.05}}
"""


def write(tmp_path: Path, rows: list[dict], *, rule: str = "first", repeats: int = 1) -> Path:
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.format(rule=rule, repeats=repeats), encoding="utf-8")
    return plan


def run(plan: Path) -> dict:
    from evalspec.run import run_plan

    claim = run_plan(plan)
    return claim if isinstance(claim, dict) else claim.model_dump(mode="json")


def test_four_clusters_all_plus_50_is_inconclusive_with_the_caveat_on_page_one(tmp_path: Path) -> None:
    rows = []
    for g in range(4):
        for i in range(10):
            case = f"g{g}c{i}"
            rows.append({"case_id": case, "doc": f"d{g}", "candidate": "A", "repeat": 1, "passed": True,
                         "critical": False})
            rows.append({"case_id": case, "doc": f"d{g}", "candidate": "B", "repeat": 1, "passed": i >= 5,
                         "critical": False})
    for i in range(70):  # failure-free critical cases in their own documents, so the limit is not what decides
        for cand in "AB":
            rows.append({"case_id": f"k{i}", "doc": f"k{i}", "candidate": cand, "repeat": 1, "passed": True,
                         "critical": True})
    claim = run(write(tmp_path, rows))
    d = claim["decision"]
    assert d["verdict"] == "inconclusive", d["reasons"]
    assert any(c["code"] == "uninformative_interval" for c in d["caveats"])

    from evalspec.report.render import render_html

    html = render_html(claim, with_plots=False)
    page_one = html[: html.index('id="coverage"')]
    # the reason is said once beside the verdict: in the headline when it explains the verdict, else as a caveat
    assert "Inconclusive" in page_one
    verdict_box = page_one[: page_one.index("For the analyst")] if "For the analyst" in page_one else page_one
    assert verdict_box.count("only 4 of 74 clusters hold any disagreement") == 1


@pytest.mark.parametrize("rule", ["first", "majority", "best_of_k"])
def test_a_critical_failure_in_one_attempt_blocks_under_every_rule(tmp_path: Path, rule: str) -> None:
    rows = []
    for i in range(80):
        for cand in "AB":
            for r in (1, 2, 3):
                failed = cand == "A" and i < 3 and r == 3  # A fails the last of three attempts of 3 critical cases
                rows.append({"case_id": f"c{i}", "doc": f"d{i}", "candidate": cand, "repeat": r,
                             "passed": not failed and (cand == "A" or i % 4 != 0), "critical": True})
    plan = write(tmp_path, rows, rule=rule, repeats=3)
    if rule == "best_of_k":
        plan.write_text(plan.read_text().replace("rule: best_of_k}", "rule: best_of_k, k: 3}"), encoding="utf-8")
    claim = run(plan)
    crit = next(a for a in claim["analyses"] if a["kind"] == "critical_failures")["result"]["candidates"]["A"]
    assert (crit["critical_cases"], crit["failures"]) == (80, 3)
    assert claim["decision"]["verdict"] == "blocked"
