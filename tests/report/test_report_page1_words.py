"""Page 1 says only what is true of this study (issue: boilerplate where a fitted sentence belongs)."""

from __future__ import annotations

import re
from pathlib import Path

from report_claims import load_fixture

from evalspec.report import render


def _cases_line(html: str) -> str:
    m = re.search(r"<dt>Cases</dt><dd>(.*?)</dd>", html, re.S)
    assert m, "no Cases line in the report"
    return m.group(1)


def test_a_single_candidate_study_does_not_call_its_cases_paired(tmp_path: Path) -> None:
    claim = load_fixture("single_candidate")
    assert len(claim["coverage"]["candidates"]) == 1
    (html,) = render(claim, tmp_path, ("html",))
    assert "paired" not in _cases_line(html.read_text(encoding="utf-8"))


def test_a_comparison_still_says_how_many_cases_are_paired(tmp_path: Path) -> None:
    claim = load_fixture("superiority")
    (html,) = render(claim, tmp_path, ("html",))
    assert "paired" in _cases_line(html.read_text(encoding="utf-8"))
