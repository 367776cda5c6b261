"""How an ``evalspec`` command-line process starts and ends (the library is not touched).

Importing :mod:`evalspec` or calling :func:`evalspec.cli.main` changes nothing global; these
settings belong to a process that runs one command and exits, and :func:`evalspec.cli.entry`
(the console script and ``python -m evalspec``) applies them:

* **One BLAS thread** (:func:`prepare`). numpy and scipy each load an OpenBLAS whose worker
  threads busy-wait after loading and after every threaded call. evalspec's matrix work is small
  (sums and dot products over cases), so those threads only take a core away from Arrow's reading:
  measured with ``perf record`` on a 2-core machine, 0.2 s of CPU in a run on 1M JSONL rows and
  0.6 s in one on a 10M-row case table. ``OPENBLAS_NUM_THREADS=1`` is set unless the user set a
  thread count (``OPENBLAS_NUM_THREADS``, ``GOTO_NUM_THREADS`` or ``OMP_NUM_THREADS``), before numpy
  is imported; processes the command starts inherit it. A side effect is wanted too: a product
  summed by one thread adds in one order, so a claim cannot depend on how many cores ran it.
* **Fewer garbage collections** (:func:`prepare`). Python's cyclic collector runs after every 700
  new container objects and re-walks the long-lived ones; a run makes millions (the plan's
  models, the analyses' results) and almost none of them form cycles, so about 0.1 s went to
  collections that found nothing. The first threshold is raised to 20,000: cycles are still
  collected, in 30 times fewer passes.
* **A fast exit** (:func:`exit_now`). After the command has finished, its outputs are written and
  closed and its ``atexit`` handlers have run, tearing the interpreter down (every module's objects
  freed one by one) only delays the shell's prompt: about 0.15 s after a run on 1M rows. Like
  mypy's ``--fast-exit`` (its default), the process then ends with :func:`os._exit`, after
  flushing its output (output that cannot be flushed, on a full disk, exits 120 as Python's own
  exit does). It exits the normal way instead when a thread that is not a daemon is still
  running, since the normal exit waits for it.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

__all__ = ["BLAS_THREAD_VARIABLES", "GC_FIRST_THRESHOLD", "UNFLUSHED_STATUS", "exit_code", "exit_now", "prepare"]

#: Environment variables by which a user sets OpenBLAS's thread count (OpenBLAS reads them in this order).
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")

#: The exit status when the output could not be flushed at the end, as Python's own exit gives.
UNFLUSHED_STATUS = 120

#: New container objects between two collections of the youngest generation (Python's default: 700).
GC_FIRST_THRESHOLD = 20_000


def prepare(environ: os._Environ[str] | dict[str, str] | None = None) -> None:
    """Set up this process for one command: one BLAS thread unless the user chose, fewer collections."""
    import gc

    env = os.environ if environ is None else environ
    if not any(env.get(name) for name in BLAS_THREAD_VARIABLES):
        env["OPENBLAS_NUM_THREADS"] = "1"  # read by OpenBLAS when numpy or scipy first loads it
    _, second, third = gc.get_threshold()
    gc.set_threshold(GC_FIRST_THRESHOLD, second, third)


def exit_code(code: object) -> int:
    """The status :func:`sys.exit` would give for ``code`` (printing it, as sys.exit does, if it is text)."""
    if code is None:
        return 0
    if isinstance(code, bool):
        return int(code)
    if isinstance(code, int):
        return code & 0xFF if code >= 0 else code % 256
    print(code, file=sys.stderr)
    return 1


def exit_now(code: object) -> NoReturn:
    """End the process with ``code``: ``atexit`` handlers, flushed output, then :func:`os._exit`."""
    import atexit
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)  # the normal exit waits for the thread; so must this one
    status = exit_code(code)
    atexit._run_exitfuncs()  # logging's flush, tempfile's clean-up, multiprocessing, whatever was registered
    for stream in (sys.stdout, sys.__stdout__, sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except ValueError:  # a stream closed on purpose
            pass
        except OSError:  # output that could not be written (a full disk): never a silent success
            status = UNFLUSHED_STATUS if stream in (sys.stdout, sys.__stdout__) else status
    os._exit(status)
