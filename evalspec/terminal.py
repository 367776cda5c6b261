"""What evalspec prints reaches the terminal escaped: control characters from the user's files never act.

:func:`escaped_output` puts stdout and stderr under :class:`_Escaping` for the duration of a
command (the CLI wraps every command in it); :func:`unescaped` gives the stream under it, for
data a command writes on purpose byte for byte (``convert``'s table).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["escaped_output", "unescaped"]


class _Escaping:
    """A text stream that escapes control characters in everything written to it (:func:`safe_text`).

    Values from the user's files (a model version holding ``ESC [ 1 A``, a carriage return, a
    bidirectional override) reach messages, tables and listings; on a terminal they could
    overwrite a FAIL line with a fake PASS. Every byte evalspec prints passes through here,
    so no command can forget to escape. Line breaks and tabs pass (evalspec's own layout);
    those inside one value are escaped where the value is put into a message (``one_line``).
    It has no ``buffer``, so click writes through it rather than around it.
    """

    def __init__(self, stream: Any) -> None:
        from evalspec.errors import safe_text  # (here, not in write: a write made while a module is imported,
        # such as Python's own ``-v`` messages, would otherwise import evalspec.errors from inside its own import)

        self._stream = stream
        self._safe_text = safe_text

    def write(self, text: Any) -> int:
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8", "replace")
        self._stream.write(self._safe_text(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":
            raise AttributeError(name)
        return getattr(self._stream, name)


def unescaped(stream: Any) -> Any:
    """The stream under :class:`_Escaping`: for data a command writes to stdout on purpose (``convert``'s
    table), which must reach the file or pipe byte for byte."""
    return stream._stream if isinstance(stream, _Escaping) else stream


@contextlib.contextmanager
def escaped_output() -> Iterator[None]:
    """stdout and stderr through :class:`_Escaping` for the duration of a command (nested: once)."""
    if isinstance(sys.stdout, _Escaping):
        yield
        return
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Escaping(out), _Escaping(err)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
