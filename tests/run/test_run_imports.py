"""``evalspec run --no-report`` imports no library its analyses do not need (checked in a subprocess).

Timing is measured, not asserted (``benchmarks/bench_read.py --phases``); this pins the structure
that keeps a run's fixed cost down: the report's libraries (jinja2, matplotlib, weasyprint), the
Bayesian and model stacks (pymc, arviz, pytensor, torch, transformers), statsmodels, pandas and
``scipy.stats`` load only in the commands and analyses that use them. ``scipy.special`` is the one
scipy module every interval needs; ``scipy.optimize`` only the Beta-Binomial profile
(``repeated-trials``). And the plan model, which imports every analysis kind for its parameters,
builds none of their result models (``defer_build``: a run builds those of the kinds it runs).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NEVER = ["jinja2", "matplotlib", "weasyprint", "pymc", "arviz", "pytensor", "torch", "transformers", "statsmodels",
         "pandas", "scipy.stats"]
ONLY_WHERE_NEEDED = {"scipy.optimize": {"repeated-trials"}}

_PROBE = """
import json, sys
from evalspec.cli import main
try:
    main(["run", "plan.yaml", "--no-report", "--out", "out"])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "loaded": sorted(m for m in %r if m in sys.modules)}))
"""


def _examples() -> list[str]:
    return sorted(p.parent.name for p in (ROOT / "examples").glob("*/plan.yaml"))


@pytest.mark.parametrize("example", _examples())
def test_run_no_report_imports_only_what_its_analyses_need(example: str, tmp_path: Path) -> None:
    folder = tmp_path / example
    shutil.copytree(ROOT / "examples" / example, folder,
                    ignore=shutil.ignore_patterns("out", ".evalspec", "*.lock.json"))
    watched = NEVER + sorted(ONLY_WHERE_NEEDED)
    proc = subprocess.run([sys.executable, "-c", _PROBE % (watched,)], cwd=folder, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["code"] in (0, None), proc.stderr[-2000:]
    expected = sorted(m for m, where in ONLY_WHERE_NEEDED.items() if example in where)
    assert out["loaded"] == expected, f"{example}: imported {out['loaded']}, expected {expected}"
    assert (folder / "out" / "claim.json").is_file()
    assert not (folder / "out" / "report.html").exists()



def test_the_plan_model_builds_no_result_model() -> None:
    """The plan model imports every kind for its parameters; a kind's result validator is built when first used."""
    probe = ("import json, evalspec.plan.model\n"
             "from evalspec.analyses.registry import kinds\n"
             "print(json.dumps(sorted(n for n, k in kinds().items() if k.result.__pydantic_complete__)))\n")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_a_module_imported_ahead_that_fails_is_left_to_the_code_that_needs_it(capfd: pytest.CaptureFixture[str]) -> None:
    """``run_plan`` imports ``scipy.special`` in a thread while the results are read; a failed import there says
    nothing (no traceback from the thread) and leaves the module unimported, so the analysis that needs it
    imports it again and gets the error in its own words."""
    import threading

    from evalspec.run import IMPORT_AHEAD, _import_ahead

    assert IMPORT_AHEAD == ("scipy.special",)  # third-party only: the two threads' imports never wait on each other
    seen: list[Any] = []
    old, threading.excepthook = threading.excepthook, seen.append
    try:
        thread = _import_ahead(("evalspec_no_such_module_anywhere", "json"))
        thread.join(timeout=60)
    finally:
        threading.excepthook = old
    assert not thread.is_alive() and not seen
    assert "evalspec_no_such_module_anywhere" not in sys.modules and "json" in sys.modules
    assert capfd.readouterr().err == ""
