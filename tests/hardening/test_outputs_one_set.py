"""Issue 13: a run's outputs are one set. No new claim beside an old report (--no-report, a
failed report, kill -9), concurrent runs into one folder never pair one run's claim with the
other's report, and two concurrent `lock` runs never lose a lock."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hardening_helpers import ROOT, Space, plan_text

posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and flock")

OLD = {"claim.json": b'{"old": true}\n', "report.html": b"OLD REPORT", "report.pdf": b"%PDF OLD REPORT"}


def plant_old_set(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, data in OLD.items():
        (out / name).write_bytes(data)


def test_no_report_removes_the_previous_report(space: Space) -> None:
    space.write()
    plant_old_set(space.path / "out")
    result = space.cli("run", "plan.yaml", "--no-report")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (space.path / "out").iterdir()) == ["claim.json"]
    assert space.claim()["plan"]["id"] == "fixture"


def test_a_failed_report_leaves_the_claim_alone(space: Space, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalspec.errors import InputError

    space.write()
    plant_old_set(space.path / "out")
    monkeypatch.delenv("EVALSPEC_NO_REPORT")

    def broken(*args: object, **kw: object) -> None:
        raise InputError("the report could not be drawn (test)")

    monkeypatch.setattr("evalspec.report.render", broken)
    result = space.cli("run", "plan.yaml", "--format", "html")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == "the report could not be drawn (test)"
    assert "the report could not be written; the claim stands alone (no earlier report was kept)" in result.stderr
    assert sorted(p.name for p in (space.path / "out").iterdir()) == ["claim.json"]
    assert space.claim()["plan"]["id"] == "fixture"


def _kinds(out: Path) -> set[str]:
    kinds = set()
    for p in out.iterdir():
        if p.name.startswith(".evalspec-staging-"):
            continue  # a killed run's scratch folder, never read as output
        data = p.read_bytes()
        kinds.add("old" if data in OLD.values() else "new")
    return kinds


@posix
def test_kill_9_never_leaves_a_mixed_set(space: Space) -> None:
    space.write()
    rng = random.Random(13)
    env = dict(os.environ, EVALSPEC_NO_REPORT="1",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    seen = set()
    for _ in range(5):
        out = space.path / "out"
        plant_old_set(out)
        proc = subprocess.Popen([sys.executable, "-m", "evalspec", "run", "plan.yaml"], cwd=space.path, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 2.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kinds = _kinds(out)
        seen.add(frozenset(kinds))
        assert kinds in ({"old"}, {"new"}, set()), kinds
        if kinds == {"new"}:
            assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["claim.json"]


SLOW_RENDER = textwrap.dedent('''
    import os, random, time
    import evalspec.report as rep

    def render(record, out_dir, formats, **kw):
        time.sleep(random.uniform(0.0, 0.4))
        path = os.path.join(str(out_dir), "report.html")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("report of " + record["plan"]["id"])
        return [path]

    rep.render = render
''')


@posix
def test_concurrent_runs_into_one_folder_are_never_mixed(space: Space) -> None:
    """Two plans (different ids) write into one --out at once, a few times; every set is whole."""
    space.write()
    (space.path / "plan2.yaml").write_text(plan_text().replace("id: fixture", "id: other"), encoding="utf-8")
    hook = space.path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SLOW_RENDER, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(hook), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.pop("EVALSPEC_NO_REPORT", None)
    for _ in range(3):
        procs = [subprocess.Popen([sys.executable, "-m", "evalspec", "run", name, "--out", "shared", "--format", "html"],
                                  cwd=space.path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for name in ("plan.yaml", "plan2.yaml")]
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err.decode()
        claim = json.loads((space.path / "shared" / "claim.json").read_text(encoding="utf-8"))
        report = (space.path / "shared" / "report.html").read_text(encoding="utf-8")
        assert report == "report of " + claim["plan"]["id"]


@posix
def test_concurrent_lock_sees_the_first_lock(space: Space) -> None:
    """The second `lock` of a plan edited in between is refused as changed; the first lock stays."""
    from evalspec._atomic import folder_lock
    from evalspec.plan.load import load_plan
    from evalspec.plan.lock import _write_lock, read_lock

    space.write()
    first = load_plan(space.path / "plan.yaml")
    (space.path / "plan.yaml").write_text(plan_text().replace("title: Fixture plan", "title: Edited plan"),
                                          encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with folder_lock(space.path):
        second = subprocess.Popen([sys.executable, "-m", "evalspec", "lock", "plan.yaml"], cwd=space.path, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(3.0)  # the second has loaded the edited plan and waits for the folder
        done = _write_lock(first, force=False, now=None)  # the first, inside its turn
    out, err = second.communicate(timeout=120)
    assert done.action == "created"
    assert second.returncode == 1, (out, err)
    assert err.decode().startswith("plan.yaml: changed since it was locked at ")
    assert "changed title: \"Fixture plan\" -> \"Edited plan\"" in err.decode()
    assert read_lock(space.path / "plan.yaml").hash == done.record.hash


def test_a_posterior_of_an_earlier_run_does_not_stay(space: Space) -> None:
    """Outputs named by pattern (--save-posterior's posterior-<label>.nc) belong to the set too."""
    space.write()
    out = space.path / "out"
    plant_old_set(out)
    (out / "posterior-old.nc").write_bytes(b"OLD POSTERIOR")
    (out / "notes.txt").write_text("mine", encoding="utf-8")  # not an evalspec output: kept
    result = space.cli("run", "plan.yaml", "--no-report")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["claim.json", "notes.txt"]


def test_staged_posteriors_are_committed_with_the_claim(tmp_path: Path) -> None:
    from evalspec._atomic import OutputSet

    (tmp_path / "posterior-old.nc").write_bytes(b"old")
    with OutputSet(tmp_path) as outputs:
        assert outputs.staging is not None
        (outputs.staging / "claim.json").write_text("{}", encoding="utf-8")
        (outputs.staging / "posterior-a.nc").write_bytes(b"new")
        written = outputs.commit()
    assert [p.name for p in written] == ["claim.json", "posterior-a.nc"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["claim.json", "posterior-a.nc"]
