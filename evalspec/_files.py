"""Bounded, checked reading of the files evalspec keeps beside a plan (claims, locks, ledgers).

Every such file is read through :func:`read_regular`: it must be a regular file (a named
pipe would block forever, ``/dev/zero`` never ends) of at most a stated size, checked
before it is opened, opened without blocking and checked again on the descriptor. JSON
read from them goes through :func:`loads_json`, which refuses what Python's parser would
accept silently: a key named twice in one object (a person or ``grep`` reads the first,
Python the last), ``NaN``/``Infinity`` (not JSON), integers of thousands of digits and
nesting deeper than :data:`MAX_JSON_DEPTH`. Each refusal is an
:class:`~evalspec.errors.InputError` (exit 2) naming the file.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from evalspec.errors import Diagnostic, InputError

__all__ = ["MAX_GLOB_FILES", "MAX_JSON_DEPTH", "MAX_RECORD_BYTES", "DuplicateKey", "bounded_glob", "loads_json",
           "read_regular", "read_text", "refuse_symlinked_folder", "special_kind"]

#: Largest claim, lock or ledger evalspec reads (bytes).
MAX_RECORD_BYTES = 512 * 1024**2
#: Deepest nesting of arrays and objects in a JSON record evalspec reads.
MAX_JSON_DEPTH = 200

_KINDS = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def special_kind(mode: int) -> str | None:
    """What a non-regular file is (``"a named pipe"``...), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _error(display: str, message: str, hint: str | None, line: int | None = None) -> InputError:
    d = Diagnostic(file=display, message=message, hint=hint, line=line)
    return InputError(d.headline(), [d])


def read_regular(path: str | os.PathLike[str], *, what: str, display: str | None = None,
                 limit: int = MAX_RECORD_BYTES, hint: str | None = None, missing_ok: bool = False) -> bytes | None:
    """The bytes of the regular file ``path`` (at most ``limit``); ``None`` when missing and ``missing_ok``.

    ``what`` names the file in messages ("the ledger of looks"). Anything else — a named
    pipe, a device, a folder, a symbolic-link loop, a file too large, a permission problem —
    is an :class:`InputError` naming the file; nothing blocks and nothing reads without end.
    """
    name = display if display is not None else os.fspath(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise _error(name, f"{what}: no such file", hint) from None
    except OSError as exc:
        raise _error(name, f"{what} cannot be read: {_reason(exc)}", hint) from None
    kind = special_kind(st.st_mode)
    if kind is not None:
        raise _error(name, f"{what} is not a regular file ({kind})", hint or "replace it with the file evalspec wrote")
    if st.st_size > limit:
        raise _error(name, f"{what} is {st.st_size:,} bytes, more than the {limit:,} evalspec reads", hint)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise _error(name, f"{what} cannot be read: {_reason(exc)}", hint) from None
    try:
        fst = os.fstat(fd)
        kind = special_kind(fst.st_mode)
        if kind is not None:  # swapped between the stat and the open
            raise _error(name, f"{what} is not a regular file ({kind})", hint)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(8 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise _error(name, f"{what} is more than the {limit:,} bytes evalspec reads", hint)
    except OSError as exc:
        raise _error(name, f"{what} cannot be read: {_reason(exc)}", hint) from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_text(path: str | os.PathLike[str], *, what: str, display: str | None = None,
              limit: int = MAX_RECORD_BYTES, hint: str | None = None, missing_ok: bool = False) -> str | None:
    """:func:`read_regular`, decoded as UTF-8 (a bad byte is an error at its line)."""
    raw = read_regular(path, what=what, display=display, limit=limit, hint=hint, missing_ok=missing_ok)
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        name = display if display is not None else os.fspath(path)
        raise _error(name, f"{what} is not UTF-8 text (byte {exc.start})", hint, line=line) from None


def _reason(exc: OSError) -> str:
    import errno

    if exc.errno == errno.ELOOP:
        return "a loop of symbolic links"
    text = exc.strerror or type(exc).__name__
    return text[:1].lower() + text[1:]


class DuplicateKey(ValueError):
    """A JSON object names one key twice."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise DuplicateKey(k)
        out[k] = v
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _depth_over(value: Any, most: int) -> bool:
    """Whether arrays/objects in ``value`` nest deeper than ``most`` (an iterative walk)."""
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            items = v.values()
        elif isinstance(v, list):
            items = v
        else:
            continue
        if d > most:
            return True
        stack.extend((x, d + 1) for x in items if isinstance(x, (dict, list)))
    return False


def loads_json(text: str, *, display: str, what: str, hint: str | None = None, line: int | None = None,
               max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` that refuses duplicate keys, NaN/Infinity, huge integers and deep nesting.

    ``line`` is the file line of ``text`` when it is one line of a JSON-lines file.
    """
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except DuplicateKey as exc:
        raise _error(display, f"{what} names the key {exc.key!r} twice in one object (which value is meant?)",
                     hint or "restore the file evalspec wrote", line=line) from None
    except json.JSONDecodeError as exc:
        at = line if line is not None else exc.lineno
        raise InputError(f"{display}: {what} is not valid JSON: {exc.msg}", [Diagnostic(
            file=display, line=at, col=exc.colno if line is None else None,
            message=f"{what} is not valid JSON: {exc.msg}", hint=hint)]) from None
    except (ValueError, RecursionError) as exc:  # a 5,000-digit integer, NaN, nesting past the C parser's limit
        if isinstance(exc, RecursionError):
            raise _error(display, f"{what} nests arrays or objects more than {max_depth} deep", hint,
                         line=line) from None
        raise _error(display, f"{what} is not valid JSON: {str(exc)[:120]}", hint, line=line) from None
    if _depth_over(value, max_depth):
        raise _error(display, f"{what} nests arrays or objects more than {max_depth} deep", hint, line=line)
    return value


def refuse_symlinked_folder(folder: Path, *, what: str, option: str | None = None) -> None:
    """Refuse to write into ``folder`` when it (the last part) is a symbolic link.

    Writing through a link would put (or delete) files somewhere the user never named.
    """
    if folder.is_symlink():
        try:
            target = os.readlink(folder)
        except OSError:
            target = "?"
        hint = (f"name the folder it points to ({target}) with {option}" if option else
                f"replace the link with a folder, or move the plan next to the folder it points to ({target})")
        raise _error(str(folder), f"{what} is a symbolic link (to {target}); evalspec does not write through it",
                     hint)


#: Most files one results glob may name, and most folder entries it may look at.
MAX_GLOB_FILES = 100_000
MAX_GLOB_ENTRIES = 2_000_000


def _component_regex(part: str) -> str:
    """One path component of a glob as a regex that never crosses ``/`` (``*``, ``?``, ``[...]``)."""
    out = ["(?!\\.)"] if part[:1] in "*?[" else []  # like glob: a wildcard does not match a leading dot
    i = 0
    while i < len(part):
        c = part[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = part.find("]", i + 2 if part[i + 1:i + 2] in ("!", "]") else i + 1)
            if j < 0:
                out.append("\\[")
            else:
                body = part[i + 1:j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def bounded_glob(base: Path, pattern: str, *, display: str) -> list[Path]:
    """The files under ``base`` matching ``pattern`` (``glob`` syntax, ``**`` for any depth), sorted.

    Unlike :func:`glob.glob`, ``**`` never descends into a symbolic link to a folder (two links
    to ``.`` would name 2**40 paths) nor into hidden folders, and the expansion stops with an
    :class:`InputError` past :data:`MAX_GLOB_FILES` files or :data:`MAX_GLOB_ENTRIES` entries.
    """
    import glob as _glob

    parts = Path(pattern).parts
    if "**" not in parts:
        hits = []
        for i, p in enumerate(_glob.iglob(str(base / pattern))):
            if i >= MAX_GLOB_FILES:
                raise _error(display, f"the pattern {pattern!r} names more than {MAX_GLOB_FILES:,} files",
                             "name fewer files (a narrower pattern, or a folder per run)")
            hits.append(Path(p))
        return sorted(hits)
    first = next(i for i, p in enumerate(parts) if any(ch in p for ch in "*?["))
    top = base.joinpath(*parts[:first]) if first else base
    rest = parts[first:]
    regex = ""
    for k, part in enumerate(rest):
        last = k == len(rest) - 1
        if part == "**":
            regex += "(?:(?!\\.)[^/]+/)*" if not last else "(?:(?!\\.)[^/]+/)*(?!\\.)[^/]+"
        else:
            regex += _component_regex(part) + ("" if last else "/")
    matcher = re.compile(regex + "\\Z", re.DOTALL)
    hits, seen = [], 0
    for folder, dirs, files in os.walk(top, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        seen += len(dirs) + len(files)
        if seen > MAX_GLOB_ENTRIES:
            raise _error(display, f"the pattern {pattern!r} looks at more than {MAX_GLOB_ENTRIES:,} files and folders",
                         "narrow the pattern to the folder that holds the results")
        rel_dir = os.path.relpath(folder, top)
        for name in files:
            rel = name if rel_dir == "." else f"{rel_dir.replace(os.sep, '/')}/{name}"
            if matcher.match(rel):
                hits.append(Path(folder) / name)
                if len(hits) > MAX_GLOB_FILES:
                    raise _error(display, f"the pattern {pattern!r} names more than {MAX_GLOB_FILES:,} files",
                                 "name fewer files (a narrower pattern, or a folder per run)")
    return sorted(hits)
