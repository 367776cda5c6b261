"""The PDF handoff, read back with poppler-utils: page count, page 1 content, pages not blank."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from report_claims import load_fixture, long_claim
from report_tools import require_tool

pytestmark = pytest.mark.pdf


def _text(pdf: Path, first: int | None = None, last: int | None = None) -> str:
    cmd = [require_tool("pdftotext")]  # reading order: the side-by-side boxes stay apart
    if first:
        cmd += ["-f", str(first)]
    if last:
        cmd += ["-l", str(last)]
    return subprocess.run(cmd + [str(pdf), "-"], check=True, capture_output=True, text=True, timeout=60).stdout


def _pages(pdf: Path) -> int:
    return _text(pdf).count("\f")


def _squash(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", ["superiority", "single_candidate", "hostile"])
def test_page_one_is_the_handoff(rendered: dict, name: str) -> None:
    claim = load_fixture(name)
    page1 = _squash(_text(rendered[name]["pdf"], 1, 1))
    assert _squash(claim["decision"]["headline"]) in page1
    assert "Sampling uncertainty" in page1
    assert "Systematic limits" in page1
    assert _squash(claim["plan"]["question"]) in page1
    assert claim["plan"]["decision_owner"] in page1
    for limit in claim["systematic_limits"]["stated"]:
        assert _squash(limit) in page1
    assert "Page 1 of" in page1
    assert claim["plan"]["id"] in page1  # running header


def test_page_one_of_a_comparison_has_the_interval_and_critical_failures(rendered: dict) -> None:
    page1 = _squash(_text(rendered["superiority"]["pdf"], 1, 1))
    # primary difference 0.04 [-0.03, 0.11] as written by the report, and on the number line
    assert "+4.0 points (95% interval −3.0 to +11.0 points)" in page1
    assert "Difference in pass rate, A − B (percentage points)" in page1
    assert "too small" in page1 and "worth acting on" in page1  # zone labels (shortened when narrow)
    assert "Critical failures" in page1.title() or "CRITICAL FAILURES" in page1
    assert "22.1%" in page1 and "33.9%" in page1
    assert "What would change the decision".upper() in page1.upper()
    assert "escalation path".upper() in page1.upper()


@pytest.mark.parametrize(("name", "low", "high"), [("superiority", 4, 9), ("single_candidate", 3, 8),
                                                   ("long_cases", 5, 30)])
def test_page_count_is_sane(rendered: dict, name: str, low: int, high: int) -> None:
    assert low <= _pages(rendered[name]["pdf"]) <= high


def test_long_case_list_is_capped_in_the_pdf_and_points_to_the_full_list(rendered: dict) -> None:
    text = _squash(_text(rendered["long_cases"]["pdf"]))
    assert "This PDF lists the first 500 of 700" in text
    assert "The full list is in the HTML report" in text
    html = rendered["long_cases"]["html"].read_text(encoding="utf-8")
    claim = long_claim(5000)
    last = claim["analyses"][1]["result"]["disagreements"]["candidate_only"][-1]["case"]
    assert last in html  # the HTML appendix lists every case
    assert last not in text


def test_pages_render_to_non_blank_images(rendered: dict, tmp_path: Path) -> None:
    from PIL import Image

    tool = require_tool("pdftoppm")
    subprocess.run([tool, "-png", "-r", "40", "-f", "1", "-l", "2", str(rendered["superiority"]["pdf"]),
                    str(tmp_path / "page")], check=True, timeout=60)
    pngs = sorted(tmp_path.glob("page-*.png"))
    assert len(pngs) == 2
    for png in pngs:
        with Image.open(png) as img:
            w, h = img.size
            assert abs(h / w - 297 / 210) < 0.02  # A4 portrait
            grey = img.convert("L")
            lo, hi = grey.getextrema()
            assert hi - lo > 100, "page looks blank"
            dark = sum(grey.histogram()[:200])
            assert dark > 0.01 * w * h, "too little ink on the page"


#: WeasyPrint warnings that describe the machine (a missing optional system library), not the report.
ENVIRONMENT_WARNINGS = ("HarfBuzz", "harfbuzz")


def test_pdf_is_reproducible_dated_by_the_claim_and_warning_free(rendered: dict, tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """Same claim, same PDF bytes: the PDF's dates are the claim's creation time, not the render time.

    WeasyPrint logs every CSS or SVG construct it ignores; the report uses none.
    """
    import logging

    from evalspec.report import render

    with caplog.at_level(logging.WARNING, logger="weasyprint"):
        (again,) = render(load_fixture("superiority"), tmp_path, ("pdf",))
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("weasyprint")]
    environment = [msg for msg in messages if any(p in msg for p in ENVIRONMENT_WARNINGS)]
    if environment and os.environ.get("EVALSPEC_REQUIRE_TOOLS") != "1":
        # A warning about the machine, not the report: without libharfbuzz-subset WeasyPrint
        # subsets fonts with fontTools, says so, and its subsets are not byte-reproducible.
        # CI installs the library (EVALSPEC_REQUIRE_TOOLS=1) and holds the strict version.
        pytest.skip("libharfbuzz-subset not installed (Debian: libharfbuzz-subset0): PDF bytes not reproducible here")
    assert messages == []
    assert again.read_bytes() == rendered["superiority"]["pdf"].read_bytes()
    info = subprocess.run([require_tool("pdfinfo"), "-isodates", str(again)], capture_output=True, text=True,
                          check=True, timeout=60, env={**os.environ, "TZ": "UTC"}).stdout
    assert re.search(r"CreationDate:\s+2026-11-29T12:00:00", info), info
    assert "Title:" in info and "decision report" in info
