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


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_no_interval_is_not_shown_as_a_95_percent_interval_from_minus_to_plus_100(tmp_path: Path) -> None:
    """Four clusters: no interval was computed; page 1 must not print the placeholder [-1, 1] as a 95% interval."""
    claim = load_fixture("superiority")
    why = "only 4 clusters; a cluster interval needs at least 5 to mean anything"
    claim["decision"]["primary"].update(informative=False, why_uninformative=why, low=-1.0, high=1.0,
                                        method=f"none ({why})")
    claim["coverage"]["interval"]["method"] = f"none ({why})"
    (html,) = render(claim, tmp_path, ("html",))
    text = _text(html.read_text(encoding="utf-8"))
    assert f"A − B : +4.0 pts, with no usable interval ({why})." in text
    assert "−100.0" not in text and "+100.0" not in text
    assert f"Interval none ({why}) " in text  # the Sampling box gives no level for an interval that does not exist
    assert f"none ({why}), 95%" not in text
    assert "no interval was computed, so the difference has no stated uncertainty" in text
    assert "A 95% procedure covers the true value" not in text
    assert "Worth acting on from +3.0 pts." in text and "(dashed line)" not in text  # no number line is drawn


def test_an_informative_interval_is_still_given_with_its_level(tmp_path: Path) -> None:
    (html,) = render(load_fixture("superiority"), tmp_path, ("html",))
    text = _text(html.read_text(encoding="utf-8"))
    assert "(95% interval −3.0 to +11.0 pts), cluster_bootstrap (bca)." in text
    assert "Interval cluster_bootstrap (bca), 95%" in text
    assert "Worth acting on from +3.0 pts (dashed line)." in text


def test_the_reason_for_no_interval_is_not_repeated_in_the_caption_when_a_caveat_gives_it(tmp_path: Path) -> None:
    claim = load_fixture("superiority")
    why = "only 4 clusters; a cluster interval needs at least 5 to mean anything"
    claim["decision"]["primary"].update(informative=False, why_uninformative=why, low=-1.0, high=1.0,
                                        method=f"none ({why})")
    claim["decision"]["caveats"] = [{"code": "uninformative_interval", "severity": "verdict",
                                     "message": f"The interval cannot decide anything: {why}."}]
    (html,) = render(claim, tmp_path, ("html",))
    text = _text(html.read_text(encoding="utf-8"))
    assert "A − B : +4.0 pts, with no usable interval (the caveat below says why)." in text
    assert f"The interval cannot decide anything: {why}." in text
