"""Bounded access to results files: only regular files, at most a limit of bytes, hashed as read.

Every results file evalspec reads comes through here (local tables, tool logs): a named
pipe, a device or a socket is refused before it is opened (so a run never hangs), a file
larger than :data:`~evalspec.limits.MAX_RESULTS_BYTES` is refused before it is read whole,
and :func:`scan` reads a file once, in blocks, for its SHA-256 and the counts the fast
readers need, so the claim's fingerprint is that of the bytes analysed
(:meth:`Source.check_unchanged`).
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalspec._files import special_kind
from evalspec.errors import Diagnostic, InputError
from evalspec.limits import MAX_RESULTS_BYTES

__all__ = ["BOM", "Source", "as_source", "changed", "checked_stat", "open_regular", "peek", "read_bytes", "refuser",
           "regular_file_problem", "scan", "strerror"]

BOM = b"\xef\xbb\xbf"
_NEWLINE, _COMMA = ord("\n"), ord(",")


#: What a non-regular file is (``"a named pipe"``...), or None for a regular file: one definition for
#: every file evalspec reads (:func:`evalspec._files.special_kind`).
regular_file_problem = special_kind


def checked_stat(path: Path, limit: int, refuse: Any) -> os.stat_result:
    """``os.stat`` of a results file that may be read: a regular file of at most ``limit`` bytes.

    Anything else (missing, a named pipe, a device, a socket, a symlink loop, too big) is
    refused (``refuse(message, hint)`` builds the located error) before the file is opened.
    """
    try:
        st = os.stat(path)
    except OSError as exc:
        raise refuse(f"cannot read the results file: {strerror(exc)}") from None
    kind = regular_file_problem(st.st_mode)
    if kind is not None:
        raise refuse(f"not a regular file ({kind})", "results are read from regular files only; export them to a "
                     "file and name that file in data.results")
    if st.st_size > limit:
        raise refuse(f"the file is {st.st_size:,} bytes, more than the {limit:,} evalspec reads",
                     "split the results into several files, or summarise them before the analysis")
    return st


def refuser(display: str) -> Callable[..., InputError]:
    """``refuse(message, hint=None)``: the located error for a results file that cannot be read."""
    def refuse(message: str, hint: str | None = None) -> InputError:
        return InputError(f"{display}: {message}", [Diagnostic(file=display, message=message, hint=hint)])

    return refuse


def open_regular(path: Path, limit: int, refuse: Callable[..., InputError]) -> tuple[int, os.stat_result]:
    """An open descriptor of a regular file of at most ``limit`` bytes, and its ``fstat``.

    Checked before opening (:func:`checked_stat`: no named pipe is opened, so nothing hangs)
    and again on the descriptor (the file may have been swapped since). The caller closes it.
    """
    checked_stat(path, limit, refuse)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise refuse(f"cannot read the results file: {strerror(exc)}") from None
    try:
        fst = os.fstat(fd)
        kind = regular_file_problem(fst.st_mode)
    except OSError as exc:
        os.close(fd)
        raise refuse(f"cannot read the results file: {strerror(exc)}") from None
    if kind is not None:
        os.close(fd)
        raise refuse(f"not a regular file ({kind})")
    return fd, fst


def read_bytes(path: Path, display: str, limit: int = MAX_RESULTS_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else is a located error.

    A named pipe, a device (``/dev/zero``, also through a symbolic link) or a socket is
    refused before it is opened, so reading never hangs or runs out of memory; a loop of
    symbolic links or a permission problem is an error naming the file.
    """
    refuse = refuser(display)
    fd, fst = open_regular(path, limit, refuse)
    try:
        size = fst.st_size
        with os.fdopen(fd, "rb", closefd=False) as fh:
            # read what the file holds, never read(limit): Python would allocate the whole limit up front
            want = min(limit, size) + 1
            chunks = [fh.read(want)]
            total = len(chunks[0])
            while total == want or (len(chunks) > 1 and total <= limit):  # the file grew since the stat
                more = fh.read(min(8 << 20, limit + 1 - total))
                if not more:
                    break
                chunks.append(more)
                total += len(more)
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except OSError as exc:
        raise refuse(f"cannot read the results file: {strerror(exc)}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise refuse(f"the file is more than the {limit:,} bytes evalspec reads")
    return data


@dataclass
class Source:
    """A results file to read: where it is and what one streaming pass learnt about it.

    :func:`scan` reads the file once, in blocks (its SHA-256, newline and comma counts,
    whether it holds a carriage return or a quote, its first 64 KiB), without keeping it
    in memory: the fast paths then let Arrow read the file itself, so a million-row file is
    never held twice. :meth:`read` gives the bytes to the exact path, checked against the
    hash; :meth:`check_unchanged` refuses a file that changed while it was read, so the
    claim's SHA-256 is always that of the bytes analysed.
    """

    display: str
    size: int
    sha256: str
    newlines: int
    has_cr: bool
    has_quote: bool
    commas: int  # -1 when not counted (only the CSV reader reads it)
    head: bytes
    last: bytes
    path: Path | None = None
    mtime_ns: int = 0
    data: bytes | None = None

    @classmethod
    def of_bytes(cls, data: bytes, display: str) -> Source:
        """A source held in memory (tests, and readers given bytes)."""
        return cls(display=display, size=len(data), sha256=hashlib.sha256(data).hexdigest(),
                   newlines=data.count(b"\n"), has_cr=b"\r" in data, has_quote=b'"' in data,
                   commas=data.count(b","), head=data[: 1 << 16], last=data[-1:], data=data)

    @property
    def lines(self) -> int:
        """Number of lines (a last line without a newline counts)."""
        return self.newlines + (1 if self.size and self.last != b"\n" else 0)

    def arrow_input(self) -> Any:
        """What Arrow reads: the path (streamed by Arrow) or the bytes."""
        return io.BytesIO(self.data) if self.data is not None else str(self.path)

    def read(self) -> bytes:
        """The whole file, verified against the hash of the scan."""
        if self.data is not None:
            return self.data
        assert self.path is not None
        data = read_bytes(self.path, self.display)
        if hashlib.sha256(data).hexdigest() != self.sha256:
            raise changed(self.display)
        return data

    def check_unchanged(self) -> None:
        """Refuse a file that changed since the scan (its size or modification time)."""
        if self.path is None:
            return
        try:
            st = os.stat(self.path)
        except OSError:
            raise changed(self.display) from None
        if (st.st_size, st.st_mtime_ns) != (self.size, self.mtime_ns):
            raise changed(self.display)


def changed(display: str) -> InputError:
    message = "the file changed while evalspec was reading it"
    return InputError(f"{display}: {message}", [Diagnostic(
        file=display, message=message, hint="run again once whatever writes the results has finished")])


def scan(path: Path, display: str, limit: int = MAX_RESULTS_BYTES, *, count_commas: bool = True,
         stop: Any = None) -> Source:
    """One streaming pass over a regular file (same refusals as :func:`read_bytes`).

    ``count_commas=False`` leaves ``commas`` at -1 (only CSV needs it; a pass over the bytes saved).
    ``stop`` (a :class:`threading.Event`), once set, ends the pass early: the source is then
    incomplete, for a read that was refused anyway.
    """
    import numpy as np

    refuse = refuser(display)
    digest = hashlib.sha256()
    newlines = commas = size = 0
    has_cr = has_quote = False
    head = last = b""
    fd, fst = open_regular(path, limit, refuse)
    try:
        buf = bytearray(4 << 20)  # one buffer, reused: no fresh 8 MiB block per read for the allocator to keep
        view = memoryview(buf)
        with os.fdopen(fd, "rb", buffering=0, closefd=False) as fh:
            while stop is None or not stop.is_set():
                got = fh.readinto(buf)
                if not got:
                    break
                size += got
                if size > limit:
                    raise refuse(f"the file is more than the {limit:,} bytes evalspec reads")
                digest.update(view[:got])
                block = np.frombuffer(buf, dtype=np.uint8, count=got)  # (counted in NumPy: vectorised, GIL released)
                newlines += int(np.count_nonzero(block == _NEWLINE))
                if count_commas:
                    commas += int(np.count_nonzero(block == _COMMA))
                del block
                has_cr = has_cr or buf.find(b"\r", 0, got) >= 0
                has_quote = has_quote or buf.find(b'"', 0, got) >= 0
                if len(head) < 1 << 16:
                    head += bytes(view[: min(got, (1 << 16) - len(head))])
                last = bytes(view[got - 1: got])
        view.release()
    except OSError as exc:
        raise refuse(f"cannot read the results file: {strerror(exc)}") from None
    finally:
        os.close(fd)
    return Source(display=display, size=size, sha256=digest.hexdigest(), newlines=newlines, has_cr=has_cr,
                  has_quote=has_quote, commas=commas if count_commas else -1, head=head, last=last, path=Path(path),
                  mtime_ns=fst.st_mtime_ns)


def peek(path: Path, display: str) -> bytes:
    """The first 64 KiB of a results file, refused as :func:`scan` refuses it."""
    refuse = refuser(display)
    fd, _ = open_regular(path, MAX_RESULTS_BYTES, refuse)
    try:
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(1 << 16)
    except OSError as exc:
        raise refuse(f"cannot read the results file: {strerror(exc)}") from None
    finally:
        os.close(fd)


def as_source(src: Source | bytes, display: str) -> Source:
    return src if isinstance(src, Source) else Source.of_bytes(src, display)


def strerror(exc: OSError) -> str:
    text = exc.strerror or type(exc).__name__
    return text[:1].lower() + text[1:]
