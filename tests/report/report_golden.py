"""Normalisation and comparison of golden HTML reports.

A golden file pins the report's text and structure. Three things vary between runs and
machines and are normalised away: the run time (``created``, written in several forms), the
software versions (python, numpy, ...), and the bodies of the matplotlib SVG plots (they change
with the matplotlib version; the plots are tested on their own). The inlined stylesheet is
replaced by a marker: it is ``templates/report.css`` verbatim (pinned by version control and
checked by the PDF and browser tests), and copying it into every golden file would make each
style tweak rewrite them all. Set
``EVALSPEC_UPDATE_GOLDEN=1`` to rewrite the golden files after an intended change, then
review the diff.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

from evalspec.report.fmt import date_time

__all__ = ["GOLDEN", "check_golden", "normalise"]

GOLDEN = Path(__file__).resolve().parent / "golden"


def normalise(html: str, created: str | None) -> str:
    """Replace run-time-dependent parts of ``html`` with stable placeholders."""
    if created:
        for form in (date_time(created), date_time(created, with_time=False), created):
            html = html.replace(form, "RUN-TIME")
    html = re.sub(r'(<svg\b[^>]*?aria-label="[^"]*")[^>]*>.*?</svg>', r"\1>…</svg>", html, flags=re.DOTALL)
    html = re.sub(r"(<dt>Software</dt><dd>).*?(</dd>)", r"\1SOFTWARE\2", html, flags=re.DOTALL)
    html = re.sub(r"(<style\b[^>]*>).*?(</style>)", r"\1/* templates/report.css */\2", html, count=1, flags=re.DOTALL)
    return html


def check_golden(name: str, html: str, created: str | None) -> None:
    """Compare ``html`` (normalised) with ``golden/<name>.html``; rewrite it under the update switch."""
    text = normalise(html, created)
    path = GOLDEN / f"{name}.html"
    if os.environ.get("EVALSPEC_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"no golden file {path}; run with EVALSPEC_UPDATE_GOLDEN=1 to create it"
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        diff = "".join(list(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                                 "golden", "rendered", n=2))[:80])
        raise AssertionError(f"{name}: report differs from {path} "
                             f"(EVALSPEC_UPDATE_GOLDEN=1 to accept):\n{diff}")
