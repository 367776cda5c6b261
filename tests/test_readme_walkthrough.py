"""The README's "Your own logs, step by step" runs as written and says what it prints."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    inside = text.split("<!-- walkthrough:begin -->", 1)[1].split("<!-- walkthrough:end -->", 1)[0]
    return inside.split("```bash\n", 1)[1].rsplit("```", 1)[0]


def test_the_walkthrough_runs_as_written(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    scripts = Path(sys.executable).parent
    if bash is None or not (scripts / "evalspec").exists():
        pytest.skip("needs bash and the evalspec command beside this Python")
    fixtures = tmp_path / "tests" / "results" / "fixtures" / "inspect_ai"
    fixtures.mkdir(parents=True)
    for name in ("coinflip-strong_p0.9.eval", "coinflip-weak_p0.6.eval"):
        shutil.copyfile(ROOT / "tests" / "results" / "fixtures" / "inspect_ai" / name, fixtures / name)
    env = {**os.environ, "PATH": f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}",
           "SOURCE_DATE_EPOCH": "1796126400", "MPLBACKEND": "Agg"}
    env.pop("EVALSPEC_NO_REPORT", None)
    done = subprocess.run([bash, "-e", "-c", _block()], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    out = done.stdout + done.stderr
    # every step up to the audit succeeded (bash -e), and the audit found what the README says it finds
    assert done.returncode == 1, out
    assert "my-study/plan.yaml: valid (strong-vs-weak" in out and ": warning:" not in out, out
    assert "verdict: too_few_units - Too few independent clusters (doc_id) (4 < 10) to reach a verdict." in out
    assert re.search(r"FAIL  (\[\w+\] +)?Plan fixed before the first result", out), out  # with or without its basis
    assert "1 audit check(s) failed: locked_before_results" in out
    for name in ("rows.csv", "plan.yaml.lock.json", "out/claim.json", "out/report.html"):
        assert (tmp_path / "my-study" / name).is_file(), name
