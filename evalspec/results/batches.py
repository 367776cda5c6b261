"""Results tables read in record batches: bounded memory, the values of the whole-file readers.

A JSONL, CSV or Parquet file is parsed by Arrow one batch at a time
(:func:`pyarrow.json.open_json`, :func:`pyarrow.csv.open_csv`,
:meth:`pyarrow.parquet.ParquetFile.iter_batches`), or, a JSONL or CSV file of at most
:data:`WHOLE_FILE_BYTES`, whole in one call on Arrow's threads (:func:`pyarrow.json.read_json`:
one batch whose columns are dictionary-encoded once, not a lookup per batch; the bare parse's
speed at 1M rows, at the memory of the table). Each column is kept as codes into its
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

import importlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evalspec.errors import InputError
from evalspec.results.arrow import arrow_codes, arrow_numpy, arrow_strings, release_arrow_memory
from evalspec.results.files import BOM, Source, peek, scan
from evalspec.results.text_index import TextIndex, grown
from evalspec.results.values import positions
from evalspec.results.values import EXACT, LazyCoded, LazyNumbers, Texts, narrow_codes, repeated

__all__ = ["BATCH_BYTES", "NUMBERS", "PARQUET_BATCH_BYTES", "PROGRESS_SECONDS", "Distinct", "Streamed", "Watch",
           "stream_table"]

#: Bytes of text Arrow parses per batch (JSONL, CSV). Arrow reads ahead by tens of batches, so this sets
#: the memory the parse holds (about 40 MiB at 1 MiB).
BATCH_BYTES = 1 << 20
#: Uncompressed bytes of a Parquet batch (Parquet is decoded a batch at a time, without read-ahead; the
#: values of a batch are held while it is numbered, so this bounds the memory of the read).
PARQUET_BATCH_BYTES = 256 << 20
#: A long read says how far it has come on stderr this often (seconds).
PROGRESS_SECONDS = 5.0
#: JSONL and CSV files of at most this many bytes are parsed whole, in one call on Arrow's threads, and
#: typed a column at a time (at 1M rows, 173 MiB: about half the CPU of 174 batches, whose texts are looked
#: up batch by batch); larger ones a batch at a time (bounded memory). Both give the same values
#: (property-tested); only time and memory differ. A watch (the case-table limit) then sees the whole
#: file's column at once: the refusal names the same row, after the parse rather than during it.
WHOLE_FILE_BYTES = 256 << 20


#: The file read ahead for the reads made now (a :class:`evalspec.results.ahead.ReadAhead`, set by
#: :func:`evalspec.results.ahead.read_ahead`), or None; the first read takes it.
READ_AHEAD: ContextVar[Any] = ContextVar("evalspec_read_ahead", default=None)

#: Columns the reads made now hand on as numbers where they can (a case table's counts: ``token =
#: NUMBERS.set(names)``, then ``NUMBERS.reset(token)``). A whole Parquet file's column of one of these names
#: that Arrow reads as integers without a null is a :class:`~evalspec.results.values.LazyNumbers` (its values
#: as they are, never numbered: reading it as numbers costs nothing), which reads as the column the general
#: path gives wherever else it is read; any other column is read as before.
NUMBERS: ContextVar[frozenset[str]] = ContextVar("evalspec_numbers", default=frozenset())


def _taken_ahead(path: Path, head: bytes, display: str) -> tuple[Source, Any] | None:
    """The scan and Arrow's parse of ``path`` made ahead, when they are of this very file as it is now (see
    :meth:`evalspec.results.ahead.ReadAhead.take`); None otherwise."""
    ahead = READ_AHEAD.get()
    if ahead is None:
        return None
    READ_AHEAD.set(None)  # (one read takes it)
    return ahead.take(path, head, display)  # type: ignore[no-any-return]


class Distinct:
    """One column's distinct values across batches (first-seen order) and each batch's codes into them.

    Texts are kept in a :class:`~evalspec.results.text_index.TextIndex` (looked up and added in
    C, never a Python object per value); other values (numbers, booleans) in a dict keyed by
    ``(type, value)``. A value's code is the order in which it was first seen, whatever its type.
    """

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}  # values other than text: (type, value) -> code
        self.texts = TextIndex()
        self._objects: list[Any] | None = None  # every value by code, once the column holds more than text
        self._text_codes: np.ndarray | None = None  # the code of each text of ``texts`` (None: its number)
        self.count = 0  # distinct values so far
        self.parts: list[np.ndarray] = []
        self.rows = 0
        self.start = 0
        self._whole: LazyCoded | None = None  # the column, once made (:meth:`finish`)

    @property
    def values(self) -> list[Any]:
        """The distinct values, in code order (built on demand from the texts: ``count`` is cheaper)."""
        if self._objects is not None:
            return self._objects
        return self.texts.arrow().to_pylist()

    def add(self, codes: np.ndarray, uniques: Any) -> np.ndarray:
        """Add a batch given as ``codes`` into its ``uniques`` (None among them = missing); its global codes.

        ``uniques`` is an object array, or an Arrow string array of distinct texts (what
        :func:`_batch_columns` gives with ``objects=False``). Values are one value when they have
        the same type and compare equal (``1``, ``True`` and ``"1"`` are three), as
        :class:`~evalspec.results.values.CodedColumn` merges them. The values first seen in this
        batch have codes ``start`` to ``count - 1``, ``start`` the count before it.
        """
        assert self._whole is None, "a batch added to a finished column"
        self.start = self.count
        arrow = _arrow_texts(uniques)
        found = self._add_texts(arrow) if arrow is not None else self._add_values(uniques.tolist())
        if self.start == 0 and arrow is not None and len(found) == self.count:  # the first texts: their own codes
            out = narrow_codes(codes, self.count)
        elif self.start == 0 and np.array_equal(found, np.arange(len(found))):  # the first values, in their order
            out = narrow_codes(codes, self.count)  # (each its own code: no gather of every row)
        else:
            remap = np.empty(len(found) + 1, dtype=np.int64)
            remap[:-1] = found
            remap[-1] = -1
            out = narrow_codes(remap[codes], self.count)
        self.parts.append(out)
        self.rows += len(codes)
        return out

    def _add_texts(self, arrow: Any) -> np.ndarray:
        """Codes of distinct texts (an Arrow array), the new ones numbered in their order."""
        ids, new = self.texts.add(arrow)
        k = int(np.count_nonzero(new))
        if self._text_codes is None:  # every value is a text: a text's number is its code
            self.count += k
            return ids
        assert self._objects is not None
        if k:
            self._more_text_codes(np.arange(self.count, self.count + k))
            self._objects.extend(arrow.take(positions(np.flatnonzero(new))).to_pylist())
            self.count += k
        return self._text_codes[ids]

    def _more_text_codes(self, codes: np.ndarray) -> None:
        """The codes of the texts just added to ``texts`` (room doubled as needed: linear in all)."""
        assert self._text_codes is not None
        n = len(self.texts)
        self._text_codes = grown(self._text_codes, n)
        self._text_codes[n - codes.size:n] = codes

    def _add_values(self, vals: list[Any]) -> list[int]:
        """Codes of values of any types (a value may repeat: two inputs that read as one), -1 for None."""
        if self._objects is None:  # from now on the column holds more than text: every value by code
            self._objects = self.values
            self._text_codes = np.arange(len(self.texts))
        objects, index = self._objects, self.index
        found: list[int | None] = [None] * len(vals)
        at = [i for i, v in enumerate(vals) if v.__class__ is str]
        if at:
            numbers = self.texts.find(arrow_strings([vals[i] for i in at]))
            for i, t in zip(at, numbers.tolist()):
                if t >= 0:
                    found[i] = int(self._text_codes[t])
        fresh: dict[str, int] = {}  # texts first seen in this batch
        for i, v in enumerate(vals):
            if found[i] is not None or v is None:
                continue
            if v.__class__ is str:
                g = fresh.get(v)
                if g is None:
                    g = fresh[v] = self.count
                    objects.append(v)
                    self.count += 1
            else:
                key = (v.__class__, v)
                g = index.get(key)
                if g is None:
                    g = index[key] = self.count
                    objects.append(v)
                    self.count += 1
            found[i] = g
        if fresh:
            self.texts.add(arrow_strings(list(fresh)))
            self._more_text_codes(np.fromiter(fresh.values(), dtype=np.int64, count=len(fresh)))
        return [-1 if g is None else g for g in found]

    def add_missing(self, n: int) -> None:
        """Add ``n`` rows without a value."""
        assert self._whole is None, "rows added to a finished column"
        self.parts.append(np.full(n, -1, dtype=np.int8))
        self.rows += n

    def finish(self) -> None:
        """The column is whole (no batch or missing rows follow): make it now (:meth:`column` gives it)."""
        self._whole = None
        self._whole = self.column()

    def column(self) -> LazyCoded:
        """The whole column."""
        if self._whole is not None:
            return self._whole
        codes = (self.parts[0] if len(self.parts) == 1 else np.concatenate(self.parts) if self.parts
                 else np.zeros(0, dtype=np.int8))  # (one batch: its codes as they are, not copied)
        self.parts = []
        if self._objects is None and self.count:  # every value a text: they keep their Arrow form, typed in C
            # later, and are made Python objects only if something reads them so (LazyCoded.uniques)
            return LazyCoded.of_texts(narrow_codes(codes, self.count), self.texts.arrow())
        uniques = np.empty(self.count, dtype=object)
        if self._objects is not None:
            uniques[:] = self._objects
            if self._objects and len(self.texts) == self.count:
                uniques = Texts.of(uniques, self.texts.arrow().take(positions(np.argsort(self._text_codes[:self.count]))))
        return LazyCoded(narrow_codes(codes, self.count), uniques)


def _arrow_texts(uniques: Any) -> Any:
    """The Arrow form of ``uniques`` when they are distinct texts (none missing) that carry one, else None."""
    if isinstance(uniques, np.ndarray):
        arrow = getattr(uniques, "arrow", None)
        return arrow if arrow is not None and len(arrow) == len(uniques) else None
    return uniques  # an Arrow string array (``_batch_columns(objects=False)``)


class _Seen:
    """The values of the files read before (their texts found in C), for :class:`Watch`.

    Filled with each file's :class:`Distinct` at its end; looked into only when a later file
    of the same results set has new values, so one file costs nothing here.
    """

    def __init__(self) -> None:
        self.pending: list[tuple[Any, list[Any]]] = []  # (texts as Arrow, other keys) of each finished file
        self.texts = TextIndex()
        self.others: set[Any] = set()

    def __len__(self) -> int:
        self._settle()
        return len(self.texts) + len(self.others)

    def update(self, dist: Distinct) -> None:
        others = [] if dist._objects is None else [(v.__class__, v) for v in dist._objects if v.__class__ is not str]
        self.pending.append((dist.texts.arrow(), others))

    def _settle(self) -> None:
        for texts, others in self.pending:
            self.texts.add(texts)
            self.others.update(others)
        self.pending = []

    def known(self, dist: Distinct, lo: int, hi: int) -> np.ndarray:
        """Whether each of ``dist``'s values with codes ``lo`` to ``hi - 1`` was seen before."""
        self._settle()
        if dist._objects is None:
            return self.texts.find(dist.texts.arrow().slice(lo, hi - lo)) >= 0
        out = np.zeros(hi - lo, dtype=bool)
        vals = dist._objects[lo:hi]
        at = [i for i, v in enumerate(vals) if v.__class__ is str]
        if at:
            out[at] = self.texts.find(arrow_strings([vals[i] for i in at])) >= 0
        for i, v in enumerate(vals):
            if v.__class__ is not str and (v.__class__, v) in self.others:
                out[i] = True
        return out


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
    earlier: _Seen = field(default_factory=_Seen)
    extra: int = 0  # values of the file being read that no earlier file had

    def see(self, dist: Distinct, codes: np.ndarray, first_row: int, display: str, unit: str) -> None:
        """A batch of the column was added to ``dist`` (this file's values) as ``codes``."""
        lo, hi = dist.start, dist.count
        if lo == hi:
            return
        if self.earlier.pending or self.earlier.texts or self.earlier.others:
            new = np.flatnonzero(~self.earlier.known(dist, lo, hi)) + lo  # codes no earlier file had
            before = len(self.earlier)
        else:
            new, before = None, 0
        count = hi - lo if new is None else new.size
        room = self.limit - before - self.extra  # new values this file may still have
        self.extra += count
        if count > room:
            g = lo + room if new is None else int(new[room])  # the value one too many
            row = int(np.flatnonzero(codes.astype(np.int64) == g)[0])
            raise self.refuse(display, first_row + row, unit)

    def finish(self, dist: Distinct) -> None:
        """The file was read to its end: its values are the earlier files' now."""
        self.earlier.update(dist)
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


def _text_batches(path: Path | Callable[[], Any], fmt: str, head: bytes, header: list[str] | None) -> Iterator[Any]:
    """Arrow's record batches of a JSONL or CSV file (CSV: every cell as text).

    ``path`` may instead be a function giving a fresh input stream each call (an object store's).
    """
    import pyarrow as pa

    source: Callable[[], Any] = path if callable(path) else (lambda: str(path))

    if fmt == "csv":
        import pyarrow.csv as pcsv

        assert header is not None
        reader = pcsv.open_csv(
            source(),
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
        return pj.open_json(source(), read_options=pj.ReadOptions(block_size=BATCH_BYTES), parse_options=opts)

    cut = head.rfind(b"\n") + 1 or len(head)
    sniffed = stamped(pj.read_json(pa.BufferReader(head[:cut])).schema)
    reader = open_(sniffed)
    late = stamped(reader.schema)
    if late:
        reader = open_(sniffed + late)
    if stamped(reader.schema):
        raise _GiveUp
    yield from reader


def _text_table(path: Path, fmt: str, head: bytes, header: list[str] | None) -> Any:
    """Arrow's parse of a whole JSONL or CSV file (CSV: every cell as text), typed as :func:`_text_batches` types it."""
    import pyarrow as pa

    if fmt == "csv":
        import pyarrow.csv as pcsv

        assert header is not None
        return pcsv.read_csv(
            str(path),
            read_options=pcsv.ReadOptions(column_names=header, skip_rows=1, block_size=BATCH_BYTES),
            parse_options=pcsv.ParseOptions(newlines_in_values=False),
            convert_options=pcsv.ConvertOptions(column_types={h: pa.string() for h in header},
                                                strings_can_be_null=False, quoted_strings_can_be_null=False))
    from evalspec.results.formats.jsonl import jsonl_arrow_table

    table = jsonl_arrow_table(str(path), head, block_size=BATCH_BYTES)  # (the whole-file reader's parse)
    if table is None:
        raise _GiveUp
    return table


def _batch_columns(batch: Any, fmt: str, display: str, unit: str,
                   objects: bool = True) -> Iterator[tuple[str, np.ndarray, Any]]:
    """``(name, codes, uniques)`` of each column of a batch, typed as the whole-file reader types it.

    ``objects=False``: a column of texts gives its distinct texts as an Arrow string array, not
    as Python objects (:meth:`Distinct.add` takes either; the values are the same).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from evalspec.results.formats.csv import csv_value

    ahead = _encoded_ahead(batch) if not objects and isinstance(batch, pa.Table) else {}
    named = batch.named() if isinstance(batch, _ColumnByColumn) else zip(batch.schema.names, batch.columns)
    for i, (name, col) in enumerate(named):
        numbers = _encoded(batch, name, "numbers")
        if numbers is not None:  # (integers without a null, of a column named in NUMBERS: as they are)
            yield name, None, numbers  # type: ignore[misc]
            continue
        typ = col.type
        text = pa.types.is_string(typ) or pa.types.is_large_string(typ)
        fast = text and not objects and isinstance(col, (pa.Array, pa.ChunkedArray))  # distinct texts in C, no object per value
        if fmt == "jsonl":
            if not _simple(typ):
                raise _GiveUp  # nested values: the exact path keeps them as they are
            if pa.types.is_floating(typ) and len(col):
                big = pc.max(pc.abs(col)).as_py()
                if big is not None and big >= EXACT:
                    raise _GiveUp  # an integer beyond 2**53 read as a float
            if text and not fast:
                try:
                    col.validate(full=True)  # Arrow does not check UTF-8 while parsing JSON
                except pa.ArrowInvalid:
                    raise _GiveUp from None
        if fast:
            codes, texts = ahead[i].result() if i in ahead else _text_codes(col, _encoded(batch, name))
            try:  # Arrow does not check UTF-8 while parsing JSON (nor Parquet's bytes): every text is here once
                texts.validate(full=True)
            except pa.ArrowInvalid:
                raise _GiveUp from None
            if fmt == "csv":
                raw = texts.to_pylist()
                typed = [csv_value(t) for t in raw]
                if typed != raw:  # a number, a blank or a spaced text: typed values, as objects
                    values = np.empty(len(typed), dtype=object)
                    values[:] = typed
                    yield name, codes, values
                    continue
            yield name, codes, texts
            continue
        try:
            coded = _encoded(batch, name, "coded")
            if coded is None:
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


def _encoded_ahead(table: Any) -> dict[int, Any]:
    """The text columns of a whole file's table (by position), dictionary-encoded on two threads (Arrow releases
    the GIL) while :func:`_batch_columns` types the columns before them: futures of :func:`_text_codes`."""
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow as pa

    texts = [i for i, f in enumerate(table.schema) if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
    if len(texts) < 2:
        return {}
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="evalspec-encode")
    try:
        return {i: pool.submit(_text_codes, table.column(i)) for i in texts}
    finally:
        pool.shutdown(wait=False)  # (the columns are encoded all the same; a give-up leaves them to finish)


def _text_codes(col: Any, enc: Any = None) -> tuple[np.ndarray, Any]:
    """``(codes, distinct texts)`` of a column of texts (an Arrow array, or a whole file's chunked column): its
    dictionary encoding (``enc``: made already), the texts in first-seen order, -1 for a missing value."""
    enc = col.dictionary_encode() if enc is None else enc
    if not hasattr(enc, "chunks"):
        return arrow_numpy(enc.indices, fill=-1).astype(np.int32, copy=False), enc.dictionary
    if not enc.num_chunks:
        return np.zeros(0, dtype=np.int32), col.combine_chunks()
    texts = enc.chunk(enc.num_chunks - 1).dictionary  # a chunked column's chunks share one dictionary, ...
    if not all(ch.dictionary.equals(texts) for ch in enc.chunks):  # (... which is checked, never relied on)
        return _text_codes(col.combine_chunks())
    parts = [arrow_numpy(ch.indices, fill=-1).astype(np.int32, copy=False) for ch in enc.chunks]
    return np.concatenate(parts), texts


def _encoded(batch: Any, name: str, what: str = "encoded") -> Any:
    """What the batch made of column ``name`` as it read it (:class:`_ColumnByColumn`): a text column's
    dictionary encoding (``encoded``), a number column's :func:`arrow_codes` (``coded``); or None."""
    made = getattr(batch, what, None)
    return made.pop(name, None) if made else None


def _batches(path: Path, fmt: str, head: bytes, header: list[str] | None, parsed: Any = None) -> Iterator[Any]:
    """The file's record batches; ``parsed``: Arrow's parse of the whole file, made already (read ahead)."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(str(path))
        if repeated(pf.schema_arrow.names):
            raise _GiveUp  # the whole-file reader names the duplicate columns
        rows = _parquet_batch_rows(pf.metadata)
        import pyarrow as pa

        flat = not any(pa.types.is_nested(f.type) or "." in f.name for f in pf.schema_arrow)  # (names: no paths)
        if flat and rows >= pf.metadata.num_rows:  # one batch: a column at a time (one column's values held)
            yield _ColumnByColumn(pf, path)
            return
        yield from pf.iter_batches(batch_size=rows)
        return
    if path.stat().st_size <= WHOLE_FILE_BYTES:
        yield _text_table(path, fmt, head, header) if parsed is None else parsed
        return
    yield from _text_batches(path, fmt, head, header)


class _ColumnByColumn:
    """A whole Parquet file as one batch whose columns are read one at a time, as :func:`_batch_columns` asks.

    The next columns are read (and numbered) in threads while this one is typed (Arrow holds no lock): two
    threads, each reading through a :class:`pyarrow.parquet.ParquetFile` of its own (``path`` opened again,
    its metadata the same as ``pf``'s; one thread reading ``pf`` without it), a column more asked for than
    threads read, so at most four columns' values are held at once (fewer: a column typed in its thread
    is held only as what it was typed as). Columns are taken as they are read (:meth:`named`), so a slow
    one (a case id's texts) does not keep the other thread waiting; :func:`_read` puts them back in the
    file's order. A read's error is raised where that column is taken.
    """

    def __init__(self, pf: Any, path: Path | None = None) -> None:
        self.pf = pf
        self.schema = pf.schema_arrow
        self.num_rows = pf.metadata.num_rows
        self.encoded: dict[str, Any] = {}  # a text column's dictionary encoding, made while the one before is typed
        self.coded: dict[str, Any] = {}  # a number column's arrow_codes, likewise
        self.numbers: dict[str, LazyNumbers] = {}  # a column of NUMBERS read as integers, kept as they are
        self.as_numbers = NUMBERS.get()  # (read here: the reading threads do not see the caller's context)
        self._files = [pf]  # one for each reading thread (a ParquetFile is not documented as safe to share)
        self.path = path
        if path is not None:
            import pyarrow.parquet as pq

            again = pq.ParquetFile(str(path))
            if again.metadata.equals(pf.metadata):  # (else one thread: a file that changed is refused at its end)
                self._files.append(again)
        self._mine = threading.local()
        self._lock = threading.Lock()

    def _file(self) -> Any:
        """The reading thread's own ParquetFile."""
        pf = getattr(self._mine, "pf", None)
        if pf is None:
            with self._lock:
                pf = self._mine.pf = self._files.pop()
        return pf

    def _column(self, name: str) -> Any:
        """Column ``name`` read, and typed here where it can be (what it was typed as kept in ``encoded``,
        ``coded`` or ``numbers``; then an empty column of its type stands for it, so that its values
        are not held while the columns before it are typed)."""
        import pyarrow as pa

        coded = self._dictionary_column(name)
        if coded is not None:
            self.coded[name] = coded[1]
            return pa.array([], type=coded[0].type)
        col = self._file().read(columns=[name], use_threads=False).column(0)
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
        typ = col.type
        if pa.types.is_string(typ) or pa.types.is_large_string(typ):  # numbered here too, in the thread
            self.encoded[name] = dictionary_encode(col)
        elif name in self.as_numbers and pa.types.is_integer(typ) and len(col) and not col.null_count:
            self.numbers[name] = kept_numbers(col)
        elif pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_boolean(typ):
            self.coded[name] = number_codes(col)  # (numbers and booleans: typed alike wherever they are read)
        else:
            return col
        return pa.array([], type=typ)

    def _dictionary_column(self, name: str) -> tuple[Any, Any] | None:
        """A text column of few distinct texts read as Parquet's own dictionaries and coded from them
        (:func:`~evalspec.results.arrow.dictionary_codes`: the codes dictionary-encoding the texts gives, no
        row's text made or hashed): ``(column, coded)``; None for another column, read as texts.

        Few: at most one text in :data:`_RUN_ROWS` among the first :data:`_FIRST_LOOK` rows (a case id
        column is read as texts: Parquet's writers stop using a dictionary that grows large, and Arrow
        then hashes the rest). Every distinct text is checked to be UTF-8 here (as the texts' path checks
        them); one that is not, or a dictionary that changed its file, goes to the whole-file reader.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        from evalspec.results.arrow import dictionary_codes

        field = self.schema.field(name)
        if self.path is None or not (pa.types.is_string(field.type) or pa.types.is_large_string(field.type)):
            return None
        if not self.num_rows or not self.pf.metadata.num_row_groups:
            return None
        first = next(self._file().iter_batches(batch_size=_FIRST_LOOK, row_groups=[0], columns=[name],
                                               use_threads=False), None)
        if first is None or len(first.column(0).unique()) * _RUN_ROWS > max(len(first), _RUN_ROWS):
            return None
        pf = pq.ParquetFile(str(self.path), read_dictionary=[name])
        if not pf.metadata.equals(self.pf.metadata):
            raise OSError(f"{self.path}: changed while it was read")  # (the whole-file reader then refuses it)
        col = pf.read(columns=[name], use_threads=False).column(0)
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)  # (one dictionary for all)
        if not pa.types.is_dictionary(col.type):
            return None
        try:
            col.dictionary.validate(full=True)  # (Arrow does not check Parquet's UTF-8)
        except pa.ArrowInvalid:
            raise _GiveUp from None
        coded = dictionary_codes(col)
        return None if coded is None else (col, coded)

    def named(self) -> Iterator[tuple[str, Any]]:
        """``(name, column)`` of every column, each as soon as it is read: the threads keep reading while a
        slow column (a case id's texts) is read, instead of waiting for it in the file's order."""
        from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

        names = self.schema.names
        depth = len(self._files) + 1  # (one more asked than threads read: a thread never waits for the typing)
        with ThreadPoolExecutor(max_workers=len(self._files), thread_name_prefix="evalspec-parquet") as pool:
            ahead = {pool.submit(self._column, name): k for k, name in enumerate(names[:depth])}
            asked = len(ahead)
            while ahead:
                done, _ = wait(ahead, return_when=FIRST_COMPLETED)
                future = min(done, key=ahead.__getitem__)  # (of those read, the first in the file's order)
                k = ahead.pop(future)
                if asked < len(names):
                    ahead[pool.submit(self._column, names[asked])] = asked
                    asked += 1
                col = future.result()
                yield names[k], col
                del col


#: Pairs of neighbouring texts compared in the first pass of :func:`_repeated_block` (doubled each pass), so
#: a column that is not a sorted block repeated costs about this many comparisons to tell.
_FIRST_LOOK = 4096


def dictionary_encode(col: Any) -> Any:
    """``col.dictionary_encode()`` of an Arrow string array, without hashing when the column is one block of
    distinct texts repeated (what a case table in ``ORDER BY`` candidate, case gives its case ids), and
    hashing only the first text of each run of equal texts where runs are long (its candidates, clusters).

    Such a column is told by comparisons alone: its first texts are strictly increasing in byte
    order up to the block's length ``m`` (so they are distinct), and every text equals the one ``m``
    before it. Its encoding is then known: the block as the dictionary (first-seen order is the
    block's order) and codes ``0 .. m-1`` for each repeat. Any other column is hashed by Arrow, the
    same result (``tests/results/test_dictionary_encode.py`` holds the two equal).
    """
    import pyarrow as pa

    from evalspec.results.text_index import text_buffers

    m = _repeated_block(col)
    if m is None:
        starts = _runs(col)
        if starts is None:
            return col.dictionary_encode()
        heads = col.take(positions(starts)).dictionary_encode()  # (a run's text is first seen at its start)
        lengths = np.diff(np.append(starts, len(col)))
        codes = np.repeat(arrow_numpy(heads.indices).astype(np.int32), lengths)
        return pa.DictionaryArray.from_arrays(pa.Array.from_buffers(pa.int32(), codes.size,
                                                                    [None, pa.py_buffer(codes)]), heads.dictionary)

    offsets, data = text_buffers(col.slice(0, m))  # (the block copied out: the column's buffers are not held by it)
    wide = pa.types.is_large_string(col.type)
    block_offsets = (offsets - offsets[0]).astype(np.int64 if wide else np.int32)
    block_data = data[offsets[0]:offsets[m]].copy()
    block = pa.Array.from_buffers(col.type, m, [None, pa.py_buffer(block_offsets), pa.py_buffer(block_data)])
    codes = np.tile(np.arange(m, dtype=np.int32), len(col) // m)
    return pa.DictionaryArray.from_arrays(pa.Array.from_buffers(pa.int32(), codes.size, [None, pa.py_buffer(codes)]),
                                          block)


def number_codes(col: Any) -> Any:
    """:func:`~evalspec.results.arrow.arrow_codes` of an Arrow array of numbers or booleans, without hashing one
    of integers or booleans that holds one value throughout (a case table's count of zeros, say): the codes
    of its first value, 0 for every row (``tests/results/test_dictionary_encode.py`` holds the two equal)."""
    import pyarrow as pa

    n = len(col)
    if n > 1 and not col.null_count and (pa.types.is_integer(col.type) or pa.types.is_boolean(col.type)):
        values = arrow_numpy(col)
        if values.min() == values.max():
            _, uniques, distinct = arrow_codes(col.slice(0, 1))
            return np.zeros(n, dtype=np.int32), uniques, distinct
    return arrow_codes(col)


def kept_numbers(col: Any) -> LazyNumbers:
    """An Arrow array of integers without a null (at least one) as :class:`~evalspec.results.values.LazyNumbers`:
    its values as NumPy (Arrow's buffer itself; one value broadcast where all are equal, the array not held),
    and as the general path's column, :func:`number_codes` added to a :class:`Distinct`, where that is asked."""
    values = arrow_numpy(col)
    lo, hi = int(values.min()), int(values.max())
    if lo == hi:
        numbers = np.broadcast_to(values[:1].copy(), values.shape)
        n, first = len(col), number_codes(col.slice(0, 1))[1]  # (its value as a Python object: no buffer held)

        def coded() -> LazyCoded:
            return _general(np.zeros(n, dtype=np.int32), first)
    else:
        numbers = values

        def coded() -> LazyCoded:
            codes, uniques, _ = number_codes(col)
            return _general(codes, uniques)
    numbers.flags.writeable = False
    return LazyNumbers(numbers, lo, hi, coded)


def _general(codes: np.ndarray, uniques: Any) -> LazyCoded:
    """The column the general path makes of one batch's ``codes`` into ``uniques``."""
    dist = Distinct()
    dist.add(codes, uniques)
    return dist.column()


#: Runs of equal texts at least this long on average are encoded run by run (:func:`_runs`).
_RUN_ROWS = 8


def _runs(col: Any) -> np.ndarray | None:
    """Where each run of equal texts of ``col`` (an Arrow string array without nulls) starts, when the runs
    are :data:`_RUN_ROWS` texts long or longer on average (told from the first texts first), else None."""
    import pyarrow.compute as pc

    n = len(col)
    if n < 2 or col.null_count:
        return None
    look = min(n - 1, _FIRST_LOOK)
    if np.count_nonzero(arrow_numpy(pc.not_equal(col.slice(0, look), col.slice(1, look)))) * _RUN_ROWS > look:
        return None
    starts = np.flatnonzero(arrow_numpy(pc.not_equal(col.slice(0, n - 1), col.slice(1, n - 1)))) + 1
    if (starts.size + 1) * _RUN_ROWS > n:
        return None
    return np.concatenate([np.zeros(1, dtype=np.int64), starts])


def _repeated_block(col: Any) -> int | None:
    """The length ``m`` of the block of distinct texts in byte order that ``col`` repeats, else None.

    ``col`` (an Arrow string array without nulls) is ``col[:m]`` repeated when its first ``m``
    texts are strictly increasing (each distinct), ``m`` divides its length and every text equals
    the one ``m`` before it; the comparisons are Arrow's (bytes), a pass at a time, so a column
    that is none stops at the first pass.
    """
    import pyarrow.compute as pc

    n = len(col)
    if not n or col.null_count:
        return None

    def first_false(ok: Any) -> int:  # (-1: all true)
        flags = arrow_numpy(ok)
        return -1 if flags.all() else int(np.argmin(flags))

    pos, size, m = 0, _FIRST_LOOK, n  # texts 0 .. pos are strictly increasing
    while pos < n - 1:
        step = min(size, n - 1 - pos)
        bad = first_false(pc.less(col.slice(pos, step), col.slice(pos + 1, step)))
        if bad >= 0:
            m = pos + bad + 1
            break
        pos, size = pos + step, size * 2
    if n % m:
        return None
    head = min(m, _FIRST_LOOK)  # the last block's first texts first (a column of runs, like "A"s then "B"s)
    if m < n and first_false(pc.equal(col.slice(n - m, head), col.slice(0, head))) >= 0:
        return None
    pos, size = m, _FIRST_LOOK
    while pos < n:  # text i equals text i - m
        step = min(size, n - pos)
        if first_false(pc.equal(col.slice(pos, step), col.slice(pos - m, step))) >= 0:
            return None
        pos, size = pos + step, size * 2
    return m


def _parquet_batch_rows(meta: Any) -> int:
    """Rows of a Parquet batch: about :data:`PARQUET_BATCH_BYTES` of uncompressed values (the file's metadata
    says how many bytes a row takes), at least one row.

    A case table of ten million rows (about 200 MiB) is one batch: Arrow numbers each column's
    values in one pass, and nothing is looked up across batches. The values do not depend on it.
    """
    total = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if not meta.num_rows or total <= 0:
        return max(1, BATCH_BYTES // 64)
    return max(1, int(PARQUET_BATCH_BYTES * meta.num_rows // total))


class _Kept:
    """A column kept as it was read (:data:`NUMBERS`), where :func:`_read` keeps each column's :class:`Distinct`."""

    def __init__(self, col: LazyNumbers) -> None:
        self.col = col

    def column(self) -> LazyNumbers:
        return self.col

    def add_missing(self, n: int) -> None:  # (a whole file's column: no rows follow)
        raise _GiveUp


def _read(path: Path, fmt: str, display: str, head: bytes, header: list[str] | None,
          watches: list[Watch], parsed: list[Any]) -> tuple[dict[str, Distinct], int]:
    unit = "row" if fmt == "parquet" else "line"
    first_line = 1 if fmt != "csv" else 2
    columns: dict[str, Distinct | _Kept] = {}
    rows = 0
    tick = _progress(display)
    watched = {w.column: w for w in watches}
    for batch in _batches(path, fmt, head, header, parsed.pop() if parsed else None):
        n = batch.num_rows
        seen = set()
        whole = isinstance(batch, _ColumnByColumn) and not rows  # (the file in one batch)
        for name, codes, uniques in _batch_columns(batch, fmt, display, unit, objects=False):
            if name in seen:
                raise _GiveUp
            seen.add(name)
            if isinstance(uniques, LazyNumbers):  # (a whole file's column of numbers, kept as they are)
                if whole and name not in watched:
                    columns[name] = _Kept(uniques)
                    continue
                codes, uniques = uniques.coded().codes, uniques.coded().uniques  # (else numbered as any column)
            dist = columns.get(name)
            if dist is None:
                dist = columns[name] = Distinct()
                dist.add_missing(rows)
            gcodes = dist.add(codes, uniques)
            w = watched.get(name)
            if w is not None:
                w.see(dist, gcodes, rows + first_line, display, unit)
            if whole:  # (its values as objects made while the threads read the next columns, not after them)
                dist.finish()
        if whole:  # (the columns were read as they came: in the file's order again)
            columns = {name: columns[name] for name in batch.schema.names}
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
    from concurrent.futures import Future, ThreadPoolExecutor

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
    ahead = _taken_ahead(path, head, display) if fmt == "jsonl" else None  # (the scan and the parse, made already)
    parsed = [ahead[1]] if ahead is not None else []  # (a list _read empties: the table is freed as it is typed)
    with ThreadPoolExecutor(max_workers=2) as pool:
        scanned: Future[Source]
        if ahead is None:
            scanned = pool.submit(scan, path, display, count_commas=fmt == "csv", stop=stop)
        else:
            scanned = Future()
            scanned.set_result(ahead[0])
            del ahead
        if "pyarrow.compute" not in sys.modules:  # (the typing needs it: imported while Arrow parses, in C)
            pool.submit(importlib.import_module, "pyarrow.compute")  # (a failure: raised where it is imported)
        try:
            columns, rows = _read(path, fmt, display, head, header, watches or [], parsed)
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
