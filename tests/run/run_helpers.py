"""Helpers of the run tests: a small base plan, a runner that works in a temporary folder.

A module with its own name (not ``conftest``) so that test files import it unambiguously.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
ROOT = HERE.parents[1]
EXAMPLES = ROOT / "examples"

BASE_PLAN = """\
evalspec: 1
id: fixture
title: Fixture plan
question: Should we move from B to A?
decision_owner: test owner
population: four invented cases
data:
  results: {results}
  columns: {{candidate: candidate, repeat: repeat, outcome: passed, model_version: model_version, timestamp: ts}}
candidates:
  A: {{model: m-a, version: {version_a}}}
  B: {{model: m-b, version: v1}}
baseline: B
units: {{case: case_id, cluster: doc}}
attempts: {{repeats: 2, rule: {rule}}}
missing: {{policy: {policy}, max_fraction: 0.3}}
analyses:
  - {{kind: proportion}}
  - {{kind: paired_difference, method: newcombe}}
decision: {{minimum_units: 1}}
systematic_limits: [Four invented cases.]
record: [model_version]
"""


def plan_text(results: str = "results.jsonl", *, rule: str = "first", policy: str = "count_as_fail",
              version_a: str = "v1") -> str:
    """The base plan with its variable parts filled in."""
    return BASE_PLAN.format(results=results, rule=rule, policy=policy, version_a=version_a)


class Workspace:
    """A temporary folder holding plan.yaml and one results file; runs the CLI there."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def setup(self, fixture: Path, plan: str | None = None) -> Path:
        target = self.path / ("results" + fixture.suffix)
        shutil.copyfile(fixture, target)
        text = plan if plan is not None else plan_text(target.name)
        (self.path / "plan.yaml").write_text(text, encoding="utf-8")
        return target

    def cli(self, *args: str, env: dict[str, str] | None = None) -> Any:
        from click.testing import CliRunner

        from evalspec.cli import cli

        old = os.getcwd()
        os.chdir(self.path)
        try:
            return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
        finally:
            os.chdir(old)


if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
