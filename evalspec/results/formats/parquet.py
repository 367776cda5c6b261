"""Parquet results: read with pyarrow, every column converted by :func:`~evalspec.results.arrow.arrow_to_object`."""

from __future__ import annotations

import numpy as np

from evalspec.errors import Diagnostic, InputError
from evalspec.results.arrow import arrow_to_object
from evalspec.results.files import Source, as_source
from evalspec.results.values import repeated

__all__ = ["read_parquet"]

def read_parquet(source: Source | bytes, display: str) -> tuple[dict[str, np.ndarray], np.ndarray, str]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            f"{display}: reading Parquet needs pyarrow",
            [
                Diagnostic(
                    file=display,
                    message="reading Parquet needs pyarrow, which is not installed",
                    hint="pip install 'evalspec[parquet]', or export the results as JSONL or CSV",
                )
            ],
        ) from None
    try:
        src = as_source(source, display)
        table = pq.read_table(pa.BufferReader(src.data) if src.data is not None else str(src.path))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(
            f"{display}: not a readable Parquet file",
            [Diagnostic(file=display, message=f"not a readable Parquet file ({str(exc)[:200]})", hint="re-export the file")],
        ) from None
    names = table.column_names
    dupes = repeated(names)
    if dupes:
        raise InputError(f"{display}: duplicate column names", [Diagnostic(
            file=display, message=f"the file names a column twice: {', '.join(dupes)}")])
    columns = {name: arrow_to_object(col, display, "row") for name, col in zip(names, table.columns)}
    return columns, np.arange(1, table.num_rows + 1, dtype=np.int64), "row"
