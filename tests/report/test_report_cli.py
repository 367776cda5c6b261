"""``evalspec report``: outputs, formats, atomic writes, and clear errors for bad claim files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from report_claims import FIXTURES

from evalspec.cli import cli


def _invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_html_only_into_out_folder(tmp_path: Path) -> None:
    res = _invoke("report", str(FIXTURES / "superiority.json"), "--format", "html", "--out", str(tmp_path / "r"))
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["report.html"]  # no temp files left
    assert "wrote" in res.output and "report.html" in res.output


def test_default_out_is_the_claim_folder(tmp_path: Path) -> None:
    claim = tmp_path / "claim.json"
    claim.write_bytes((FIXTURES / "single_candidate.json").read_bytes())
    res = _invoke("report", str(claim), "--format", "html")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_rewrite_replaces_the_file_atomically(tmp_path: Path) -> None:
    out = tmp_path / "r"
    for _ in range(2):
        assert _invoke("report", str(FIXTURES / "superiority.json"), "--format", "html", "--out", str(out)).exit_code == 0
    assert [p.name for p in out.iterdir()] == ["report.html"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        ('{"claim_format": 1, "decision": {', "is not valid JSON"),
        ("[1, 2]", "not a claim record"),
        ('{"evalspec": 1, "id": "a-plan"}', "claim_format: is JSON but not a claim record"),
        ('{"claim_format": 99, "decision": {}}', "claim format not supported"),
        ('{"claim_format": 1}', "decision: the claim has no decision"),
        ('{"claim_format": 1, "decision": [], "plan": {}}', "decision: must be a JSON object"),
        (b"\xff\xfe\x00", "is not UTF-8 text"),
    ],
)
def test_bad_claim_files_are_input_errors_without_traceback(tmp_path: Path, content, expected: str) -> None:
    path = tmp_path / "claim.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    res = CliRunner().invoke(cli, ["report", str(path), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    assert expected in res.stderr
    assert str(path) in res.stderr
    assert "Traceback" not in res.output + res.stderr
    assert not (tmp_path / "o").exists()


def test_json_error_has_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "claim.json"
    path.write_text('{\n  "claim_format": 1,\n  "decision": oops\n}\n', encoding="utf-8")
    res = CliRunner().invoke(cli, ["report", str(path)])
    assert res.exit_code == 2
    assert f"{path}:3:15: is not valid JSON" in res.stderr


def test_out_that_is_a_file_is_refused(tmp_path: Path) -> None:
    afile = tmp_path / "x"
    afile.write_text("", encoding="utf-8")
    res = CliRunner().invoke(cli, ["report", str(FIXTURES / "superiority.json"), "--out", str(afile)])
    assert res.exit_code == 2


def test_unknown_format_is_a_usage_error() -> None:
    res = CliRunner().invoke(cli, ["report", str(FIXTURES / "superiority.json"), "--format", "docx"])
    assert res.exit_code == 2
    assert "docx" in res.output


def test_importing_the_report_package_loads_no_heavy_library() -> None:
    code = ("import sys, evalspec.report, evalspec.commands.report; "
            "print(sorted(m for m in ('matplotlib', 'weasyprint', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.replace("'", '"')) == []


def test_report_package_imports_no_statistics_code() -> None:
    """The report formats the claim; it must not reach for statistics (house rule)."""
    import ast

    package = Path(__file__).resolve().parents[2] / "evalspec" / "report"
    forbidden = ("numpy", "scipy", "statsmodels", "evalspec.stats", "evalspec.analyses", "evalspec.run")
    for module in package.glob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith(forbidden), f"{module.name} imports {name}"


def test_report_files_get_ordinary_permissions(tmp_path: Path) -> None:
    """Atomic writes must not leave mkstemp's 0600: a shared report has to be readable."""
    import os
    import stat

    mask = os.umask(0o022)
    try:
        res = _invoke("report", str(FIXTURES / "superiority.json"), "--format", "html", "--out", str(tmp_path))
    finally:
        os.umask(mask)
    assert res.exit_code == 0
    assert stat.S_IMODE((tmp_path / "report.html").stat().st_mode) == 0o644


def test_missing_tools_skip_locally_and_fail_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    from report_tools import require_tool

    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("EVALSPEC_REQUIRE_TOOLS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="poppler-utils"):
        require_tool("pdftotext")
    monkeypatch.setenv("EVALSPEC_REQUIRE_TOOLS", "1")
    with pytest.raises(pytest.fail.Exception, match="EVALSPEC_REQUIRE_TOOLS=1"):
        require_tool("chromium")
