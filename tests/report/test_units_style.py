"""One number style in every rendered report: points with one decimal, the true minus sign.

Runs over the rendered text (tags, the plan's verbatim source and code spans removed) of every
example's report, of every fixture claim and of crafted claims (a zero-width interval, a
single candidate), so a sentence from any analysis, the decision or the process record is
held to it, not only the report's own filters.
"""

from __future__ import annotations

import copy
import html as htmllib
import json
import re
import shutil
from pathlib import Path

import pytest
from report_claims import load_fixture

from evalspec.report import render_html

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/plan.yaml"))


def _visible_text(html: str) -> str:
    for tag in ("style", "pre", "code", "svg", "title"):
        html = re.sub(rf"<{tag}\b.*?</{tag}>", " ", html, flags=re.DOTALL)
    text = re.sub(r"<[^>]+>", " ", html)
    return re.sub(r"\s+", " ", htmllib.unescape(text))


def _problems(text: str) -> list[str]:
    out = []
    for pattern, what in [
        (r"(?:^|[\s(\[])-\d", "a hyphen-minus as a minus sign"),
        (r"\bpts\b", "the unit 'pts' (the report says 'points')"),
        (r"\d\.\d{2,} points", "points with more than one decimal"),
        (r"\b1 entries\b|\breducer None\b|\bNone recorded\b.*\bfailed\b", "a stutter"),
        (r"standard error of 0\.\d{2,}", "a standard error as a proportion beside points"),
    ]:
        for m in re.finditer(pattern, text):
            out.append(f"{what}: …{text[max(0, m.start() - 50):m.end() + 30]}…")
    return out


@pytest.fixture(scope="module")
def example_claims(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    import os

    from evalspec.claim import dumps
    from evalspec.run import run_plan

    root = tmp_path_factory.mktemp("units")
    out = {}
    old = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = "1795132800"
    try:
        for name in EXAMPLES:
            shutil.copytree(ROOT / "examples" / name, root / name,
                            ignore=shutil.ignore_patterns("out", ".evalspec", "*.lock.json", "__pycache__"))
            out[name] = json.loads(dumps(run_plan(root / name / "plan.yaml")))
    finally:
        if old is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = old
    return out


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_keep_one_number_style(example_claims: dict[str, dict], name: str) -> None:
    for medium in ("screen", "print"):
        assert _problems(_visible_text(render_html(example_claims[name], medium))) == []


@pytest.mark.parametrize("name", ["superiority", "hostile", "single_candidate"])
def test_fixtures_keep_one_number_style(name: str) -> None:
    assert _problems(_visible_text(render_html(load_fixture(name)))) == []


def test_a_sentence_from_the_claim_gets_the_true_minus_sign() -> None:
    claim = load_fixture("superiority")
    claim["decision"]["reasons"] = ["A minus B: -2.0 points, interval (-3.1 to 4.0); case doc-01 dated 2026-10-02."]
    text = _visible_text(render_html(claim))
    assert "\u22122.0 points, interval (\u22123.1 to 4.0); case doc-01 dated 2026-10-02." in text
    assert _problems(text) == []


def test_a_zero_width_interval_is_no_usable_interval_not_certainty() -> None:
    claim = copy.deepcopy(load_fixture("superiority"))
    prop = next(a for a in claim["analyses"] if a["kind"] == "proportion")
    for c in prop["result"]["candidates"].values():
        c.update(estimate=0.0, low=0.0, high=0.0, successes=0)
    text = _visible_text(render_html(claim))
    assert "0.0% to 0.0%" not in text
    assert "no usable interval zero width: the cases do not vary, which is not certainty" in text


def test_a_single_candidate_report_has_no_paired_wording() -> None:
    text = _visible_text(render_html(load_fixture("single_candidate")))
    page1 = text.split(" Contents ")[0]
    assert "paired" not in page1.lower()
    assert "The comparison is the paired analysis below" not in text


_JARGON = ["CR2", "Bell", "Clopper", "Holm", "Durkalski", "effective cases", "under-cover", "Wilson", "bootstrap",
           "degrees of freedom", "method auto", "McNemar"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_page_one_speaks_plain_words(example_claims: dict[str, dict], name: str) -> None:
    """Method codes, test names and plan-author advice are in the body and the analyst box, not on page 1."""
    page1 = _visible_text(render_html(example_claims[name]).split('<nav class="toc"')[0])
    found = [w for w in _JARGON if re.search(rf"\b{re.escape(w)}\b", page1)]
    assert found == [], found
