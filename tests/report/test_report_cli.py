"""``evalspec report``: outputs, formats, atomic writes, and clear errors for bad claim files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from report_claims import real_claim_file

from evalspec.cli import cli


def _invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """claim.json of the policy-migration example, written by `evalspec run`."""
    return real_claim_file(tmp_path_factory.mktemp("claim"), "policy-migration")


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return real_claim_file(tmp_path_factory.mktemp("claim1"), "repeated-trials")


def test_html_only_into_out_folder(tmp_path: Path, real: Path) -> None:
    res = _invoke("report", str(real), "--format", "html", "--out", str(tmp_path / "r"))
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["report.html"]  # no temp files left
    assert "wrote" in res.output and "report.html" in res.output


def test_default_out_is_the_claim_folder(tmp_path: Path, single: Path) -> None:
    claim = tmp_path / "claim.json"
    claim.write_bytes(single.read_bytes())
    res = _invoke("report", str(claim), "--format", "html")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_rewrite_replaces_the_file_atomically(tmp_path: Path, real: Path) -> None:
    out = tmp_path / "r"
    for _ in range(2):
        assert _invoke("report", str(real), "--format", "html", "--out", str(out)).exit_code == 0
    assert [p.name for p in out.iterdir()] == ["report.html"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        ('{"claim_format": 1, "decision": {', "is not valid JSON"),
        ("[1, 2]", "not a claim record"),
        ('{"evalspec": 1, "id": "a-plan"}', "claim_format: is JSON but not a claim record"),
        ('{"claim_format": 99, "decision": {}}', "is a claim of format 99; this evalspec reads claim format 2"),
        ('{"claim_format": 1, "decision": {}}', "is a claim of format 1; this evalspec reads claim format 2"),
        ('{"claim_format": 2}', "decision: the claim has no decision"),
        ('{"claim_format": 2, "decision": [], "plan": {}}', "decision: Input should be"),
        (b"\xff\xfe\x00", "is not UTF-8 text"),
        # files a newcomer mistakes for the claim: each is named, with what to do
        (b"PK\x03\x04\x14\x00\x00\x00\x5d\x00\x92", "is not a claim record: it is a zip archive (an inspect_ai .eval log "
         "is one); a claim is the JSON file `evalspec run` writes (out/claim.json beside the plan)"),
        (b"%PDF-1.7\n\xe2\xe3\xcf\xd3", "is not a claim record: it is a PDF document (an evalspec report is one)"),
        ('{"version": 2, "status": "success", "eval": {"model": "m"}, "samples": []}',
         "is not a claim record: it looks like an inspect_ai log; run the plan that names it (`evalspec run PLAN`)"),
        ('{"results": {"t": {}}, "configs": {}, "lm_eval_version": "0.4.13"}',
         "is not a claim record: it looks like an lm-evaluation-harness results file"),
        ('{"plan_file": "plan.yaml", "hash": "sha256:0", "locked_at": "2026-01-02T00:00:00Z"}',
         "is not a claim record: it is a lock file written by `evalspec lock`; run the plan it locks "
         "(`evalspec run plan.yaml` in its folder)"),
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


def test_out_that_is_a_file_is_refused(tmp_path: Path, real: Path) -> None:
    afile = tmp_path / "x"
    afile.write_text("", encoding="utf-8")
    res = CliRunner().invoke(cli, ["report", str(real), "--out", str(afile)])
    assert res.exit_code == 2


def test_unknown_format_is_a_usage_error(real: Path) -> None:
    res = CliRunner().invoke(cli, ["report", str(real), "--format", "docx"])
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


def test_report_files_get_ordinary_permissions(tmp_path: Path, real: Path) -> None:
    """Atomic writes must not leave mkstemp's 0600: a shared report has to be readable."""
    import os
    import stat

    mask = os.umask(0o022)
    try:
        res = _invoke("report", str(real), "--format", "html", "--out", str(tmp_path))
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


#: Inner-type edits of a real claim (issue 13's crash signatures: a number as text, a list as a
#: mapping, a mapping as a number...) and the key path each must be refused at.
MUTATIONS = [
    (("analyses", 0, "result", "candidates", "A", "low"), "0.7", "analyses[0].result.candidates.A.low"),
    (("analyses", 0, "result", "candidates"), [1, 2], "analyses[0].result.candidates"),
    (("analyses", 1, "result", "estimate"), {"x": 1}, "analyses[1].result.estimate"),
    (("analyses", 1, "result", "table", "b"), "eight", "analyses[1].result.table.b"),
    (("analyses", 1, "result", "disagreements", "candidate_only"), {"case": "c1"},
     "analyses[1].result.disagreements.candidate_only"),
    (("analyses", 1, "result", "clusters", "contributions", 0, "net"), "lots",
     "analyses[1].result.clusters.contributions[0].net"),
    (("analyses", 0, "caveats"), "none", "analyses[0].caveats"),
    (("decision", "primary", "low"), None, "decision.primary.low"),
    (("decision", "reasons"), "because", "decision.reasons"),
    (("decision", "critical", 0, "upper_bound"), "high", "decision.critical[0].upper_bound"),
    (("coverage", "cases", "paired"), "100", "coverage.cases.paired"),
    (("coverage", "candidates", "A", "versions_seen"), ["v1"], "coverage.candidates.A.versions_seen"),
    (("seeds", "used"), 7, "seeds.used"),
]


@pytest.mark.parametrize(("path", "value", "key"), MUTATIONS, ids=[m[2] for m in MUTATIONS])
def test_hand_edited_claim_with_wrong_inner_types_is_refused_at_the_key(tmp_path: Path, real: Path, path: tuple,
                                                                         value: object, key: str) -> None:
    claim = json.loads(real.read_text(encoding="utf-8"))
    node = claim
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    edited = tmp_path / "claim.json"
    edited.write_text(json.dumps(claim), encoding="utf-8")
    res = CliRunner().invoke(cli, ["report", str(edited), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    assert f"{edited}: {key}:" in res.stderr, res.stderr
    assert "Traceback" not in res.output + res.stderr
    assert not (tmp_path / "o").exists()
