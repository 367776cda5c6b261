"""Shared fixtures of the report tests: claims, rendered outputs, and the external tools.

Rendering a PDF takes seconds, so each fixture claim is rendered once per session and the
tests read the files. Tools (chromium, pdftoppm, pdftotext) are looked up on PATH; when one is
missing the tests that need it skip with the reason, except when ``EVALSPEC_REQUIRE_TOOLS=1``
(set by ``.ci/run``), where they fail.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report_claims import FIXTURE_NAMES, load_fixture, long_claim  # noqa: E402
from report_tools import require_tool  # noqa: E402,F401


@pytest.fixture(scope="session")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Path]]:
    """Every fixture claim (long_cases: 5,000 cases) rendered to HTML and PDF once: name -> {"html": path, "pdf": path}."""
    from evalspec.report import render

    out: dict[str, dict[str, Path]] = {}
    for name in FIXTURE_NAMES:
        folder = tmp_path_factory.mktemp(f"report-{name}")
        claim = long_claim(5000) if name == "long_cases" else load_fixture(name)
        html, pdf = render(claim, folder, ("html", "pdf"))
        out[name] = {"html": html, "pdf": pdf}
    return out
