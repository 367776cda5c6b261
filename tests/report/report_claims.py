"""Hand-made claim records for the report tests, following the claim contract (issue 4/5).

They stand in for ``evalspec run`` output where the tests need shapes the examples do not
produce (very long case lists, hostile strings a plan cannot hold, every optional section).
They test the renderer's tolerance: ``render`` takes any mapping, and these are *not* valid
format-2 claims (``evalspec report`` validates a claim file first; real claims are covered by
the golden example reports, ``test_report_cli`` and ``test_hostile_run``). The numbers are
internally consistent (Wilson intervals computed here with the closed form, 2x2 tables that
add up) but they are *fixtures*: the report only formats them, it never checks them.

``python tests/report/report_claims.py`` rewrites ``tests/report/fixtures/*.json``; the tests load
the JSON files, and :func:`long_claim` builds claims of any size in memory (100,000 cases for
the benchmark).
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

__all__ = ["FIXTURES", "FIXTURE_NAMES", "HOSTILE", "dump_claim", "load_fixture", "long_claim", "superiority_claim"]

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE_NAMES = ["superiority", "long_cases", "hostile", "single_candidate"]
HOSTILE = ["<script>alert(1)</script>", "{{ 7*7 }}"]


def _wilson(k: float, n: int, level: float = 0.95) -> tuple[float, float]:
    z = {0.95: 1.959963984540054, 0.9: 1.6448536269514722}[level]
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def _prop(k: float, n: int, level: float = 0.95) -> dict[str, Any]:
    lo, hi = _wilson(k, n, level)
    return {"successes": k, "n": n, "estimate": k / n, "low": lo, "high": hi, "method": "wilson", "confidence_level": level}


def _round(obj: Any) -> Any:
    if isinstance(obj, float):
        return float(f"{obj:.12g}")
    if isinstance(obj, dict):
        return {k: _round(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_round(v) for v in obj]
    return obj


def dump_claim(claim: dict[str, Any]) -> str:
    """Serialise as the run step does (sorted keys, indent 2, floats to 12 significant digits)."""
    return json.dumps(_round(claim), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


PLAN_SOURCE = """evalspec: 1
id: policy-qa-migration
title: Policy QA migration, config A vs baseline B
question: Should production move from config B (baseline) to config A?
decision_owner: support-platform lead
population: English customer-policy questions, Q3 2026 traffic sample (fictional)
analyses:
  - {kind: proportion, method: wilson}
  - {kind: paired_difference, compare: [A, B], method: cluster_bootstrap, resamples: 10000, seed: 7}
  - {kind: critical_failures, flag: critical}
decision:
  goal: superiority
  minimum_improvement: 0.03
  critical_failures: {max_rate: 0.05}
systematic_limits:
  - English questions only; no other language was sampled.
  - Labels come from one annotator; label noise is not in the interval.
"""


def superiority_claim() -> dict[str, Any]:
    """The guide's invented example: A passes 82/100, B 78/100, 8 vs 4 disagreements, 20 documents."""
    clusters = [f"doc-{i:02d}" for i in range(1, 21)]
    cand_only = [{"case": f"q{n:03d}", "cluster": clusters[(n * 7) % 20]} for n in (3, 11, 17, 24, 38, 51, 66, 90)]
    base_only = [{"case": f"q{n:03d}", "cluster": clusters[(n * 3) % 20]} for n in (8, 45, 72, 99)]
    contrib: dict[str, dict[str, int]] = {}
    for row in cand_only:
        contrib.setdefault(row["cluster"], {"b": 0, "c": 0})["b"] += 1
    for row in base_only:
        contrib.setdefault(row["cluster"], {"b": 0, "c": 0})["c"] += 1
    contributions = [
        {"cluster": c, "cases": 5, "b": contrib.get(c, {}).get("b", 0), "c": contrib.get(c, {}).get("c", 0)}
        for c in clusters
    ]
    for row in contributions:
        row["net"] = row["b"] - row["c"]
        row["share"] = row["net"] / 4
    contributions.sort(key=lambda r: (-abs(r["net"]), r["cluster"]))
    level = 0.95
    return {
        "claim_format": 2,
        "evalspec_version": "0.1.0",
        "created": "2026-11-29T12:00:00Z",
        "command": ["evalspec", "run", "examples/policy-migration/plan.yaml"],
        "plan": {
            "path": "examples/policy-migration/plan.yaml",
            "id": "policy-qa-migration",
            "title": "Policy QA migration, config A vs baseline B",
            "question": "Should production move from config B (baseline) to config A?",
            "decision_owner": "support-platform lead",
            "population": "English customer-policy questions, Q3 2026 traffic sample (fictional)",
            "hash": "sha256:3f1c9a0e5b7d2c4e6f8a1b3d5c7e9f0a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e",
            "lock": {"path": "examples/policy-migration/plan.lock.json", "exists": True, "matches": True,
                     "locked_at": "2026-11-20T09:14:00Z", "git_commit": "87c1187"},
            "registered": {"id": "policy-qa-migration", "decision": {"goal": "superiority", "minimum_improvement": 0.03}},
            "source": PLAN_SOURCE,
        },
        "data": {"files": [{"path": "examples/policy-migration/results.jsonl",
                            "sha256": "sha256:9a8b7c6d5e4f30211203f4e5d6c7b8a9f0e1d2c3b4a5968778695a4b3c2d1e0f",
                            "rows": 200, "format": "jsonl"}]},
        "software": {"python": "3.11.7", "evalspec": "0.1.0", "numpy": "2.1.3", "scipy": "1.14.1"},
        "seeds": {"used": [{"analysis": 1, "kind": "paired_difference", "purpose": "cluster bootstrap resamples", "seed": 7}],
                  "declared_unused": []},
        "coverage": {
            "dataset": {"name": "policy-qa", "split": "Q3 2026 traffic sample", "version": "2026-09-30"},
            "population": "English customer-policy questions, Q3 2026 traffic sample (fictional)",
            "candidates": {
                "A": {"model": "vendor/model-x", "declared_version": "2026-10-01", "versions_seen": {"2026-10-01": 100},
                      "settings": {"temperature": 0, "system_prompt": "config-a-v3"}, "rows": 100, "cases": 100},
                "B": {"model": "vendor/model-y", "declared_version": "2026-06-15", "versions_seen": {"2026-06-15": 100},
                      "settings": {"temperature": 0, "system_prompt": "config-b-v7"}, "rows": 100, "cases": 100},
            },
            "baseline": "B",
            "cases": {"paired": 100, "only": {"A": 0, "B": 0}},
            "clusters": 20,
            "cluster_column": "policy_doc",
            "repeats": {"planned": 1, "observed_min": 1, "observed_max": 1},
            "attempt_rule": {"rule": "first", "k": None,
                             "question": "How often does the first answer pass, with no retries?"},
            "interval": {"method": "cluster_bootstrap (bca)", "confidence_level": level},
            "missing": {"A": {"missing": 0, "attempts": 100, "fraction": 0.0, "policy": "count_as_fail"},
                        "B": {"missing": 1, "attempts": 100, "fraction": 0.01, "policy": "count_as_fail"}},
            "run_dates": {"first": "2026-11-02T08:00:00Z", "last": "2026-11-03T17:30:00Z"},
        },
        "analyses": [
            {"index": 0, "kind": "proportion", "label": "proportion", "params": {"kind": "proportion", "method": "wilson"},
             "result": {"candidates": {"A": _prop(82, 100), "B": _prop(78, 100)}}},
            {"index": 1, "kind": "paired_difference", "label": "paired_difference",
             "params": {"kind": "paired_difference", "compare": ["A", "B"], "method": "cluster_bootstrap",
                        "resamples": 10000, "seed": 7, "top_clusters": 3},
             "result": {"candidate": "A", "baseline": "B", "table": {"a": 74, "b": 8, "c": 4, "d": 14, "n": 100},
                        "estimate": 0.04, "low": -0.03, "high": 0.11, "method": "cluster_bootstrap (bca)",
                        "confidence_level": level,
                        "mcnemar": {"statistic": 1.3333333333, "pvalue": 0.387695312500, "method": "exact binomial"},
                        "disagreements": {"candidate_only": cand_only, "baseline_only": base_only},
                        "clusters": {"n": 20, "contributions": contributions, "top_share": 0.75},
                        "bootstrap": {"resamples": 10000, "seed": 7, "interval": "bca"}}},
            {"index": 2, "kind": "critical_failures", "label": "critical_failures", "params": {"kind": "critical_failures", "flag": "critical"},
             "result": {"flag": "critical", "candidates": {
                 "A": {"critical_cases": 12, "failures": 0, "rate": 0.0, "upper_bound": 0.221,
                       "confidence_level": level, "max_rate": 0.05, "within_limit": False,
                       "note": "None observed is not zero risk: with 12 critical cases the rate could still be as high as 22.1%."},
                 "B": {"critical_cases": 12, "failures": 1, "rate": 1 / 12, "upper_bound": 0.339,
                       "confidence_level": level, "max_rate": 0.05, "within_limit": False, "note": None}}}},
        ],
        "decision": {
            "goal": "superiority", "verdict": "inconclusive",
            "headline": "Inconclusive: A's gain over B could be as large as 11 points or a 3-point loss; "
                        "the evidence does not settle whether moving to A is worth it.",
            "reasons": [
                "The paired difference is +4.0 points (95% interval −3.0 to +11.0) over 20 policy documents.",
                "The interval spans both a material gain (≥ 3 points) and a loss.",
                "Critical failures: none of 12 critical cases failed for A, but 12 cases cannot rule out a rate up to 22.1%.",
            ],
            "thresholds": {"minimum_improvement": 0.03, "margin": None, "confidence_level": level,
                           "critical_failures": {"max_rate": 0.05, "confidence_level": level}, "minimum_units": 10},
            "primary": {"analysis": 1, "candidate": "A", "baseline": "B", "estimate": 0.04, "low": -0.03, "high": 0.11,
                        "method": "cluster_bootstrap (bca)", "confidence_level": level},
            # format 2: the decision carries the critical statuses and the caveats that bear on the verdict
            "critical": [
                {"candidate": "A", "critical_cases": 12, "failures": 0, "upper_bound": 0.221, "confidence_level": level,
                 "method": "clopper_pearson (one-sided upper)", "max_rate": 0.05, "within_limit": False,
                 "adopting": True, "reachable": False},
                {"candidate": "B", "critical_cases": 12, "failures": 1, "upper_bound": 0.339, "confidence_level": level,
                 "method": "clopper_pearson (one-sided upper)", "max_rate": 0.05, "within_limit": False,
                 "adopting": False, "reachable": False},
            ],
            "caveats": [
                {"code": "few_clusters", "severity": "verdict",
                 "message": "The interval rests on 20 policy documents; a few documents drive most of the difference."},
                {"code": "critical_limit_unreachable", "severity": "verdict",
                 "message": "12 critical cases can never show a critical-failure rate below 5%: 59 failure-free "
                            "cases are needed."},
            ],
            "what_would_change": [
                "A lower interval bound above +3 points would make the gain worth acting on.",
                "An upper bound below +3 points would show no material gain.",
                "More independent policy documents narrow the interval; more repeats of the same documents do not.",
            ],
            "escalation": [
                "Check the labels of the 12 disagreeing cases before collecting anything new.",
                "Check whether doc-01 and doc-11 dominate the difference (75% of the net gain).",
                "Add new independent documents rather than repeating existing ones.",
                "Keep a human review on critical questions until the critical-failure bound is below 5%.",
            ],
        },
        "deviations": [{"code": "missing_outcomes", "message": "1 of B's 100 attempts had no outcome; counted as a fail, as planned."}],
        "systematic_limits": {
            "stated": ["English questions only; no other language was sampled.",
                       "Labels come from one annotator; label noise is not in the interval."],
            "detected": [{"code": "missing_outcomes", "message": "B: 1 missing outcome (1.0%) counted as a fail."}],
        },
    }


def long_claim(n_cases: int = 2000, n_clusters: int | None = None) -> dict[str, Any]:
    """A superiority claim whose case lists grow with ``n_cases`` (worth acting on)."""
    claim = superiority_claim()
    n_clusters = n_clusters or max(20, n_cases // 10)
    clusters = [f"cluster-{i:05d}" for i in range(n_clusters)]
    n_b = n_cases * 14 // 100
    n_c = n_cases * 6 // 100
    cand_only = [{"case": f"case-{i:06d}", "cluster": clusters[i % n_clusters]} for i in range(n_b)]
    base_only = [{"case": f"case-{n_b + i:06d}", "cluster": clusters[(i * 7) % n_clusters]} for i in range(n_c)]
    per: dict[str, list[int]] = {c: [0, 0] for c in clusters}
    for row in cand_only:
        per[row["cluster"]][0] += 1
    for row in base_only:
        per[row["cluster"]][1] += 1
    net_total = n_b - n_c
    contributions = [{"cluster": c, "cases": n_cases // n_clusters, "b": b, "c": cc, "net": b - cc,
                      "share": (b - cc) / net_total} for c, (b, cc) in per.items()]
    contributions.sort(key=lambda r: (-abs(r["net"]), r["cluster"]))
    a = n_cases * 70 // 100
    d = n_cases - a - n_b - n_c
    est = (n_b - n_c) / n_cases
    pd = claim["analyses"][1]["result"]
    pd.update({"table": {"a": a, "b": n_b, "c": n_c, "d": d, "n": n_cases}, "estimate": est,
               "low": est - 0.025, "high": est + 0.025,
               "disagreements": {"candidate_only": cand_only, "baseline_only": base_only},
               "clusters": {"n": n_clusters, "contributions": contributions,
                            "top_share": sum(r["share"] for r in contributions[:3])}})
    claim["analyses"][0]["result"]["candidates"] = {"A": _prop(a + n_b, n_cases), "B": _prop(a + n_c, n_cases)}
    claim["decision"].update({
        "verdict": "worth_acting_on",
        "headline": f"Worth acting on: A beats B by {100 * est:.1f} points, and even the low end of the "
                    f"interval clears the 3-point bar.",
        "primary": {**claim["decision"]["primary"], "estimate": est, "low": est - 0.025, "high": est + 0.025},
    })
    cov = claim["coverage"]
    cov["cases"]["paired"] = n_cases
    cov["clusters"] = n_clusters
    for who in ("A", "B"):
        cov["candidates"][who].update({"rows": n_cases, "cases": n_cases})
        cov["candidates"][who]["versions_seen"] = {cov["candidates"][who]["declared_version"]: n_cases}
        cov["missing"][who].update({"missing": 0, "attempts": n_cases, "fraction": 0.0})
    claim["plan"]["id"] = "long-case-lists"
    claim["deviations"] = []
    claim["systematic_limits"]["detected"] = []
    for c in claim["analyses"][2]["result"]["candidates"].values():
        c.update({"critical_cases": 400, "failures": 0, "rate": 0.0, "upper_bound": 0.00746, "within_limit": True,
                  "note": "None observed is not zero risk: the rate could still be as high as 0.75%."})
    return claim


def hostile_claim() -> dict[str, Any]:
    """Every string that comes from the data carries markup or template syntax."""
    s, t = HOSTILE
    claim = superiority_claim()
    claim["plan"]["title"] = f"Hostile {s} {t}"
    claim["plan"]["question"] = f"Should we ship {t}? {s}"
    cov = claim["coverage"]
    cov["candidates"][s] = cov["candidates"].pop("A")
    cov["candidates"][s]["model"] = f"vendor/{s}"
    cov["candidates"][s]["settings"] = {"system_prompt": t}
    cov["candidates"][t] = cov["candidates"].pop("B")
    cov["candidates"][t]["model"] = f"vendor/{t}"
    cov["cases"]["only"] = {s: 0, t: 0}
    cov["missing"] = {s: cov["missing"]["A"], t: cov["missing"]["B"]}
    cov["baseline"] = t
    props = claim["analyses"][0]["result"]["candidates"]
    claim["analyses"][0]["result"]["candidates"] = {s: props["A"], t: props["B"]}
    pd = claim["analyses"][1]["result"]
    pd["candidate"], pd["baseline"] = s, t
    pd["disagreements"]["candidate_only"][0] = {"case": s, "cluster": t}
    pd["disagreements"]["baseline_only"][0] = {"case": t, "cluster": s}
    pd["clusters"]["contributions"][0]["cluster"] = s
    crit = claim["analyses"][2]["result"]["candidates"]
    claim["analyses"][2]["result"]["candidates"] = {s: crit["A"], t: crit["B"]}
    claim["analyses"].append({"index": 3, "kind": "slices", "label": "slices", "params": {"kind": "slices"},
                              "result": {"slices": [{"name": "topic", "column": t, "confirmatory": True, "groups": [
                                  {"value": s, "n": 50, "candidates": {s: _prop(40, 50), t: _prop(38, 50)},
                                   "paired": {"estimate": 0.04, "low": -0.08, "high": 0.16, "method": "newcombe",
                                              "confidence_level": 0.95}},
                                  {"value": t, "n": 50, "candidates": {s: _prop(42, 50), t: _prop(40, 50)},
                                   "paired": {"estimate": 0.04, "low": -0.07, "high": 0.15, "method": "newcombe",
                                              "confidence_level": 0.95}}]}]}})
    claim["decision"]["primary"].update({"candidate": s, "baseline": t})
    claim["decision"]["headline"] = f"Inconclusive for {s} against {t}."
    claim["decision"]["reasons"].append(f"Reason mentioning {s} and {t}.")
    claim["deviations"].append({"code": s, "message": t})
    claim["systematic_limits"]["stated"].append(f"Limit {s} {t}")
    claim["plan"]["source"] = f"title: {s}\nquestion: {t}\n"
    claim["software"][s] = t
    claim["plan"]["id"] = "hostile"
    return claim


def single_candidate_claim() -> dict[str, Any]:
    """One candidate, repeats, every optional section (run variation, slices, clustered mean, Bayes, T_bg)."""
    claim = superiority_claim()
    cov = claim["coverage"]
    m = cov["candidates"].pop("A")
    cov["candidates"].pop("B")
    m.update({"model": "local/model-m", "declared_version": "2026-05-01", "versions_seen": {"2026-05-01": 900, "2026-05-09": 100},
              "settings": {"temperature": 0.7, "top_p": 0.95}, "rows": 1000, "cases": 200})
    cov.update({"candidates": {"M": m}, "baseline": None, "cases": {"paired": 0, "only": {"M": 200}},
                "clusters": 100, "cluster_column": "question_id",
                "repeats": {"planned": 5, "observed_min": 5, "observed_max": 6},
                "attempt_rule": {"rule": "mean", "k": None, "question": "What fraction of repeated attempts pass, on average per case?"},
                "interval": {"method": "wilson", "confidence_level": 0.95},
                "missing": {"M": {"missing": 12, "attempts": 1000, "fraction": 0.012, "policy": "exclude"}}})
    claim["plan"].update({"id": "rephrasing-robustness", "title": "Run-to-run variation on exact vs rephrased questions",
                          "question": "Is the model's accuracy stable across repeats and robust to rephrasing the question?",
                          "decision_owner": "evaluation research lead"})
    claim["analyses"] = [
        {"index": 0, "kind": "proportion", "label": "proportion", "params": {"kind": "proportion"},
         "result": {"candidates": {"M": _prop(143.4, 200)}}},
        {"index": 1, "kind": "run_variation", "label": "run_variation", "params": {"kind": "run_variation"},
         "result": {"candidates": {"M": {"cases": 200, "repeats": 5, "agreement": 0.81, "within_case_variance": 0.0912,
                                         "between_case_variance": 0.1107, "se": 0.0251,
                                         "se_by_repeats": [{"repeats": r, "se": 0.0251 * math.sqrt((1 + 0.82 / r) / (1 + 0.82 / 5))}
                                                           for r in (1, 2, 5, 10, 20)]}}}},
        {"index": 2, "kind": "slices", "label": "slices", "params": {"kind": "slices"},
         "result": {"slices": [
             {"name": "variant", "column": "variant", "confirmatory": True, "groups": [
                 {"value": "exact", "n": 100, "candidates": {"M": _prop(76.2, 100)}, "paired": None},
                 {"value": "rephrased", "n": 100, "candidates": {"M": _prop(67.2, 100)}, "paired": None}]},
             {"name": "subject", "column": "subject", "confirmatory": False, "groups": [
                 {"value": "history", "n": 120, "candidates": {"M": _prop(88.0, 120)}, "paired": None},
                 {"value": "physics", "n": 80, "candidates": {"M": _prop(55.4, 80)}, "paired": None}]}]}},
        {"index": 3, "kind": "clustered_mean", "label": "clustered_mean", "params": {"kind": "clustered_mean", "correction": "CR1"},
         "result": {"candidates": {"M": {"estimate": 0.717, "se": 0.0262, "df": 99, "low": 0.665, "high": 0.769, "n": 200,
                                         "n_clusters": 100, "correction": "CR1", "confidence_level": 0.95}}}},
        {"index": 4, "kind": "bayesian_profile", "label": "bayesian_profile", "params": {"kind": "bayesian_profile"},
         "result": {"candidates": {"M": {"mu": 0.72, "kappa": 14.2, "gamma_bar": 0.066, "r_hat_max": 1.003}}}},
        {"index": 5, "kind": "noise_floor", "label": "noise_floor", "params": {"kind": "noise_floor"},
         "result": {"T_bg": 0.31, "low": 0.22, "high": 0.44, "method": "profile likelihood", "confidence_level": 0.95}},
    ]
    claim["seeds"] = {"used": [], "declared_unused": []}
    claim["decision"] = {"goal": "superiority", "verdict": "no_comparison",
                         "headline": "No comparison was planned: this report characterises one model; it does not recommend a change.",
                         "reasons": ["The plan names one candidate and no paired comparison."],
                         "thresholds": {"minimum_improvement": 0.0, "margin": None, "confidence_level": 0.95,
                                        "critical_failures": None, "minimum_units": 10},
                         "primary": None, "what_would_change": [], "escalation": []}
    claim["deviations"] = [{"code": "more_repeats", "message": "3 cases have 6 repeats (5 planned); the first 5 were used."}]
    claim["systematic_limits"] = {"stated": ["One model at one temperature; other settings may vary differently."],
                                  "detected": [{"code": "version_change", "message": "M: two model versions served (2026-05-01: 900 rows, 2026-05-09: 100 rows)."}]}
    claim["command"] = ["evalspec", "run", "examples/repeated-trials/plan.yaml"]
    return claim


def real_claim_file(folder: Path, example: str) -> Path:
    """Run ``examples/<example>`` in a copy under ``folder`` and return its claim.json (a real claim)."""
    import os
    import shutil

    from evalspec.claim import dumps
    from evalspec.run import run_plan

    root = Path(__file__).resolve().parents[2] / "examples" / example
    work = folder / example
    shutil.copytree(root, work, ignore=shutil.ignore_patterns("out", ".evalspec", "*.lock", "plan.lock.json"))
    old = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = "1796299200"
    try:
        claim = run_plan(work / "plan.yaml")
    finally:
        if old is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = old
    path = work / "claim.json"
    path.write_text(dumps(claim), encoding="utf-8")
    return path


def load_fixture(name: str) -> dict[str, Any]:
    """A fresh copy of ``fixtures/<name>.json``."""
    return copy.deepcopy(json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8")))


_BUILDERS = {"superiority": superiority_claim, "long_cases": long_claim, "hostile": hostile_claim,
             "single_candidate": single_candidate_claim}

if __name__ == "__main__":
    FIXTURES.mkdir(exist_ok=True)
    for name, build in _BUILDERS.items():
        (FIXTURES / f"{name}.json").write_text(dump_claim(build()), encoding="utf-8")
        print("wrote", FIXTURES / f"{name}.json")
