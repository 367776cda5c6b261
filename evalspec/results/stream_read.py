"""The files of a streaming reduction read batch by batch, each batch typed and folded into the cell state.

:func:`reduce_files` is :func:`evalspec.results.stream_reduce.stream_results`'s worker. A file is
read in Arrow record batches (the readers of :mod:`evalspec.results.batches`, each value typed as
the whole-file readers type it) beside a thread computing its SHA-256; a file the batch reader
cannot read exactly (a blank line, a quoted CSV field, a type that changes between batches) is
read by the whole-file reader and folded in as one batch, and when that is found only part-way
through a file, the reduction starts again with that file read whole. Every batch goes through
:class:`~evalspec.results.stream_batch.Reducer`.

A local file's batches are decoded, coded and typed in a reader thread (:class:`ReadAhead`,
:class:`~evalspec.results.stream_batch.Typer`) while the main thread folds the one before
(:meth:`~evalspec.results.stream_batch.Reducer.fold`): Arrow's decoding, the dictionary coding
and much of the typing run outside Python's lock, so they overlap the fold on a second core. A
local Parquet file's decoding has a thread of its own behind that one (Arrow decodes while the
batch before is coded and typed). At most :data:`READ_AHEAD` batches wait;
an error in the thread is raised in the main thread where that batch would have come, the same
exception, so it is handled (and located) as before. The next local file is opened while a file
is read (:class:`_Ahead`): its scan starts and its first batch is decoded and coded at once, but
typed only once the file before has been typed (the typing is one thread at a time, in file
order), so there is no pause between files; a file that cannot be opened ahead is opened in its
turn, where its error is raised as before, and a refusal stops the file opened ahead.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["PARQUET_BATCH_ROWS", "READ_AHEAD", "ReadAhead", "reduce_files"]

#: Rows per Parquet record batch (one batch's columns are all that is held: about 20 MiB).
PARQUET_BATCH_ROWS = 1 << 18
#: Batches a reader thread decodes ahead of the fold (beside the one it is decoding and the one folded).
READ_AHEAD = 2
_POLL_S = 0.2  # how often a waiting side looks whether the other has stopped


class _Redo(Exception):
    """A file the batch reader cannot read exactly was found part-way: start again, reading it whole."""

    def __init__(self, path: Any) -> None:
        super().__init__(str(path))
        self.path = path


def reduce_files(plan: Any, files: list[tuple[Any, str, str, tuple[tuple[str, str], ...]]], plan_diagnostic: Any,
                 *, exact_refusal: bool) -> Any:
    """The checked case table of ``files`` (``(path, format, display, partitions)``) under ``plan``.

    A path may be a :class:`~evalspec.results.lake.RemoteObject` (display: its URI).
    """
    from evalspec.results.lake import RemoteObject
    from evalspec.results.stream_batch import Reducer

    whole: set[Any] = set()
    while True:
        red = Reducer(plan, [f[2] for f in files], plan_diagnostic, exact_refusal=exact_refusal)
        ahead = _Ahead(red, files, whole)
        try:
            for j, (path, fmt, display, parts) in enumerate(files):
                if isinstance(path, RemoteObject):
                    if path in whole or not _stream_object(red, j, path, fmt):
                        _whole_object(red, j, path, fmt)
                elif path in whole or not _stream_file(red, j, ahead):
                    _whole_file(red, j, path, fmt, display, parts)
            return red.finish()
        except _Redo as redo:
            whole.add(redo.path)
        finally:
            ahead.close()


def _whole_file(red: Any, j: int, path: Path, fmt: str, display: str, parts: tuple[tuple[str, str], ...]) -> None:
    from evalspec.results.readers import read_file
    from evalspec.results.table import FileInfo

    raw = _prepared(red.plan, read_file(path, fmt, display=display), parts)
    red.take(raw, j, first=True)
    red.file_done(FileInfo(path=raw.display, sha256=raw.sha256, rows=raw.rows, format=raw.format,
                           location=raw.location))


def _whole_object(red: Any, j: int, obj: Any, fmt: str) -> None:
    from evalspec.results import lake
    from evalspec.results.adapters import apply_plan
    from evalspec.results.table import FileInfo

    raw = apply_plan([lake.read_object(obj, fmt)], red.plan)[0]  # (its partition columns added by read_object)
    red.take(raw, j, first=True)
    red.file_done(FileInfo(path=raw.display, sha256=raw.sha256, rows=raw.rows, format=raw.format,
                           location=raw.location))


def _stream_object(red: Any, j: int, obj: Any, fmt: str) -> bool:
    """Fold an object-store object into ``red`` batch by batch, nothing written locally; False: read it whole.

    Text is read once, in order, hashed as it passes to Arrow's reader
    (:class:`~evalspec.results.lake.ObjectReader`); Parquet is read by range (footer, row
    groups) while a thread hashes one sequential pass over the object.
    """
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow as pa

    from evalspec.results import lake
    from evalspec.results.batches import _GiveUp, _progress, _same_rows, _text_batches
    from evalspec.results.table import FileInfo

    display, listed = obj.uri, obj
    obj = lake.pinned(obj)  # every opening below must see the object this one saw (its ETag)
    unit, first_line = ("row", 1) if fmt == "parquet" else ("line", 2 if fmt == "csv" else 1)
    head, header, readers = b"", None, []
    if fmt != "parquet":
        head = lake.object_head(obj)
        ok, header = _header(head, fmt)
        if not ok:
            return False

    def source() -> Any:  # a fresh pass each time Arrow's reader is opened (it may be opened twice)
        for old in readers:
            old.close()
        readers.append(lake.ObjectReader(obj))
        return readers[-1]

    stop, rows, redo, tick = threading.Event(), 0, False, _progress(display)
    with ThreadPoolExecutor(max_workers=1) as pool:
        digest = pool.submit(lake.object_digest, obj, stop) if fmt == "parquet" else None
        try:
            batches = (_parquet_batches(lake.open_object(obj)) if fmt == "parquet" else
                       _text_batches(source, fmt, head, header))
            for batch in batches:
                raw = _batch_raw(batch, display, fmt, display, unit, first_line + rows)
                red.take(_prepared(red.plan, raw, obj.partitions), j, first=rows == 0)
                rows += raw.rows
                tick(rows)
            if readers:
                src = readers[-1].source()  # (the rest of the object, if Arrow's reader left any)
                redo = src.head != head or not _same_rows(src, fmt, rows, header)
        except (_GiveUp, pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
            # what the batches cannot read exactly: the object is read again whole (_Redo below), and that
            # read locates the problem; the store's own errors are not caught here (they are named above)
            redo = True
            stop.set()  # (read whole instead: the pass's hash is not used)
        except BaseException:  # a refusal, the store's refusal (named), or an interrupt: the rest is not read
            stop.set()
            raise
        finally:
            for r in readers:
                r.close()
            sha, size = digest.result() if digest is not None else ("", 0)
    if readers and not redo:
        sha, size = src.sha256, src.size
    if redo:
        raise _Redo(listed)
    lake.check_unchanged(obj, size)
    red.file_done(FileInfo(path=display, sha256=sha, rows=rows, format=fmt, location=lake.object_location(obj, size)))
    return True


def _prepared(plan: Any, raw: Any, parts: tuple[tuple[str, str], ...]) -> Any:
    """A file's (or a batch's) raw columns with its partition columns and the plan's mapping applied."""
    from evalspec.results import lake
    from evalspec.results.adapters import apply_plan

    return apply_plan([lake.with_partitions(raw, parts)], plan)[0]


def _header(head: bytes, fmt: str) -> tuple[bool, list[str] | None]:
    """Whether the batch reader may read a file that starts with ``head``, and its CSV header."""
    from evalspec.results.files import BOM

    if fmt == "parquet":
        return True, None
    if not head or head[:1].isspace() or head.startswith(BOM) or head.isspace():
        return False, None
    if fmt != "csv":
        return True, None
    if b"\n" not in head or b'"' in head:
        return False, None
    try:
        header = [h.strip() for h in head[: head.index(b"\n")].decode("utf-8").split(",")]
    except UnicodeDecodeError:
        return False, None
    return (bool(any(header)) and len(set(header)) == len(header)), header


def _batches(path: Path, fmt: str, head: bytes, header: list[str] | None) -> Any:
    from evalspec.results.batches import _text_batches

    if fmt != "parquet":
        yield from _text_batches(path, fmt, head, header)
        return
    yield from _parquet_batches(str(path))


def _parquet_batches(source: Any) -> Iterator[Any]:
    """Record batches of a Parquet file: a local path, or an object store's random-access file (closed after)."""
    import pyarrow.parquet as pq

    from evalspec.results.batches import _GiveUp
    from evalspec.results.values import repeated

    try:
        pf = pq.ParquetFile(source)
        if repeated(pf.schema_arrow.names):
            raise _GiveUp
        texts = _text_columns(pf.schema_arrow)
        if texts:  # the texts as Parquet's own dictionaries: coded from the dictionary, not hashed a row at a time
            pf = pq.ParquetFile(source, read_dictionary=texts)
        if isinstance(source, str):  # a local file: decoded in a thread of its own, ahead of its coding and typing
            with ReadAhead(lambda: _row_group_batches(pf, bool(texts))) as decoded:
                yield from decoded
        else:
            yield from _row_group_batches(pf, bool(texts))
    finally:
        if not isinstance(source, str):
            source.close()


def _row_group_batches(pf: Any, dictionaries: bool) -> Iterator[Any]:
    """``pf``'s record batches of at most :data:`PARQUET_BATCH_ROWS` rows; with texts read as dictionaries, a row
    group at a time.

    A batch of dictionary columns ends where a row group (and its dictionaries) ends: read in one
    pass, batches of a fixed size would also end wherever that size falls, leaving a small batch
    beside most row groups' ends (at 200,000-row row groups, 17 batches a file instead of 10, a third
    of them small). A row group at a time, each ends at its own row group's end only; never more batches.
    """
    groups = pf.metadata.num_row_groups
    if not dictionaries or groups < 2:
        yield from pf.iter_batches(batch_size=PARQUET_BATCH_ROWS)
        return
    for i in range(groups):
        yield from pf.iter_batches(batch_size=PARQUET_BATCH_ROWS, row_groups=[i])


def _text_columns(schema: Any) -> list[str]:
    """The top-level text columns of a Parquet file's Arrow schema (:func:`~evalspec.results.arrow.dictionary_codes` codes them)."""
    import pyarrow as pa

    return [field.name for field in schema if "." not in field.name
            and (pa.types.is_string(field.type) or pa.types.is_large_string(field.type))]


def _raws(path: Path, fmt: str, head: bytes, header: list[str] | None, display: str, unit: str,
          first_line: int) -> Iterator[Any]:
    rows = 0
    for batch in _batches(path, fmt, head, header):
        yield _batch_raw(batch, path, fmt, display, unit, first_line + rows)
        rows += batch.num_rows


class ReaderStopped(OSError):
    """The reader thread ended without a batch, an end or an error (it cannot, short of the interpreter ending)."""


class ReadAhead:
    """The items of ``make()``'s iterator, produced in a thread ahead of the consumer: at most ``depth`` wait.

    An exception raised in the thread is raised by :meth:`__next__` in its place (the same object);
    a thread that ends without an end or an error raises :class:`ReaderStopped` rather than leave
    the consumer waiting. Used as a context manager: leaving it (at the end, on a refusal or an
    interrupt) stops the thread, which drops its iterator (closing its file), and waits for it.
    """

    _ITEM, _END, _ERROR = 0, 1, 2

    def __init__(self, make: Callable[[], Iterator[Any]], depth: int = READ_AHEAD) -> None:
        self._queue: queue.Queue[tuple[int, Any]] = queue.Queue(maxsize=max(1, depth))
        self._stop = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._produce, args=(make,), name="evalspec-read-ahead", daemon=True)
        self._thread.start()

    def _produce(self, make: Callable[[], Iterator[Any]]) -> None:
        try:
            for item in make():
                if not self._put((self._ITEM, item)):
                    return  # (the consumer has left: the iterator is dropped here, in this thread)
            self._put((self._END, None))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            self._put((self._ERROR, exc))

    def _put(self, entry: tuple[int, Any]) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(entry, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self) -> ReadAhead:
        return self

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        while True:
            try:
                kind, value = self._queue.get(timeout=_POLL_S)
                break
            except queue.Empty:
                if not self._thread.is_alive() and self._queue.empty():
                    self._done = True
                    raise ReaderStopped("the reader thread stopped before the end of the file") from None
        if kind == self._ITEM:
            return value
        self._done = True
        if kind == self._ERROR:
            raise value
        raise StopIteration

    def close(self) -> None:
        """Stop the thread and wait for it (it drops what it holds; what waits in the queue is dropped)."""
        self._done = True
        self._stop.set()
        while self._thread.is_alive():
            try:
                while True:
                    self._queue.get_nowait()
            except queue.Empty:
                pass
            self._thread.join(timeout=_POLL_S)

    def __enter__(self) -> ReadAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _typed(red: Any, path: Path, fmt: str, head: bytes, header: list[str] | None, display: str, unit: str,
           first_line: int, parts: tuple[tuple[str, str], ...], ready: Callable[[], bool] | None = None
           ) -> Iterator[Any]:
    """A file's batches read, the plan applied and typed (:meth:`~evalspec.results.stream_batch.Typer.typed`): in its reader thread.

    ``ready``: waited for before the first batch is typed (False: stop), while that batch is decoded and coded.
    """
    rows = 0
    for raw in _raws(path, fmt, head, header, display, unit, first_line):
        prepared = _prepared(red.plan, raw, parts)
        if ready is not None and rows == 0 and not ready():
            return
        yield red.typer.typed(prepared, first=rows == 0)
        rows += raw.rows


class _Opened:
    """A local file's streamed read, started: its SHA-256 scan, and a reader thread that decodes and codes its first
    batch at once but types it only once ``after`` is set (the file before it has been typed: one thread at a
    time types, in file order)."""

    def __init__(self, red: Any, path: Path, fmt: str, display: str, parts: tuple[tuple[str, str], ...],
                 head: bytes, header: list[str] | None, after: threading.Event | None) -> None:
        from concurrent.futures import ThreadPoolExecutor

        from evalspec.results.files import scan

        self.head, self.header = head, header
        self.stop = threading.Event()  # the file is abandoned (a refusal, an interrupt): the scan stops
        self.typed_all = threading.Event()  # this file's typing has ended: the next file's may begin
        self._pool = ThreadPoolExecutor(max_workers=1)
        self.scanned = self._pool.submit(scan, path, display, count_commas=fmt == "csv", stop=self.stop)
        unit, first_line = ("row", 1) if fmt == "parquet" else ("line", 2 if fmt == "csv" else 1)

        def ready() -> bool:  # (the file before this one has been typed; False: this one is abandoned)
            while after is not None and not after.wait(_POLL_S):
                if self.stop.is_set():
                    return False
            return True

        def typed() -> Iterator[Any]:
            try:
                yield from _typed(red, path, fmt, head, header, display, unit, first_line, parts, ready)
            finally:
                self.typed_all.set()

        self.typed = ReadAhead(typed)

    def scan_result(self) -> Any:
        """The scan's result (its located error raised), once it has ended."""
        try:
            return self.scanned.result()
        finally:
            self._pool.shutdown(wait=True)

    def abandon(self) -> None:
        """Stop its threads and wait for them (nothing of it is used)."""
        self.stop.set()
        self.typed.close()
        self._pool.shutdown(wait=True)


def _open_file(red: Any, path: Path, fmt: str, display: str, parts: tuple[tuple[str, str], ...],
               after: threading.Event | None = None) -> _Opened | None:
    """``path``'s streamed read started; None where the whole-file reader must read it."""
    from evalspec.results.files import peek

    head = peek(path, display)
    ok, header = _header(head, fmt)
    return _Opened(red, path, fmt, display, parts, head, header, after) if ok else None


class _Ahead:
    """The next local file's read, opened while the file before it is read (its decoding and typing begin as
    soon as the file before has been typed, while that file's last batches are folded): no pause between files."""

    def __init__(self, red: Any, files: list[tuple[Any, str, str, tuple[tuple[str, str], ...]]],
                 whole: set[Any]) -> None:
        self.red, self.files, self.whole = red, files, whole
        self.j: int | None = None
        self.opened: _Opened | None = None

    def open_after(self, j: int, typed_all: threading.Event) -> None:
        """Open file ``j + 1`` ahead, if it is a local file read in batches and opens (else it is opened in turn,
        where any error it has is raised in its place)."""
        from evalspec.results.lake import RemoteObject

        if self.j == j + 1 or j + 1 >= len(self.files):
            return  # (tried already, once a file)
        self.close()  # (one file ahead at most)
        self.j = j + 1
        path, fmt, display, parts = self.files[j + 1]
        if isinstance(path, RemoteObject) or path in self.whole:
            return
        try:
            self.opened = _open_file(self.red, path, fmt, display, parts, after=typed_all)
        except Exception:  # noqa: BLE001 - opened again in its turn, which raises it there
            self.opened = None

    def take(self, j: int) -> _Opened | None:
        """File ``j``'s read if it was opened ahead (then it is the caller's)."""
        opened, self.opened = (self.opened, None) if self.j == j else (None, self.opened)
        return opened

    def close(self) -> None:
        if self.opened is not None:
            self.opened.abandon()
            self.opened = None


def _stream_file(red: Any, j: int, ahead: _Ahead) -> bool:
    """Fold file ``j`` into ``red`` batch by batch; False where the whole-file reader must read it."""
    import pyarrow as pa

    from evalspec.results.batches import _GiveUp, _progress, _same_rows
    from evalspec.results.table import FileInfo

    path, fmt, display, parts = ahead.files[j]
    opened = ahead.take(j) or _open_file(red, path, fmt, display, parts)
    if opened is None:
        return False
    rows, redo = 0, False
    tick = _progress(display)
    try:
        with opened.typed as typed:
            for batch in typed:
                ahead.open_after(j, opened.typed_all)
                red.fold(batch, j)
                rows += batch.raw.rows
                tick(rows)
    except (_GiveUp, pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError, OSError):
        redo = True  # the file is read again whole (_Redo below): that read locates the problem or refuses it
    except BaseException:  # a refusal (or an interrupt): the rest is not read
        opened.stop.set()
        raise
    finally:
        src = opened.scan_result()  # the scan's located error, if any, wins
    if redo or src.head != opened.head or not _same_rows(src, fmt, rows, opened.header):
        raise _Redo(path)  # (part of it may be folded in already: start again)
    src.check_unchanged()
    location = {"partition": dict(parts)} if parts else None
    red.file_done(FileInfo(path=display, sha256=src.sha256, rows=rows, format=fmt, location=location))
    return True


def _batch_raw(batch: Any, path: Path | str, fmt: str, display: str, unit: str, first: int) -> Any:
    """One record batch as a :class:`~evalspec.results.readers.RawFile` of coded columns."""
    from evalspec.results.batches import _GiveUp, _batch_columns
    from evalspec.results.readers import RawFile
    from evalspec.results.values import LazyCoded

    columns: dict[str, Any] = {}
    for name, codes, uniques in _batch_columns(batch, fmt, display, unit):
        if name in columns:
            raise _GiveUp
        columns[name] = LazyCoded(codes, uniques)
    n = batch.num_rows
    lines = np.arange(first, first + n, dtype=np.int64)
    return RawFile(path=str(path), display=display, format=fmt, sha256="", columns=columns, lines=lines, unit=unit)
