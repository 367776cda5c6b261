"""Formatting filters (exact strings) and the view model's tolerance of partial claims."""

from __future__ import annotations

import copy
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from report_claims import load_fixture

from evalspec.report import fmt, render_html
from evalspec.report.view import VERDICTS, build_view

M = fmt.MINUS


@pytest.mark.parametrize(("value", "expected"), [(0.82, "82.0%"), (0.7334, "73.3%"), (0.0, "0.0%"), (1.0, "100.0%"),
                                                 (-0.00001, "0.0%"), (None, fmt.DASH), (float("nan"), fmt.DASH)])
def test_pct(value, expected) -> None:
    assert fmt.pct(value) == expected


@pytest.mark.parametrize(("value", "expected"), [(0.04, "+4.0 points"), (-0.03, f"{M}3.0 points"), (0.0, "0.0 points"),
                                                 (-0.0004, "0.0 points"), (0.11, "+11.0 points")])
def test_pts_signs_and_true_minus(value, expected) -> None:
    assert fmt.pts(value) == expected


def test_interval_level_count_pvalue_dates() -> None:
    assert fmt.interval(0.733, 0.883) == "73.3% to 88.3%"
    assert fmt.interval(-0.03, 0.11, "pts") == f"{M}3.0 to +11.0 points"
    assert fmt.level(0.95) == "95%" and fmt.level(0.975) == "97.5%"
    assert fmt.count(100000) == "100,000" and fmt.count(143.4) == "143.4" and fmt.count(-1) == f"{M}1"
    assert fmt.pvalue(0.3877) == "0.39" and fmt.pvalue(0.0123) == "0.012" and fmt.pvalue(1e-11) == "< 0.001"
    assert fmt.date_time("2026-11-29T12:00:00Z") == "29 Nov 2026, 12:00 UTC"
    assert fmt.date_time("2026-11-29T13:00:00+01:00", with_time=False) == "29 Nov 2026"
    assert fmt.date_time("not a date") == "not a date"
    assert fmt.number(1.5e-7) == f"1.5 × 10^{M}7"


@given(st.floats(min_value=-1, max_value=1, allow_nan=False))
def test_pts_round_trips_to_the_printed_precision(x: float) -> None:
    text = fmt.pts(x).removesuffix(" points").replace(M, "-")
    assert abs(float(text) - 100 * x) <= 0.05 + 1e-9
    assert text.startswith(("-", "+")) or float(text) == 0


@given(st.floats(min_value=0, max_value=1, allow_nan=False))
def test_pct_round_trips_to_the_printed_precision(x: float) -> None:
    assert abs(float(fmt.pct(x).removesuffix("%")) - 100 * x) <= 0.05 + 1e-9


def test_every_verdict_code_has_words() -> None:
    codes = {"worth_acting_on", "too_small", "no_material_gain", "inconclusive", "regression", "non_inferior",
             "not_non_inferior", "equivalent", "not_equivalent", "blocked", "too_few_units", "no_comparison"}
    assert set(VERDICTS) == codes
    assert "equivalent" not in VERDICTS["no_material_gain"][0].lower()


@pytest.mark.parametrize("code", sorted(VERDICTS))
def test_each_verdict_renders_its_label(code: str) -> None:
    claim = load_fixture("superiority")
    claim["decision"]["verdict"] = code
    assert VERDICTS[code][0] in render_html(claim, with_plots=False)


@pytest.mark.parametrize("drop", ["coverage", "analyses", "deviations", "systematic_limits", "software", "seeds",
                                  "data", "command", "created"])
def test_missing_optional_parts_still_render(drop: str) -> None:
    claim = load_fixture("superiority")
    del claim[drop]
    html = render_html(claim, with_plots=False)
    assert claim["decision"]["headline"].split(":")[0] in html
    assert "Sampling uncertainty" in html and "Systematic limits" in html


def test_minimal_claim_renders() -> None:
    html = render_html({"claim_format": 1, "decision": {"verdict": "no_comparison", "headline": "Only this."}})
    assert "Only this." in html and "No comparison planned" in html


def test_goal_zones_for_non_inferiority_and_equivalence() -> None:
    for goal, words in (("non_inferiority", "non-inferior"), ("equivalence", "equivalent")):
        claim = load_fixture("superiority")
        claim["decision"]["goal"] = goal
        claim["decision"]["thresholds"]["margin"] = 0.02
        html = render_html(claim)
        assert f">{words}</text>" in html  # zone label inside the number line
        assert "Margin ± 2.0 points" in html


def test_print_view_caps_the_appendix_and_screen_view_does_not() -> None:
    from report_claims import long_claim

    claim = long_claim(5000)
    screen, paper = build_view(claim, "screen"), build_view(claim, "print")
    first = screen.case_lists[1][0]
    assert first.total == 700 and len(first.appendix) == 700 and not first.appendix_truncated
    assert len(paper.case_lists[1][0].appendix) == 500 and paper.case_lists[1][0].appendix_truncated
    assert len(first.body) == 25


def test_view_does_not_modify_the_claim() -> None:
    claim = load_fixture("hostile")
    before = copy.deepcopy(claim)
    render_html(claim)
    assert claim == before


def test_unknown_analysis_kind_gets_a_generic_section() -> None:
    claim = load_fixture("superiority")
    claim["analyses"].append({"index": 9, "kind": "novel_kind", "label": "Novel analysis", "params": {},
                              "result": {"candidates": {"A": {"score": 0.5, "draws": [1, 2]}, "B": {"score": 0.25}},
                                         "method": "new method"}})
    html = render_html(claim, with_plots=False)
    section = html.split('id="analysis-9"')[1].split("</section>")[0]
    assert "<h2>Novel analysis</h2>" in section
    assert '<th class="num">score</th>' in section and "0.25" in section
    assert "A: draws" in section and "1, 2" in section and "new method" in section


def test_pdf_without_weasyprint_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from evalspec.report.render import PdfUnavailable, render_pdf_bytes

    monkeypatch.setitem(sys.modules, "weasyprint", None)  # import now raises ImportError
    with pytest.raises(PdfUnavailable, match="--format html"):
        render_pdf_bytes("<html></html>")


def test_case_grid_aligns_columns_and_keeps_every_case() -> None:
    rows = [{"case": f"c{i:02d}", "cluster": "k" * (i % 3)} for i in range(10)] + ["bare-id"]
    text = fmt.case_grid(rows, width=40)
    lines = text.split("\n")
    assert all(len(line) <= 40 for line in lines)
    assert len(lines) == 4  # widest cell "c02 · kk" + 3 spaces = 11 wide -> 3 per line; 11 cells
    found = [cell.split(" \u00b7")[0].strip() for line in lines for cell in re.split(r"\s{3,}", line) if cell.strip()]
    assert found == [f"c{i:02d}" for i in range(10)] + ["bare-id"]
    # columns start at the same offsets on every line
    assert {line.index("c", 1) for line in lines[:3]} == {11}
    assert fmt.case_grid([]) == ""
    assert fmt.case_grid([{"case": "x" * 200, "cluster": None}], width=40) == "x" * 200


@pytest.mark.parametrize("name", ["superiority", "single_candidate", "hostile"])
def test_contents_link_to_every_section_in_order(name: str) -> None:
    html = render_html(load_fixture(name), with_plots=False)
    nav = html.split('<nav class="toc"')[1].split("</nav>")[0]
    anchors = re.findall(r'href="#([^"]+)"', nav)
    body = html.split("</nav>")[1]
    positions = [body.find(f'id="{a}"') for a in anchors]
    assert all(p >= 0 for p in positions), dict(zip(anchors, positions))
    assert positions == sorted(positions)
    assert "Appendix: the plan as registered" in nav


def test_zone_labels_shorten_then_disappear_in_narrow_zones() -> None:
    from evalspec.report.plots import _fit_label

    assert _fit_label("gain too small", 0.5) == "gain too small"
    assert _fit_label("gain too small", 0.12) == "too small"
    assert _fit_label("gain too small", 0.02) is None
    assert _fit_label("loss", 0.06) == "loss"
