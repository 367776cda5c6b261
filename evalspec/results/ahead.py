"""A results file read ahead: its scan and Arrow's parse begun while the plan is still being validated.

``evalspec run`` knows which file it will read from the plan's text alone, well before the plan is
validated and the modules that check and analyse it are imported: at 1M rows about 0.3 s of Python
on one core. Arrow's parse and the scan (SHA-256, line count) hold no lock, so :func:`read_ahead`
starts them then, on the other core, instead of after that Python.

It is a guess that can only save time, never change what is read:

* It is made only for a plan whose ``data.results`` is one plain file name (no glob, no folder, no
  object store) of a regular JSONL file inside the plan's folder, of :data:`SMALL_FILE_BYTES` to
  :data:`WHOLE_FILE_BYTES` bytes: the file :func:`~evalspec.results.batches.stream_table` parses
  whole. Nothing else is opened, and a file outside the plan's folder (refused unless allowed) is
  never read ahead.
* :meth:`ReadAhead.take` gives the reader the scan and the parse only for that very file (the same path),
  unchanged since the read ahead began (the same device, inode, size and modification time, then and
  now) and with the same first 64 KiB the reader itself peeked; the reader checks the file again
  once it is done (:meth:`~evalspec.results.files.Source.check_unchanged`), as for any read. The
  parse is the reader's own call (:func:`~evalspec.results.formats.jsonl.jsonl_arrow_table`, same
  arguments), so its values are the ones the reader would get.
* Whatever goes wrong ahead (an unreadable plan or file, a parse Arrow refuses) is dropped without a
  word: the reader then reads the file as it always does and says what is wrong, at its line.

The threads are daemons importing only third-party modules (pyarrow), so an import never waits on
one of evalspec's, and a run that stops early (an invalid plan) exits without waiting for them.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evalspec.results import batches, readers
from evalspec.results.files import Source, peek, scan
from evalspec.results.formats.jsonl import jsonl_arrow_table

__all__ = ["ReadAhead", "read_ahead", "start"]

#: The largest plan file looked at (:data:`evalspec.plan.source.MAX_PLAN_BYTES`).
_PLAN_BYTES = 1 << 20


@dataclass
class ReadAhead:
    """One file's scan and parse, made in threads (:meth:`take` waits for them)."""

    plan: Path  # the plan file that names it
    path: Path
    identity: tuple[int, int, int, int]  # (device, inode, size, modification time) when the read began
    block_bytes: int  # Arrow's block (:data:`evalspec.results.batches.BATCH_BYTES`), as the reader parses
    thread: threading.Thread | None = None
    head: bytes | None = None
    source: Source | None = None
    table: Any = None
    dropped: bool = False  # (the block that wanted it has ended: nothing is kept)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self) -> None:
        """The thread's work: the first 64 KiB, then the scan (a thread of its own) beside Arrow's parse."""
        try:
            import pyarrow.json  # noqa: F401 - (third-party only: never waits on an import of evalspec's)

            self.head = peek(self.path, str(self.path))
            scanned: list[Source] = []

            def scan_it() -> None:
                import pyarrow.compute  # noqa: F401 - the typing's next need (its import: Python, beside the parse)

                scanned.append(scan(self.path, str(self.path), count_commas=False))

            scanner = threading.Thread(target=scan_it, name="evalspec-scan-ahead", daemon=True)
            scanner.start()
            try:
                table = jsonl_arrow_table(str(self.path), self.head, block_size=self.block_bytes)
            finally:
                scanner.join()
            with self._lock:
                if scanned and not self.dropped:
                    self.source, self.table = scanned[0], table
        except Exception:  # noqa: BLE001, S110 - the reader reads the file again and says what is wrong
            pass

    def take(self, path: Path, head: bytes, display: str) -> tuple[Source, Any] | None:
        """The scan (shown as ``display``) and the parse of ``path`` whose first bytes are ``head``, if they are of
        that file as it is now; None otherwise. Given once: the read ahead then holds nothing."""
        if self.thread is not None:
            self.thread.join()
        with self._lock:
            source, table, self.source, self.table = self.source, self.table, None, None
        if source is None or table is None or Path(path) != self.path or head != self.head or source.head != head:
            return None
        if _identity(path) != self.identity or (source.size, source.mtime_ns) != self.identity[2:]:
            return None
        return replace(source, display=display), table


def _as_read() -> tuple[int, int, int]:
    """The sizes of a file the batch reader parses whole and its block size, as they are set now (tests change
    them); sizes (1, 0) when files are not read by it (:data:`evalspec.results.readers.STREAM` off)."""
    smallest, largest = (readers.SMALL_FILE_BYTES, batches.WHOLE_FILE_BYTES) if readers.STREAM else (1, 0)
    return smallest, largest, batches.BATCH_BYTES


def _identity(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _planned_file(plan_path: Path) -> Path | None:
    """The one JSONL file the plan at ``plan_path`` reads whole, judged from its text alone; else None."""
    try:
        import yaml

        if not plan_path.is_file() or plan_path.stat().st_size > _PLAN_BYTES:
            return None
        doc = yaml.load(plan_path.read_bytes(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
        data = doc.get("data") if isinstance(doc, dict) else None
        results = data.get("results") if isinstance(data, dict) else None
        fmt = data.get("format", "auto") if isinstance(data, dict) else None
    except Exception:  # noqa: BLE001 - the plan's loader says what is wrong with it
        return None
    if not isinstance(results, str) or not results or any(ch in results for ch in "*?[") or "://" in results:
        return None
    path = plan_path.parent / results
    if fmt not in ("auto", "jsonl") or (fmt == "auto" and path.suffix.lower() not in (".jsonl", ".ndjson")):
        return None
    home = os.path.realpath(plan_path.parent or ".")
    if os.path.commonpath([home, os.path.realpath(path)]) != home:
        return None  # outside the plan's folder: refused unless allowed, so never read ahead
    return path


def start(plan_path: str | os.PathLike[str]) -> ReadAhead | None:
    """Begin reading ahead the file the plan at ``plan_path`` reads, if it is one that can be (see the module)."""
    path = _planned_file(Path(plan_path))
    identity = _identity(path) if path is not None else None
    smallest, largest, block = _as_read()
    if path is None or identity is None or not smallest <= identity[2] <= largest:
        return None
    from evalspec.results.stream_reduce import may_reduce

    if may_reduce(path):
        return None  # (the reduction while read may take it, which reads files its own way)
    ahead = ReadAhead(plan=Path(plan_path), path=path, identity=identity, block_bytes=block)
    ahead.thread = threading.Thread(target=ahead.run, name="evalspec-read-ahead", daemon=True)
    ahead.thread.start()
    return ahead


@contextlib.contextmanager
def read_ahead(plan_path: str | os.PathLike[str]) -> Iterator[None]:
    """Read ahead the results file of the plan at ``plan_path`` for the reads made inside the block.

    Inside a block of its own for the same plan (the ``run`` command begins one before it imports what the run
    needs), nothing more is begun: the outer block's read ahead serves.
    """
    outer = batches.READ_AHEAD.get()
    if outer is not None and outer.plan == Path(plan_path):
        yield
        return
    token = batches.READ_AHEAD.set(start(plan_path))
    try:
        yield
    finally:
        ahead = batches.READ_AHEAD.get()
        batches.READ_AHEAD.reset(token)
        if ahead is not None:
            with ahead._lock:  # (not taken: dropped now, or by the thread when it is done)
                ahead.dropped, ahead.source, ahead.table = True, None, None
