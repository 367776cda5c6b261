"""A temporary folder with plan.yaml and results, and the CLI run in-process or as a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
BASE_ROWS = ROOT / "tests" / "run" / "fixtures" / "ok" / "base.jsonl"
SCORE = "  outcome: {type: score, pass_threshold: 0.5}\n  columns:"


def base_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in BASE_ROWS.read_text(encoding="utf-8").splitlines()]


def plan_text(results: str = "results.jsonl", **kw: Any) -> str:
    from run_helpers import plan_text as _plan_text

    return _plan_text(results, **kw)


class Space:
    """A folder holding a plan and its results; ``cli`` runs evalspec there (in-process)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, rows: list[dict[str, Any]] | None = None, plan: str | None = None, *,
              raw: bytes | None = None, name: str = "results.jsonl") -> None:
        if raw is None:
            raw = "".join(json.dumps(r) + "\n" for r in (rows if rows is not None else base_rows())).encode("utf-8")
        (self.path / name).write_bytes(raw)
        (self.path / "plan.yaml").write_text(plan if plan is not None else plan_text(name), encoding="utf-8")

    def cli(self, *args: str) -> Any:
        from evalspec.cli import cli

        old = os.getcwd()
        os.chdir(self.path)
        try:
            result = CliRunner().invoke(cli, list(args), catch_exceptions=True)
        finally:
            os.chdir(old)
        assert "Traceback" not in result.output, result.output
        assert result.exit_code in (0, 1, 2), (result.exit_code, result.output, result.exception)
        return result

    def process(self, *args: str | bytes, timeout: float = 120, **kw: Any) -> subprocess.CompletedProcess:
        env = dict(os.environ, EVALSPEC_NO_REPORT=os.environ.get("EVALSPEC_NO_REPORT", "1"))
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        return subprocess.run([sys.executable, "-m", "evalspec", *args], cwd=self.path, capture_output=True,
                              timeout=timeout, env=env, **kw)

    def claim(self) -> dict[str, Any]:
        return json.loads((self.path / "out" / "claim.json").read_text(encoding="utf-8"))


def first_line(result: Any) -> str:
    return result.stderr.splitlines()[0] if result.stderr else ""
