"""WeasyPrint is imported without the subprocess library search, and with it when that fails.

Each test runs in a fresh interpreter: the import can only be observed once per process.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("weasyprint")

_FAST = r"""
import ctypes.util, sys
calls = []
real = ctypes.util.find_library
def counting(name):
    calls.append(name)
    return real(name)
ctypes.util.find_library = counting
from evalspec.report.pdf_import import import_weasyprint
wp = import_weasyprint(fast=True)
assert ctypes.util.find_library is counting, "find_library not restored"
pdf = wp.HTML(string="<p>Hello PDF</p>").write_pdf()
assert pdf.startswith(b"%PDF"), pdf[:10]
print(len(calls))
"""

_FALLBACK = r"""
import importlib.abc, sys
import evalspec.report.pdf_import as pi

class Refuse(importlib.abc.MetaPathFinder):
    # the first try fails half-way, as when a library is found only by gcc's or ld's search
    def find_spec(self, name, path=None, target=None):
        if name == "weasyprint.text.ffi":
            raise OSError("cannot load library 'libpango-1.0.so.0'")
        return None

real_block = pi._no_library_search
import contextlib
@contextlib.contextmanager
def failing():
    with real_block():
        sys.meta_path.insert(0, Refuse())
        try:
            yield
        finally:
            sys.meta_path.pop(0)
pi._no_library_search = failing
wp = pi.import_weasyprint(fast=True)
assert wp.HTML(string="<p>again</p>").write_pdf().startswith(b"%PDF")
print("ok")
"""


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_fast_import_starts_no_library_search_and_restores_find_library() -> None:
    assert _run(_FAST).strip().splitlines()[-1] == "0"


def test_a_failed_fast_import_is_retried_with_the_standard_search() -> None:
    assert _run(_FALLBACK).strip().splitlines()[-1] == "ok"
