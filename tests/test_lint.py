"""ruff and mypy, configured in pyproject.toml ([tool.ruff], [tool.mypy]), pass on the code.

Both are in the ``test`` extra; where one is not installed the test skips, except under
``EVALSPEC_REQUIRE_TOOLS=1`` (CI), where it fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Out of the default run (about 15 s of mypy each time); CI and `pytest -m "slow or lint"` run it.
pytestmark = pytest.mark.lint


def _tool(name: str) -> list[str]:
    beside = Path(sys.executable).with_name(name)
    exe = str(beside) if beside.exists() else shutil.which(name)
    if exe is None:
        if os.environ.get("EVALSPEC_REQUIRE_TOOLS") == "1":
            pytest.fail(f"{name} is not installed (pip install -e '.[test]'); EVALSPEC_REQUIRE_TOOLS=1 requires it")
        pytest.skip(f"{name} is not installed (it is in the test extra)")
    return [exe]


def test_ruff() -> None:
    proc = subprocess.run([*_tool("ruff"), "check", "--no-cache", "evalspec", "tests", "benchmarks"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_mypy() -> None:
    proc = subprocess.run([*_tool("mypy")], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
