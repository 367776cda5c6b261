"""The README's "Your team's workflow" runs as written and prints what the README says it prints."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    inside = text.split("<!-- team-workflow:begin -->", 1)[1].split("<!-- team-workflow:end -->", 1)[0]
    return inside.split("```bash\n", 1)[1].rsplit("```", 1)[0]


def test_the_team_workflow_runs_as_written(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    scripts = Path(sys.executable).parent
    if bash is None or not (scripts / "evalspec").exists():
        pytest.skip("needs bash and the evalspec command beside this Python")
    fixtures = tmp_path / "tests" / "results" / "fixtures" / "inspect_ai"
    fixtures.mkdir(parents=True)
    for name in ("coinflip-strong_p0.9.eval", "coinflip-weak_p0.6.eval"):
        shutil.copyfile(ROOT / "tests" / "results" / "fixtures" / "inspect_ai" / name, fixtures / name)
    shutil.copytree(ROOT / "ci", tmp_path / "ci")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "EVALSPEC_", "CI_"))}
    env.update(PATH=f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}", SOURCE_DATE_EPOCH="1796126400",
               MPLBACKEND="Agg")
    done = subprocess.run([bash, "-e", "-c", _block()], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=400)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out  # every step ran (bash -e); the failing gates are caught as written
    # 1. the pilot
    assert "team/2026-W48.yaml: --data team/pilot: read as the plan says (60 rows, candidates strong, weak, " \
           "10 cases, 3 repeat(s) per case); nothing computed, no look recorded" in out
    assert "data.columns does not name it" in out  # the run-time warning the README explains
    # 2. the lock: no results yet
    lock = json.loads((tmp_path / "team" / "2026-W48.yaml.lock.json").read_text(encoding="utf-8"))
    assert lock["existing_data"]["state"] == "prior_to_creation"
    # 4. CI: the gate's one line, and what the run's folder holds
    assert "team/out/ci-w48/claim.json: gate failed: verdict too_few_units is not acceptable (the plan's " \
           "decision.acceptable: worth_acting_on)\n" in out
    assert out.count("CI: exit 1") == 2
    w48 = tmp_path / "team" / "out" / "ci-w48"
    assert sorted(p.name for p in w48.iterdir()) == ["audit.txt", "claim.json", "gate.junit.xml", "report.html",
                                                      "summary.md"]
    # 5. next week, on the same logs: caught
    assert "1 process check(s) failed: Each period's data analysed once" in out
    # 6. the history
    rows = [line for line in done.stdout.splitlines() if line.startswith("team/out/ci-w4")]
    assert [r.split()[4] for r in rows] == ["2026-W48", "2026-W49"], done.stdout
    assert rows[1].split()[-1] == "period_data_fresh"
    assert "history: exit 1" in out
