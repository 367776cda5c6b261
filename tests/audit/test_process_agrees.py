"""The claim's process record, the report's process line and the audit say the same thing.

``run`` records the process checks it can make (:mod:`evalspec.process`) and the audit makes
them again on what it finds; on every example and on crafted process failures (locked after
the results, re-locked with --force, an undeclared model version, more looks than planned,
data outside the plan's folder) each shared check has the same status in both, and the
report states the failure on page 1 and never says "None recorded" beside it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.audit.conftest import EXAMPLES, LOCK_DAY, Workspace, make_workspace

from evalspec.process import PROCESS_CHECKS

SHARED = [c.__name__ for c in PROCESS_CHECKS]


def _agree(w: Workspace) -> tuple[dict, dict[str, str]]:
    """The claim's process record, after asserting that the audit's shared checks match it."""
    claim = w.read_claim()
    proc = claim["process"]
    recorded = {f["check"]: f["status"] for f in proc["findings"]}
    audit = w.checks("--no-reproduce")
    for check in SHARED:
        assert audit[check]["status"] == recorded.get(check, "pass"), (check, audit[check], proc)
        if check in recorded:
            f = next(f for f in proc["findings"] if f["check"] == check)
            assert f["sentence"] == audit[check]["sentence"]
    return proc, {k: v["status"] for k, v in audit.items()}


def _page1(claim_path: Path) -> str:
    from evalspec.report import load_claim, render_html

    html = render_html(load_claim(claim_path))
    return html


def _text(html: str) -> str:
    import re

    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'")


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.iterdir() if (p / "plan.yaml").exists()))
@pytest.mark.parametrize("locked", [False, True])
def test_examples_agree(tmp_path: Path, name: str, locked: bool) -> None:
    w = make_workspace(tmp_path, name)
    if locked:
        w.lock()
    w.run()
    proc, _ = _agree(w)
    text = _text(_page1(w.claim))
    assert f"Process: {proc['line']}" in text
    if proc["findings"] and any(f["check"] != "deviations_disclosed" for f in proc["findings"]):
        assert "None recorded" not in text and "None: every process check" not in text
    if not locked:
        assert proc["status"] == "departed" and proc["exploratory"]
        assert "the plan was never locked" in proc["line"] and proc["line"].endswith("treat the result as exploratory")
        # said once: the lock deviation is stated by the finding, not listed again
        assert text.count("nothing shows it was fixed before the results were seen") == 1


def test_locked_after_the_results(tmp_path: Path) -> None:
    w = make_workspace(tmp_path)
    w.lock(day="2026-11-01")  # the example's results are dated October 2026
    w.run()
    proc, audit = _agree(w)
    assert audit["locked_before_results"] == "fail"
    assert proc["line"] == "the plan was locked after the results — treat the result as exploratory"
    assert "Process: the plan was locked after the results — treat the result as exploratory" in _text(_page1(w.claim))


def test_relocked_with_force(tmp_path: Path) -> None:
    w = make_workspace(tmp_path)
    w.lock()
    w.edit_plan("minimum_improvement: 0.03", "minimum_improvement: 0.02")
    w.lock(day="2026-11-05", force=True)
    w.edit_plan("minimum_improvement: 0.02", "minimum_improvement: 0.025")
    w.lock(day="2026-11-06", force=True)
    w.run()
    proc, audit = _agree(w)
    assert audit["plan_locked"] == "warning" and audit["locked_before_results"] == "fail"
    assert "re-locked 2 times, last on 2026-11-06" in proc["line"]
    claim = w.read_claim()
    assert [h["locked_at"][:10] for h in claim["plan"]["lock"]["history"]] == ["2026-01-02", "2026-11-05"]
    text = _text(_page1(w.claim))
    assert "None recorded" not in text and "re-locked 2 times" in text


def test_undeclared_model_version(tmp_path: Path) -> None:
    w = make_workspace(tmp_path)
    results = w.root / "results.jsonl"
    rows = [json.loads(x) for x in results.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        if r["candidate"] == "A":
            r["model_version"] = "2026-10-20"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    w.lock()
    w.run()
    proc, audit = _agree(w)
    assert audit["model_versions"] == "fail" and proc["status"] == "departed"
    assert "a model version the plan did not declare was run" in proc["line"]
    assert not proc["exploratory"]


def test_more_looks_than_planned(tmp_path: Path) -> None:
    w = make_workspace(tmp_path)
    w.lock()
    results = w.root / "results.jsonl"
    full = results.read_text(encoding="utf-8")
    lines = full.splitlines(keepends=True)
    results.write_text("".join(lines[::2]), encoding="utf-8")  # a first look at part of the data
    w.run(day="2026-11-10")
    results.write_text(full, encoding="utf-8")
    w.run()
    proc, audit = _agree(w)
    assert audit["looks_within_plan"] == "fail" and proc["exploratory"]
    assert "the data was looked at 2 times, 1 planned" in proc["line"]


def test_data_outside_the_plan_folder(tmp_path: Path) -> None:
    w = make_workspace(tmp_path)
    shutil.move(w.root / "results.jsonl", tmp_path / "results.jsonl")
    w.edit_plan("results: results.jsonl", "results: ../results.jsonl")
    w.lock()
    w.run("--allow-outside-data")
    proc, audit = _agree(w)
    assert audit["deviations_disclosed"] == "warning"
    assert "1 deviation from the plan" in proc["line"]
    text = _text(_page1(w.claim))
    assert "Results were read from outside the plan's folder" in text


def test_a_clean_run_says_as_planned_only_when_every_check_passes(tmp_path: Path) -> None:
    w = make_workspace(tmp_path)
    w.lock(day=LOCK_DAY)
    w.run()
    proc, audit = _agree(w)
    shared = {k: audit[k] for k in SHARED}
    assert (proc["status"] == "as_planned") == all(s == "pass" for s in shared.values())
