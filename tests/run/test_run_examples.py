"""Every example runs end to end; claims validate against the schema and are byte-stable.

The policy-migration example must reproduce the invented numbers of the guide "Repeat AI evaluations and report uncertainty honestly" exactly: 100 cases, A passes
82 and B 78, 8 cases A-only and 4 B-only (difference 4 points), and A's 95 % Wilson interval
73.3 %–88.3 % (the guide, "A worked paired example"; printed to 0.1 point, so the tolerance
is 0.0005).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from run_helpers import EXAMPLES, FIXTURES, Workspace, plan_text

EPOCH = {"SOURCE_DATE_EPOCH": "1796126400", "EVALSPEC_NO_REPORT": "1"}  # 2026-12-01T12:00:00Z; claims only
SCHEMA = json.loads((EXAMPLES.parent / "schemas" / "claim.schema.json").read_text(encoding="utf-8"))


def validate(claim: dict) -> None:
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    errors = sorted(jsonschema.Draft202012Validator(SCHEMA).iter_errors(claim), key=lambda e: list(e.path))
    assert not errors, [(list(e.path), e.message) for e in errors[:5]]


def run_example(name: str, folder: Path) -> tuple[dict, bytes]:
    """Run a copy of ``examples/<name>`` in ``folder`` (a run leaves a look in the ledger beside its plan)."""
    import shutil

    from click.testing import CliRunner

    from evalspec.cli import cli

    copy, out = folder / name, folder / "out"
    if not copy.exists():
        shutil.copytree(EXAMPLES / name, copy, ignore=shutil.ignore_patterns("out", ".evalspec", "*.lock.json"))
    res = CliRunner().invoke(cli, ["run", str(copy / "plan.yaml"), "--out", str(out)], env=EPOCH,
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    data = (out / "claim.json").read_bytes()
    return json.loads(data), data


EXAMPLE_NAMES = sorted(p.parent.name for p in EXAMPLES.glob("*/plan.yaml"))


@pytest.fixture(scope="module")
def claims(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict, bytes, Path]]:
    out = {}
    for name in EXAMPLE_NAMES:
        folder = tmp_path_factory.mktemp(name)
        out[name] = (*run_example(name, folder), folder)
    return out


def test_examples_exist() -> None:
    assert {"policy-migration", "repeated-trials", "support-triage"} <= set(EXAMPLE_NAMES)
    for name in EXAMPLE_NAMES:
        text = (EXAMPLES / name / "generate.py").read_text(encoding="utf-8")
        assert "INVENTED" in text and "SEED" in text


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_claim_validates(claims: dict, name: str) -> None:
    claim, data, _ = claims[name]
    validate(claim)
    assert data.endswith(b"\n") and data.decode("utf-8")
    assert claim["created"] == "2026-12-01T12:00:00Z"
    assert claim["plan"]["hash"].startswith("sha256:")
    assert claim["data"]["files"][0]["path"] == "results.jsonl"


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_two_runs_give_identical_bytes(claims: dict, name: str) -> None:
    _, first, folder = claims[name]
    _, again = run_example(name, folder)
    assert again == first


def test_policy_migration_reproduces_the_guides_worked_example(claims: dict) -> None:
    claim, _, _ = claims["policy-migration"]
    kinds = {a["kind"]: a["result"] for a in claim["analyses"]}
    a = kinds["proportion"]["candidates"]["A"]
    b = kinds["proportion"]["candidates"]["B"]
    assert (a["successes"], a["n"], b["successes"], b["n"]) == (82, 100, 78, 100)
    # cases share documents: the interval is the cluster-aware Wilson (effective n), never narrower than the
    # guide's independent-cases Wilson 73.3%-88.3% (that one is pinned in test_run_analyses without clusters)
    assert a["method"].startswith("wilson") and a["n_clusters"] == 20 and a["confidence_level"] == 0.95
    assert a["low"] <= 0.7335 and a["high"] >= 0.8825
    paired = kinds["paired_difference"]
    assert paired["table"] == {"a": 74, "b": 8, "c": 4, "d": 14, "n": 100}
    assert paired["estimate"] == pytest.approx(0.04, abs=1e-12)
    assert len(paired["disagreements"]["candidate_only"]) == 8
    assert len(paired["disagreements"]["baseline_only"]) == 4
    assert paired["clusters"]["n"] == 20
    assert sum(c["net"] for c in paired["clusters"]["contributions"]) == 4
    assert paired["bootstrap"]["seed"] == 7 and paired["bootstrap"]["units"] == "clusters"
    assert paired["low"] < 0.03 < paired["high"]
    # cases share documents, so McNemar is the clustered version (issue 8); the exact test of 8 vs 4 ignoring
    # the clusters would give 2 * P(Bin(12, 1/2) <= 4) = 794/2048
    from evalspec.stats import clustered_mcnemar

    assert paired["mcnemar"]["clustered"] is True
    assert 0 < paired["mcnemar"]["pvalue"] < 1 and paired["mcnemar"]["pvalue"] != pytest.approx(794 / 2048)
    assert callable(clustered_mcnemar)
    cov = claim["coverage"]
    assert cov["cases"]["paired"] == 100 and cov["clusters"] == 20
    assert cov["attempt_rule"]["rule"] == "first"
    # the verdict follows the plan: 1 of 12 critical cases failed, so the 5 % limit blocks
    crit = kinds["critical_failures"]["candidates"]["A"]
    assert (crit["critical_cases"], crit["failures"]) == (12, 1)
    assert crit["within_limit"] is False
    assert claim["decision"]["verdict"] == "blocked"
    assert any("+4.0 points" in r for r in claim["decision"]["reasons"])
    assert claim["systematic_limits"]["stated"][0].startswith("English questions only")


def test_repeated_trials_paired_and_bayesian(claims: dict) -> None:
    """Exact vs rephrased (simulated, 100 questions x 100 trials): the verdict reads the paired,
    within-question difference; the Bayesian profile describes each form."""
    claim, _, _ = claims["repeated-trials"]
    primary = claim["decision"]["primary"]
    assert (primary["candidate"], primary["baseline"]) == ("rephrased", "exact")
    assert primary["high"] < -0.05  # rephrasing costs more than the 5-point margin
    assert claim["decision"]["verdict"] == "not_equivalent"
    kinds = {a["kind"]: a["result"] for a in claim["analyses"]}
    var = kinds["run_variation"]["candidates"]["exact"]
    assert var["repeats"] == 100 and var["within_case_variance"] > 0
    bb = kinds["beta_binomial"]
    assert list(bb["conditions"]) == ["exact", "rephrased"]
    assert all(c["questions"] == 100 for c in bb["conditions"].values())
    diff = bb["contrasts"][0]["differences"]
    assert (bb["contrasts"][0]["first"], bb["contrasts"][0]["second"]) == ("rephrased", "exact")
    assert diff["mu"]["excludes_zero"] and diff["mu"]["high"] < 0
    assert diff["gamma_bar"]["low"] > 0  # rephrased answers are less consistent
    assert {d["code"] for d in claim["systematic_limits"]["detected"]} == {"missing_outcomes"}


def test_support_triage(claims: dict) -> None:
    claim, _, _ = claims["support-triage"]
    kinds = {a["kind"]: a["result"] for a in claim["analyses"]}
    slices = kinds["slices"]["slices"]
    assert [(s["name"], s["confirmatory"]) for s in slices] == [("channel", True), ("language", False)]
    assert slices[1]["label"] == "exploratory"
    assert claim["coverage"]["repeats"] == {"planned": 5, "observed_min": 5, "observed_max": 5}
    assert claim["coverage"]["attempt_rule"]["rule"] == "majority"
    # issue 8: a critical ticket fails if any of its five attempts failed (not after the majority rule); then
    # A has 2 of 88 failed critical tickets, 7.0 % bound as if independent, wider with tickets sharing accounts:
    # the 5 % limit blocks, although the gain itself clears the minimum improvement
    crit = kinds["critical_failures"]["candidates"]["A"]
    assert (crit["critical_cases"], crit["failures"]) == (88, 2)
    assert crit["upper_bound_independent"] == pytest.approx(0.0698, abs=5e-4)
    assert crit["upper_bound"] > crit["upper_bound_independent"]
    assert claim["decision"]["verdict"] == "blocked"
    assert claim["decision"]["primary"]["low"] > 0.03


# -- non-fatal departures from the plan are recorded, never dropped ---------------------------


def _run_ok(ws: Workspace, fixture: str, **plan: str) -> dict:
    ws.setup(FIXTURES / "ok" / fixture, plan_text("results" + Path(fixture).suffix, **plan))
    res = ws.cli("run", "plan.yaml", env=EPOCH)
    assert res.exit_code == 0, res.output
    claim = json.loads((ws.path / "out" / "claim.json").read_text(encoding="utf-8"))
    validate(claim)
    return claim


def test_unpaired_cases_are_a_deviation(ws: Workspace) -> None:
    claim = _run_ok(ws, "unpaired.jsonl")
    dev = {d["code"]: d["message"] for d in claim["deviations"]}
    assert "B lacks 1 case(s)" in dev["unpaired_cases"]
    assert "use the 3 cases" in dev["unpaired_cases"]
    assert claim["coverage"]["cases"] == {"total": 4, "paired": 3, "only": {"A": 1, "B": 0}}
    paired = next(a["result"] for a in claim["analyses"] if a["kind"] == "paired_difference")
    assert paired["table"]["n"] == 3


def test_extra_repeats_are_a_deviation_and_ignored(ws: Workspace) -> None:
    claim = _run_ok(ws, "extra_repeats.jsonl")
    dev = {d["code"]: d["message"] for d in claim["deviations"]}
    assert "A 1 extra attempt(s)" in dev["extra_repeats"]
    assert claim["coverage"]["repeats"] == {"planned": 2, "observed_min": 2, "observed_max": 2}


def test_missing_counted_as_failure_is_a_detected_limit(ws: Workspace) -> None:
    claim = _run_ok(ws, "missing_counted.jsonl")
    assert claim["coverage"]["missing"]["B"] == {"missing": 1, "attempts": 8, "fraction": 0.125,
                                                 "policy": "count_as_fail"}
    det = {d["code"]: d["message"] for d in claim["systematic_limits"]["detected"]}
    assert "1 of 8 attempts" in det["missing_outcomes"]


def test_declared_versions_are_pooled_knowingly(ws: Workspace) -> None:
    claim = _run_ok(ws, "two_versions.jsonl", version_a="[v1, v2]")
    assert claim["coverage"]["candidates"]["A"]["versions_seen"] == {"v1": 4, "v2": 4}
    assert [d["code"] for d in claim["systematic_limits"]["detected"]] == ["pooled_versions"]


def test_csv_and_parquet_read_like_jsonl(ws: Workspace, tmp_path_factory: pytest.TempPathFactory) -> None:
    base = _run_ok(ws, "base.jsonl")
    ws2 = Workspace(tmp_path_factory.mktemp("csv"))
    as_csv = _run_ok(ws2, "base.csv")
    strip = lambda c: {k: v for k, v in c.items() if k not in ("data", "plan", "command", "integrity")}  # noqa: E731
    assert strip(base) == strip(as_csv)
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in (FIXTURES / "ok" / "base.jsonl").read_text().splitlines()]
    ws3 = Workspace(tmp_path_factory.mktemp("parquet"))
    pq.write_table(pa.Table.from_pylist(rows), ws3.path / "results.parquet")
    (ws3.path / "plan.yaml").write_text(plan_text("results.parquet"), encoding="utf-8")
    res = ws3.cli("run", "plan.yaml", env=EPOCH)
    assert res.exit_code == 0, res.output
    as_parquet = json.loads((ws3.path / "out" / "claim.json").read_text(encoding="utf-8"))
    assert strip(base) == strip(as_parquet)
    assert as_parquet["data"]["files"][0]["format"] == "parquet"


def test_created_is_now_without_source_date_epoch(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    ws.setup(FIXTURES / "ok" / "base.jsonl")
    assert ws.cli("run", "plan.yaml").exit_code == 0
    claim = json.loads((ws.path / "out" / "claim.json").read_text(encoding="utf-8"))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", claim["created"])
    assert claim["created"] != "2026-12-01T12:00:00Z"


def test_lock_is_reported(ws: Workspace) -> None:
    ws.setup(FIXTURES / "ok" / "base.jsonl")
    claim = _run_ok(ws, "base.jsonl")
    assert claim["plan"]["lock"]["exists"] is False
    assert claim["deviations"][0]["code"] == "plan_not_locked"
    res = ws.cli("lock", "plan.yaml", env=EPOCH)
    assert res.exit_code == 0, res.output
    assert ws.cli("run", "plan.yaml", env=EPOCH).exit_code == 0
    claim = json.loads((ws.path / "out" / "claim.json").read_text(encoding="utf-8"))
    assert claim["plan"]["lock"]["exists"] is True and claim["plan"]["lock"]["matches"] is True
    assert "plan_not_locked" not in [d["code"] for d in claim["deviations"]]
    text = (ws.path / "plan.yaml").read_text(encoding="utf-8").replace("minimum_units: 1", "minimum_units: 2")
    (ws.path / "plan.yaml").write_text(text, encoding="utf-8")
    assert ws.cli("run", "plan.yaml", env=EPOCH).exit_code == 0
    claim = json.loads((ws.path / "out" / "claim.json").read_text(encoding="utf-8"))
    assert claim["plan"]["lock"]["matches"] is False
    assert claim["deviations"][0]["code"] == "lock_mismatch"
    assert "decision.minimum_units" in claim["deviations"][0]["message"]


def test_stopping_rule_departures_are_deviations(ws: Workspace) -> None:
    plan = plan_text() + "stopping: {max_units: 1, decision_date: 2026-09-30}\n"
    claim = None
    ws.setup(FIXTURES / "ok" / "base.jsonl", plan)
    res = ws.cli("run", "plan.yaml", env=EPOCH)
    assert res.exit_code == 0, res.output
    claim = json.loads((ws.path / "out" / "claim.json").read_text(encoding="utf-8"))
    dev = {d["code"]: d["message"] for d in claim["deviations"]}
    assert dev["over_max_units"] == ("2 independent clusters (doc) were analysed, more than the stopping rule's "
                                     "max_units of 1.")
    assert dev["data_after_decision_date"].startswith("Results were collected until 2026-10-01T10:16:00Z")
