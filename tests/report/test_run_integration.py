"""`evalspec run` renders the report next to the claim by default; --no-report and --format."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalspec.cli import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "repeated-trials"


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    for f in ("plan.yaml", "results.jsonl"):
        shutil.copyfile(EXAMPLE / f, tmp_path / f)
    return tmp_path / "plan.yaml"


def _run(*args: str, no_report_env: bool = False):
    env = {"EVALSPEC_NO_REPORT": "1"} if no_report_env else {"EVALSPEC_NO_REPORT": ""}
    return CliRunner().invoke(cli, ["run", *args], env=env, catch_exceptions=False)


def test_run_writes_claim_and_both_reports(plan: Path) -> None:
    res = _run(str(plan))
    assert res.exit_code == 0, res.output
    out = plan.parent / "out"
    assert sorted(p.name for p in out.iterdir()) == ["claim.json", "report.html", "report.pdf"]
    assert (out / "report.pdf").read_bytes().startswith(b"%PDF-")
    assert "report written to" in res.output


def test_run_html_only_and_no_report(plan: Path, tmp_path: Path) -> None:
    res = _run(str(plan), "--format", "html", "--out", str(tmp_path / "h"))
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "h").iterdir()) == ["claim.json", "report.html"]
    res = _run(str(plan), "--no-report", "--out", str(tmp_path / "n"))
    assert res.exit_code == 0, res.output
    assert [p.name for p in (tmp_path / "n").iterdir()] == ["claim.json"]
    res = _run(str(plan), "--out", str(tmp_path / "e"), no_report_env=True)
    assert [p.name for p in (tmp_path / "e").iterdir()] == ["claim.json"]


def test_report_from_run_equals_report_from_claim(plan: Path, tmp_path: Path) -> None:
    assert _run(str(plan), "--format", "html", "--out", str(tmp_path / "r")).exit_code == 0
    res = CliRunner().invoke(cli, ["report", str(tmp_path / "r" / "claim.json"), "--format", "html",
                                   "--out", str(tmp_path / "again")], catch_exceptions=False)
    assert res.exit_code == 0
    assert (tmp_path / "r" / "report.html").read_bytes() == (tmp_path / "again" / "report.html").read_bytes()
