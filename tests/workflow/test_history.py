"""``evalspec audit --all DIR`` as a history: date, period, estimate, interval, verdict, audit status per
claim, changes between consecutive claims flagged, and ``--report``'s drawing over time."""

from __future__ import annotations

import json
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workflow_helpers import LOCK_EPOCH, cli, table_plan, write_table  # noqa: E402


def _week(folder: Path, week: str, *, seed: int, version: str = "v1", p_a: float = 0.95, p_b: float = 0.4) -> None:
    plan = folder / f"{week}.yaml"
    plan.write_text(table_plan(f"results/{week}.jsonl", id="weekly-regression", period=week), encoding="utf-8")
    assert cli(folder, "lock", plan.name, env={"SOURCE_DATE_EPOCH": LOCK_EPOCH}).exit_code == 0
    write_table(folder / "results" / f"{week}.jsonl", seed=seed, p_a=p_a, p_b=p_b, version=version, prefix=week)
    day = {"2026-W48": "1796212800", "2026-W49": "1796817600", "2026-W50": "1797422400", "2026-W51": "1798027200"}
    done = cli(folder, "run", plan.name, "--no-report", "--out", f"claims/{week}", env={"SOURCE_DATE_EPOCH": day[week]})
    assert done.exit_code == 0, done.output


@pytest.fixture(scope="module")
def series(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("series")
    _week(folder, "2026-W48", seed=1)
    _week(folder, "2026-W49", seed=2)
    _week(folder, "2026-W50", seed=3, version="v2")  # the provider updated both models
    _week(folder, "2026-W51", seed=4, version="v2", p_a=0.5, p_b=0.5)  # and then the gain vanished
    return folder


def test_one_row_per_claim_in_time_order_with_its_numbers(series: Path) -> None:
    done = cli(series, "audit", "--all", "claims", "--no-reproduce")
    assert done.exit_code == 0, done.output
    lines = done.stdout.strip().splitlines()
    assert lines[0].split()[:5] == ["claim", "plan", "verdict", "date", "period"] and len(lines) == 5
    assert [line.split()[4] for line in lines[1:]] == ["2026-W48", "2026-W49", "2026-W50", "2026-W51"]
    claim = json.loads((series / "claims" / "2026-W48" / "claim.json").read_text(encoding="utf-8"))
    p = claim["decision"]["primary"]
    first = lines[1].split()
    assert first[2] == "worth_acting_on" and first[3] == "2026-12-02"
    assert first[5] == f"{100 * p['estimate']:+.1f}" and " ".join(first[6:9]) == \
        f"{100 * p['low']:+.1f} to {100 * p['high']:+.1f}"


def test_a_model_update_and_a_jump_are_flagged_between_periods(series: Path) -> None:
    done = cli(series, "audit", "--all", "claims", "--no-reproduce", "--json")
    items = json.loads(done.stdout)
    flags = {item["history"]["period"]: item["history"]["flags"] for item in items}
    assert flags["2026-W48"] == [] and flags["2026-W49"] == []
    assert flags["2026-W50"] == ["model version changed since the previous claim (A: v1 -> v2; B: v1 -> v2): not one "
                                 "configuration, so the change between the two is a model update, not drift of one "
                                 "system"]
    assert flags["2026-W51"] == ["its interval does not overlap the previous claim's"]
    assert all(item["history"]["audit"]["fail"] == 0 for item in items)


class _Svg(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, Any]]] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.append((tag, dict(attrs)))


def test_the_history_report_draws_each_study_over_time(series: Path) -> None:
    done = cli(series, "audit", "--all", "claims", "--no-reproduce", "--report", "--out", "history")
    assert done.exit_code == 0, done.output
    html = (series / "history" / "history.html").read_text(encoding="utf-8")
    parser = _Svg()
    parser.feed(html)
    tags = [t for t, _ in parser.tags]
    assert "script" not in tags and tags.count("svg") == 1 and tags.count("circle") == 4
    points = [a for t, a in parser.tags if t == "g" and "data-claim" in a]
    assert [a["data-flagged"] for a in points] == ["no", "no", "yes", "yes"]
    assert "not one configuration" in html
