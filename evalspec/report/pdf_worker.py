"""Typeset the PDF in a forked process that imports WeasyPrint while the plots are drawn.

Writing a PDF report costs, in one process and in this order: matplotlib's import and the
plots (about 0.5 s), then WeasyPrint's import (about 0.25 s), then the typesetting. The first
two do not depend on each other. When :func:`evalspec.report.render` is asked for a PDF,
:meth:`PdfWorker.start` forks a child (it has the claim) that imports WeasyPrint and compiles the
report's templates while the parent draws the plots; the parent then hands the plots over a pipe,
the child writes the print HTML with :func:`evalspec.report.render.render_html`, typesets it with
:func:`evalspec.report.render.render_pdf_bytes` and sends back the bytes and its log records (the
parent re-emits them on its own loggers), and the parent writes the file. The PDF is the same bytes
as an in-process render; the command takes less wall time wherever a second core is free.

The child is only forked where that is safe and useful: on Linux (macOS's system frameworks do
not survive fork without exec; Windows has no fork), from a process with one thread (a fork
copies no other thread, so a lock another thread held would stay locked in the child), and only
while WeasyPrint is not yet imported (otherwise there is nothing to overlap). Anything that goes
wrong in the child (WeasyPrint missing, a crash, a typesetting error) makes the parent typeset
in-process instead, so errors are raised and worded exactly as without the worker.
``EVALSPEC_NO_PDF_WORKER=1`` turns the worker off.
"""

from __future__ import annotations

import logging
import os
import pickle
import sys
import threading
from types import ModuleType
from typing import Any

__all__ = ["PdfWorker", "can_fork"]


def _os_threads() -> int:
    """Threads of this process as the kernel counts them (numpy's BLAS pool included); 0 if unknown."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def can_fork() -> bool:
    """Whether a worker may be forked here and would save time (see the module docstring).

    ``EVALSPEC_NO_PDF_WORKER=1`` typesets in-process always (benchmarks compare the two).
    """
    return (sys.platform.startswith("linux") and hasattr(os, "fork") and "weasyprint" not in sys.modules
            and os.environ.get("EVALSPEC_NO_PDF_WORKER", "") in ("", "0")
            and threading.active_count() == 1 and _os_threads() == 1)


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class _Collect(logging.Handler):
    """Keeps the child's log records (as plain dicts) to send to the parent."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        d = dict(record.__dict__)
        d["msg"], d["args"] = record.getMessage(), None
        d["exc_info"] = d["exc_text"] = None
        self.records.append(d)


def _child(claim: dict[str, Any], in_fd: int, out_fd: int, render_module: ModuleType) -> int:
    """The forked process: import WeasyPrint and compile the templates; when the plots arrive,
    write the print HTML, typeset it, reply.

    ``render_module`` is :mod:`evalspec.report.render`, handed over by the parent (this module
    does not import it back); its functions are looked up at call time, as the parent would
    call them (a test's stand-in included).
    """
    from evalspec.report.pdf_import import import_weasyprint

    # Records go to the parent, which emits them through its own handlers (no duplicates here).
    collect = _Collect()
    for logger in [logging.root, *logging.Logger.manager.loggerDict.values()]:
        if isinstance(logger, logging.Logger):
            logger.handlers = []
    logging.root.handlers = [collect]
    # (Typesetting a small document here while waiting was measured: the first real document is
    # then 0.01-0.02 s faster, for 0.07 s of CPU that competes with the parent's plots.)
    try:
        import_weasyprint()
        # One template environment for this process, its templates compiled now by a render
        # without plots (this process ends after one report; the parent's stays as it is).
        env = render_module._env()
        render_module._env = lambda: env
        render_module.render_html(claim, "print", with_plots=False)
    except Exception:  # noqa: BLE001 - the parent typesets in-process and reports the error itself
        return 3
    payload = _read_all(in_fd)
    if not payload:
        return 0  # the parent gave up before the PDF (an error, or no PDF after all)
    drawn = pickle.loads(payload)
    html = render_module.render_html(claim, "print", drawn=drawn)
    pdf = render_module.render_pdf_bytes(html)
    _write_all(out_fd, pickle.dumps((pdf, collect.records), protocol=pickle.HIGHEST_PROTOCOL))
    return 0


class PdfWorker:
    """A forked child that writes and typesets the PDF of one claim (see the module docstring)."""

    def __init__(self, pid: int, in_fd: int, out_fd: int) -> None:
        self._pid, self._in_fd, self._out_fd = pid, in_fd, out_fd

    @classmethod
    def start(cls, claim: dict[str, Any], render_module: ModuleType) -> PdfWorker | None:
        """Fork the child, or return None where that is unsafe or useless (then typeset in-process).

        ``render_module``: :mod:`evalspec.report.render`, whose functions the child calls."""
        if not can_fork():
            return None
        for stream in (sys.stdout, sys.stderr):  # a buffered line must not be written twice
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):
                pass
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns into the caller's code
            code = 1
            try:
                os.close(in_w)
                os.close(out_r)
                code = _child(claim, in_r, out_w, render_module)
            except BaseException:  # noqa: BLE001 - any failure is reported by the exit status alone
                code = 2
            finally:
                os._exit(code)
        os.close(in_r)
        os.close(out_w)
        return cls(pid, in_w, out_r)

    def typeset(self, drawn: dict[str, Any]) -> bytes | None:
        """The PDF of the claim with the plots ``drawn`` (see :func:`evalspec.report.render.draw_plots`),
        or None if the child could not make it (the caller typesets it then)."""
        try:
            _write_all(self._in_fd, pickle.dumps(drawn, protocol=pickle.HIGHEST_PROTOCOL))
        except OSError:  # the child is gone (it failed to import WeasyPrint)
            pass
        self._close_input()
        reply = _read_all(self._out_fd)
        self._wait()
        # The child replies only after typesetting succeeded; its exit status adds nothing (and is
        # unavailable where SIGCHLD is ignored).
        try:
            pdf, records = pickle.loads(reply)
        except Exception:  # noqa: BLE001 - no reply or a truncated one: typeset in-process
            return None
        if not isinstance(pdf, bytes) or not pdf.startswith(b"%PDF"):
            return None
        for d in records:
            record = logging.makeLogRecord(d)
            logger = logging.getLogger(record.name)
            if not logger.disabled:
                logger.handle(record)
        return pdf

    def close(self) -> None:
        """End the child if its PDF was not asked for (an error came first); idempotent."""
        self._close_input()
        if self._pid > 0:
            import signal

            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._wait()

    def _close_input(self) -> None:
        if self._in_fd >= 0:
            os.close(self._in_fd)
            self._in_fd = -1

    def _wait(self) -> int | None:
        if self._out_fd >= 0:
            os.close(self._out_fd)
            self._out_fd = -1
        if self._pid <= 0:
            return None
        pid, self._pid = self._pid, -1
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:  # already reaped (SIGCHLD ignored by the embedding program)
            return None
        return os.waitstatus_to_exitcode(status)
