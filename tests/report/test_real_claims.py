"""The report of real claims (``evalspec run`` on the examples): page 1 carries every caveat that
bears on the verdict, each analysis renders through its kind's section, and the one-sided level
is stated.
"""

from __future__ import annotations

import html as htmllib
import json
from pathlib import Path

import pytest
from report_claims import real_claim_file

from evalspec.report.load import load_claim, validate_claim
from evalspec.report.render import render_html
from evalspec.report.view import build_view, section_template


@pytest.fixture(scope="module", params=["policy-migration", "support-triage"])
def claim(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    return load_claim(real_claim_file(tmp_path_factory.mktemp("real"), request.param))


def _page1(html: str) -> str:
    return htmllib.unescape(html.split('<nav class="toc"')[0])


def test_every_verdict_caveat_is_on_page_1(claim: dict) -> None:
    page1 = _page1(render_html(claim, with_plots=False))
    caveats = claim["decision"]["caveats"]
    assert caveats, "these examples carry caveats that bear on the verdict"
    why = (claim["decision"].get("primary") or {}).get("why_uninformative")
    for c in caveats:
        if c["code"] == "uninformative_interval" and why and why in claim["decision"]["headline"]:
            assert why in page1  # said once, in the headline
            continue
        assert c["message"] in page1


def test_each_analysis_renders_through_its_kind_section_with_its_caveats(claim: dict) -> None:
    html = htmllib.unescape(render_html(claim, with_plots=False))
    for a in claim["analyses"]:
        assert section_template(a["kind"]) == f"sections/{a['kind']}.html.j2"
        section = html.split(f'id="analysis-{a["index"]}"')[1].split("</section>")[0]
        assert f"section-{a['kind']}" in html.split(f'id="analysis-{a["index"]}"')[0][-80:]
        page1 = {c["code"] for c in claim["decision"]["caveats"]}
        for c in a["caveats"]:
            if c["code"] in page1:  # said once: on page 1; the section refers to it
                assert "bearing on the verdict" in section and "on page 1" in section
                assert c["message"] not in section
            elif a["kind"] == "paired_difference" and c["code"] == "top_clusters":
                assert "check them before acting" in section  # the section's own lede states it
            else:
                assert c["message"] in section


def test_the_one_sided_level_is_stated(claim: dict) -> None:
    level = claim["coverage"]["interval"]["confidence_level"]
    html = render_html(claim, with_plots=False)
    one_sided = f"{(1 - (1 - level) / 2) * 100:g}%"
    assert f"each bound a one-sided {one_sided} bound" in html


def test_an_unknown_kind_in_a_valid_claim_gets_the_generic_section(claim: dict) -> None:
    edited = json.loads(json.dumps(claim))
    edited["analyses"].append({"index": 99, "kind": "from_a_newer_evalspec", "label": "Newer analysis",
                               "params": {"kind": "from_a_newer_evalspec"}, "result": {"score": 0.25},
                               "caveats": [], "seeds": [], "offers": {}})
    valid = validate_claim(edited)
    view = build_view(valid)
    assert view.templates[99] == "sections/generic.html.j2"
    section = render_html(valid, with_plots=False).split('id="analysis-99"')[1].split("</section>")[0]
    assert "Newer analysis" in section and "0.25" in section


def test_claim_file_round_trip(tmp_path: Path, claim: dict) -> None:
    path = tmp_path / "claim.json"
    path.write_text(json.dumps(claim), encoding="utf-8")
    assert load_claim(path) == claim
