"""Readers of results files (JSONL, CSV, Parquet) into raw columns with row locations.

A reader returns a :class:`RawFile`: every column as a NumPy object array (values as the
file holds them: str, int, float, bool, ``None``, or a list/dict for a nested JSON value),
the 1-based line (JSONL, CSV) or row (Parquet) of every record, the file's SHA-256 and its
format. Typing the columns against the plan happens in :mod:`evalspec.results.table`;
readers only read.

The parts: :mod:`evalspec.results.files` (bounded reads, hashing), :mod:`evalspec.results.values`
(what a value is), :mod:`evalspec.results.arrow` (Arrow columns as NumPy) and one module per
format in :mod:`evalspec.results.formats` (where the rules every reader follows are written).
This module dispatches: :func:`read_file` picks the reader by format and by size.

Only regular files are read (a named pipe or a device is refused, so a run never hangs),
and at most :data:`~evalspec.limits.MAX_RESULTS_BYTES` bytes of each.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evalspec.errors import Diagnostic, InputError
from evalspec.results.arrow import release_arrow_memory
from evalspec.results.batches import Watch, stream_table
from evalspec.results.files import BOM, Source, read_bytes, scan
from evalspec.results.formats.csv import read_csv, read_csv_python
from evalspec.results.formats.jsonl import read_jsonl, read_jsonl_python, scan_while_parsing_jsonl
from evalspec.results.formats.parquet import read_parquet

__all__ = ["FORMATS", "READERS", "SMALL_FILE_BYTES", "STREAM", "RawFile", "detect_format", "read_file"]


#: Formats the run step reads, by file extension.
FORMATS: dict[str, str] = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


@dataclass(frozen=True)
class RawFile:
    """One results file as read: columns of raw values and where each record sits.

    ``unit`` is ``"line"`` for text formats and ``"row"`` for Parquet, so messages say
    ``results.jsonl:17`` or ``results.parquet row 17``.
    """

    path: str
    display: str
    format: str
    sha256: str
    columns: dict[str, np.ndarray]
    lines: np.ndarray
    unit: str
    #: Where an object-store object or a partitioned file came from (``uri``, ``size``, ``modified``,
    #: ``partition``); ``None`` for a plain local file. Kept in the claim's ``data.files[].location``.
    location: dict[str, Any] | None = None

    @property
    def rows(self) -> int:
        """Number of records read."""
        return int(self.lines.shape[0])


def detect_format(path: Path, declared: str) -> str:
    """The format of ``path``: ``declared`` unless it is ``auto``, else by extension."""
    if declared != "auto":
        return declared
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(
            f"{path}: cannot tell the format from the extension {path.suffix!r}",
            [
                Diagnostic(
                    file=str(path),
                    message=f"cannot tell the results format from the extension {path.suffix!r}",
                    hint="name the file .jsonl, .csv or .parquet, or set data.format in the plan",
                )
            ],
        )
    return fmt


#: format -> reader of a scanned file: ``(source, display) -> (columns, lines, unit)`` (``source`` is
#: a :class:`Source`, or bytes). The one dispatch point: a new format adds an entry here.
READERS: dict[str, Callable[..., tuple[dict[str, np.ndarray], np.ndarray, str]]] = {
    "jsonl": read_jsonl, "csv": read_csv, "parquet": read_parquet}


#: JSONL and CSV files below this size are read by the exact (Python) path alone: at this size it
#: is as fast as Arrow's, and importing pyarrow would cost more (about 0.1 s). Both paths give the
#: same values (see the module docstring), so the size decides speed, never meaning.
SMALL_FILE_BYTES = 1 << 20


def _line_numbers(first: int, rows: int) -> np.ndarray:
    """``first, first + 1, ...`` for ``rows`` rows, in 4 bytes a row where they fit."""
    return np.arange(first, first + rows, dtype=np.int32 if first + rows < 2**31 else np.int64)


#: Whether files of :data:`SMALL_FILE_BYTES` or more are read in record batches (tests switch it off
#: to compare the two paths; both give the same values).
STREAM = True


def _small_text_file(path: Path, fmt: str) -> str | None:
    """``fmt`` when ``path`` is a regular JSONL or CSV file under :data:`SMALL_FILE_BYTES`, else None."""
    if fmt not in ("jsonl", "csv"):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None  # the reader refuses it with its located message
    return fmt if stat.S_ISREG(st.st_mode) and st.st_size < SMALL_FILE_BYTES else None


def read_file(path: Path, fmt: str, display: str | None = None, watches: list[Watch] | None = None) -> RawFile:
    """Read one results file of format ``fmt`` (``jsonl``, ``csv`` or ``parquet``).

    A file of :data:`SMALL_FILE_BYTES` or more is read in record batches
    (:func:`~evalspec.results.batches.stream_table`: bounded memory, ``watches`` see its
    columns as they are read); one the batch reader cannot read exactly, and a small one, is
    read whole. Both give the same values (property-tested).
    """
    display = display or str(path)
    reader = READERS.get(fmt)
    if reader is None:  # pragma: no cover - the plan model restricts formats
        raise InputError(f"{display}: unsupported format {fmt!r}", [Diagnostic(file=display, message=f"unsupported format {fmt!r}")])
    small = _small_text_file(Path(path), fmt)
    if small is not None:  # read once, hashed, parsed by the exact path: no pyarrow import (about 0.1 s)
        raw = read_bytes(Path(path), display)
        src = Source.of_bytes(raw, display)
        data = raw[3:] if raw.startswith(BOM) else raw
        columns, lines = (read_jsonl_python if small == "jsonl" else read_csv_python)(data, display)
        unit = "line"
    elif STREAM and (streamed := stream_table(Path(path), fmt, display, watches)) is not None:
        first = 2 if fmt == "csv" else 1
        return RawFile(path=str(path), display=display, format=fmt, sha256=streamed.source.sha256,
                       columns=dict(streamed.columns), lines=_line_numbers(first, streamed.rows),
                       unit="row" if fmt == "parquet" else "line")
    elif fmt == "jsonl":  # the scan (SHA-256, line count) runs beside Arrow's parse, not before it
        src, parsed = scan_while_parsing_jsonl(Path(path), display)
        columns, lines, unit = read_jsonl(src, display, parsed)
    else:
        src = scan(Path(path), display, count_commas=fmt == "csv")
        columns, lines, unit = reader(src, display)
    src.check_unchanged()
    release_arrow_memory()
    return RawFile(path=str(path), display=display, format=fmt, sha256=src.sha256, columns=columns, lines=lines,
                   unit=unit)
