"""`data.format: auto` (the default) given a tool's log: the run names the tool and the `data.format` that reads it.

Before, a newcomer who pointed `data.results` at inspect_ai logs without `data.format` was told to
rename the file to .jsonl, .csv or .parquet.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalspec.cli import cli
from tests.results.logs_helpers import LMEVAL, STRONG, WEAK, WEAK_JSON, write_plan


def _run(plan: Path) -> object:
    return CliRunner().invoke(cli, ["run", str(plan), "--no-report"], env={"EVALSPEC_NO_REPORT": "1"})


@pytest.mark.parametrize(("given", "what", "fmt"), [
    ("logs/", "logs is a folder of inspect_ai logs", "inspect"),
    (f"logs/{STRONG.name}", f"logs/{STRONG.name} is an inspect_ai log", "inspect"),
    (f"logs/{WEAK_JSON.name}", f"logs/{WEAK_JSON.name} is an inspect_ai log", "inspect"),
    ("lm/", "lm is a folder of lm-evaluation-harness logs", "lm_eval"),
])
def test_a_tool_log_under_format_auto_names_the_format_to_set(
        given: str, what: str, fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "logs").mkdir()
    for f in (STRONG, WEAK, WEAK_JSON):
        shutil.copyfile(f, tmp_path / "logs" / f.name)
    shutil.copytree(LMEVAL, tmp_path / "lm")
    plan = write_plan(tmp_path, f"  results: {given}")
    monkeypatch.chdir(tmp_path)
    res = _run(Path("plan.yaml"))
    assert res.exit_code == 2, res.output
    assert (f"plan.yaml:7:1: data.format: {what}, and data.format is 'auto', which reads only tables by extension "
            f"(got 'auto'); set `data.format: {fmt}` in the plan") in res.stderr, res.stderr
    assert "name the file .jsonl" not in res.stderr
    assert plan.is_file()


def test_a_table_with_a_table_extension_is_not_second_guessed(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("candidate,case_id,repeat,outcome\n", encoding="utf-8")
    res = _run(write_plan(tmp_path, "  results: r.csv"))
    assert res.exit_code == 2 and "data.format" not in res.stderr.split("\n")[0], res.stderr
