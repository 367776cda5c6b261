"""Recurring evaluations: one plan file per period, each locked before its data; a new period is a
fresh look, and re-analysing an earlier period's data is still caught."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workflow_helpers import LOCK_EPOCH, cli, table_plan, write_table  # noqa: E402


def _period(folder: Path, week: str, results: str | None = None, seed: int = 1) -> Path:
    """Lock the plan of ``week`` (before its data), write its data (unless it reads another week's), run it."""
    plan = folder / f"{week}.yaml"
    plan.write_text(table_plan(results or f"results/{week}.jsonl", id="weekly-regression", period=week),
                    encoding="utf-8")
    assert cli(folder, "lock", plan.name, env={"SOURCE_DATE_EPOCH": LOCK_EPOCH}).exit_code == 0
    if results is None:
        write_table(folder / "results" / f"{week}.jsonl", seed=seed, p_a=0.95, p_b=0.4, prefix=f"{week}-")
    done = cli(folder, "run", plan.name, "--no-report", "--out", f"claims/{week}")
    assert done.exit_code == 0, done.output
    return folder / "claims" / week / "claim.json"


def _checks(folder: Path, claim: Path) -> dict[str, dict]:
    done = cli(folder, "audit", str(claim.relative_to(folder)), "--json", "--no-reproduce")
    return {c["id"]: c for c in json.loads(done.stdout)["checks"]}


@pytest.fixture(scope="module")
def weeks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    folder = tmp_path_factory.mktemp("weekly")
    return folder, [_period(folder, w, seed=i) for i, w in enumerate(("2026-W48", "2026-W49"), start=1)]


def test_each_period_is_a_fresh_clean_look(weeks: tuple[Path, list[Path]]) -> None:
    folder, claims = weeks
    for claim in claims:
        checks = _checks(folder, claim)
        assert checks["looks_within_plan"]["status"] == "pass", checks["looks_within_plan"]
        assert checks["looks_within_plan"]["sentence"] == "1 look(s) at the data, within the planned 1."
        assert checks["period_data_fresh"]["status"] == "pass"
        assert not [c for c in checks.values() if c["status"] == "fail"], checks
    entries = [json.loads(line) for line in (folder / ".evalspec" / "ledger.jsonl").read_text().splitlines()]
    assert [e.get("period") for e in entries] == ["2026-W48", "2026-W49"]


def test_reanalysing_an_earlier_periods_data_is_caught(weeks: tuple[Path, list[Path]]) -> None:
    folder, _ = weeks
    claim = _period(folder, "2026-W50", results="results/2026-W48.jsonl")
    check = _checks(folder, claim)["period_data_fresh"]
    assert check["status"] == "fail"
    assert "analyses results already analysed for another period of weekly-regression" in check["sentence"]
    assert any("analysed for period 2026-W48 at ledger entry 1" in e for e in check["evidence"])
    record = json.loads(claim.read_text(encoding="utf-8"))["process"]
    assert record["status"] == "departed" and "results of an earlier period analysed again" in record["line"]
    assert cli(folder, "gate", str(claim.relative_to(folder))).exit_code == 1


def test_looking_twice_within_one_period_is_still_a_second_look(tmp_path: Path) -> None:
    claim = _period(tmp_path, "2026-W51")
    write_table(tmp_path / "results" / "2026-W51.jsonl", seed=9, p_a=0.95, p_b=0.4, n=70, prefix="2026-W51-")
    assert cli(tmp_path, "run", "2026-W51.yaml", "--no-report", "--out", "claims/2026-W51b").exit_code == 0
    check = _checks(tmp_path, tmp_path / "claims" / "2026-W51b" / "claim.json")["looks_within_plan"]
    assert check["status"] == "fail" and "looked at 2 times" in check["sentence"]
    assert claim.is_file()
