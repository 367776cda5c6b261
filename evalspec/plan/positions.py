"""Source positions of every value in a plan, and the paths that name them.

A *path* is a tuple of mapping keys and list indices from the document root, e.g.
``("analyses", 0, "method")``. Its *dotted* form, used in every message, is
``analyses[0].method``; keys that are not plain names are quoted
(``candidates["gpt-4.1"].model``). :class:`PositionMap` maps each path to the
:class:`Pos` of its YAML node, so an error found anywhere (pydantic, a cross-field
rule, or a later semantic check such as "this column is not in the results") can
point at the line that wrote the value — or at the nearest ancestor when the key is
missing. :func:`excerpt` renders the source line with a caret under the value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Path", "Pos", "PositionMap", "format_path", "parse_path", "excerpt"]

PathItem = Any  # a mapping key (str) or a list index (int)
Path = tuple[PathItem, ...]

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")
_TOKEN = re.compile(
    r"""\[(?P<index>\d+)\]            # [3]
      | \["(?P<dq>(?:[^"\\]|\\.)*)"\]  # ["key.with.dots"]
      | \.?(?P<plain>[^.\[\]]+)       # key
    """,
    re.VERBOSE,
)


@dataclass(frozen=True)
class Pos:
    """Where a YAML node is: 1-based line and column of its start, and of its key.

    ``end_line``/``end_col`` mark the end of the value (exclusive column), so a
    caret can underline a scalar. ``key_line``/``key_col`` are the position of the
    mapping key that introduced the value (``None`` for list items and the root).
    ``source`` is the scalar as written (``1.10``, ``2026-10-01``), or ``None``.
    """

    line: int
    col: int
    end_line: int
    end_col: int
    key_line: int | None = None
    key_col: int | None = None
    source: str | None = None

    @property
    def key_pos(self) -> tuple[int, int]:
        """Line and column of the key, or of the value when there is no key."""
        if self.key_line is not None and self.key_col is not None:
            return self.key_line, self.key_col
        return self.line, self.col


def format_path(path: Path) -> str:
    """Dotted form of a path: ``("analyses", 0, "method")`` -> ``analyses[0].method``."""
    out: list[str] = []
    for item in path:
        if isinstance(item, int) and not isinstance(item, bool):
            out.append(f"[{item}]")
        elif isinstance(item, str) and _PLAIN_KEY.match(item):
            out.append(("." if out else "") + item)
        else:
            text = str(item).replace("\\", "\\\\").replace('"', '\\"')
            out.append(f'["{text}"]')
    return "".join(out)


def parse_path(dotted: str) -> Path:
    """Inverse of :func:`format_path` for string keys and integer indices.

    ``"candidates.A.model"`` -> ``("candidates", "A", "model")``;
    ``'candidates["gpt-4.1"]'`` -> ``("candidates", "gpt-4.1")``.
    """
    path: list[PathItem] = []
    pos = 0
    while pos < len(dotted):
        m = _TOKEN.match(dotted, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"not a dotted key: {dotted!r}")
        if m.group("index") is not None:
            path.append(int(m.group("index")))
        elif m.group("dq") is not None:
            path.append(re.sub(r"\\(.)", r"\1", m.group("dq")))
        else:
            path.append(m.group("plain"))
        pos = m.end()
    return tuple(path)


class PositionMap(Mapping[Path, Pos]):
    """Path -> :class:`Pos` for every node of one YAML document."""

    def __init__(self, positions: dict[Path, Pos] | None = None) -> None:
        self._positions: dict[Path, Pos] = dict(positions or {})
        self._dotted: dict[str, Path] | None = None

    def __getitem__(self, path: Path) -> Pos:
        return self._positions[path]

    def __iter__(self) -> Iterator[Path]:
        return iter(self._positions)

    def __len__(self) -> int:
        return len(self._positions)

    def add(self, path: Path, pos: Pos) -> None:
        """Record the position of ``path`` (used by the loader)."""
        self._positions[path] = pos
        self._dotted = None

    def resolve(self, key: str | Path) -> tuple[Path, Pos | None, bool]:
        """Find ``key`` or its nearest recorded ancestor.

        Returns ``(path_found, pos, exact)``: ``exact`` is False when ``key`` itself
        is not in the document (a missing key) and ``pos`` is the ancestor's.
        """
        path = self._as_path(key)
        probe = path
        while True:
            if probe in self._positions:
                return probe, self._positions[probe], probe == path
            if not probe:
                return (), None, False
            probe = probe[:-1]

    def locate(self, key: str | Path) -> tuple[int, int] | None:
        """1-based ``(line, col)`` of the value at ``key``; for a key the plan does not
        write, of the nearest ancestor's key (``decision.margin`` -> ``decision:``).

        Later checks use it to point at the plan line that named something, e.g.
        ``locate("units.cluster")`` when the cluster column is missing from the results.
        """
        _, pos, exact = self.resolve(key)
        if pos is None:
            return None
        return (pos.line, pos.col) if exact else pos.key_pos

    def _as_path(self, key: str | Path) -> Path:
        if isinstance(key, tuple):
            return key
        if self._dotted is None:
            self._dotted = {format_path(p): p for p in self._positions}
        if key in self._dotted:
            return self._dotted[key]
        try:
            return parse_path(key)
        except ValueError:
            return (key,)


def excerpt(lines: list[str], line: int, col: int, width: int = 1) -> str:
    """The source line ``line`` with a caret under columns ``col .. col+width-1``.

    ::

          14 |     method: wilsn
             |             ^^^^^
    """
    if not 1 <= line <= len(lines):
        return ""
    text = lines[line - 1].rstrip("\r\n")
    text = "".join(ch if ch.isprintable() else " " for ch in text.replace("\t", " "))
    if len(text) > 160:
        start = max(0, col - 60)
        text = ("..." if start else "") + text[start : start + 150]
        col = col - start + (3 if start else 0)
    gutter = str(line)
    pad = " " * len(gutter)
    width = max(1, min(width, max(1, len(text) - col + 1)))
    return f" {gutter} | {text}\n {pad} | {' ' * (col - 1)}{'^' * width}"
