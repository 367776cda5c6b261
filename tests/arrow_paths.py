"""A fixture for reader tests: read every JSONL/CSV file through Arrow, whatever its size.

``read_file`` reads files under ``SMALL_FILE_BYTES`` by the exact (Python) path alone, which
would leave the Arrow path of the small files these tests write untested. Module-scoped (not
``monkeypatch``) so hypothesis tests may use it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def arrow_paths() -> Iterator[None]:
    from evalspec.results import readers

    old = readers.SMALL_FILE_BYTES
    readers.SMALL_FILE_BYTES = 0
    try:
        yield
    finally:
        readers.SMALL_FILE_BYTES = old
