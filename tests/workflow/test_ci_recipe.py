"""The CI recipe: action.yml against the published action metadata schema, and its shell part end to end.

The schema fixture restates SchemaStore's github-action.json (see its ``$comment``); the same
action.yml was also checked against the published file itself (SchemaStore commit 3b6446ad of
2026-08-07) when it was written: no error.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workflow_helpers import ROOT, table_study  # noqa: E402

ACTION = ROOT / "action.yml"
SCRIPT = ROOT / "ci" / "evalspec-ci.sh"


def _action() -> dict:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))


def test_action_yml_is_valid_action_metadata() -> None:
    import jsonschema

    schema = json.loads((Path(__file__).parent / "fixtures" / "github-action.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(schema).validate(_action())


def test_every_expression_names_a_declared_input_or_step() -> None:
    action = _action()
    text = ACTION.read_text(encoding="utf-8")
    inputs = set(re.findall(r"inputs\.([\w-]+)", text))
    assert inputs <= set(action["inputs"]), inputs - set(action["inputs"])
    ids = {s.get("id") for s in action["runs"]["steps"]}
    assert set(re.findall(r"steps\.([\w-]+)\.outputs", text)) <= ids
    written = set(re.findall(r'echo "(\w+)=', SCRIPT.read_text(encoding="utf-8"))) | {"gate", "audit", "rc"}
    assert set(re.findall(r"steps\.evalspec\.outputs\.(\w+)", text)) <= written


def _bash() -> str:
    bash = shutil.which("bash")
    if bash is None or not (Path(sys.executable).parent / "evalspec").exists():
        pytest.skip("needs bash and the evalspec command beside this Python")
    return bash


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "EVALSPEC_", "CI_"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", MPLBACKEND="Agg",
               SOURCE_DATE_EPOCH="1796126400", GITHUB_STEP_SUMMARY=str(tmp / "step-summary.md"),
               GITHUB_OUTPUT=str(tmp / "github-output.txt"), GITHUB_RUN_ID="42", GITHUB_RUN_ATTEMPT="1",
               GITHUB_ACTION_PATH=str(ROOT), PYTHONPATH=str(ROOT))
    env.update(extra)
    return env


def outputs_of(tmp: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in (tmp / "github-output.txt").read_text().splitlines())


def _action_step(bash: str, study: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run the action's own shell step (``id: evalspec``) as GitHub would, its inputs filled in."""
    step = next(s for s in _action()["runs"]["steps"] if s.get("id") == "evalspec")
    inputs = {"plan": "plan.yaml", "accept": "", "out": "", "report": "html"}
    for key, value in step["env"].items():
        env[key] = re.sub(r"\$\{\{ inputs\.([\w-]+) \}\}", lambda m: inputs[m.group(1)], value)
    return subprocess.run([bash, "-e", "-c", step["run"]], cwd=study, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_actions_shell_step_runs_the_recipe_end_to_end(tmp_path: Path) -> None:
    bash = _bash()
    study = tmp_path / "study"
    table_study(study, run=False)
    env = _env(tmp_path)
    done = _action_step(bash, study, env)
    assert done.returncode == 0, done.stdout + done.stderr  # the step itself succeeds; a later step fails the job
    outputs = outputs_of(tmp_path)
    assert outputs["gate"] == "0" and outputs["audit"] == "0" and outputs["rc"] == "0", outputs
    out = study / outputs["out"]
    assert outputs["out"] == "./out/ci-42-1"
    assert sorted(p.name for p in out.iterdir()) == ["audit.txt", "claim.json", "gate.junit.xml", "report.html",
                                                      "summary.md"]
    assert ET.parse(out / "gate.junit.xml").getroot().get("failures") == "0"
    summary = (tmp_path / "step-summary.md").read_text(encoding="utf-8")
    assert "**Verdict: Worth acting on**" in summary  # appended by `evalspec run`
    assert "gate passed: verdict worth_acting_on is acceptable" in done.stdout
    assert (study / ".evalspec" / "ledger.jsonl").is_file()


def test_the_recipe_fails_on_a_verdict_not_acceptable_and_keeps_everything(tmp_path: Path) -> None:
    bash = _bash()
    study = tmp_path / "study"
    table_study(study, run=False, p_a=0.6, p_b=0.6)
    done = subprocess.run([bash, str(SCRIPT)], cwd=study, env=_env(tmp_path, EVALSPEC_PLAN="plan.yaml",
                                                                  EVALSPEC_REPORT="none"),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "gate failed: verdict" in done.stderr and "is not acceptable" in done.stderr
    out = study / "out" / "ci-42-1"
    assert (out / "claim.json").is_file() and (out / "summary.md").is_file()
    root = ET.parse(out / "gate.junit.xml").getroot()
    assert root.get("failures") == "1"
    assert outputs_of(tmp_path)["out"] == "./out/ci-42-1"  # one folder per run and attempt: nothing replaced


def test_an_unlocked_plan_stops_the_recipe_before_anything_is_written(tmp_path: Path) -> None:
    bash = _bash()
    study = tmp_path / "study"
    table_study(study, run=False)
    (study / "plan.yaml.lock.json").unlink()
    done = subprocess.run([bash, str(SCRIPT)], cwd=study, env=_env(tmp_path, EVALSPEC_PLAN="plan.yaml"),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "not locked" in done.stderr
    assert not (study / "out").exists() and not (study / ".evalspec").exists()
