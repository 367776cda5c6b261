"""In a git repository the plan's first commit must predate the first result."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.audit.conftest import make_workspace


@pytest.fixture(autouse=True)
def _need_git() -> None:
    """Skip where git is missing (a fresh machine); CI installs it and requires it (EVALSPEC_REQUIRE_TOOLS)."""
    if shutil.which("git") is None:
        if os.environ.get("EVALSPEC_REQUIRE_TOOLS"):
            pytest.fail("git is required (EVALSPEC_REQUIRE_TOOLS)")
        pytest.skip("git is not installed")


def _git(root: Path, *args: str, date: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@e", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_CONFIG_SYSTEM=os.devnull)
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


@pytest.mark.parametrize("committed, status", [("2026-01-05T10:00:00Z", "pass"), ("2026-10-03T10:00:00Z", "fail")])
def test_first_commit_time_of_the_plan(tmp_path: Path, committed: str, status: str) -> None:
    w = make_workspace(tmp_path)
    _git(w.root, "init", "-q", date=committed)
    _git(w.root, "add", "plan.yaml", date=committed)
    _git(w.root, "commit", "-q", "-m", "plan", date=committed)
    w.lock()
    w.run()
    c = w.checks()["locked_before_results"]
    assert c["status"] == status, c
    assert any(e.startswith("plan first committed 2026-") for e in c["evidence"])
    if status == "fail":
        assert "first committed to git after the first result" in c["sentence"]


def test_plan_never_committed_is_a_warning(tmp_path: Path) -> None:
    w = make_workspace(tmp_path)
    _git(w.root, "init", "-q", date="2026-01-05T10:00:00Z")
    w.lock()
    w.run()
    c = w.checks()["locked_before_results"]
    assert c["status"] == "warning" and "not committed" in c["sentence"]
