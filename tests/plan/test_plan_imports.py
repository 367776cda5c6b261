"""`evalspec validate` stays light: no heavy library is imported on its path (checked in a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ["scipy", "statsmodels", "pymc", "arviz", "torch", "transformers", "weasyprint", "matplotlib", "pandas",
         "pyarrow"]

_PROBE = """
import json, sys
from evalspec.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "heavy": sorted(m for m in %r if m in sys.modules)}))
"""


def _probe(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", _PROBE % (HEAVY,), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_validate_imports_no_heavy_library() -> None:
    plans = sorted(str(p) for p in (ROOT / "examples").rglob("plan.yaml"))
    out = _probe("validate", *plans)
    assert out["code"] == 0
    assert out["heavy"] == []


def test_validate_of_an_invalid_plan_imports_no_heavy_library() -> None:
    out = _probe("validate", str(ROOT / "tests" / "cases" / "invalid_plans" / "many_problems_at_once.yaml"))
    assert out["code"] == 1
    assert out["heavy"] == []


def test_lock_schema_init_import_no_heavy_library(tmp_path: Path) -> None:
    assert _probe("schema")["heavy"] == []
    assert _probe("init", str(tmp_path / "new"))["heavy"] == []
