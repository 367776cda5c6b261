"""Results tables read in record batches: bounded memory, the values of the whole-file readers.

A JSONL, CSV or Parquet file is parsed by Arrow one batch at a time
(:func:`pyarrow.json.open_json`, :func:`pyarrow.csv.open_csv`,
:meth:`pyarrow.parquet.ParquetFile.iter_batches`) and each column is kept as codes into its
distinct values (:class:`~evalspec.results.values.LazyCoded`: one to four bytes a row), never
as an object per row. Each batch's values are typed exactly as the whole-file readers type
them (:func:`~evalspec.results.arrow.arrow_codes`, :func:`~evalspec.results.formats.csv.csv_value`)
and merged into one first-seen list of distinct values per column, so the codes are the ones
:func:`~evalspec.results.table.factorize` gives for the whole column (property-tested: the
claim is byte-identical to the whole-file path's).

The SHA-256 and line counts come from one :func:`~evalspec.results.files.scan` that runs in a
thread beside the parse. Whatever the whole-file fast path would not read (a carriage
return, a blank line, a byte-order mark, a quote in CSV, a type that changes between batches,
a nested value, an integer beyond 2**53 read as a float) makes the batch reader give up
(``None``), and :func:`evalspec.results.readers.read_file` reads the file the whole-file way,
which locates any problem at its line.

A watcher (:class:`Watch`) sees each batch's values of one column as they are read: the
case-table limit (:data:`~evalspec.limits.MAX_CASE_CELLS`) is refused at the row that
exceeds it, before the rest of the input is read. A line on stderr every
:data:`PROGRESS_SECONDS` says how far a long read has come.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evalspec.errors import InputError
from evalspec.results.arrow import arrow_codes, arrow_strings, release_arrow_memory
from evalspec.results.files import BOM, Source, peek, scan
from evalspec.results.values import EXACT, LazyCoded, Texts, narrow_codes, repeated

__all__ = ["BATCH_BYTES", "PROGRESS_SECONDS", "Distinct", "Streamed", "Watch", "stream_table"]

#: Bytes of text Arrow parses per batch (JSONL, CSV; Parquet: this many / 64 rows a batch). Arrow reads
#: ahead by tens of batches, so this sets the memory the parse holds (about 40 MiB at 1 MiB).
BATCH_BYTES = 1 << 20
#: A long read says how far it has come on stderr this often (seconds).
PROGRESS_SECONDS = 5.0


class Distinct:
    """One column's distinct values across batches (first-seen order) and each batch's codes into them."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.values: list[Any] = []
        self.parts: list[np.ndarray] = []
        self.rows = 0
        self.start = 0

    def add(self, codes: np.ndarray, uniques: np.ndarray) -> np.ndarray:
        """Add a batch given as ``codes`` into its ``uniques`` (None among them = missing); its global codes.

        Values are one value when they have the same type and compare equal (``1``, ``True`` and
        ``"1"`` are three), as :class:`~evalspec.results.values.CodedColumn` merges them. The
        values first seen in this batch are ``values[start:]``, ``start`` the count before it.
        """
        index: dict[Any, int] = self.index
        values = self.values
        self.start = len(values)
        vals = uniques.tolist()
        texts = isinstance(uniques, Texts) or all(v.__class__ is str for v in vals)
        keys = vals if texts else [v if v.__class__ is str else (v.__class__, v) for v in vals]  # (a text never
        found = list(map(index.get, keys))  # equals a tuple)
        if None in found:  # values not seen before (or a missing one)
            for i, g in enumerate(found):
                if g is None and vals[i] is not None:
                    g = index.get(keys[i])  # (two values of this batch may read as one)
                    if g is None:
                        g = index[keys[i]] = len(values)
                        values.append(vals[i])
                    found[i] = g
            found = [-1 if g is None else g for g in found]
        remap = np.empty(len(found) + 1, dtype=np.int64)
        remap[:-1] = found
        remap[-1] = -1
        out = narrow_codes(remap[codes], len(values))
        self.parts.append(out)
        self.rows += len(codes)
        return out

    def add_missing(self, n: int) -> None:
        """Add ``n`` rows without a value."""
        self.parts.append(np.full(n, -1, dtype=np.int8))
        self.rows += n

    def column(self) -> LazyCoded:
        """The whole column."""
        uniques = np.empty(len(self.values), dtype=object)
        uniques[:] = self.values
        if self.values and all(v.__class__ is str for v in self.values):
            uniques = Texts.of(uniques, arrow_strings(self.values))  # typed in C later (missing, times, sorting)
        codes = np.concatenate(self.parts) if self.parts else np.zeros(0, dtype=np.int8)
        self.parts = []
        return LazyCoded(narrow_codes(codes, len(self.values)), uniques)


@dataclass
class Watch:
    """A limit on the distinct values of one column over every file of a results set, checked as they are read.

    ``refuse(display, line, unit)`` builds the error raised at the first row of the value one
    too many (``line``: its 1-based line or row number), so the read stops there. One watch is
    shared by the files of a results set: ``earlier`` holds the values of the files read before.
    """

    column: str
    limit: int
    refuse: Callable[[str, int, str], Exception]
    earlier: set[Any] = field(default_factory=set)
    extra: int = 0  # values of the file being read that no earlier file had

    def see(self, dist: Distinct, codes: np.ndarray, first_row: int, display: str, unit: str) -> None:
        """A batch of the column was added to ``dist`` (this file's values) as ``codes``."""
        earlier = self.earlier
        for g in range(dist.start, len(dist.values)):
            v = dist.values[g]
            if (v if v.__class__ is str else (v.__class__, v)) not in earlier:
                self.extra += 1
                if len(earlier) + self.extra > self.limit:
                    row = int(np.flatnonzero(codes.astype(np.int64) == g)[0])
                    raise self.refuse(display, first_row + row, unit)

    def finish(self, dist: Distinct) -> None:
        """The file was read to its end: its values are the earlier files' now."""
        self.earlier.update(v if v.__class__ is str else (v.__class__, v) for v in dist.values)
        self.extra = 0


@dataclass
class Streamed:
    """What a batch read gives: the columns, the row count and the scan of the file."""

    columns: dict[str, LazyCoded]
    rows: int
    source: Source


class _GiveUp(Exception):
    """The batch reader cannot give the whole-file reader's values: read the file the whole-file way."""


def _trim_heap() -> None:
    """Give the C heap's freed pages back to the system (glibc keeps them; a batch read frees many)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):  # another C library: nothing to do
            pass


def _progress(display: str) -> Callable[[int], None]:
    start = last = time.monotonic()

    def tick(rows: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= PROGRESS_SECONDS:
            last = now
            print(f"evalspec: {display}: {rows:,} rows read ({now - start:.0f} s)", file=sys.stderr, flush=True)

    return tick


def _simple(typ: Any) -> bool:
    import pyarrow as pa

    return (pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_boolean(typ)
            or pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_null(typ))


def _text_batches(path: Path, fmt: str, head: bytes, header: list[str] | None) -> Iterator[Any]:
    """Arrow's record batches of a JSONL or CSV file (CSV: every cell as text)."""
    import pyarrow as pa

    if fmt == "csv":
        import pyarrow.csv as pcsv

        assert header is not None
        reader = pcsv.open_csv(
            str(path),
            read_options=pcsv.ReadOptions(column_names=header, skip_rows=1, block_size=BATCH_BYTES),
            parse_options=pcsv.ParseOptions(newlines_in_values=False),
            convert_options=pcsv.ConvertOptions(column_types={h: pa.string() for h in header},
                                                strings_can_be_null=False, quoted_strings_can_be_null=False))
        yield from reader
        return
    import pyarrow.json as pj

    def stamped(schema: Any) -> list[str]:
        return [f.name for f in schema if pa.types.is_timestamp(f.type) or pa.types.is_date(f.type)]

    def open_(as_text: list[str]) -> Any:
        opts = None
        if as_text:  # text that looks like a time stays text, as the whole-file reader keeps it
            opts = pj.ParseOptions(explicit_schema=pa.schema([(n, pa.string()) for n in as_text]),
                                   unexpected_field_behavior="infer")
        return pj.open_json(str(path), read_options=pj.ReadOptions(block_size=BATCH_BYTES), parse_options=opts)

    cut = head.rfind(b"\n") + 1 or len(head)
    sniffed = stamped(pj.read_json(pa.BufferReader(head[:cut])).schema)
    reader = open_(sniffed)
    late = stamped(reader.schema)
    if late:
        reader = open_(sniffed + late)
    if stamped(reader.schema):
        raise _GiveUp
    yield from reader


def _batch_columns(batch: Any, fmt: str, display: str, unit: str) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """``(name, codes, uniques)`` of each column of a batch, typed as the whole-file reader types it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from evalspec.results.formats.csv import csv_value

    for name, col in zip(batch.schema.names, batch.columns):
        typ = col.type
        if fmt == "jsonl":
            if not _simple(typ):
                raise _GiveUp  # nested values: the exact path keeps them as they are
            if pa.types.is_string(typ) or pa.types.is_large_string(typ):
                try:
                    col.validate(full=True)  # Arrow does not check UTF-8 while parsing JSON
                except pa.ArrowInvalid:
                    raise _GiveUp from None
            if pa.types.is_floating(typ) and len(col):
                big = pc.max(pc.abs(col)).as_py()
                if big is not None and big >= EXACT:
                    raise _GiveUp  # an integer beyond 2**53 read as a float
        try:
            coded = arrow_codes(col, display, unit)
        except InputError:  # (a binary value that is not UTF-8): the whole-file reader locates it in the file
            raise _GiveUp from None
        if isinstance(coded, np.ndarray):  # all missing, or nested values
            if coded.size and any(v is not None for v in coded.tolist()):
                raise _GiveUp  # nested values: the whole-file reader keeps them as objects
            yield name, np.full(coded.size, -1, dtype=np.int8), np.zeros(0, dtype=object)
            continue
        codes, uniques, _ = coded
        if fmt == "csv":
            typed = np.empty(len(uniques), dtype=object)
            typed[:] = [csv_value(t) for t in uniques.tolist()]
            uniques = typed
        yield name, codes, uniques


def _batches(path: Path, fmt: str, head: bytes, header: list[str] | None) -> Iterator[Any]:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(str(path))
        if repeated(pf.schema_arrow.names):
            raise _GiveUp  # the whole-file reader names the duplicate columns
        yield from pf.iter_batches(batch_size=max(1, BATCH_BYTES // 64))
        return
    yield from _text_batches(path, fmt, head, header)


def _read(path: Path, fmt: str, display: str, head: bytes, header: list[str] | None,
          watches: list[Watch]) -> tuple[dict[str, Distinct], int]:
    unit = "row" if fmt == "parquet" else "line"
    first_line = 1 if fmt != "csv" else 2
    columns: dict[str, Distinct] = {}
    rows = 0
    tick = _progress(display)
    watched = {w.column: w for w in watches}
    for batch in _batches(path, fmt, head, header):
        n = batch.num_rows
        seen = set()
        for name, codes, uniques in _batch_columns(batch, fmt, display, unit):
            if name in seen:
                raise _GiveUp
            seen.add(name)
            dist = columns.get(name)
            if dist is None:
                dist = columns[name] = Distinct()
                dist.add_missing(rows)
            gcodes = dist.add(codes, uniques)
            w = watched.get(name)
            if w is not None:
                w.see(dist, gcodes, rows + first_line, display, unit)
        for name, dist in columns.items():
            if name not in seen:
                dist.add_missing(n)
        rows += n
        tick(rows)
        del batch
    return columns, rows


def stream_table(path: Path, fmt: str, display: str, watches: list[Watch] | None = None) -> Streamed | None:
    """Read a results table batch by batch; ``None`` where the whole-file reader must read it.

    Refused as :func:`~evalspec.results.files.scan` refuses a file (not a regular file, too big,
    unreadable), and a file that changes while it is read is refused afterwards.
    """
    from concurrent.futures import ThreadPoolExecutor

    try:
        import pyarrow as pa
    except ImportError:  # (a core dependency): the whole-file reader says what to install
        return None
    head = peek(path, display)
    header = None
    if fmt != "parquet":
        if not head or head[:1].isspace() or head.startswith(BOM) or head.isspace():
            return None
    if fmt == "csv":
        if b"\n" not in head or b'"' in head:
            return None
        try:
            header = [h.strip() for h in head[: head.index(b"\n")].decode("utf-8").split(",")]
        except UnicodeDecodeError:
            return None
        if not any(header) or len(set(header)) != len(header):
            return None
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=1) as pool:
        scanned = pool.submit(scan, path, display, count_commas=fmt == "csv", stop=stop)
        try:
            columns, rows = _read(path, fmt, display, head, header, watches or [])
        except (_GiveUp, pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError, OSError):
            columns, rows = {}, -1  # the whole-file reader reads it (and the table checks the limits)
        except BaseException:  # a watch refused the read (or an interrupt): the rest is not read
            stop.set()
            raise
        finally:
            src = scanned.result()  # the scan's located error, if any, wins
    release_arrow_memory()
    if rows < 0 or src.head != head or not _same_rows(src, fmt, rows, header):
        for w in watches or []:
            w.extra = 0
        return None
    src.check_unchanged()
    for w in watches or []:
        if w.column in columns:
            w.finish(columns[w.column])
    out = Streamed(columns={name: d.column() for name, d in columns.items()}, rows=rows, source=src)
    del columns
    _trim_heap()  # (10M rows: 580 MiB resident after the read without it, 390 with it)
    return out


def _same_rows(src: Source, fmt: str, rows: int, header: list[str] | None) -> bool:
    """Whether the batches hold every line of the file (Arrow skips blank lines; CSV: no quoted field)."""
    if fmt == "parquet":
        return True
    if not src.size or src.has_cr:
        return False
    if fmt == "jsonl":
        return rows == src.lines
    assert header is not None
    return (not src.has_quote and src.lines >= 2 and rows == src.lines - 1
            and src.commas == (len(header) - 1) * src.lines)
