"""``pass_at_k`` and ``pass_hat_k``: checked against inspect_ai's own reducers and by hand.

The fixture logs (``tests/results/fixtures/inspect_ai/passk/``) were written by inspect_ai
0.3.285 with ``Epochs(5, ["mean", pass_at(2), pass_k(2)])``: inspect stores its per-sample
reduced values in the log's ``reductions.json`` and its accuracy over them in the header.
evalspec's case values from the same epochs must equal them exactly.
"""

from __future__ import annotations

import json
import math
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.attempts import pass_at, pass_hat, reduce_attempts, rule_question

HERE = Path(__file__).resolve().parents[1] / "results"
sys.path.insert(0, str(HERE))
PASSK = HERE / "fixtures" / "inspect_ai" / "passk"
TERSE = PASSK / "mockllm-terse_p0.75_epochs5_pass-at-2_pass-k-2.eval"
VERBOSE = PASSK / "mockllm-verbose_p0.45_epochs5_pass-at-2_pass-k-2.eval"

pytest.importorskip("zstandard")


def _reductions(path: Path) -> dict[str, dict[str, float]]:
    from evalspec.results.adapters.zip_members import open_zip

    z = open_zip(path.read_bytes(), path.name)
    out: dict[str, dict[str, float]] = {}
    for r in json.loads(z.read("reductions.json")):
        out[r["reducer"]] = {str(s["sample_id"]): float(s["value"]) for s in r["samples"]}
    return out


def _case_values(path: Path, rule: str, k: int) -> dict[str, float]:
    from evalspec.results.adapters import Options, read_logs

    (lf,) = read_logs([path], "inspect", Options())
    cols = lf.columns
    cases = sorted(set(cols["case_id"]))
    code = {c: i for i, c in enumerate(cases)}
    out = reduce_attempts(np.zeros(len(cols["case_id"]), dtype=np.int64),
                          np.array([code[c] for c in cols["case_id"]]), np.array(cols["repeat"], dtype=np.int64),
                          np.array(cols["outcome"], dtype=float), n_candidates=1, n_cases=len(cases), rule=rule, k=k)
    return dict(zip(cases, out.values[0].tolist()))


@pytest.mark.parametrize("path", [TERSE, VERBOSE], ids=["terse", "verbose"])
@pytest.mark.parametrize("rule, reducer", [("pass_at_k", "pass_at_2"), ("pass_hat_k", "pass_k_2"),
                                           ("mean", "mean")])
def test_case_values_equal_inspects_own_reducers(path: Path, rule: str, reducer: str) -> None:
    ours = _case_values(path, rule, 2)
    theirs = _reductions(path)[reducer]
    assert ours.keys() == theirs.keys()
    for case in ours:
        assert ours[case] == pytest.approx(theirs[case], abs=1e-15), case
    # and inspect's accuracy over samples is the mean of those values
    from evalspec.results.adapters import Options, read_logs

    (lf,) = read_logs([path], "inspect", Options())
    reported = lf.provenance["reported"]["by_reducer"][reducer]["accuracy"]
    assert sum(ours.values()) / len(ours) == pytest.approx(reported, abs=1e-12)


def _by_enumeration(n: int, c: int, k: int, every: bool) -> float:
    """The share of k-subsets of n attempts (c passing) with any / all passing."""
    attempts = [1] * c + [0] * (n - c)
    subsets = list(combinations(attempts, k))
    hit = [all(s) if every else any(s) for s in subsets]
    return sum(hit) / len(subsets)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(n=st.integers(1, 12), data=st.data())
def test_estimators_are_the_share_of_k_subsets(n: int, data: st.DataObject) -> None:
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    assert pass_at(n, c, k) == pytest.approx(_by_enumeration(n, c, k, every=False), abs=1e-12)
    assert pass_hat(n, c, k) == pytest.approx(_by_enumeration(n, c, k, every=True), abs=1e-12)
    eps = 1e-12  # pass^k <= mean <= pass@k, in floating point
    assert -eps <= pass_hat(n, c, k) <= c / n + eps and c / n - eps <= pass_at(n, c, k) <= 1.0 + eps
    if k == 1:
        assert pass_at(n, c, 1) == pytest.approx(c / n) and pass_hat(n, c, 1) == pytest.approx(c / n)


def test_published_value_chen_et_al() -> None:
    """n = 200, c = 10: pass@1 = 0.05, pass@10 and pass@100 from the closed form."""
    assert pass_at(200, 10, 1) == pytest.approx(0.05)
    assert pass_at(200, 10, 10) == pytest.approx(1 - math.comb(190, 10) / math.comb(200, 10), rel=1e-12)
    assert pass_at(200, 10, 100) == pytest.approx(1 - math.comb(190, 100) / math.comb(200, 100), rel=1e-9)


def test_fewer_attempts_than_k_has_no_outcome_and_missing_policies() -> None:
    def one(outcomes: list[float], rule: str, k: int, policy: str = "count_as_fail") -> float:
        n = len(outcomes)
        out = reduce_attempts(np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.arange(1, n + 1),
                              np.array(outcomes), n_candidates=1, n_cases=1, rule=rule, k=k, missing_policy=policy)
        return float(out.values[0, 0])

    nan = float("nan")
    assert one([1, 0, 1, 0], "pass_at_k", 2) == pytest.approx(1 - 1 / 6)
    assert one([1, 0, 1, 0], "pass_hat_k", 2) == pytest.approx(1 / 6)
    assert one([1, nan, 1], "pass_hat_k", 2) == pytest.approx(1 / 3)  # count_as_fail: the missing one failed
    assert one([1, nan, 1], "pass_hat_k", 2, "exclude") == 1.0         # exclude: 2 of 2 left, as inspect drops it
    assert math.isnan(one([1, nan, nan], "pass_at_k", 2, "exclude"))   # 1 attempt left < k: no outcome (inspect: NaN)
    assert one([0.5, 1, 0], "pass_at_k", 1) == pytest.approx(1 / 3)    # a partial credit of 0.5 is not a pass


def test_rule_questions_and_best_of_k_says_what_it_discards() -> None:
    assert "discarded" in rule_question("best_of_k", 2, 5) and "pass_at_k" in rule_question("best_of_k", 2, 5)
    assert "discarded" not in rule_question("best_of_k", 5, 5)
    assert "pass@3" in rule_question("pass_at_k", 3, 5) and "Chen" in rule_question("pass_at_k", 3, 5)
    assert "pass^3" in rule_question("pass_hat_k", 3, 5)


def test_plan_needs_k_within_repeats() -> None:
    assert _attempt_problems("{repeats: 5, rule: pass_at_k, k: 3}") == []
    assert any("needs k" in p for p in _attempt_problems("{repeats: 5, rule: pass_at_k}"))
    assert any("exceeds the planned repeats" in p for p in _attempt_problems("{repeats: 2, rule: pass_hat_k, k: 3}"))


def _attempt_problems(block: str) -> list[str]:
    import tempfile

    from logs_helpers import write_plan

    from evalspec.plan.load import PlanInvalid, load_plan

    with tempfile.TemporaryDirectory() as d:
        plan = write_plan(Path(d), "  results: r.jsonl", rule="x")
        plan.write_text(plan.read_text().replace("attempts: {repeats: 3, rule: x}", f"attempts: {block}"))
        try:
            load_plan(plan)
        except PlanInvalid as exc:
            return [d.message for d in exc.diagnostics]
    return []


def test_run_on_the_real_logs_under_pass_at_k(tmp_path: Path) -> None:
    """A plan comparing the two prompts under pass_at_k: the claim says pass@2, estimates equal inspect's."""
    from logs_helpers import stage, write_plan

    from evalspec.cli import cli

    stage(tmp_path, TERSE, VERBOSE)
    plan = write_plan(tmp_path, f"""  results: ["{TERSE.name}", "{VERBOSE.name}"]
  format: inspect
  candidate_from: [task_args.prompt]""", candidates=("terse", "verbose"), repeats=5, rule="pass_at_k",
                      extra_attempts=", k: 2", analyses="""
  - {kind: proportion}
  - {kind: paired_difference, compare: [terse, verbose]}""")
    res = CliRunner().invoke(cli, ["run", str(plan), "--out", str(tmp_path / "out")],
                             env={"EVALSPEC_NO_REPORT": "1", "SOURCE_DATE_EPOCH": "1796126400"})
    assert res.exit_code == 0, res.output
    claim = json.loads((tmp_path / "out" / "claim.json").read_text(encoding="utf-8"))
    rule = claim["coverage"]["attempt_rule"]
    assert rule["rule"] == "pass_at_k" and rule["k"] == 2 and "pass@2" in rule["question"]
    by_kind = {a["kind"]: a for a in claim["analyses"]}
    props = by_kind["proportion"]["result"]
    for name, path in (("terse", TERSE), ("verbose", VERBOSE)):
        want = sum(_reductions(path)["pass_at_2"].values()) / 10
        got = props["candidates"][name]
        assert got["estimate"] == pytest.approx(want, abs=1e-12)
        assert "pass@k" in (got.get("note") or "")
    paired = by_kind["paired_difference"]["result"]
    assert paired.get("table") is None  # no 2x2 table for fractional case outcomes
    want = (sum(_reductions(TERSE)["pass_at_2"].values()) - sum(_reductions(VERBOSE)["pass_at_2"].values())) / 10
    assert paired["estimate"] == pytest.approx(want, abs=1e-12)


def test_slices_and_the_paired_table_under_pass_hat_k(tmp_path: Path) -> None:
    """Declared slices take the fractional path too: per-group pass^2 means, no binomial interval."""
    from logs_helpers import stage, write_plan

    from evalspec.cli import cli

    stage(tmp_path, TERSE, VERBOSE)
    plan = write_plan(tmp_path, f"""  results: ["{TERSE.name}", "{VERBOSE.name}"]
  format: inspect
  candidate_from: [task_args.prompt]""", candidates=("terse", "verbose"), repeats=5, rule="pass_hat_k",
                      extra_attempts=", k: 2", analyses="""
  - {kind: proportion}
  - {kind: paired_difference, compare: [terse, verbose]}
  - {kind: slices}""")
    plan.write_text(plan.read_text() + "slices:\n  - {name: difficulty, column: difficulty}\n")
    res = CliRunner().invoke(cli, ["run", str(plan), "--out", str(tmp_path / "out")],
                             env={"EVALSPEC_NO_REPORT": "1", "SOURCE_DATE_EPOCH": "1796126400"})
    assert res.exit_code == 0, res.output
    claim = json.loads((tmp_path / "out" / "claim.json").read_text(encoding="utf-8"))
    slices = next(a for a in claim["analyses"] if a["kind"] == "slices")["result"]
    (entry,) = slices["entries"] if "entries" in slices else slices["slices"]
    red = _reductions(TERSE)["pass_k_2"]
    for group in entry["groups"]:
        cases = [f"q{i:02d}" for i in range(10) if (i < 5) == (group["value"] == "easy")]
        got = group["candidates"]["terse"]
        assert got["estimate"] == pytest.approx(sum(red[c] for c in cases) / len(cases), abs=1e-12)
        assert "binomial" not in got["method"] and "pass^k" in (got.get("note") or "")
