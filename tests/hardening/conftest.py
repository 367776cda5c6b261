"""Fixtures of the hardening tests: a workspace with the small base plan of the run tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "run"))

from hardening_helpers import Space  # noqa: E402


@pytest.fixture
def space(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Space:
    monkeypatch.setenv("EVALSPEC_NO_REPORT", "1")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796126400")
    return Space(tmp_path)
