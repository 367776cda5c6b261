"""Exceptions that carry a user-facing message and an exit code.

Anything raised as an :class:`EvalspecError` is a *user* problem (or a refused
operation) and is printed by the CLI without a traceback. Any other exception is a
bug and is reported as an internal error (exit code 70).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalspec.exit_codes import ExitCode


@dataclass(frozen=True)
class Diagnostic:
    """One located problem: ``file:line:col: key: message (got VALUE)``.

    ``line`` and ``col`` are 1-based; ``None`` when the problem has no position
    (for example a missing file). ``key`` is the dotted path inside the document
    (``analyses[0].method``) or the results row (``row 17``).
    """

    file: str
    message: str
    line: int | None = None
    col: int | None = None
    key: str | None = None
    got: Any = None
    has_got: bool = False
    hint: str | None = None
    excerpt: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The JSON form ``validate --json`` prints (``got`` as its text where it is not a plain value)."""
        out: dict[str, Any] = {"file": self.file, "line": self.line, "col": self.col, "key": self.key,
                               "message": self.message, "hint": self.hint}
        if self.has_got:
            g = self.got
            out["got"] = g if isinstance(g, (str, int, float, bool)) or g is None else repr(g)
        return out

    def headline(self) -> str:
        """The one-line form ``file:line:col: key: message (got VALUE); hint``."""
        loc = self.file
        if self.line is not None:
            loc += f":{self.line}"
            if self.col is not None:
                loc += f":{self.col}"
        parts = [loc]
        if self.key:
            parts.append(self.key)
        text = ": ".join(parts) + ": " + self.message
        if self.has_got:
            text += f" (got {_short_repr(self.got)})"
        if self.hint:
            text += f"; {self.hint}"
        return one_line(text)

    def render(self) -> str:
        """Headline plus the source excerpt with a caret, when available."""
        if self.excerpt:
            return self.headline() + "\n" + self.excerpt
        return self.headline()


def _escapes() -> dict[int, str]:
    """Characters a terminal would act on, or that reorder or hide text, and their visible escapes.

    C0 controls (ESC, ``\r``, backspace...), DEL, the C1 controls (U+0080-U+009F, of which U+009B
    starts a terminal sequence like ``ESC [``), line and paragraph separators, the bidirectional
    embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069: "Trojan source"), the
    directional marks, zero-width characters and the byte-order mark.
    """
    table = {i: f"\\x{i:02x}" for i in [*range(0x20), 0x7F, *range(0x80, 0xA0)]}
    for cp in (0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C,
               0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF):
        table[cp] = f"\\u{cp:04x}"
    return table


_CONTROL = _escapes()
#: The same, keeping the line breaks and tabs of a multi-line message evalspec itself composed.
_CONTROL_TEXT = {k: v for k, v in _CONTROL.items() if k not in (0x0A, 0x09)}


def one_line(text: str) -> str:
    """``text`` with control characters and line separators escaped: a value from a results file
    (a carriage return in a model version) can never break a message into lines that look like
    other messages, nor move the cursor, recolour or reorder what a terminal shows."""
    out = text.translate(_CONTROL)
    return _no_surrogates(out)


def safe_text(text: str) -> str:
    """Text for a terminal or a file: every control character escaped as in :func:`one_line`, except
    the line breaks and tabs. Used on everything evalspec prints (one helper, one table)."""
    return _no_surrogates(text.translate(_CONTROL_TEXT))


def _no_surrogates(text: str) -> str:
    """Lone surrogates (from a JSON ``"\\ud800"``) shown as ``\\ud800`` rather than failing to encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _short_repr(value: Any, limit: int = 60) -> str:
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


class EvalspecError(Exception):
    """Base class of errors shown to the user without a traceback."""

    exit_code: ExitCode = ExitCode.BAD_INPUT

    def __init__(self, message: str, diagnostics: list[Diagnostic] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.diagnostics: list[Diagnostic] = list(diagnostics or [])

    def render(self) -> str:
        """All diagnostics, one block each, or the bare message."""
        if not self.diagnostics:
            return self.message
        return "\n".join(d.render() for d in self.diagnostics)


class InputError(EvalspecError):
    """Unreadable or malformed input (exit code 2)."""

    exit_code = ExitCode.BAD_INPUT


class PlanInvalid(EvalspecError):
    """The plan was read but breaks the schema or a cross-field rule (exit code 1)."""

    exit_code = ExitCode.CHECK_FAILED


class CheckFailed(EvalspecError):
    """A check ran and found problems (audit, refused re-lock) (exit code 1)."""

    exit_code = ExitCode.CHECK_FAILED


def os_error_message(exc: OSError, *, out_option: bool = True) -> str:
    """A one-line message for an operating-system refusal (permissions, read-only or full disk, ...).

    Names the file and what to do; used by the CLI so that such refusals exit 2, not 70.
    ``out_option``: whether the command has ``--out`` to suggest (``lock`` writes beside the plan).
    """
    import errno

    name = exc.filename if exc.filename is not None else "evalspec"
    if isinstance(name, bytes):
        name = name.decode("utf-8", "backslashreplace")
    name = str(name).encode("utf-8", "backslashreplace").decode("utf-8")
    what = exc.strerror or type(exc).__name__
    hints = {
        errno.EACCES: "choose a folder you can write (--out) or fix its permissions",
        errno.EPERM: "choose a folder you can write (--out) or fix its permissions",
        errno.EROFS: "choose another folder with --out",
        errno.ENOSPC: "free some space or choose another folder with --out",
        errno.EDQUOT: "free some space or choose another folder with --out",
        errno.ENOTDIR: "a part of the path is a file, not a folder; choose another path",
        errno.EISDIR: "this is a folder, not a file",
        errno.ELOOP: "fix or remove the links",
        errno.ENAMETOOLONG: "choose a shorter path",
    }
    hint = hints.get(exc.errno or -1, "check that the path exists and can be read and written")
    if not out_option:
        hint = {"choose a folder you can write (--out) or fix its permissions": "fix the folder's permissions",
                "choose another folder with --out": "make the folder writable, or copy the plan to one that is",
                "free some space or choose another folder with --out": "free some space"}.get(hint, hint)
    return one_line(f"{name}: {what[:1].lower() + what[1:]}; {hint}")
