"""Helpers of the workflow tests: a small study in a temporary folder, the CLI run in-process."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
INSPECT = ROOT / "tests" / "results" / "fixtures" / "inspect_ai"
LOGS = ("coinflip-strong_p0.9.eval", "coinflip-weak_p0.6.eval")

#: The README walkthrough's plan (inspect_ai logs of a strong and a weak model, 10 cases, 4 documents).
STUDY_PLAN = """\
evalspec: 1
id: strong-vs-weak
title: Strong against weak model on arithmetic
question: Should we replace the weak model with the strong one?
decision_owner: evaluation lead
population: arithmetic questions drawn from four source documents (a demonstration)
data:
  results: {results}
  format: inspect
  candidate_names: {{coinflip/strong: strong, coinflip/weak: weak}}
  columns: {{model_version: model_version, timestamp: timestamp}}
candidates:
  strong: {{model: coinflip/strong}}
  weak: {{model: coinflip/weak}}
baseline: weak
units: {{case: case_id, cluster: doc_id}}
attempts: {{repeats: 3, rule: majority}}
analyses:
  - kind: proportion
  - kind: paired_difference
decision: {{goal: superiority, minimum_improvement: 0.05, minimum_units: {minimum_units}}}
stopping: {{max_units: 10, looks: 1}}
systematic_limits:
  - Ten synthetic questions; nothing here speaks for real traffic.
"""


def study_plan(results: str = "logs/", minimum_units: int = 10) -> str:
    return STUDY_PLAN.format(results=results, minimum_units=minimum_units)


def copy_logs(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name in LOGS:
        shutil.copyfile(INSPECT / name, folder / name)
        out.append(folder / name)
    return out


def cli(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    """Run ``evalspec ARGS`` in ``cwd`` in-process; the result has ``exit_code``, ``stdout``, ``stderr``."""
    from click.testing import CliRunner

    from evalspec.cli import cli as group

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(group, list(args), env={"SOURCE_DATE_EPOCH": "1796126400", **(env or {})},
                                  catch_exceptions=False)
    finally:
        os.chdir(old)


def files_below(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


#: A table study: two candidates on independent cases, a clear decision rule, acceptable verdicts listed.
TABLE_PLAN = """\
evalspec: 1
id: {id}
{period}title: A against B
question: Should we move from B to A?
decision_owner: test owner
population: invented cases
data:
  results: {results}
  columns: {{repeat: null, timestamp: ts, model_version: model_version}}
candidates:
  A: {{model: m-a}}
  B: {{model: m-b}}
baseline: B
units: {{case: case_id}}
analyses:
  - {{kind: proportion}}
  - {{kind: paired_difference, method: newcombe}}
decision: {{goal: superiority, minimum_improvement: 0.05, acceptable: [worth_acting_on]}}
stopping: {{looks: 1, max_units: 500, decision_date: "2027-06-30"}}
systematic_limits: [Invented cases.]
"""


def table_plan(results: str = "results.jsonl", *, id: str = "table-study", period: str | None = None) -> str:
    return TABLE_PLAN.format(results=results, id=id, period=f"period: {period}\n" if period else "")


def write_table(path: Path, *, seed: int, p_a: float, p_b: float, n: int = 60, start: str = "2026-12-02T10:00:00Z",
                version: str = "v1", prefix: str = "q") -> None:
    """Invented per-case results: candidate A passes with probability ``p_a``, B with ``p_b``."""
    import json
    import random

    rng = random.Random(seed)
    rows = [{"candidate": c, "case_id": f"{prefix}{i:03d}", "outcome": rng.random() < p, "ts": start,
             "model_version": version} for i in range(n) for c, p in (("A", p_a), ("B", p_b))]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


LOCK_EPOCH = "1796040000"  # 2026-11-30T12:00:00Z: the lock precedes the invented results (2026-12-02)


def table_study(folder: Path, *, seed: int = 1, p_a: float = 0.95, p_b: float = 0.4, run: bool = True,
                plan: str | None = None) -> Path:
    """Plan, lock (before the results), results and (``run``) a claim in ``folder``; returns the claim's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plan.yaml").write_text(plan or table_plan(), encoding="utf-8")
    done = cli(folder, "lock", "plan.yaml", env={"SOURCE_DATE_EPOCH": LOCK_EPOCH})
    assert done.exit_code == 0, done.output
    write_table(folder / "results.jsonl", seed=seed, p_a=p_a, p_b=p_b)
    if run:
        done = cli(folder, "run", "plan.yaml", "--no-report")
        assert done.exit_code == 0, done.output
    return folder / "out" / "claim.json"
