"""Fixtures of the run tests (helpers live in ``run_helpers``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run_helpers import Workspace  # noqa: E402


@pytest.fixture(autouse=True)
def _claims_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the claim; rendering is tested in tests/report (and costs seconds)."""
    monkeypatch.setenv("EVALSPEC_NO_REPORT", "1")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


@pytest.fixture(scope="session", autouse=True)
def _no_report() -> Any:
    """`evalspec run` renders HTML+PDF by default; these tests check claims (reports: tests/report).

    Session-scoped so that module-scoped fixtures (the example claims) see it too.
    """
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVALSPEC_NO_REPORT", "1")
        yield
