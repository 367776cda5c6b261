"""A 100,000-case claim: the body stays a summary, the HTML appendix lists every case."""

from __future__ import annotations

import re

from report_claims import long_claim

from evalspec.report import render_html


def test_hundred_thousand_cases_are_summarised_in_the_body_and_listed_in_the_appendix() -> None:
    claim = long_claim(100_000, n_clusters=2_000)
    html = render_html(claim, with_plots=False)
    cand_only = claim["analyses"][1]["result"]["disagreements"]["candidate_only"]
    assert len(cand_only) == 14_000
    assert "First 25 of 14,000 shown" in html
    body, appendix = html.split('id="appendix-cases"')
    assert body.count('class="case-id"') == 50  # 25 per side
    assert appendix.count('class="case-id"') == 14_000 + 6_000
    assert cand_only[-1]["case"] in appendix
    # the cluster table in the body stays short: 10 rows of 2,000, and says where the rest are
    assert "1,990 more clusters" in body
    assert len(re.findall(r"<tr><td>cluster-", body)) == 10


def test_print_medium_caps_the_appendix() -> None:
    claim = long_claim(100_000, n_clusters=2_000)
    html = render_html(claim, "print", with_plots=False)
    appendix = html.split('id="appendix-cases"')[1]
    assert len(re.findall(r"case-\d{6}", appendix)) == 1_000
    assert "This PDF lists the first 500 of 14,000" in appendix
