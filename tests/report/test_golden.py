"""Golden HTML reports (normalised for run time, versions and plot bodies).

The example claims are made by ``evalspec.run.run_plan`` from the committed example plans and
results (paths relative to the repository root, so the golden files do not depend on where the
checkout lives), serialised and parsed back exactly as ``claim.json`` is. The hostile and
single-candidate fixtures pin shapes the examples do not produce.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from report_claims import FIXTURE_NAMES, load_fixture
from report_golden import check_golden, normalise

from evalspec.report import render_html

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/plan.yaml"))


@pytest.fixture(scope="module")
def example_claims(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Claims of the committed examples, run from a clean copy.

    The copy holds only tracked inputs (plan and results): a lock file, an ``out/`` folder or
    a ledger of looks (``.evalspec/``) that the Quick start or a test leaves in the checkout
    must not change the golden reports.
    """
    import shutil

    from evalspec.claim import dumps
    from evalspec.run import run_plan

    root = tmp_path_factory.mktemp("examples-copy")
    for name in EXAMPLES:
        shutil.copytree(ROOT / "examples" / name, root / "examples" / name,
                        ignore=shutil.ignore_patterns("out", ".evalspec", "*.lock.json", "__pycache__"))
    old = os.getcwd()
    os.chdir(root)
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = "1795132800"  # 2026-11-20, on or before every example's decision date
    try:
        out = {}
        for name in EXAMPLES:
            plan = f"examples/{name}/plan.yaml"
            out[name] = json.loads(dumps(run_plan(plan, command=["evalspec", "run", plan])))
        return out
    finally:
        os.chdir(old)
        if epoch is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = epoch


def test_examples_are_found() -> None:
    assert {"policy-migration", "repeated-trials"} <= set(EXAMPLES)


@pytest.mark.parametrize("name", EXAMPLES)
def test_golden_example(example_claims: dict[str, dict], name: str) -> None:
    claim = example_claims[name]
    html = render_html(claim)
    from evalspec.report.fmt import prose

    assert prose(claim["decision"]["headline"]) in html.replace("&#39;", "'").replace("&quot;", '"')
    check_golden(f"example-{name}", html, claim.get("created"))


@pytest.mark.parametrize("name", [n for n in FIXTURE_NAMES if n in ("hostile", "single_candidate")])
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


@pytest.mark.parametrize("name", EXAMPLES)
def test_element_ids_are_unique(example_claims: dict[str, dict], name: str) -> None:
    """Inline SVGs bring their own ids; each plot's are prefixed so none repeats in the page."""
    import collections
    import re

    for medium in ("screen", "print"):
        ids = re.findall(r'\bid="([^"]+)"', render_html(example_claims[name], medium))
        repeated = [k for k, n in collections.Counter(ids).items() if n > 1]
        assert repeated == [], repeated[:5]


def test_inlined_stylesheet_is_report_css(example_claims: dict[str, dict]) -> None:
    """The golden files replace the <style> block by a marker; here it is pinned to templates/report.css."""
    from evalspec._resources import templates_dir

    css = (templates_dir() / "report.css").read_text(encoding="utf-8")
    static = css.split("{%")[0]          # the part before the first jinja block (screen/print switches)
    assert len(static) > 1000
    html = render_html(example_claims["policy-migration"])
    assert static in html
    assert "/* templates/report.css */" in normalise(html, None)
