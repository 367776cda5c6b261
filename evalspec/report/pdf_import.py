"""Import WeasyPrint without its library search starting a dozen processes.

WeasyPrint opens GObject, Pango, HarfBuzz and fontconfig through cffi, trying several names
for each library (one per platform: ``libpango-1.0-0``, ``pango-1.0``, ..., ``libpango-1.0.so.0``,
``libpango-1.0.dylib``). For every name the dynamic loader cannot open as given, cffi asks
:func:`ctypes.util.find_library`, which on Linux runs ``ldconfig -p``, then ``gcc``, then ``ld``:
about twenty searches and a quarter of a second, half of WeasyPrint's import, on each PDF.

On Linux, :func:`import_weasyprint` lets those searches answer "not found" at once while
WeasyPrint imports; WeasyPrint then goes on to the next name, and its lists hold each library's
soname (``libpango-1.0.so.0``), which the dynamic loader opens directly (``LD_LIBRARY_PATH`` and
the loader cache included). If WeasyPrint cannot load that way, the import is retried with the
standard search, so a machine where only ``gcc``'s or ``ld``'s search finds a library behaves as
before. Elsewhere (macOS, Windows: no processes are started) WeasyPrint is imported as it is.
The garbage collector pauses during the import (see :func:`_gc_paused`).
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from types import ModuleType

__all__ = ["import_weasyprint"]


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off inside the block (its state restored after).

    Importing WeasyPrint creates some hundred thousand objects (its stylesheets, cffi's parsed
    declarations, fontTools' tables); collections triggered meanwhile traverse everything the
    process holds, matplotlib's objects included: about 0.04 s of a 0.25 s import.
    """
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextlib.contextmanager
def _no_library_search() -> Iterator[None]:
    """``ctypes.util.find_library`` returns None (no subprocess) inside the block; restored after."""
    import ctypes.util

    real = ctypes.util.find_library
    ctypes.util.find_library = lambda name: None
    try:
        yield
    finally:
        ctypes.util.find_library = real


def _forget_weasyprint() -> None:
    """Drop the modules of a failed WeasyPrint import so the retry runs them again."""
    for name in [n for n in sys.modules if n == "weasyprint" or n.startswith("weasyprint.")]:
        del sys.modules[name]


def import_weasyprint(*, fast: bool | None = None) -> ModuleType:
    """The ``weasyprint`` module (imported here if it is not yet).

    ``fast``: skip the subprocess library search on the first try (default: on Linux only).
    Raises what ``import weasyprint`` raises when the standard search fails too.
    """
    if "weasyprint" in sys.modules:
        import weasyprint

        return weasyprint
    if fast is None:
        fast = sys.platform.startswith("linux")
    if fast:
        try:
            # WeasyPrint prints an installation hint to stdout when a library is missing; on
            # this first try that is not yet the user's problem.
            with _gc_paused(), _no_library_search(), contextlib.redirect_stdout(io.StringIO()):
                import weasyprint
            return weasyprint
        except (ImportError, OSError):
            _forget_weasyprint()
    with _gc_paused():
        import weasyprint

    return weasyprint
