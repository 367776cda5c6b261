"""A small invented study written both ways: attempt rows, and the case table evalspec reduces them to.

Shared by the case-table tests and the ``reduce-sql`` tests: :func:`write_study` writes the
attempt rows (``raw.parquet``), the plan reading them (``plan.yaml``) and the same plan reading
a case table instead (``plan_ct.yaml``, ``data.format: case_table``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

#: Claim parts that must differ between the two runs: the plan's data block names another file and
#: format (so its text, hash and validated copy differ), the data fingerprint names other files,
#: and the command names the other plan. Everything else is byte-identical.
DIFFERING = ("plan", "data", "command")


def study_rows(seed: int = 1, n_cases: int = 60) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_cases):
        for cand, p in (("A", 0.7), ("B", 0.6)):
            for r in range(1, 5 + (c == 3)):  # case c003 has a fifth (extra) attempt
                out = bool(rng.random() < p)
                rows.append({"model": cand, "case_id": f"c{c:03d}", "attempt": r,
                             "passed": None if rng.random() < 0.03 else out, "doc": f"d{c // 4}",
                             "lang": "en" if c % 3 else "de", "crit": c % 10 == 0,
                             "ts": f"2026-10-{1 + c % 20:02d}T10:00:0{r}Z", "ver": "v1"})
    return rows


def plan_text(rule: str = "first", policy: str = "count_as_fail", *, analyses: str | None = None) -> str:
    k = "\n  k: 2" if rule in ("best_of_k", "pass_at_k", "pass_hat_k") else ""
    analyses = analyses or """  - {kind: proportion}
  - {kind: paired_difference, compare: [A, B], method: cluster_bootstrap, resamples: 500, seed: 3}
  - {kind: critical_failures}
  - {kind: slices}"""
    return f"""evalspec: 1
id: case-table-study
title: An invented study read as attempt rows and as a case table
question: Is A better than B?
decision_owner: the study's owner
population: invented cases
data:
  results: raw.parquet
  columns: {{candidate: model, repeat: attempt, outcome: passed, timestamp: ts, critical: crit, model_version: ver}}
candidates:
  A: {{model: m/a, version: v1}}
  B: {{model: m/b, version: v1}}
baseline: B
units: {{case: case_id, cluster: doc}}
attempts:
  repeats: 4
  rule: {rule}{k}
missing: {{policy: {policy}, max_fraction: 0.1}}
analyses:
{analyses}
slices: [{{name: language, column: lang}}]
decision: {{minimum_improvement: 0.02}}
"""


def as_case_table_plan(text: str, results: str = "cases.parquet") -> str:
    return text.replace("results: raw.parquet", f"results: {results}\n  format: case_table")


def write_study(folder: Path, rule: str = "first", policy: str = "count_as_fail", *, rows: list[dict] | None = None,
                analyses: str | None = None) -> Path:
    """Write raw.parquet, plan.yaml and plan_ct.yaml into ``folder``; return it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows if rows is not None else study_rows()), folder / "raw.parquet")
    text = plan_text(rule, policy, analyses=analyses)
    (folder / "plan.yaml").write_text(text)
    (folder / "plan_ct.yaml").write_text(as_case_table_plan(text))
    return folder


def reference_case_table(folder: Path) -> Any:
    """The case table evalspec computes itself from ``raw.parquet`` (:func:`evalspec.results.case_reduce.reduce_rows`)."""
    from evalspec.results import read_all
    from evalspec.results.case_reduce import reduce_rows
    from evalspec.results.table import build_table
    from evalspec.run import load_plan_for_run

    plan = load_plan_for_run(folder / "plan.yaml").plan
    return reduce_rows(build_table(read_all(plan, folder / "plan.yaml"), plan), plan)


def claim_bytes(plan_path: Path) -> dict[str, str]:
    """The claim of ``plan_path`` as canonical bytes per top-level part."""
    from evalspec.claim import dumps
    from evalspec.run import run_plan

    claim = run_plan(plan_path, command=["evalspec", "run"])
    return {key: dumps(value) for key, value in claim.items()}


def assert_same_claims(folder: Path, case_plan: str = "plan_ct.yaml") -> None:
    a, b = claim_bytes(folder / "plan.yaml"), claim_bytes(folder / case_plan)
    assert set(a) == set(b)
    differ = sorted(k for k in a if a[k] != b[k])
    assert set(differ) <= set(DIFFERING), (differ, {k: (a[k][:600], b[k][:600]) for k in differ if k not in DIFFERING})
