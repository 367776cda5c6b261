"""Atomic file writes shared by every step that writes output (lock, claim, report).

A write goes to a temporary file in the target folder, is flushed and fsynced, gets the
permissions a plain ``open(path, "w")`` would have (``0o666`` less the umask; ``mkstemp``
alone would leave ``0o600``), and replaces the target with :func:`os.replace`. A failure at
any point removes the temporary file and leaves the target as it was: never half a file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["write_bytes_atomic", "write_text_atomic"]


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes_atomic(path: Path | str, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; create the parent folder if needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_current_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


def write_text_atomic(path: Path | str, text: str) -> Path:
    """Write ``text`` (UTF-8, ``\\n`` line endings as given) to ``path`` atomically."""
    return write_bytes_atomic(path, text.encode("utf-8"))
