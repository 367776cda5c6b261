"""The Markdown summary (``report --format markdown``, ``$GITHUB_STEP_SUMMARY``), rendered by a real renderer.

markdown-it-py is a CommonMark implementation; with its table rule on it reads the GitHub /
GitLab dialect the summary is written for. The HTML it produces is parsed and checked.
"""

from __future__ import annotations

import json
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workflow_helpers import ROOT, cli, table_plan, table_study  # noqa: E402

markdown_it = pytest.importorskip("markdown_it")


class _Tree(HTMLParser):
    """Tags, table rows (cells per row) and text of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.rows: list[list[str]] = []
        self.text: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def render(text: str) -> _Tree:
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(text)
    tree = _Tree()
    tree.feed(html)
    return tree


def test_the_summary_of_an_example_claim_renders_as_headed_tables() -> None:
    from evalspec.report.markdown import markdown_summary

    claim = json.loads((ROOT / "tests" / "report" / "fixtures" / "superiority.json").read_text(encoding="utf-8"))
    tree = render(markdown_summary(claim))
    assert tree.tags[0] == "h3" and tree.tags.count("table") == 2
    assert all(len(row) == 2 for row in tree.rows), tree.rows
    cells = {row[0]: row[1] for row in tree.rows}
    assert cells["Primary difference"] == "A − B: +4.0 points, 95% interval −3.0 to +11.0 points"
    assert cells["Against the thresholds"] == "the interval contains 0, contains the minimum improvement +3.0 points"
    assert cells["Lock"].startswith("locked 2026-11-20T09:14:00Z")
    text = "".join(tree.text)
    assert "Verdict: Inconclusive" in text or "Verdict: inconclusive" in text
    assert "The interval rests on 20 policy documents" in text  # the verdict's caveats
    assert "English questions only" in text  # the stated systematic limits


def test_hostile_text_prints_as_characters_and_keeps_the_tables_whole() -> None:
    from evalspec.report.markdown import markdown_summary

    claim = json.loads((ROOT / "tests" / "report" / "fixtures" / "superiority.json").read_text(encoding="utf-8"))
    hostile = "<script>alert(1)</script> | *bold* [x](javascript:alert(1)) `code` &amp; # h\nnext"
    claim["plan"]["title"] = hostile
    claim["plan"]["question"] = hostile
    claim["decision"]["reasons"] = [hostile]
    tree = render(markdown_summary(claim))
    assert "script" not in tree.tags and "a" not in tree.tags and "em" not in tree.tags and "code" not in tree.tags
    assert all(len(row) == 2 for row in tree.rows[:8]), tree.rows
    cells = {row[0]: row[1] for row in tree.rows}
    assert cells["Question"] == "<script>alert(1)</script> | *bold* [x](javascript:alert(1)) `code` &amp; # h next"


def test_report_format_markdown_prints_or_writes_and_carries_the_audit(tmp_path: Path) -> None:
    table_study(tmp_path)
    done = cli(tmp_path, "report", "out/claim.json", "--format", "markdown")
    assert done.exit_code == 0, done.output
    tree = render(done.stdout)
    text = "".join(tree.text)
    assert "Verdict: Worth acting on" in text and "Audit: passed" in text and "numbers not re-run" in text
    cells = {row[0]: row[1] for row in tree.rows if len(row) == 2}
    record = json.loads((tmp_path / "out" / "claim.json").read_text(encoding="utf-8"))["process"]
    assert cells["Process"] == " ".join(record["line"].split())  # the run's own process line
    assert not (tmp_path / "out" / "summary.md").exists()
    written = cli(tmp_path, "report", "out/claim.json", "--format", "markdown", "--out", "pr")
    assert written.exit_code == 0 and (tmp_path / "pr" / "summary.md").read_text(encoding="utf-8") == done.stdout


def test_run_appends_the_summary_to_the_github_step_summary(tmp_path: Path) -> None:
    table_study(tmp_path, run=False, plan=table_plan())
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    done = cli(tmp_path, "run", "plan.yaml", "--no-report", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert done.exit_code == 0, done.output
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n### evalspec: A against B\n")
    assert "Verdict: Worth acting on" in "".join(render(text).text)
    # unwritable summary: said on stderr, the run still succeeds
    done = cli(tmp_path, "run", "plan.yaml", "--no-report",
               env={"GITHUB_STEP_SUMMARY": str(tmp_path / "no" / "such" / "folder" / "x.md")})
    assert "could not append the summary to $GITHUB_STEP_SUMMARY" in done.stderr


def test_no_summary_without_the_variable(tmp_path: Path) -> None:
    table_study(tmp_path, run=False)
    done = cli(tmp_path, "run", "plan.yaml", "--no-report", env={"GITHUB_STEP_SUMMARY": ""})
    assert done.exit_code == 0 and "###" not in done.output


def test_replacing_a_claim_or_dropping_a_report_is_said(tmp_path: Path) -> None:
    """A re-run never replaces the earlier claim, nor --no-report its report, silently."""
    table_study(tmp_path, run=False)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.html").write_text("<p>the morning's report</p>", encoding="utf-8")
    first = cli(tmp_path, "run", "plan.yaml", "--no-report")
    assert first.exit_code == 0
    assert "note: --no-report removed the earlier report.html with the earlier claim" in first.stderr
    assert "replaced the earlier claim" not in first.stderr  # there was none
    again = cli(tmp_path, "run", "plan.yaml", "--no-report")
    assert again.exit_code == 0
    assert "note: replaced the earlier claim in out (made 2026-12-01T12:00:00Z, verdict worth_acting_on, ledger " \
           "entry 1); its look stays in the ledger" in again.stderr
    per_run = cli(tmp_path, "run", "plan.yaml", "--no-report", "--out", "out/run-3")
    assert per_run.exit_code == 0 and "replaced" not in per_run.stderr
