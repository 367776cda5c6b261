"""Issue 13: files that are not results (pipes, devices, link loops), paths outside the plan's
folder, outputs that cannot be written, closed pipes and non-UTF-8 names: exit 2 (or a quiet
exit for a closed pipe) with the file named, never a hang or exit 70."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest

from hardening_helpers import Space, first_line, plan_text

posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file types")


@posix
def test_fifo_matched_by_a_glob_is_refused_without_hanging(space: Space) -> None:
    space.write()
    os.mkfifo(space.path / "r.jsonl")
    (space.path / "plan.yaml").write_text(plan_text('"r*.jsonl"'), encoding="utf-8")
    result = space.process("run", "plan.yaml", timeout=60, text=True)
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == (
        "r.jsonl: not a regular file (a named pipe); results are read from regular files only; export them to a "
        "file and name that file in data.results")


@posix
def test_validate_on_a_fifo_plan_does_not_hang(space: Space) -> None:
    os.mkfifo(space.path / "p.yaml")
    result = space.process("validate", "p.yaml", timeout=60, text=True)
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == "p.yaml: is not a regular file (a named pipe); pass the plan file"


@posix
def test_dev_zero_through_a_symlink_is_refused_before_reading(space: Space) -> None:
    space.write()
    os.symlink("/dev/zero", space.path / "z.jsonl")
    (space.path / "plan.yaml").write_text(plan_text("z.jsonl"), encoding="utf-8")
    result = space.cli("run", "plan.yaml", "--allow-outside-data")
    assert result.exit_code == 2
    assert first_line(result) == ("z.jsonl: not a regular file (a character device); results are read from regular "
                                  "files only; export them to a file and name that file in data.results")
    result = space.cli("run", "plan.yaml")  # without the opt-in, the link leading out is refused first
    assert result.exit_code == 2
    assert "is outside the plan's folder (through a symbolic link)" in first_line(result)


@posix
def test_symlink_loop_matched_by_a_glob(space: Space) -> None:
    space.write()
    os.symlink("l2.jsonl", space.path / "l1.jsonl")
    os.symlink("l1.jsonl", space.path / "l2.jsonl")
    (space.path / "plan.yaml").write_text(plan_text('"l*.jsonl"'), encoding="utf-8")
    result = space.cli("run", "plan.yaml")
    assert result.exit_code == 2
    assert first_line(result) == "l1.jsonl: cannot read the results file: too many levels of symbolic links"


def test_results_outside_the_plan_folder_need_the_opt_in(space: Space) -> None:
    inner = space.path / "study"
    inner.mkdir()
    space.write()
    (inner / "plan.yaml").write_text(plan_text("../results.jsonl"), encoding="utf-8")
    result = space.cli("run", "study/plan.yaml")
    assert result.exit_code == 2
    assert first_line(result).startswith(
        "study/plan.yaml:8:12: data.results: the results file study/../results.jsonl is outside the plan's folder "
        "(got '../results.jsonl'); keep the results beside the plan, or allow it knowingly with "
        "`evalspec run --allow-outside-data` (the claim records it)")
    result = space.cli("run", "study/plan.yaml", "--allow-outside-data")
    assert result.exit_code == 0, result.output
    claim = __import__("json").loads((inner / "out" / "claim.json").read_text(encoding="utf-8"))
    outside = [d for d in claim["deviations"] if d["code"] == "data_outside_plan_folder"]
    assert outside and "../results.jsonl" in outside[0]["message"]
    assert claim["command"][-1] == "--allow-outside-data"
    assert [f["path"] for f in claim["data"]["files"]] == ["../results.jsonl"]  # where it was, not a bare name


def test_absolute_results_path_outside_is_refused(space: Space, tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "results.jsonl"
    space.write()
    elsewhere.write_bytes((space.path / "results.jsonl").read_bytes())
    (space.path / "plan.yaml").write_text(plan_text(str(elsewhere)), encoding="utf-8")
    result = space.cli("run", "plan.yaml")
    assert result.exit_code == 2
    assert f"the results file {elsewhere} is outside the plan's folder" in first_line(result)


def test_out_below_a_regular_file(space: Space) -> None:
    space.write()
    (space.path / "f").write_text("x", encoding="utf-8")
    result = space.cli("run", "plan.yaml", "--out", "f/sub")
    assert result.exit_code == 2
    assert first_line(result) == "f/sub: not a directory; a part of the path is a file, not a folder; choose another path"


@pytest.mark.parametrize(("code", "text", "expected"), [
    (errno.EACCES, "Permission denied", "out: permission denied; choose a folder you can write (--out) or fix its "
     "permissions"),
    (errno.EROFS, "Read-only file system", "out: read-only file system; choose another folder with --out"),
    (errno.ENOSPC, "No space left on device", "out: no space left on device; free some space or choose another "
     "folder with --out"),
])
def test_unwritable_output_folder_exits_2(space: Space, monkeypatch: pytest.MonkeyPatch, code: int, text: str,
                                           expected: str) -> None:
    space.write()

    def refuse(*args: object, **kw: object) -> None:
        raise OSError(code, text, "out/x")

    monkeypatch.setattr("tempfile.mkdtemp", refuse)
    result = space.cli("run", "plan.yaml")
    assert result.exit_code == 2
    assert first_line(result) == expected


@posix
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores permissions")
def test_read_only_output_folder_for_real(space: Space) -> None:
    space.write()
    (space.path / "ro").mkdir()
    os.chmod(space.path / "ro", 0o500)
    try:
        result = space.cli("run", "plan.yaml", "--out", "ro")
    finally:
        os.chmod(space.path / "ro", 0o700)
    assert result.exit_code == 2
    assert "permission denied; choose a folder you can write (--out)" in first_line(result)


@posix
def test_closed_pipe_is_a_quiet_exit_and_outputs_are_complete(space: Space) -> None:
    space.write()
    import subprocess

    env = dict(os.environ, EVALSPEC_NO_REPORT="1",
               PYTHONPATH=str(Path(__file__).resolve().parents[2]) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(f"'{sys.executable}' -m evalspec run plan.yaml | true; echo \"${{PIPESTATUS[0]}}\" >&2",
                          shell=True, executable="/bin/bash", cwd=space.path, capture_output=True, text=True,
                          timeout=120, env=env)
    status = proc.stderr.strip().splitlines()[-1]
    assert status in ("0", "141"), proc.stderr  # 141 = 128 + SIGPIPE, like any tool whose reader went away
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert (space.path / "out" / "claim.json").is_file()


@posix
def test_non_utf8_out_path_exits_2(space: Space) -> None:
    space.write()
    result = space.process(b"run", b"plan.yaml", b"--out", b"o\xff", timeout=60)
    assert result.returncode == 2
    assert result.stderr.decode().splitlines()[0] == (
        "evalspec: the argument 'o\\xff' is not valid UTF-8; rename the file or folder (evalspec shows and records "
        "paths as UTF-8 text)")


@posix
def test_non_utf8_results_file_name_is_named(space: Space) -> None:
    space.write()
    name = os.fsdecode(b"r\xff.jsonl")
    os.rename(space.path / "results.jsonl", space.path / name)
    (space.path / "plan.yaml").write_text(plan_text('"r*.jsonl"'), encoding="utf-8")
    result = space.process("run", "plan.yaml", timeout=60)
    assert result.returncode == 2
    assert result.stderr.decode().splitlines()[0] == (
        "r\\xff.jsonl: the file name is not valid UTF-8; rename the file (evalspec shows and records names as "
        "UTF-8 text)")


def test_disk_full_while_writing_leaves_the_previous_outputs(space: Space, monkeypatch: pytest.MonkeyPatch) -> None:
    space.write()
    out = space.path / "out"
    out.mkdir()
    (out / "claim.json").write_bytes(b'{"old": true}\n')
    (out / "report.html").write_bytes(b"OLD")

    def full(*args: object, **kw: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("evalspec.run.write_claim", full)
    result = space.cli("run", "plan.yaml")
    assert result.exit_code == 2
    assert first_line(result) == ("evalspec: no space left on device; free some space or choose another folder with "
                                  "--out")
    assert sorted(p.name for p in out.iterdir()) == ["claim.json", "report.html"]  # no staging folder left
    assert (out / "claim.json").read_bytes() == b'{"old": true}\n'
