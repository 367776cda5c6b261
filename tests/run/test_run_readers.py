"""Readers and typing: formats, outcome spellings, scores, globs, and the slow exact paths."""

from __future__ import annotations

import builtins
import json
from pathlib import Path

import numpy as np
import pytest

from evalspec.errors import InputError
from evalspec.results.readers import read_file
from run_helpers import FIXTURES, Workspace, plan_text

from tests.arrow_paths import arrow_paths  # noqa: E402,F401 - the fixture below

pytestmark = pytest.mark.usefixtures("arrow_paths")  # small files too go through Arrow here

EPOCH = {"SOURCE_DATE_EPOCH": "1796126400"}


def claim_of(ws: Workspace) -> dict:
    return json.loads((ws.path / "out" / "claim.json").read_text(encoding="utf-8"))


def test_jsonl_fast_and_exact_paths_agree(tmp_path: Path) -> None:
    text = (FIXTURES / "ok" / "base.jsonl").read_text(encoding="utf-8")
    (tmp_path / "a.jsonl").write_text(text, encoding="utf-8")
    lines = text.splitlines(keepends=True)
    (tmp_path / "b.jsonl").write_text("".join(lines[:3]) + "\n" + "".join(lines[3:]), encoding="utf-8")  # blank line
    fast = read_file(tmp_path / "a.jsonl", "jsonl")
    exact = read_file(tmp_path / "b.jsonl", "jsonl")
    assert fast.rows == exact.rows == 16
    assert exact.lines[3] == 5  # the blank line keeps later line numbers true
    for key in fast.columns:
        assert list(fast.columns[key]) == list(exact.columns[key])


def test_non_utf8_line_is_located(tmp_path: Path) -> None:
    (tmp_path / "r.jsonl").write_bytes(b'{"a": 1}\n{"a": "\xff"}\n')
    with pytest.raises(InputError) as exc:
        read_file(tmp_path / "r.jsonl", "jsonl")
    assert exc.value.render() == "r.jsonl:2: corrupt line: is not valid UTF-8; each line must be one JSON object; " \
        "fix or remove the line and run again".replace("r.jsonl", str(tmp_path / "r.jsonl"))


@pytest.mark.parametrize("spelling", [("pass", "fail"), ("C", "I"), (1, 0), ("true", "false"), ("1", "0"),
                                      ("correct", "incorrect"), ("yes", "no")])
def test_outcome_spellings(ws: Workspace, spelling: tuple) -> None:
    rows = [json.loads(line) for line in (FIXTURES / "ok" / "base.jsonl").read_text().splitlines()]
    for r in rows:
        r["passed"] = spelling[0] if r["passed"] else spelling[1]
    (ws.path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (ws.path / "plan.yaml").write_text(plan_text(), encoding="utf-8")
    assert ws.cli("run", "plan.yaml", env=EPOCH).exit_code == 0
    prop = claim_of(ws)["analyses"][0]["result"]["candidates"]
    # first attempts (make_fixtures.PASS): A 1, 1, 0, 1 -> 3; B 1, 0, 0, 1 -> 2
    assert (prop["A"]["successes"], prop["B"]["successes"]) == (3, 2)


def test_numeric_scores_with_threshold_and_glob(ws: Workspace) -> None:
    rows = [json.loads(line) for line in (FIXTURES / "ok" / "base.jsonl").read_text().splitlines()]
    for i, r in enumerate(rows):
        r["passed"] = 0.9 if r["passed"] else 0.2 + 0.01 * i
    half = len(rows) // 2
    (ws.path / "part-1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:half]), encoding="utf-8")
    (ws.path / "part-2.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[half:]), encoding="utf-8")
    plan = plan_text("part-*.jsonl").replace(
        "  columns:", "  outcome: {type: score, pass_threshold: 0.5}\n  columns:").replace(
        "  - {kind: paired_difference, method: newcombe}", "  - {kind: paired_difference, method: newcombe}\n"
        "  - {kind: clustered_mean, correction: CR0}")
    (ws.path / "plan.yaml").write_text(plan, encoding="utf-8")
    res = ws.cli("run", "plan.yaml", env=EPOCH)
    assert res.exit_code == 0, res.output
    claim = claim_of(ws)
    assert [f["path"] for f in claim["data"]["files"]] == ["part-1.jsonl", "part-2.jsonl"]
    assert claim["analyses"][0]["result"]["candidates"]["A"]["successes"] == 3
    cm = claim["analyses"][2]["result"]["candidates"]["A"]
    expected = np.mean([r["passed"] for r in rows if r["candidate"] == "A"])
    assert cm["estimate"] == pytest.approx(expected) and cm["n"] == 8 and cm["n_clusters"] == 2


def test_score_that_is_not_a_number(ws: Workspace) -> None:
    rows = [json.loads(line) for line in (FIXTURES / "ok" / "base.jsonl").read_text().splitlines()]
    for r in rows:
        r["passed"] = 0.9
    rows[2]["passed"] = "high"
    (ws.path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    plan = plan_text().replace("  columns:", "  outcome: {type: score, pass_threshold: 0.5}\n  columns:")
    (ws.path / "plan.yaml").write_text(plan, encoding="utf-8")
    res = ws.cli("run", "plan.yaml")
    assert res.exit_code == 2
    assert res.stderr.startswith("results.jsonl:3: passed: the score is not a number (got 'high')")


def test_parquet_without_pyarrow_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "r.parquet").write_bytes(b"PAR1")
    real_import = builtins.__import__

    def no_pyarrow(name: str, *args, **kw):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real_import(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(InputError) as exc:
        read_file(tmp_path / "r.parquet", "parquet", display="r.parquet")
    assert "pip install 'evalspec[parquet]'" in exc.value.render()


def test_unreadable_parquet(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    (tmp_path / "r.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(InputError) as exc:
        read_file(tmp_path / "r.parquet", "parquet", display="r.parquet")
    assert exc.value.render().startswith("r.parquet: not a readable Parquet file")


def test_best_of_k_plan_end_to_end(ws: Workspace) -> None:
    ws.setup(FIXTURES / "ok" / "base.jsonl", plan_text(rule="best_of_k").replace(
        "rule: best_of_k}", "rule: best_of_k, k: 2}"))
    res = ws.cli("run", "plan.yaml", env=EPOCH)
    assert res.exit_code == 0, res.output
    claim = claim_of(ws)
    # best of 2: A passes c1, c2, c4; B passes c1, c3, c4
    prop = claim["analyses"][0]["result"]["candidates"]
    assert (prop["A"]["successes"], prop["B"]["successes"]) == (3, 3)
    assert claim["coverage"]["attempt_rule"]["k"] == 2


def test_csv_fast_and_exact_paths_agree(tmp_path: Path) -> None:
    text = (FIXTURES / "ok" / "base.csv").read_text(encoding="utf-8")
    (tmp_path / "a.csv").write_text(text, encoding="utf-8")
    lines = text.splitlines(keepends=True)
    (tmp_path / "b.csv").write_text("".join(lines[:3]) + "\n" + "".join(lines[3:]), encoding="utf-8")  # blank line
    fast = read_file(tmp_path / "a.csv", "csv")
    exact = read_file(tmp_path / "b.csv", "csv")
    assert fast.rows == exact.rows == 16
    assert list(fast.lines[:3]) == [2, 3, 4] and list(exact.lines[:3]) == [2, 3, 5]
    for key in fast.columns:
        assert list(fast.columns[key]) == list(exact.columns[key])


@pytest.mark.parametrize("quoted", [False, True])
def test_csv_identifiers_keep_leading_zeros(tmp_path: Path, quoted: bool) -> None:
    q = '"' if quoted else ""
    (tmp_path / "r.csv").write_text(f"case,x\n{q}007{q},1\n7,2.5\n,3\n", encoding="utf-8")
    cols = read_file(tmp_path / "r.csv", "csv").columns
    assert list(cols["case"]) == ["007", 7, None]
    assert list(cols["x"]) == [1, 2.5, 3]
