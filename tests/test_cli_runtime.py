"""The command-line process's set-up and exit (evalspec.cli_runtime): what it changes, and that it loses nothing."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalspec import cli_runtime
from evalspec.cli import cli

ROOT = Path(__file__).resolve().parents[1]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in cli_runtime.BLAS_THREAD_VARIABLES}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return dict(env, **extra)


def _py(code: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env or _env(), cwd=cwd, timeout=120, check=False)


@pytest.fixture
def threshold():
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


def test_prepare_sets_one_blas_thread_and_a_higher_first_gc_threshold(threshold) -> None:
    env: dict[str, str] = {"PATH": "/bin"}
    gc.set_threshold(700, 10, 10)
    cli_runtime.prepare(env)
    assert env == {"PATH": "/bin", "OPENBLAS_NUM_THREADS": "1"}
    assert gc.get_threshold() == (cli_runtime.GC_FIRST_THRESHOLD, 10, 10)


@pytest.mark.parametrize("name", cli_runtime.BLAS_THREAD_VARIABLES)
def test_prepare_keeps_the_thread_count_a_user_chose(name: str, threshold) -> None:
    env = {name: "8"}
    cli_runtime.prepare(env)
    assert env == {name: "8"}


def test_an_empty_variable_is_no_choice(threshold) -> None:
    env = {"OMP_NUM_THREADS": ""}
    cli_runtime.prepare(env)
    assert env["OPENBLAS_NUM_THREADS"] == "1"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc (Linux)")
def test_the_prepared_process_loads_numpy_with_no_blas_worker_threads() -> None:
    count = "import numpy, os; print(len(os.listdir('/proc/self/task')))"
    prepared = _py(f"from evalspec import cli_runtime; cli_runtime.prepare(); {count}")
    assert prepared.returncode == 0, prepared.stderr
    assert int(prepared.stdout) == 1  # the main thread only: no OpenBLAS worker waits, spinning, for work
    if (os.cpu_count() or 1) > 1:  # the user's own choice is what OpenBLAS gets
        chosen = _py(f"from evalspec import cli_runtime; cli_runtime.prepare(); {count}",
                     env=_env(OPENBLAS_NUM_THREADS="2"))
        assert int(chosen.stdout) == 2, chosen.stderr


def test_main_changes_nothing_of_the_process(threshold) -> None:
    """Called from Python, main() raises SystemExit and leaves the environment and the collector alone."""
    from evalspec.cli import main

    before_env, before_gc = dict(os.environ), gc.get_threshold()
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code in (0, None)
    assert dict(os.environ) == before_env and gc.get_threshold() == before_gc


@pytest.mark.parametrize("code", [None, 0, 1, 2, 70, 141, 255, 256, 300, -1, True, False, "a message"])
def test_exit_code_is_the_status_sys_exit_gives(code: object) -> None:
    real = _py(f"import sys; sys.exit({code!r})")
    probe = _py(f"from evalspec import cli_runtime; cli_runtime.exit_now({code!r})")
    assert (probe.returncode, probe.stderr) == (real.returncode, real.stderr)  # a text is printed, as sys.exit does
    if not isinstance(code, str):
        assert cli_runtime.exit_code(code) == real.returncode


def test_the_command_prints_all_its_output_through_a_pipe_before_it_exits() -> None:
    """A large output (the claim's JSON Schema) arrives whole: the fast exit flushes first."""
    proc = subprocess.run([sys.executable, "-m", "evalspec", "schema", "--claim"], capture_output=True, text=True,
                          env=_env(), cwd=ROOT, timeout=120, check=False)
    in_process = CliRunner().invoke(cli, ["schema", "--claim"])
    assert proc.returncode == 0 == in_process.exit_code, proc.stderr
    assert len(proc.stdout) > 10_000 and proc.stdout == in_process.output


@pytest.mark.parametrize(("args", "status", "said"), [
    (["--version"], 0, "evalspec, version"),
    (["no-such-command"], 2, "No such command"),
    (["validate", "missing.yaml"], 2, "missing.yaml"),
])
def test_the_command_exits_with_its_status(args: list[str], status: int, said: str, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "evalspec", *args], capture_output=True, text=True, env=_env(),
                          cwd=tmp_path, timeout=120, check=False)
    assert proc.returncode == status, proc.stderr
    assert said in proc.stdout + proc.stderr


def test_the_fast_exit_runs_exit_handlers_and_waits_for_a_running_thread(tmp_path: Path) -> None:
    handler, thread = tmp_path / "handler.txt", tmp_path / "thread.txt"
    proc = _py(f"""
        import atexit, sys, threading, time
        from pathlib import Path
        atexit.register(lambda: Path({str(handler)!r}).write_text("ran"))
        def late():
            time.sleep(0.5)
            Path({str(thread)!r}).write_text("done")
        threading.Thread(target=late).start()  # not a daemon: the normal exit waits for it
        sys.argv = ["evalspec", "--version"]
        from evalspec.cli import entry
        entry()
        """)
    assert proc.returncode == 0, proc.stderr
    assert "evalspec, version" in proc.stdout
    assert handler.read_text() == "ran" and thread.read_text() == "done"


def test_output_that_cannot_be_flushed_at_the_end_is_no_success() -> None:
    proc = _py("""
        import sys
        class Full:
            def write(self, text): return len(text)
            def flush(self): raise OSError(28, "No space left on device")
        sys.stdout = Full()
        from evalspec import cli_runtime
        cli_runtime.exit_now(0)
        """)
    assert proc.returncode == cli_runtime.UNFLUSHED_STATUS == 120, proc.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a device that is always full)")
def test_version_to_a_full_device_is_a_message_not_a_traceback() -> None:
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "evalspec", "--version"], stdout=full, stderr=subprocess.PIPE,
                              text=True, env=_env(), cwd=ROOT, timeout=120, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "no space left on device" in proc.stderr
