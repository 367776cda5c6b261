"""JSON Lines results: Arrow's parse where it gives the exact reader's values, else line by line.

See :mod:`evalspec.results.formats` for what a line means on both paths.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from evalspec.errors import Diagnostic, InputError
from evalspec.results.arrow import arrow_to_object, release_arrow_memory
from evalspec.results.files import BOM, Source, as_source, peek, scan
from evalspec.results.values import EXACT, as_number, utf8

__all__ = ["jsonl_arrow_table", "read_jsonl", "read_jsonl_arrow", "read_jsonl_python", "scan_while_parsing_jsonl"]

def read_jsonl(source: Source | bytes, display: str,
                parsed: list[Any] | None = None) -> tuple[dict[str, np.ndarray], np.ndarray, str]:
    """``parsed``: ``[Arrow's parse]`` made beside the scan (:func:`scan_while_parsing_jsonl`); emptied here."""
    src = as_source(source, display)
    fast = read_jsonl_arrow(src, display, parsed)  # a bad UTF-8 byte sends it to the exact path, which locates it
    if fast is not None:
        return fast[0], fast[1], "line"
    data = src.read()
    columns, lines = read_jsonl_python(data[3:] if data.startswith(BOM) else data, display)
    return columns, lines, "line"


def scan_while_parsing_jsonl(path: Path, display: str) -> tuple[Source, list[Any]]:
    """The file's :func:`scan` and ``[Arrow's parse of it]`` (empty when Arrow cannot), made at the same time.

    The scan (SHA-256, line count) runs in a thread while Arrow parses (both release the
    GIL), so a large file costs about one pass instead of two. The file is refused as
    :func:`scan` refuses it (not a regular file, too big, unreadable) before Arrow opens it,
    and the parse is used only when the scan saw the same first bytes; a file that changes
    while it is read is refused afterwards (:meth:`Source.check_unchanged`). The parse comes in
    a list its reader empties, so that no caller keeps the whole table alive while its
    columns are converted one by one.
    """
    from concurrent.futures import ThreadPoolExecutor

    head = peek(path, display)
    with ThreadPoolExecutor(max_workers=1) as pool:
        scanned = pool.submit(scan, path, display, count_commas=False)
        try:
            table = jsonl_arrow_table(str(path), head)
        finally:
            src = scanned.result()  # the scan's located error, if any, wins
    return src, [] if table is None or src.head != head else [table]


def jsonl_arrow_table(arrow_input: Any, head: bytes, block_size: int = 8 << 20) -> Any:
    """Arrow's parse of a JSONL file whose first 64 KiB are ``head`` (in blocks of ``block_size`` bytes, its
    chunks); None when Arrow cannot.

    Text that looks like a time stays text (the schema is sniffed from the first block, so
    the file is parsed once).
    """
    import pyarrow as pa
    import pyarrow.json as pj

    if not head or head[:1].isspace() or head.startswith(BOM) or head.isspace():
        return None  # blank lines are caught later: Arrow skips them, so the row count falls short

    def stamped(schema: Any) -> list[str]:
        return [f.name for f in schema if pa.types.is_timestamp(f.type) or pa.types.is_date(f.type)]

    def read(as_text: list[str]) -> Any:
        opts = None
        if as_text:
            schema = pa.schema([(name, pa.string()) for name in as_text])
            opts = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
        return pj.read_json(arrow_input() if callable(arrow_input) else arrow_input,
                            read_options=pj.ReadOptions(block_size=block_size), parse_options=opts)

    try:
        cut = head.rfind(b"\n") + 1 or len(head)
        sniffed = stamped(pj.read_json(io.BytesIO(head[:cut])).schema)
        table = read(sniffed)
        late = stamped(table.schema)
        if late:
            table = read(sniffed + late)
        table.column_names  # noqa: B018 - a key that is not UTF-8 fails here (UnicodeDecodeError is a ValueError)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError, OSError):
        return None  # Arrow cannot: the exact path reads the file and locates what is wrong
    return table


def read_jsonl_arrow(source: Source | bytes, display: str,
                      parsed: list[Any] | None = None) -> tuple[dict[str, np.ndarray], np.ndarray] | None:
    """Vectorised JSONL read with pyarrow; ``None`` when anything is odd (the exact path decides).

    Only used when every line ends in ``\\n`` alone and is a non-empty JSON object (blank
    lines would shift line numbers) and Arrow's values are the exact path's. ``parsed`` holds
    Arrow's parse when already made (:func:`scan_while_parsing_jsonl`); it is emptied.
    """
    import pyarrow as pa

    src = as_source(source, display)
    table = parsed.pop() if parsed else None
    if not src.size or src.has_cr:
        return None
    if parsed is None:
        table = jsonl_arrow_table(src.arrow_input, src.head)
    if table is None:
        return None
    names = table.column_names
    for col in table.columns:
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            try:
                col.validate(full=True)  # Arrow does not check UTF-8 while parsing JSON
            except pa.ArrowInvalid:
                return None
    if table.num_rows != src.lines:
        return None
    release_arrow_memory()  # the parser's freed buffers (several times the table) before objects are made
    columns: dict[str, np.ndarray] = {}
    import pyarrow.compute as pc

    cols, n_rows = table.columns, table.num_rows
    del table  # each Arrow column is freed once converted: the table and the objects never peak together
    for i, name in enumerate(names):
        col, cols[i] = cols[i], None
        typ = col.type
        if not (pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_boolean(typ)
                or pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_null(typ)):
            return None  # nested values: the exact path keeps them as they are
        if pa.types.is_floating(typ) and len(col):
            big = pc.max(pc.abs(col)).as_py()
            if big is not None and big >= EXACT:
                return None  # an integer beyond 2**53 read as a float: the exact path keeps it exact
        columns[name] = arrow_to_object(col, display, "line")
        del col
    return columns, np.arange(1, n_rows + 1, dtype=np.int64)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _plain(value: Any) -> Any:
    if value.__class__ is float:
        return as_number(value)
    return value


def read_jsonl_python(data: bytes, display: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
    text = utf8(data[3:] if data.startswith(BOM) else data, display, _corrupt)
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    decoder = json.JSONDecoder(object_pairs_hook=_no_duplicate_keys)
    for number, line in enumerate(text.split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
        if not line.strip():
            continue
        try:
            obj = decoder.decode(line)
        except json.JSONDecodeError as exc:
            raise _corrupt(display, number, f"is not valid JSON: {exc.msg}: column {exc.colno}") from None
        except _DuplicateKey as exc:
            raise _corrupt(display, number, f"names the key {exc.key!r} twice") from None
        except RecursionError:
            raise _corrupt(display, number, "is nested too deeply") from None
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
        col[:] = [_plain(rec.get(key)) for rec in records]
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
