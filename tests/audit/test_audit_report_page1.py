"""The audit's own PDF/HTML: its own running header and footer, and page 1 names the failed checks."""

from __future__ import annotations

from pathlib import Path

from tests.audit.conftest import make_workspace


def test_page_one_names_the_failed_checks_and_the_header_is_the_audits(tmp_path: Path) -> None:
    from evalspec.audit.core import audit_claim
    from evalspec.audit.render import render_html

    w = make_workspace(tmp_path)  # never locked: the lock checks fail
    w.run()
    report = audit_claim(w.claim, reproduce=False)
    html = render_html(report, "print")
    page1 = html.split('<section id="checks"')[0]
    failed = [c for c in report.checks if c.status == "fail"]
    assert failed
    for c in failed:
        assert f'data-check="{c.id}"' in page1 and c.sentence.replace("'", "&#39;") in page1
    assert '<span class="rs-plan">policy-qa-migration</span>' in html  # no empty id in the running header
    assert "evalspec · audit of" in html and "Audit report" in html
    assert "Decision report" not in html.split("</style>")[-1]
