"""The PDF typeset in a forked worker (WeasyPrint imported while the plots are drawn).

The worker only forks from a process with one thread that has not imported WeasyPrint, which
the test process is not; each scenario therefore runs in a fresh interpreter, as the
``evalspec report`` command does.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("weasyprint")

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "superiority.json"
LINUX = sys.platform.startswith("linux")

# Common head of every scenario: the claim, an output folder, and a record of what the worker did.
_HEAD = r"""
import json, os, sys
from pathlib import Path
claim = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
out = Path(sys.argv[2])
import evalspec.report.pdf_worker as pw
from evalspec.report import render
render_mod = sys.modules["evalspec.report.render"]
used = []
real_typeset = pw.PdfWorker.typeset
def typeset(self, html):
    pdf = real_typeset(self, html)
    used.append(pdf is not None)
    return pdf
pw.PdfWorker.typeset = typeset
"""


def _run(body: str, tmp_path: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", _HEAD + body, str(FIXTURE), str(tmp_path)], capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not LINUX, reason="the worker forks on Linux only")
def test_the_worker_pdf_is_the_in_process_pdf(tmp_path: Path) -> None:
    got = _run(r"""
(path,) = render(claim, out, ("pdf",))
worker_pdf = path.read_bytes()
import weasyprint.text.ffi as ffi
here = render_mod.render_pdf_bytes(render_mod.render_html(claim, "print"))
print(json.dumps({"used": used, "pdf": worker_pdf[:5].decode(), "same": worker_pdf == here,
                  "reproducible": ffi.harfbuzz_subset is not None, "size": len(worker_pdf)}))
""", tmp_path)
    assert got["used"] == [True]
    assert got["pdf"] == "%PDF-" and got["size"] > 10_000
    if got["reproducible"]:  # fontTools' subsets (no libharfbuzz-subset) differ from run to run
        assert got["same"], "the worker's PDF differs from the in-process PDF"


@pytest.mark.skipif(not LINUX, reason="the worker forks on Linux only")
def test_the_worker_typesets_in_another_process_and_its_log_records_reach_this_one(tmp_path: Path) -> None:
    got = _run(r"""
import logging
def stand_in(html):
    logging.getLogger("weasyprint").warning("typeset by %d", os.getpid())
    return b"%PDF-stand-in"
render_mod.render_pdf_bytes = stand_in
seen = []
class Keep(logging.Handler):
    def emit(self, record):
        seen.append(record.getMessage())
logging.getLogger("weasyprint").addHandler(Keep())
_, path = render(claim, out, ("html", "pdf"))
print(json.dumps({"used": used, "seen": seen, "me": os.getpid(), "bytes": path.read_bytes().decode()}))
""", tmp_path)
    assert got["used"] == [True]
    assert got["bytes"] == "%PDF-stand-in"
    assert len(got["seen"]) == 1 and got["seen"][0].startswith("typeset by ")
    assert int(got["seen"][0].split()[-1]) != got["me"]  # the child typeset it


@pytest.mark.skipif(not LINUX, reason="the worker forks on Linux only")
def test_the_worker_reply_counts_where_children_are_reaped_by_the_program(tmp_path: Path) -> None:
    """With SIGCHLD ignored the child's exit status is lost; its reply still stands."""
    got = _run(r"""
import signal
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
(path,) = render(claim, out, ("pdf",))
print(json.dumps({"used": used, "pdf": path.read_bytes()[:5].decode()}))
""", tmp_path)
    assert got == {"used": [True], "pdf": "%PDF-"}


def test_a_failed_worker_leaves_the_pdf_to_this_process(tmp_path: Path) -> None:
    got = _run(r"""
pw._child = lambda claim, in_fd, out_fd, render_module: 3  # as when WeasyPrint cannot be imported in the child
(path,) = render(claim, out, ("pdf",))
print(json.dumps({"used": used, "pdf": path.read_bytes()[:5].decode()}))
""", tmp_path)
    assert got["pdf"] == "%PDF-"
    assert got["used"] == ([False] if LINUX else [])


def test_an_error_before_the_pdf_ends_the_worker(tmp_path: Path) -> None:
    got = _run(r"""
def broken(claim, medium="screen", **kw):
    raise RuntimeError("template failed")
render_mod.render_html = broken
try:
    render(claim, out, ("html", "pdf"))
    error = None
except RuntimeError as exc:
    error = str(exc)
try:
    os.waitpid(-1, os.WNOHANG)
    children = True
except ChildProcessError:
    children = False
print(json.dumps({"error": error, "children": children, "used": used}))
""", tmp_path)
    assert got == {"error": "template failed", "children": False, "used": []}


def test_no_worker_after_weasyprint_is_imported_or_beside_another_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    import weasyprint

    from evalspec.report import pdf_worker

    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    monkeypatch.delenv("EVALSPEC_NO_PDF_WORKER", raising=False)
    monkeypatch.setattr(pdf_worker, "_os_threads", lambda: 1)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delitem(sys.modules, "weasyprint", raising=False)
    assert pdf_worker.can_fork() is True
    monkeypatch.setattr(pdf_worker, "_os_threads", lambda: 3)  # e.g. numpy's BLAS threads
    assert pdf_worker.can_fork() is False
    monkeypatch.setattr(pdf_worker, "_os_threads", lambda: 1)
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert pdf_worker.can_fork() is False
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(sys, "platform", "darwin")
    assert pdf_worker.can_fork() is False
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("EVALSPEC_NO_PDF_WORKER", "1")
    assert pdf_worker.can_fork() is False
    monkeypatch.delenv("EVALSPEC_NO_PDF_WORKER")
    assert pdf_worker.can_fork() is True
    monkeypatch.setitem(sys.modules, "weasyprint", weasyprint)
    assert pdf_worker.can_fork() is False
