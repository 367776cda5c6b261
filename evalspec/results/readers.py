"""Readers of results files (JSONL, CSV, Parquet) into raw columns with row locations.

A reader returns a :class:`RawFile`: every column as a NumPy object array (values as the
file holds them: str, int, float, bool or ``None``), the 1-based line (JSONL, CSV) or row
(Parquet) of every record, the file's SHA-256 and its format. Typing the columns against
the plan happens in :mod:`evalspec.results.table`; readers only read.

Why two paths for JSONL and CSV: a vectorised fast path (pyarrow for JSONL, pandas' C
parser for CSV) keeps a million-row file cheap, and when it fails the slow line-by-line
path runs and stops at the first bad line with its number, so a corrupt file always gets a
located message and never a traceback.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evalspec.errors import Diagnostic, InputError

__all__ = ["RawFile", "read_file", "detect_format", "FORMATS", "known_codes", "remember_codes", "forget_codes"]

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


def read_file(path: Path, fmt: str, display: str | None = None) -> RawFile:
    """Read one results file of format ``fmt`` (``jsonl``, ``csv`` or ``parquet``)."""
    display = display or str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(
            f"{display}: cannot read: {exc.strerror}",
            [Diagnostic(file=display, message=f"cannot read the results file: {exc.strerror}")],
        ) from None
    digest = hashlib.sha256(data).hexdigest()
    if fmt == "jsonl":
        columns, lines = _read_jsonl(data, display)
        unit = "line"
    elif fmt == "csv":
        columns, lines = _read_csv(data, display)
        unit = "line"
    elif fmt == "parquet":
        columns, lines = _read_parquet(data, display)
        unit = "row"
    else:  # pragma: no cover - the plan model restricts formats
        raise InputError(f"{display}: unsupported format {fmt!r}", [Diagnostic(file=display, message=f"unsupported format {fmt!r}")])
    return RawFile(path=str(path), display=display, format=fmt, sha256=digest, columns=columns, lines=lines, unit=unit)


# -- JSONL --------------------------------------------------------------------------------


def _read_jsonl(data: bytes, display: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
    fast = _read_jsonl_arrow(data)
    if fast is not None:
        return fast
    return _read_jsonl_python(data, display)


def _read_jsonl_arrow(data: bytes) -> tuple[dict[str, np.ndarray], np.ndarray] | None:
    """Vectorised JSONL read with pyarrow; ``None`` when unavailable or anything is odd.

    Only used when every line is a non-empty JSON object (blank lines would shift line
    numbers) and the types are simple; otherwise the exact Python path decides. Text that
    looks like a time stays text (the schema is sniffed from the first block so the file
    is parsed once).
    """
    try:
        import pyarrow as pa
        import pyarrow.json as pj
    except ImportError:
        return None
    if not data or data.isspace():
        return None
    body = data if data.endswith(b"\n") else data + b"\n"
    if b"\n\n" in body or b"\r" in body or body.startswith(b"\n"):
        return None

    def stamped(schema: Any) -> list[str]:
        return [f.name for f in schema if pa.types.is_timestamp(f.type) or pa.types.is_date(f.type)]

    def read(as_text: list[str]) -> Any:
        opts = None
        if as_text:
            schema = pa.schema([(name, pa.string()) for name in as_text])
            opts = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
        return pj.read_json(io.BytesIO(body), parse_options=opts)

    try:
        cut = body.rfind(b"\n", 0, 1 << 20) + 1 or len(body)
        sniffed = stamped(pj.read_json(io.BytesIO(body[:cut])).schema)
        table = read(sniffed)
        late = stamped(table.schema)
        if late:
            table = read(sniffed + late)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
        return None
    n_lines = body.count(b"\n")
    if table.num_rows != n_lines:
        return None
    columns: dict[str, np.ndarray] = {}
    for name, col in zip(table.column_names, table.columns):
        typ = col.type
        if not (pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_boolean(typ)
                or pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_null(typ)):
            return None  # nested values: let the Python path keep them as objects
        columns[name] = _arrow_to_object(col)
    return columns, np.arange(1, table.num_rows + 1, dtype=np.int64)


def _arrow_to_object(col: Any) -> np.ndarray:
    """A pyarrow column as an object array with ``None`` for nulls.

    The column is dictionary-encoded in Arrow (fast, in C) and expanded by a NumPy take;
    the codes are remembered (:func:`remember_codes`) so that typing the column later
    costs nothing.
    """
    import pyarrow as pa

    try:
        enc = col.combine_chunks().dictionary_encode() if isinstance(col, pa.ChunkedArray) else col.dictionary_encode()
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        out = np.empty(len(col), dtype=object)
        out[:] = col.to_pylist()
        return out
    codes = enc.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    uniques = np.empty(len(enc.dictionary), dtype=object)
    uniques[:] = enc.dictionary.to_pylist()
    out = np.append(uniques, None)[codes]
    remember_codes(out, codes, uniques)
    return out


#: id(array) -> (array, codes, uniques): factorizations known from reading.
_CODES: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def remember_codes(arr: np.ndarray, codes: np.ndarray, uniques: np.ndarray) -> None:
    """Remember that ``arr == uniques[codes]`` (code -1 = missing) for :func:`known_codes`."""
    if len(_CODES) > 256:
        _CODES.clear()
    _CODES[id(arr)] = (arr, codes, uniques)


def forget_codes() -> None:
    """Drop the remembered factorizations (they hold the columns alive)."""
    _CODES.clear()


def known_codes(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(codes, uniques)`` of ``arr`` if it was factorized while reading, else None."""
    hit = _CODES.get(id(arr))
    if hit is not None and hit[0] is arr:
        return hit[1], hit[2]
    return None


def _read_jsonl_python(data: bytes, display: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise _corrupt(display, line, "is not valid UTF-8") from None
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _corrupt(display, number, f"is not valid JSON: {exc.msg}: column {exc.colno}") from None
        if not isinstance(obj, dict):
            raise _corrupt(display, number, f"is not a JSON object (a {type(obj).__name__})")
        records.append(obj)
        lines.append(number)
    if not records:
        raise InputError(
            f"{display}: no results rows",
            [Diagnostic(file=display, message="the results file has no rows", hint="check data.results in the plan")],
        )
    keys: dict[str, None] = {}
    for rec in records:
        for key in rec:
            keys.setdefault(key, None)
    columns = {}
    for key in keys:
        col = np.empty(len(records), dtype=object)
        col[:] = [rec.get(key) for rec in records]
        columns[key] = col
    return columns, np.asarray(lines, dtype=np.int64)


def _corrupt(display: str, line: int, what: str) -> InputError:
    return InputError(
        f"{display}:{line}: corrupt line",
        [
            Diagnostic(
                file=display,
                line=line,
                message=f"corrupt line: {what}",
                hint="each line must be one JSON object; fix or remove the line and run again",
            )
        ],
    )


# -- CSV ----------------------------------------------------------------------------------


def _read_csv(data: bytes, display: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
    fast = _read_csv_pandas(data)
    if fast is not None:
        return fast
    return _read_csv_python(data, display)


def _read_csv_pandas(data: bytes) -> tuple[dict[str, np.ndarray], np.ndarray] | None:
    """Vectorised CSV read with pandas' C parser, for plain files only; else ``None``.

    Plain means: UTF-8, no quotes, no carriage returns, no blank lines, a header without
    duplicates, and exactly ``width - 1`` commas on every line (checked by one count, since
    pandas would silently pad short rows). Cells are typed by :func:`_csv_value` on the
    distinct values only.
    """
    import pandas as pd

    if not data or b'"' in data or b"\r" in data or b"\n\n" in data:
        return None
    body = data if data.endswith(b"\n") else data + b"\n"
    if body.startswith(b"\xef\xbb\xbf"):
        body = body[3:]
    try:
        header = body[: body.index(b"\n")].decode("utf-8").split(",")
        body.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    header = [h.strip() for h in header]
    if not any(header) or len(set(header)) != len(header):
        return None
    n_lines = body.count(b"\n")
    if n_lines < 2 or body.count(b",") != (len(header) - 1) * n_lines:
        return None
    columns: dict[str, np.ndarray] = {}
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
    except ImportError:
        pa = None
    if pa is not None:
        try:
            table = pcsv.read_csv(
                io.BytesIO(body),
                read_options=pcsv.ReadOptions(column_names=header, skip_rows=1),
                convert_options=pcsv.ConvertOptions(column_types={h: pa.string() for h in header},
                                                    strings_can_be_null=False, quoted_strings_can_be_null=False),
            )
        except (pa.ArrowInvalid, ValueError):
            return None
        if table.num_rows != n_lines - 1:
            return None
        for name in header:
            enc = table.column(name).combine_chunks().dictionary_encode()
            codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
            columns[name] = _typed(codes, enc.dictionary.to_pylist())
        return columns, np.arange(2, n_lines + 1, dtype=np.int64)
    try:
        frame = pd.read_csv(io.BytesIO(body), dtype=object, keep_default_na=False, na_filter=False,
                            engine="c", header=0, names=header)
    except (ValueError, pd.errors.ParserError):
        return None
    if len(frame) != n_lines - 1:
        return None
    for name in header:
        codes, uniques = pd.factorize(frame[name].to_numpy(dtype=object))
        columns[name] = _typed(np.asarray(codes, dtype=np.int64), list(uniques))
    return columns, np.arange(2, n_lines + 1, dtype=np.int64)


def _typed(codes: np.ndarray, texts: list[str]) -> np.ndarray:
    """``_csv_value`` of each distinct text, expanded by ``codes``; the codes are remembered."""
    typed = np.empty(len(texts), dtype=object)
    typed[:] = [_csv_value(t) for t in texts]
    out = np.append(typed, None)[codes]
    # distinct texts can type to equal values ("1" and "01"); remember codes only when they stay distinct
    if len(set(map(repr, typed.tolist()))) == len(typed):
        remember_codes(out, codes, typed)
    return out


def _read_csv_python(data: bytes, display: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise _corrupt_csv(display, line, "is not valid UTF-8") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        header = []
    if not header or not any(h.strip() for h in header):
        raise InputError(
            f"{display}: no header row",
            [Diagnostic(file=display, line=1, message="the CSV file has no header row naming the columns")],
        )
    header = [h.strip() for h in header]
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes:
        raise InputError(
            f"{display}:1: duplicate column names",
            [Diagnostic(file=display, line=1, message=f"the header names a column twice: {', '.join(dupes)}")],
        )
    width = len(header)
    rows: list[list[str]] = []
    lines: list[int] = []
    try:
        for row in reader:
            number = reader.line_num
            if not row or all(not v.strip() for v in row):
                continue
            if len(row) != width:
                raise _corrupt_csv(display, number, f"has {len(row)} fields, the header has {width}")
            rows.append(row)
            lines.append(number)
    except csv.Error as exc:
        raise _corrupt_csv(display, reader.line_num, f"cannot be parsed ({exc})") from None
    if not rows:
        raise InputError(f"{display}: no results rows", [Diagnostic(file=display, message="the CSV file has a header but no rows")])
    columns: dict[str, np.ndarray] = {}
    for j, name in enumerate(header):
        col = np.empty(len(rows), dtype=object)
        col[:] = [_csv_value(r[j]) for r in rows]
        columns[name] = col
    return columns, np.asarray(lines, dtype=np.int64)


def _csv_value(text: str) -> Any:
    """CSV cells are text: empty means missing; canonical integers and decimals become numbers.

    ``"007"`` stays text (an identifier, not the number 7); ``"nan"`` is missing.
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
            return float(s)
        except ValueError:
            return s
    if s.lower() in ("nan", "inf", "infinity", "-inf", "+inf", "-infinity"):
        return _csv_special(s)
    return s


def _csv_special(s: str) -> Any:
    value = float(s)
    return None if math.isnan(value) else value


def _corrupt_csv(display: str, line: int, what: str) -> InputError:
    return InputError(
        f"{display}:{line}: corrupt line",
        [Diagnostic(file=display, line=line, message=f"corrupt line: {what}", hint="fix or remove the line and run again")],
    )


# -- Parquet ------------------------------------------------------------------------------


def _read_parquet(data: bytes, display: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            f"{display}: reading Parquet needs pyarrow",
            [
                Diagnostic(
                    file=display,
                    message="reading Parquet needs the optional dependency pyarrow, which is not installed",
                    hint="pip install 'evalspec[parquet]', or export the results as JSONL or CSV",
                )
            ],
        ) from None
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(
            f"{display}: not a readable Parquet file",
            [Diagnostic(file=display, message=f"not a readable Parquet file ({exc})", hint="re-export the file")],
        ) from None
    columns = {name: _arrow_to_object(col) for name, col in zip(table.column_names, table.columns)}
    return columns, np.arange(1, table.num_rows + 1, dtype=np.int64)
