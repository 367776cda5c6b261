"""Issue 18: a look beyond the plan is a caveat on the verdict; a gain shown below the minimum asks for no more data."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pipeline import page_one, pairs, write_study  # noqa: E402
from studies import Dec, decide_on, interval  # noqa: E402

from evalspec.decision import CLOSE  # noqa: E402


def test_a_gain_shown_below_the_minimum_asks_for_no_more_data() -> None:
    # 200,000 cases, +0.5 points, interval +0.43 to +0.57, minimum 1 point (issue 18, #6): more cases only narrow
    # the interval around 0.5; the gain is shown to be too small, not merely uncertain.
    out = decide_on(interval(0.0043, 0.0057, est=0.005), Dec(minimum_improvement=0.01))
    assert out.verdict == "too_small"
    assert out.label == "Gain shown to be below the minimum worth acting on"
    assert out.escalation == []
    text = " ".join([out.headline, *out.reasons, *out.what_would_change])
    assert "more independent cases narrow" not in text.lower()
    assert "shown to be too small" in text and "only narrow the interval" in text


def test_a_gain_that_may_be_too_small_keeps_the_call_for_more_data() -> None:
    out = decide_on(interval(0.004, 0.03, est=0.017), Dec(minimum_improvement=0.01))
    assert out.verdict == "too_small" and out.label == "Gain may be too small to act on"
    assert "too_small" in CLOSE and out.escalation
    assert any("more independent cases narrow the interval" in c for c in out.what_would_change)


def test_upper_bound_touching_the_minimum_may_still_be_too_small() -> None:
    out = decide_on(interval(0.004, 0.01), Dec(minimum_improvement=0.01))
    assert out.label == "Gain may be too small to act on"  # H == d: a gain of d is not ruled out (strict)


def _run_cli(plan: Path) -> dict:
    import json

    from click.testing import CliRunner

    from evalspec.cli import cli

    res = CliRunner().invoke(cli, ["run", str(plan), "--no-report"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads((plan.parent / "out" / "claim.json").read_text(encoding="utf-8"))


def test_the_fourth_look_at_a_one_look_design_says_so_beside_the_verdict(tmp_path: Path, monkeypatch) -> None:
    # The same one-look plan run at 100/200/300/400 cases (issue 18, #4): the ledger holds 4 looks.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    rows_all = pairs([1] * 140 + [0] * 60 + [1] * 100 + [0] * 100, [1] * 100 + [0] * 100 + [1] * 120 + [0] * 80)
    claims = []
    for n in (100, 200, 300, 400):
        plan = write_study(tmp_path, rows_all[: 2 * n])
        claims.append(_run_cli(plan))
    first = [c["code"] for c in claims[0]["decision"]["caveats"]]
    assert "looks_beyond_plan" not in first
    last = claims[-1]["decision"]
    cav = next(c for c in last["caveats"] if c["code"] == "looks_beyond_plan")
    assert cav["severity"] == "verdict"
    assert cav["message"].startswith("Look 4 of a design planned for 1: the 95% holds for 1 look only.")
    assert 'data-code="looks_beyond_plan"' in page_one(claims[-1])

    # the same data and plan again is not a new look: the claim is the one already recorded
    again = _run_cli(write_study(tmp_path, rows_all))
    assert [c["message"] for c in again["decision"]["caveats"] if c["code"] == "looks_beyond_plan"] == [cav["message"]]


def test_the_audit_reproduces_a_claim_with_a_look_caveat(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    rows = pairs([1] * 70 + [0] * 30, [1] * 60 + [0] * 40)
    _run_cli(write_study(tmp_path, rows[:100]))
    plan = write_study(tmp_path, rows)
    claim = _run_cli(plan)
    assert any(c["code"] == "looks_beyond_plan" for c in claim["decision"]["caveats"])
    import json

    from click.testing import CliRunner

    from evalspec.cli import cli

    res = CliRunner().invoke(cli, ["audit", str(plan.parent / "out" / "claim.json"), "--plan", str(plan), "--json"])
    checks = {c["id"]: c for c in json.JSONDecoder().raw_decode(res.output)[0]["checks"]}
    assert checks["reproduction"]["status"] == "pass", checks["reproduction"]
    assert checks["looks_within_plan"]["status"] == "fail"
