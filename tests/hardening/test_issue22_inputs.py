"""Issue 22's findings as regression tests: special files, symlinks, escaping, crashes, messages."""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hardening_helpers import Space, base_rows

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None)
#: For properties that run the CLI per example.
CLI_SETTINGS = settings(max_examples=8, deadline=None, derandomize=True, database=None)


def _locked_run(space: Space) -> None:
    space.write()
    assert space.cli("lock", "plan.yaml").exit_code == 0
    res = space.cli("run", "plan.yaml", "--no-report")
    assert res.exit_code == 0, res.output


# -- special files: named pipes and devices never hang, never exhaust memory --------------------

@pytest.mark.parametrize("kind", ["fifo", "zero"])
@pytest.mark.parametrize("where, commands", [
    ("plan.yaml.lock.json", [["lock", "plan.yaml"], ["run", "plan.yaml", "--no-report"],
                             ["audit", "out/claim.json", "--no-reproduce"]]),
    (".evalspec/ledger.jsonl", [["run", "plan.yaml", "--no-report"], ["audit", "out/claim.json", "--no-reproduce"]]),
    ("out/claim.json", [["report", "out/claim.json", "--format", "html"], ["audit", "out/claim.json"],
                        ["attest", "out/claim.json"]]),
])
def test_special_files_are_refused_by_name(space: Space, kind: str, where: str, commands: list[list[str]]) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    _locked_run(space)
    target = space.path / where
    target.unlink()
    if kind == "fifo":
        os.mkfifo(target)
    else:
        os.symlink("/dev/zero", target)
    for i, args in enumerate(commands):
        if i == 0 and kind == "fifo":  # once as a process, with a timeout: a hang fails rather than waits
            proc = space.process(*args, timeout=60)
            code, out, err = proc.returncode, proc.stdout.decode(), proc.stderr.decode()
        else:
            res = space.cli(*args)
            code, out, err = res.exit_code, res.stdout, res.stderr
        if args[0] == "audit" and where != "out/claim.json":  # an unreadable lock or ledger is a failed check
            assert code == 1 and f"{where}: the " in out and "not a regular file" in out, (args, out)
            continue
        assert code == 2, (args, code, err)
        assert err.startswith(where) and "not a regular file" in err, (args, err)


def test_data_given_to_audit_as_a_named_pipe(space: Space) -> None:
    _locked_run(space)
    os.mkfifo(space.path / "pipe.jsonl")
    res = space.process("audit", "out/claim.json", "--data", "pipe.jsonl", timeout=60)
    assert res.returncode == 2 and b"not a regular file" in res.stderr, res.stderr


# -- globs ---------------------------------------------------------------------------------------

def test_a_recursive_glob_does_not_follow_symlink_loops(space: Space) -> None:
    rows = base_rows()
    data = space.path / "data" / "run1"
    data.mkdir(parents=True)
    (data / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    os.symlink(".", space.path / "data" / "loop1")
    os.symlink(".", space.path / "data" / "loop2")
    from hardening_helpers import plan_text

    (space.path / "plan.yaml").write_text(plan_text("data/**/*.jsonl"), encoding="utf-8")
    start = time.monotonic()
    res = space.cli("run", "plan.yaml", "--no-report")
    assert res.exit_code == 0, res.output
    assert time.monotonic() - start < 60
    files = json.loads((space.path / "out" / "claim.json").read_text(encoding="utf-8"))["data"]["files"]
    assert [f["path"] for f in files] == ["data/run1/r.jsonl"]


@SETTINGS
@given(pattern=st.sampled_from(["d/**/*.jsonl", "d/*.jsonl", "d/**", "d/a/**/*.csv", "d/**/x?.jsonl",
                                "d/[ab]/*.jsonl", "**/*.csv", "d/**/b/*.jsonl", "d/**/[!r]*"]))
def test_bounded_glob_names_the_files_glob_names(tmp_path_factory: pytest.TempPathFactory, pattern: str) -> None:
    import glob

    from evalspec._files import bounded_glob

    root = tmp_path_factory.mktemp("g")
    for d in ["", "a", "a/b", "a/.h", ".x", "c/d/e"]:
        (root / "d" / d).mkdir(parents=True, exist_ok=True)
        for n in ["r.jsonl", ".hid.jsonl", "s.csv", "x1.jsonl"]:
            (root / "d" / d / n).write_text("")
    want = sorted(Path(p) for p in glob.glob(str(root / pattern), recursive=True) if os.path.isfile(p))
    assert bounded_glob(root, pattern, display="plan.yaml") == want


# -- symbolic links where evalspec writes ------------------------------------------------------

def test_a_symlinked_ledger_folder_is_refused(space: Space, tmp_path_factory: pytest.TempPathFactory) -> None:
    space.write()
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    os.symlink(elsewhere, space.path / ".evalspec")
    res = space.cli("run", "plan.yaml", "--no-report")
    assert res.exit_code == 2 and "is a symbolic link" in res.output, res.output
    assert not list(elsewhere.iterdir())


def test_a_symlinked_out_folder_is_refused(space: Space, tmp_path_factory: pytest.TempPathFactory) -> None:
    space.write()
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "report.pdf").write_bytes(b"someone else's")
    os.symlink(elsewhere, space.path / "out")
    res = space.cli("run", "plan.yaml", "--no-report")
    assert res.exit_code == 2 and "is a symbolic link" in res.output and "--out" in res.output, res.output
    assert (elsewhere / "report.pdf").read_bytes() == b"someone else's"


# -- one output set for report and audit --report ------------------------------------------------

def test_a_report_is_not_left_beside_a_newer_claim(space: Space, monkeypatch: pytest.MonkeyPatch) -> None:
    _locked_run(space)
    import evalspec.report as report_pkg

    real = report_pkg.render

    def slow_render(claim, out_dir, formats):  # a run writes a new claim while the report renders
        written = real(claim, out_dir, formats)
        (space.path / "out" / "claim.json").write_text(
            (space.path / "out" / "claim.json").read_text(encoding="utf-8").replace('"created"', '"created" ', 1),
            encoding="utf-8")
        return written

    monkeypatch.setattr(report_pkg, "render", slow_render)
    res = space.cli("report", "out/claim.json", "--format", "html")
    assert res.exit_code == 2 and "the claim changed" in res.output, res.output
    assert not (space.path / "out" / "report.html").exists()


def test_a_new_run_removes_the_old_audit_report_and_statement(space: Space) -> None:
    _locked_run(space)
    assert space.cli("audit", "out/claim.json", "--report", "--format", "html").exit_code in (0, 1)
    assert space.cli("attest", "out/claim.json").exit_code == 0
    assert {"audit.html", "claim.intoto.json"} <= {p.name for p in (space.path / "out").iterdir()}
    rows = base_rows()[:-1]
    (space.path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    space.cli("run", "plan.yaml", "--no-report")
    assert {p.name for p in (space.path / "out").iterdir() if not p.name.startswith(".")} == {"claim.json"}


# -- messages ------------------------------------------------------------------------------------

def test_lock_on_a_full_disk_does_not_suggest_out(space: Space, monkeypatch: pytest.MonkeyPatch) -> None:
    space.write()
    import evalspec.plan.lock as lock_mod

    def full(path, text):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(lock_mod, "write_text_atomic", full)
    res = space.cli("lock", "plan.yaml")
    assert res.exit_code == 2 and "no space left" in res.output and "--out" not in res.output, res.output


def test_report_on_a_read_only_folder_names_the_report_not_its_temporary_file(
        space: Space, monkeypatch: pytest.MonkeyPatch) -> None:
    _locked_run(space)
    import tempfile

    real = tempfile.mkstemp

    def read_only(*a, **kw):
        if kw.get("dir") is not None and Path(kw["dir"]).resolve() == (space.path / "out").resolve():
            raise OSError(errno.EROFS, "Read-only file system", str(Path(kw["dir"]) / ".report.html.x.tmp"))
        return real(*a, **kw)

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    monkeypatch.setattr(tempfile, "mkdtemp", lambda *a, **kw: (_ for _ in ()).throw(
        OSError(errno.EROFS, "Read-only file system", str(Path(kw.get("dir", ".")) / ".evalspec-staging-x"))))
    res = space.cli("report", "out/claim.json", "--format", "html")
    assert res.exit_code == 2, res.output
    assert "read-only" in res.output and ".tmp" not in res.output and "staging" not in res.output, res.output


def test_claim_bytes_do_not_depend_on_how_the_plan_path_is_typed(space: Space) -> None:
    space.write()
    assert space.cli("run", "plan.yaml", "--no-report").exit_code == 0
    first = (space.path / "out" / "claim.json").read_bytes()
    assert space.cli("run", "./plan.yaml", "--no-report").exit_code == 0
    assert (space.path / "out" / "claim.json").read_bytes() == first


# -- model versions with NUL characters ----------------------------------------------------------

@CLI_SETTINGS
@given(version=st.text(alphabet=st.sampled_from(["\x00", "1", "a"]), min_size=1, max_size=4))
def test_model_versions_with_nul_are_located_not_crashed(tmp_path_factory: pytest.TempPathFactory,
                                                          version: str) -> None:
    space = Space(tmp_path_factory.mktemp("nul"))
    rows = base_rows()
    rows[1]["model_version"] = version
    space.write(rows)
    res = space.cli("run", "plan.yaml", "--no-report")
    if version != rows[0]["model_version"]:
        assert res.exit_code == 2, res.output
        assert f"{version!r} first at results.jsonl:2" in res.output.replace("\\\\", "\\"), res.output


# -- escaping ------------------------------------------------------------------------------------

_RAW = [chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, *range(0x202A, 0x202F),
                         *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)]


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if c in _RAW and c not in "\n\t"]


@SETTINGS
@given(text=st.text(min_size=1, max_size=30))
def test_safe_text_leaves_no_control_character(text: str) -> None:
    from evalspec.errors import one_line, safe_text

    assert not _raw_controls(safe_text(text))
    assert not _raw_controls(one_line(text)) and "\n" not in one_line(text)
    assert one_line(text).encode("utf-8")  # lone surrogates shown, never an encoding error


@CLI_SETTINGS
@given(value=st.lists(st.sampled_from(["\x1b", "[", "1", "A", "2K", "\r", "\u202e", "\x9b", "\n", "x", "\u2066",
                                       "\x07"]), min_size=1, max_size=12).map("".join).filter(str.strip))
def test_no_raw_control_character_reaches_the_terminal(tmp_path_factory: pytest.TempPathFactory, value: str) -> None:
    """A model version full of terminal sequences, through run and audit: printed escaped, on every line."""
    import contextlib
    import io
    import sys

    from evalspec.cli import escaped_output

    space = Space(tmp_path_factory.mktemp("esc"))
    rows = base_rows()
    for r in rows:
        r["model_version"] = value
    space.write(rows)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), escaped_output():
        for msg in (f"model version {value}", value):
            print(msg)
            print(msg, file=sys.stderr)
    for stream in (out, err):
        assert not _raw_controls(stream.getvalue()), repr(stream.getvalue())
    for args in (["run", "plan.yaml", "--no-report"], ["audit", "out/claim.json", "--no-reproduce"]):
        res = space.cli(*args)
        assert not _raw_controls(res.output), repr(res.output)


def test_a_write_made_while_a_module_is_imported_is_escaped_without_a_crash(tmp_path: Path) -> None:
    """``python -v`` writes a line to stderr for every module imported, some while evalspec's escaping
    stream is itself importing what it escapes with: a run under it ends as a run does, not in an ImportError."""
    import subprocess
    import sys

    from hardening_helpers import ROOT

    space = Space(tmp_path)
    space.write(base_rows())
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-v", "-m", "evalspec", "validate", "plan.yaml"], cwd=space.path,
                          capture_output=True, text=True, timeout=120, env=env)
    assert "Traceback" not in proc.stderr and proc.returncode == 0, proc.stderr[-3000:]
    # -v wrote its lines, these while the command ran, through evalspec's stream
    assert "import 'evalspec.commands.validate'" in proc.stderr


def test_a_density_curve_of_mismatched_length_is_refused_by_the_claim_model() -> None:
    from pydantic import ValidationError

    from evalspec.analyses.beta_binomial import Density

    assert Density(x=[0.0, 1.0], density=[1.0, 2.0]).x == [0.0, 1.0]
    with pytest.raises(ValidationError, match="one value per point"):
        Density(x=[0.0, 1.0, 2.0], density=[1.0])
