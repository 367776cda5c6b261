"""``evalspec diff CLAIM_A CLAIM_B``: plan keys, data, every number and the verdict side by side."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_markdown import render  # noqa: E402
from workflow_helpers import cli, table_study, write_table  # noqa: E402


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """out-a: the first claim; out: after a plan change (minimum improvement) and new data (80 cases)."""
    folder = tmp_path_factory.mktemp("diff")
    table_study(folder)
    shutil.copytree(folder / "out", folder / "out-a")
    write_table(folder / "results.jsonl", seed=5, p_a=0.6, p_b=0.6, n=80)
    plan = folder / "plan.yaml"
    plan.write_text(plan.read_text(encoding="utf-8").replace("minimum_improvement: 0.05", "minimum_improvement: 0.1"),
                    encoding="utf-8")
    assert cli(folder, "run", "plan.yaml", "--no-report").exit_code == 0
    return folder


def test_a_claim_against_itself_differs_in_nothing(two: Path) -> None:
    done = cli(two, "diff", "out-a/claim.json", "out-a/claim.json")
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("verdict: worth_acting_on -> worth_acting_on (same)\nplan: same keys and values "
                                  "(same hash)\ndata: the same files\nnumbers: 0 of ")


def test_plan_data_numbers_and_verdict_side_by_side(two: Path) -> None:
    a = json.loads((two / "out-a" / "claim.json").read_text(encoding="utf-8"))
    b = json.loads((two / "out" / "claim.json").read_text(encoding="utf-8"))
    done = cli(two, "diff", "out-a/claim.json", "out/claim.json", "--json")
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["verdict"] == {"a": "worth_acting_on", "b": b["decision"]["verdict"],
                               "changed": b["decision"]["verdict"] != "worth_acting_on"}
    assert data["plan"]["changes"] == [{"key": "decision.minimum_improvement", "a": 0.05, "b": 0.1}]
    assert data["data"] == [{"path": "results.jsonl", "status": "changed",
                             "a": {"sha256": a["data"]["files"][0]["sha256"], "rows": 120},
                             "b": {"sha256": b["data"]["files"][0]["sha256"], "rows": 160}}]
    numbers = {n["key"]: n for n in data["numbers"]}
    low = numbers["decision.primary.low"]
    assert low["a"] == a["decision"]["primary"]["low"] and low["b"] == b["decision"]["primary"]["low"] and low["changed"]
    assert numbers["coverage.cases.total"] == {"key": "coverage.cases.total", "a": 60, "b": 80, "changed": True}
    assert numbers["decision.primary.confidence_level"]["changed"] is False  # every number, changed or not
    text = cli(two, "diff", "out-a/claim.json", "out/claim.json").stdout
    assert "  decision.minimum_improvement: 0.05 -> 0.1" in text and "  changed results.jsonl (rows 120 -> 160)" in text
    assert "decision.primary.confidence_level" not in text  # text: only what differs ...
    full = cli(two, "diff", "out-a/claim.json", "out/claim.json", "--all").stdout
    assert "decision.primary.confidence_level" in full  # ... unless --all


def test_markdown_renders_three_tables_with_whole_rows(two: Path) -> None:
    done = cli(two, "diff", "out-a/claim.json", "out/claim.json", "--format", "markdown")
    assert done.exit_code == 0
    tree = render(done.stdout)
    assert tree.tags.count("table") == 3
    widths = {len(row) for row in tree.rows}
    assert widths <= {3, 4}, widths


@pytest.mark.parametrize("args", [["diff", "out-a/claim.json", "nothere.json"], ["diff", "plan.yaml", "out/claim.json"]])
def test_bad_input_is_exit_2(two: Path, args: list[str]) -> None:
    done = cli(two, *args)
    assert done.exit_code == 2 and "Traceback" not in done.output
