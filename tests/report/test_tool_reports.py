"""Claims read from tool logs show, beside evalspec's numbers, what the tool itself reported and why they differ."""

from __future__ import annotations

import html as htmllib
import shutil
from pathlib import Path

from evalspec.report.render import render_html
from evalspec.report.sources import tool_notes, tool_reports
from evalspec.results.adapters import Options, read_logs

FIXTURES = Path(__file__).resolve().parents[1] / "results" / "fixtures"

PLAN = """\
evalspec: 1
id: strong-vs-weak
title: Strong against weak
question: Should we replace the weak model with the strong one?
decision_owner: evaluation lead
population: arithmetic questions (a test)
data:
  results: logs/
  format: inspect
  candidate_names: {coinflip/strong: strong, coinflip/weak: weak}
candidates:
  strong: {model: coinflip/strong}
  weak: {model: coinflip/weak}
baseline: weak
units: {case: case_id, cluster: doc_id}
attempts: {repeats: 3, rule: majority}
analyses:
  - kind: proportion
  - kind: paired_difference
decision: {goal: superiority, minimum_improvement: 0.05}
"""


def _inspect_claim(tmp_path: Path) -> dict:
    from evalspec.run import run_plan

    (tmp_path / "logs").mkdir()
    for name in ("coinflip-strong_p0.9.eval", "coinflip-weak_p0.6.eval"):
        shutil.copyfile(FIXTURES / "inspect_ai" / name, tmp_path / "logs" / name)
    (tmp_path / "plan.yaml").write_text(PLAN, encoding="utf-8")
    return run_plan(tmp_path / "plan.yaml")


def test_the_report_sets_the_tools_numbers_beside_the_plans(tmp_path: Path) -> None:
    claim = _inspect_claim(tmp_path)
    rows = {r.candidate: r for r in tool_reports(claim)}
    assert set(rows) == {"strong", "weak"}
    assert rows["strong"].tool == "inspect_ai" and rows["strong"].tool_name == "coinflip/strong"
    assert rows["strong"].value == 0.9 and 0.05 < (rows["strong"].stderr or 0) < 0.06  # the log's own metric
    assert rows["strong"].metric.startswith("accuracy")
    page = htmllib.unescape(render_html(claim, with_plots=False))
    table = page.split("What the evaluation tool itself reported", 1)[1].split("</table>", 1)[0]
    assert "coinflip/strong in the log" in table and "0.9" in table and "0.4667" in table
    note = page.split('class="note tool-notes">', 1)[1].split("</p>", 1)[0]
    assert "follows the plan" in note and "inspect_ai reduces the epochs of each sample first" in note
    assert tool_notes(claim) and all(n in note for n in tool_notes(claim))


def test_a_claim_from_a_table_has_no_tool_section(tmp_path: Path) -> None:
    from report_claims import real_claim_file

    from evalspec.report.load import load_claim

    claim = load_claim(real_claim_file(tmp_path, "policy-migration"))
    assert tool_reports(claim) == [] and tool_notes(claim) == []
    assert "What the evaluation tool itself reported" not in render_html(claim, with_plots=False)


def test_a_promptfoo_file_gives_one_row_per_provider_with_its_pass_rate() -> None:
    raw = read_logs([FIXTURES / "promptfoo" / "coinflip_repeat3.json"], "promptfoo", Options())[0]
    prov = raw.provenance  # type: ignore[attr-defined]
    claim = {"data": {"files": [{"path": "r.json", "format": "promptfoo", "provenance": prov}]}}
    rows = tool_reports(claim)
    per = prov["reported"]["per_candidate"]
    assert per and len(rows) == len(per)
    for r in rows:
        assert r.tool == "promptfoo" and r.value == per[r.tool_name or r.candidate]["pass_rate"]


def test_odd_provenance_is_skipped_not_fatal() -> None:
    claim = {"data": {"files": [{"path": "a", "provenance": {"reported": {"value": float("nan"), "stderr": True}}},
                                {"path": "b", "provenance": "text"}, "not a file", {"path": "c"}]}}
    rows = tool_reports(claim)
    assert len(rows) == 1 and rows[0].value is None and rows[0].stderr is None
    assert tool_notes({"data": None}) == [] and tool_reports({}) == []
