"""`evalspec report` on a file that is not a claim says what the file looks like and what to pass instead."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from evalspec.cli import cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("path", "says"), [
    ("examples/policy-migration/results.jsonl", "looks like a results file (JSON lines"),
    ("examples/policy-migration/plan.yaml", "looks like a plan (YAML)"),
])
def test_report_names_what_the_file_is(path: str, says: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["report", str(ROOT / path), "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert says in result.output
    assert "truncated or edited by hand" not in result.output
    assert "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []
