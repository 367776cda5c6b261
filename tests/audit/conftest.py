"""A copy of an example in a temporary folder, locked before its results, run through the CLI."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

EXAMPLES = _ROOT / "examples"


def epoch(day: str) -> str:
    """SOURCE_DATE_EPOCH of midnight UTC on ``day`` (YYYY-MM-DD)."""
    return str(int(dt.datetime.fromisoformat(day).replace(tzinfo=dt.timezone.utc).timestamp()))


LOCK_DAY = "2026-01-02"  # before every example's first result
RUN_DAY = "2026-11-20"  # on or before every example's decision date


@dataclass
class Workspace:
    root: Path

    @property
    def plan(self) -> Path:
        return self.root / "plan.yaml"

    @property
    def claim(self) -> Path:
        return self.root / "out" / "claim.json"

    @property
    def ledger(self) -> Path:
        return self.root / ".evalspec" / "ledger.jsonl"

    def cli(self, *args: str, day: str = RUN_DAY):
        from click.testing import CliRunner

        from evalspec.cli import cli

        return CliRunner().invoke(cli, list(args), env={"SOURCE_DATE_EPOCH": epoch(day), "EVALSPEC_NO_REPORT": "1"},
                                  catch_exceptions=False)

    def lock(self, day: str = LOCK_DAY, force: bool = False) -> None:
        res = self.cli("lock", str(self.plan), *(["--force"] if force else []), day=day)
        assert res.exit_code == 0, res.output

    def run(self, *extra: str, day: str = RUN_DAY) -> None:
        res = self.cli("run", str(self.plan), "--no-report", *extra, day=day)
        assert res.exit_code == 0, res.output

    def audit(self, *extra: str):
        return self.cli("audit", str(self.claim), "--json", *extra)

    def checks(self, *extra: str) -> dict[str, dict]:
        res = self.audit(*extra)
        assert res.exit_code in (0, 1), res.output
        data = json.loads(res.stdout)
        return {c["id"]: c for c in data["checks"]}

    def edit_plan(self, old: str, new: str) -> None:
        text = self.plan.read_text(encoding="utf-8")
        assert old in text, old
        self.plan.write_text(text.replace(old, new, 1), encoding="utf-8")

    def read_claim(self) -> dict:
        return json.loads(self.claim.read_text(encoding="utf-8"))

    def write_claim(self, claim: dict) -> None:
        self.claim.write_text(json.dumps(claim, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def make_workspace(tmp_path: Path, name: str = "policy-migration") -> Workspace:
    root = tmp_path / name
    shutil.copytree(EXAMPLES / name, root, ignore=shutil.ignore_patterns("out", ".evalspec", "*.lock.json"))
    return Workspace(root)


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    """policy-migration, locked before its results, run once."""
    w = make_workspace(tmp_path)
    w.lock()
    w.run()
    return w


def text_of(check: dict) -> str:
    return check["sentence"] + "\n" + "\n".join(check["evidence"])
