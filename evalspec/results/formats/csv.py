"""CSV results: Arrow's parse for plain files, else Python's csv module; cells typed by :func:`csv_value`.

See :mod:`evalspec.results.formats` for what a cell means on both paths.
"""

from __future__ import annotations

import csv
import io
import sys
from typing import Any

import numpy as np

from evalspec.errors import Diagnostic, InputError
from evalspec.results.arrow import arrow_numpy
from evalspec.results.files import BOM, Source, as_source
from evalspec.results.values import CodedColumn, as_number, repeated, utf8

__all__ = ["csv_value", "read_csv", "read_csv_arrow", "read_csv_python"]

def read_csv(source: Source | bytes, display: str) -> tuple[dict[str, np.ndarray], np.ndarray, str]:
    src = as_source(source, display)
    fast = read_csv_arrow(src)
    if fast is not None:
        return fast[0], fast[1], "line"
    data = src.read()
    columns, lines = read_csv_python(data[3:] if data.startswith(BOM) else data, display)
    return columns, lines, "line"


def read_csv_arrow(source: Source | bytes) -> tuple[dict[str, np.ndarray], np.ndarray] | None:
    """Vectorised CSV read with pyarrow, for plain files only; else ``None``.

    Plain means: no quotes, no carriage returns, no blank lines, a header without
    duplicates, and exactly ``width - 1`` commas on every line (checked by one count).
    Cells are typed by :func:`csv_value` on the distinct values only.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    src = as_source(source, "")
    if not src.size or src.has_quote or src.has_cr or src.head.startswith(BOM) or b"\n" not in src.head:
        return None  # blank lines: Arrow skips them, so the row count below falls short
    try:
        header = [h.strip() for h in src.head[: src.head.index(b"\n")].decode("utf-8").split(",")]
    except UnicodeDecodeError:
        return None
    if not any(header) or len(set(header)) != len(header):
        return None
    n_lines = src.lines
    if n_lines < 2 or src.commas != (len(header) - 1) * n_lines:
        return None
    try:
        table = pcsv.read_csv(
            src.arrow_input(),
            read_options=pcsv.ReadOptions(column_names=header, skip_rows=1, block_size=8 << 20),
            parse_options=pcsv.ParseOptions(newlines_in_values=False),
            convert_options=pcsv.ConvertOptions(column_types={h: pa.string() for h in header},
                                                strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, ValueError):  # not UTF-8 among them: the exact path locates it
        return None
    if table.num_rows != n_lines - 1:
        return None
    columns: dict[str, np.ndarray] = {}
    for name in header:
        col = table.column(name)
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
        enc = col.dictionary_encode()
        codes = arrow_numpy(enc.indices).astype(np.int32, copy=False)
        columns[name] = _typed(codes, enc.dictionary.to_pylist())
    return columns, np.arange(2, n_lines + 1, dtype=np.int64)


def _typed(codes: np.ndarray, texts: list[str]) -> np.ndarray:
    """``csv_value`` of each distinct text, expanded by ``codes``; the codes are remembered."""
    typed = np.empty(len(texts), dtype=object)
    typed[:] = [csv_value(t) for t in texts]
    return CodedColumn.of(codes, typed)


def read_csv_python(data: bytes, display: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
    text = utf8(data[3:] if data.startswith(BOM) else data, display, _corrupt_csv)
    reader = csv.reader(io.StringIO(text, newline=""))
    old_limit = csv.field_size_limit()
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # the file size is capped; any field is read whole
    try:
        try:
            header = next(reader)
        except StopIteration:
            header = []
        except csv.Error as exc:
            raise _corrupt_csv(display, reader.line_num, f"cannot be parsed ({exc})") from None
        if not header or not any(h.strip() for h in header):
            raise InputError(
                f"{display}: no header row",
                [Diagnostic(file=display, line=1, message="the CSV file has no header row naming the columns")],
            )
        header = [h.strip() for h in header]
        dupes = repeated(header)
        if dupes:
            raise InputError(
                f"{display}:1: duplicate column names",
                [Diagnostic(file=display, line=1, message=f"the header names a column twice: {', '.join(dupes)}")],
            )
        width = len(header)
        rows: list[list[str]] = []
        lines: list[int] = []
        start = reader.line_num + 1
        try:
            for row in reader:
                number, start = start, reader.line_num + 1
                if not row or (len(row) == 1 and not row[0].strip() and width > 1):
                    continue
                if len(row) != width:
                    raise _corrupt_csv(display, number, f"has {len(row)} fields, the header has {width}")
                rows.append(row)
                lines.append(number)
        except csv.Error as exc:
            raise _corrupt_csv(display, start, f"cannot be parsed ({exc})") from None
    finally:
        csv.field_size_limit(old_limit)
    if not rows:
        raise InputError(f"{display}: no results rows", [Diagnostic(file=display, message="the CSV file has a header but no rows")])
    columns: dict[str, np.ndarray] = {}
    cache: dict[str, Any] = {}
    for j, name in enumerate(header):
        col = np.empty(len(rows), dtype=object)
        col[:] = [cache[c] if c in cache else cache.setdefault(c, csv_value(c)) for c in (r[j] for r in rows)]
        columns[name] = col
    return columns, np.asarray(lines, dtype=np.int64)


def csv_value(text: str) -> Any:
    """CSV cells are text: empty means missing; canonical integers and decimals become numbers.

    ``"007"`` stays text (an identifier, not the number 7); ``"nan"`` is missing; a decimal
    with an integral value (``"2.0"``) is the integer, as in JSON.
    """
    s = text.strip()
    if s == "":
        return None
    if not s.isascii():
        return s
    body = s[1:] if s[0] in "+-" else s
    if body.isdigit():
        number = int(s)
        return number if str(number) == s else s
    if body.replace(".", "", 1).isdigit() or (("e" in body or "E" in body) and body[:1].isdigit()):
        try:
            return as_number(float(s))
        except ValueError:
            return s
    if s.lower() in ("nan", "inf", "infinity", "-inf", "+inf", "-infinity"):
        return as_number(float(s))
    return s


def _corrupt_csv(display: str, line: int, what: str) -> InputError:
    return InputError(
        f"{display}:{line}: corrupt line",
        [Diagnostic(file=display, line=line, message=f"corrupt line: {what}", hint="fix or remove the line and run again")],
    )
