"""A plan and a results file in a temporary folder, run end to end (for the crafted studies of issue 18)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PLAN = """\
evalspec: 1
id: crafted-{name}
title: Crafted study
question: Should we move from B to A?
decision_owner: test owner
population: invented cases
data:
  results: results.jsonl
  columns: {{candidate: candidate, repeat: repeat, outcome: passed{timestamp}}}
candidates:
  A: {{model: m-a}}
  B: {{model: m-b}}
baseline: B
units: {{case: case_id{cluster}}}
attempts: {{repeats: 1, rule: first}}
missing: {{policy: {policy}, max_fraction: 0.05}}
analyses:
{analyses}
decision:
  minimum_improvement: {d}
  minimum_units: 2
stopping: {stopping}
"""


def write_study(folder: Path, rows: list[dict[str, Any]], *, name: str = "study", policy: str = "count_as_fail",
                d: float = 0.02, analyses: str = "  - {kind: paired_difference}", stopping: str = "{looks: 1}",
                clustered: bool = False, timestamp: bool = False, extra: str = "") -> Path:
    """Write ``results.jsonl`` and ``plan.yaml`` into ``folder``; return the plan's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    plan = folder / "plan.yaml"
    plan.write_text(PLAN.format(name=name, policy=policy, d=d, analyses=analyses, stopping=stopping,
                                cluster=", cluster: doc" if clustered else "",
                                timestamp=", timestamp: ts" if timestamp else "") + extra, encoding="utf-8")
    return plan


def pairs(a: list[int | None], b: list[int | None], *, docs: list[str] | None = None,
          prefix: str = "c") -> list[dict[str, Any]]:
    """Rows for A and B on the same cases (None: a missing outcome)."""
    rows = []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        for cand, v in (("A", x), ("B", y)):
            row: dict[str, Any] = {"case_id": f"{prefix}{i}", "candidate": cand, "repeat": 1,
                                   "passed": None if v is None else bool(v)}
            if docs is not None:
                row["doc"] = docs[i]
            rows.append(row)
    return rows


def run(plan: Path) -> dict[str, Any]:
    from evalspec.run import run_plan

    return run_plan(plan)


def page_one(claim: dict[str, Any]) -> str:
    from evalspec.report.render import render_html

    html = render_html(claim, with_plots=False)
    return html[: html.index('id="coverage"')]
