"""``evalspec gate CLAIM``: 0 acceptable verdict and sound process, 1 not, 2 bad input; one line why."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import get_args

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workflow_helpers import cli, table_study  # noqa: E402


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return table_study(tmp_path_factory.mktemp("good"))


@pytest.fixture(scope="module")
def flat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return table_study(tmp_path_factory.mktemp("flat"), p_a=0.6, p_b=0.6)


def _verdict(claim: Path) -> str:
    return str(json.loads(claim.read_text(encoding="utf-8"))["decision"]["verdict"])


def test_an_acceptable_verdict_with_a_sound_process_passes_in_one_line(good: Path) -> None:
    assert _verdict(good) == "worth_acting_on"
    done = cli(good.parents[1], "gate", "out/claim.json")
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("out/claim.json: gate passed: verdict worth_acting_on is acceptable (the plan's "
                                  "decision.acceptable: worth_acting_on); process checks pass"), done.stdout
    assert len(done.stdout.splitlines()) == 1  # warnings (here: no git repository) are counted, not listed
    assert done.stderr == ""
    quiet = cli(good.parents[1], "gate", "out/claim.json", "-q")
    assert quiet.exit_code == 0 and quiet.stdout == "" and quiet.stderr == ""


def test_a_verdict_the_plan_does_not_accept_fails(flat: Path) -> None:
    verdict = _verdict(flat)
    assert verdict != "worth_acting_on"
    done = cli(flat.parents[1], "gate", "out/claim.json")
    assert done.exit_code == 1 and done.stdout == ""
    assert done.stderr == (f"out/claim.json: gate failed: verdict {verdict} is not acceptable (the plan's "
                           "decision.acceptable: worth_acting_on)\n")
    # --accept replaces the plan's list
    ok = cli(flat.parents[1], "gate", "out/claim.json", "--accept", f"worth_acting_on,{verdict}")
    assert ok.exit_code == 0 and f"verdict {verdict} is acceptable (--accept: worth_acting_on, {verdict})" in ok.stdout


def test_a_failed_process_check_fails_an_acceptable_verdict(tmp_path: Path) -> None:
    claim = table_study(tmp_path)
    plan = tmp_path / "plan.yaml"
    plan.write_text(plan.read_text(encoding="utf-8").replace("minimum_improvement: 0.05", "minimum_improvement: 0.01"),
                    encoding="utf-8")  # the plan changed after the claim
    done = cli(tmp_path, "gate", "out/claim.json")
    assert done.exit_code == 1
    assert "gate failed: 1 process check(s) failed: Plan unchanged since the claim (run `evalspec audit " \
           "out/claim.json` for the evidence)" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert claim.is_file()


def test_json_for_machines(good: Path, flat: Path) -> None:
    done = cli(good.parents[1], "gate", "out/claim.json", "--json")
    data = json.loads(done.stdout)
    assert done.exit_code == 0 and data["passed"] is True and data["verdict"] == "worth_acting_on"
    assert data["acceptable_from"] == "plan" and data["failed_checks"] == []
    bad = cli(flat.parents[1], "gate", "out/claim.json", "--json")
    assert bad.exit_code == 1 and json.loads(bad.stdout)["passed"] is False


def test_junit_xml_parses_and_counts_the_failures(flat: Path, tmp_path: Path) -> None:
    target = tmp_path / "gate.xml"
    done = cli(flat.parents[1], "gate", "out/claim.json", "--junit", str(target))
    assert done.exit_code == 1
    root = ET.parse(target).getroot()
    assert root.tag == "testsuites" and root.get("failures") == "1"
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "evalspec gate: table-study"
    cases = suite.findall("testcase")
    assert int(suite.get("tests") or 0) == len(cases) > 5
    failed = [c for c in cases if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == [f"verdict: verdict {_verdict(flat)}"]


@pytest.mark.parametrize(("args", "message"), [
    (["gate", "nothere.json"], "nothere.json"),
    (["gate", "out/claim.json", "--accept", "worth_acting"], "did you mean 'worth_acting_on'?"),
    (["gate", "out/claim.json", "--accept", ","], "--accept: name at least one verdict"),
])
def test_bad_input_is_exit_2(good: Path, args: list[str], message: str) -> None:
    done = cli(good.parents[1], *args)
    assert done.exit_code == 2 and message in done.output, done.output


def test_no_acceptable_list_anywhere_is_exit_2(tmp_path: Path) -> None:
    from workflow_helpers import table_plan

    table_study(tmp_path, plan=table_plan().replace(", acceptable: [worth_acting_on]", ""))
    done = cli(tmp_path, "gate", "out/claim.json")
    assert done.exit_code == 2 and "the plan names no acceptable verdicts" in done.stderr


def test_a_corrupt_claim_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "claim.json").write_text("{not json", encoding="utf-8")
    done = cli(tmp_path, "gate", "claim.json")
    assert done.exit_code == 2 and "Traceback" not in done.output


def test_the_plans_verdict_codes_are_the_decisions() -> None:
    from evalspec.decision import VERDICTS
    from evalspec.plan.model import AcceptableVerdict

    assert list(get_args(AcceptableVerdict)) == list(VERDICTS)
