"""Golden HTML reports of the fixture claims (normalised for run time, versions and plot bodies)."""

from __future__ import annotations

import pytest

from report_claims import FIXTURE_NAMES, load_fixture
from report_golden import check_golden, normalise

from evalspec.report import render_html


@pytest.mark.parametrize("name", [n for n in FIXTURE_NAMES if n != "long_cases"])
def test_golden_fixture(name: str) -> None:
    claim = load_fixture(name)
    check_golden(f"fixture-{name}", render_html(claim), claim.get("created"))


def test_normalise_hides_run_time_versions_and_plot_bodies() -> None:
    claim = load_fixture("superiority")
    first = render_html(claim)
    claim["created"] = "2027-01-02T03:04:05Z"
    claim["software"]["numpy"] = "9.9.9"
    second = render_html(claim)
    assert first != second
    assert normalise(first, "2026-11-29T12:00:00Z") == normalise(second, "2027-01-02T03:04:05Z")
    assert "RUN-TIME" in normalise(first, "2026-11-29T12:00:00Z")


def test_render_is_deterministic() -> None:
    claim = load_fixture("superiority")
    assert render_html(claim) == render_html(claim)
