"""Text from the data is escaped everywhere: markup and template syntax render as characters.

The hostile fixture puts ``<script>alert(1)</script>`` and ``{{ 7*7 }}`` into candidate names,
model names, case ids, clusters, slice values and columns, the question, the headline, the
reasons, deviations, limits, software versions and the plan text.
"""

from __future__ import annotations

import re
import subprocess

import pytest
from report_claims import HOSTILE, load_fixture
from report_golden import normalise
from report_tools import require_tool

from evalspec.report import render_html

SCRIPT, TEMPLATE = HOSTILE
ESCAPED_SCRIPT = "&lt;script&gt;alert(1)&lt;/script&gt;"


@pytest.fixture(scope="module")
def html() -> str:
    return render_html(load_fixture("hostile"))


def test_no_script_element_anywhere(html: str) -> None:
    assert "<script" not in html.lower()
    assert "script-src" not in html  # the CSP falls back to default-src 'none'
    assert "default-src 'none'" in html


def test_markup_is_escaped_where_it_is_printed(html: str) -> None:
    assert f"Should we ship {TEMPLATE}? {ESCAPED_SCRIPT}" in html
    plan_source = re.search(r'<div class="plan-source">(.*?)</div>', html, re.DOTALL).group(1)  # <pre> pieces
    assert ESCAPED_SCRIPT in plan_source


def _replace_strings(obj: object, old: str, new: str) -> object:
    if isinstance(obj, str):
        return obj.replace(old, new)
    if isinstance(obj, dict):
        return {_replace_strings(k, old, new): _replace_strings(v, old, new) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_replace_strings(v, old, new) for v in obj]
    return obj


@pytest.mark.parametrize(("hostile", "printed"), [(TEMPLATE, TEMPLATE), (SCRIPT, ESCAPED_SCRIPT)])
def test_hostile_strings_behave_exactly_like_plain_text(html: str, hostile: str, printed: str) -> None:
    """Swapping the hostile string for a plain marker in the claim changes the report only there."""
    claim = load_fixture("hostile")
    plain = render_html(_replace_strings(claim, hostile, "PLAINMARKER"))
    assert html.count(printed) >= 15
    assert normalise(html, None).replace(printed, "PLAINMARKER") == normalise(plain, None)


def test_plot_labels_are_escaped_svg_text(html: str) -> None:
    svgs = re.findall(r"<svg\b.*?</svg>", html, re.DOTALL)
    assert svgs, "expected inline SVG plots"
    joined = "\n".join(svgs)
    assert "<script" not in joined
    assert "&lt;script&gt;" in joined  # the cluster named <script>... labels the cluster plot
    assert TEMPLATE in joined


def test_hostile_strings_survive_into_the_pdf_text(rendered: dict) -> None:
    tool = require_tool("pdftotext")
    text = subprocess.run([tool, str(rendered["hostile"]["pdf"]), "-"], capture_output=True, text=True,
                          check=True, timeout=60).stdout
    assert SCRIPT in text
    assert TEMPLATE in text
    assert "alert(1)" in " ".join(text.split())


def test_print_medium_escapes_the_case_grid_too() -> None:
    paper = render_html(load_fixture("hostile"), "print", with_plots=False)
    assert "<script" not in paper.lower()
    grids = re.findall(r'<pre class="case-grid[^"]*">(.*?)</pre>', paper, re.DOTALL)
    assert grids and any(ESCAPED_SCRIPT in g for g in grids) and any(TEMPLATE in g for g in grids)
