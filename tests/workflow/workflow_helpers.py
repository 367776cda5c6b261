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
