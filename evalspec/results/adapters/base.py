"""What every log adapter shares: the output record, the options a plan gives, and errors.

An adapter turns the files one evaluation tool wrote into :class:`LogFile` objects: a
:class:`~evalspec.results.readers.RawFile` (raw columns, one row per attempt, with the
row's position in the log) plus a *provenance* record of what was read — the tool and its
version, every file with its SHA-256, the rows, the errored attempts, and the tool's own
reported metric and standard error next to the same number recomputed from the rows.

Column names every adapter writes (the plan's defaults read them without a
``data.columns`` block): ``candidate``, ``case_id``, ``repeat``, ``outcome``; and when the
log has them ``model_version``, ``timestamp`` (ISO 8601, UTC), ``error``, ``answer``,
``target``, ``latency_s``, ``input_tokens``, ``output_tokens``, ``total_tokens``, ``cost``.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evalspec.errors import Diagnostic, InputError
from evalspec.results.readers import RawFile

__all__ = ["LogFile", "Options", "Rows", "WrongTool", "log_text", "candidate_fields", "candidate_name", "as_dict", "bad_log", "guard", "sha256_of", "read_bytes", "load_json", "iso_time",
           "scalar", "CORE_COLUMNS"]

#: Columns an adapter writes itself; a log's own metadata key with one of these names is
#: written as ``metadata.<key>`` instead, so nothing is overwritten.
CORE_COLUMNS = frozenset({
    "candidate", "case_id", "repeat", "outcome", "model_version", "timestamp", "error", "answer", "target",
    "latency_s", "input_tokens", "output_tokens", "total_tokens", "cost", "task", "scorer", "metric", "filter",
    "doc_index", "score", "prompt", "log_model", "n_repeats", "response", "status",
})


@dataclass(frozen=True)
class LogFile(RawFile):
    """A :class:`RawFile` read from an evaluation tool's log, with what was read."""

    provenance: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Options:
    """What the plan (or ``evalspec convert``) says about reading the logs."""

    task: str | None = None
    scorer: str | None = None
    metric: str | None = None
    filter: str | None = None
    case_field: str | None = None
    allow_partial: bool = False
    candidate_from: tuple[str, ...] | None = None

    @classmethod
    def from_plan(cls, plan: Any) -> Options:
        """The options of ``plan.data`` (its ``select`` block and ``allow_partial``)."""
        data = plan.data
        sel = getattr(data, "select", None)
        kw: dict[str, Any] = {"allow_partial": bool(getattr(data, "allow_partial", False))}
        if getattr(data, "candidate_from", None):
            kw["candidate_from"] = tuple(data.candidate_from)
        if sel is not None:
            for name in ("task", "scorer", "metric", "filter", "case_field"):
                kw[name] = getattr(sel, name, None)
        return cls(**kw)


class Rows:
    """Records collected row by row, turned into object columns at the end."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.positions: list[int] = []

    def add(self, position: int, record: dict[str, Any]) -> None:
        self.records.append(record)
        self.positions.append(position)

    def __len__(self) -> int:
        return len(self.records)

    def columns(self) -> dict[str, np.ndarray]:
        keys: dict[str, None] = {}
        for rec in self.records:
            for k in rec:
                keys.setdefault(k, None)
        out: dict[str, np.ndarray] = {}
        for k in keys:
            col = np.empty(len(self.records), dtype=object)
            col[:] = [scalar(rec.get(k)) for rec in self.records]
            out[k] = col
        return out

    def lines(self) -> np.ndarray:
        return np.asarray(self.positions, dtype=np.int64)


_PLAIN = (str, bool, int, type(None))


def scalar(value: Any) -> Any:
    """A value a table cell can hold: str, int, float, bool or None (others as JSON text)."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a mapping, else an empty one (logs of other versions omit blocks)."""
    return value if isinstance(value, dict) else {}


def flatten_into(record: dict[str, Any], values: Any, prefix: str = "", clash: str = "metadata.") -> None:
    """Put the keys of ``values`` (a dict) into ``record``; a core column name gets the ``clash`` prefix."""
    if not isinstance(values, dict):
        return
    for key, value in values.items():
        name = f"{prefix}{key}"
        if not prefix and name in CORE_COLUMNS:
            name = f"{clash}{key}"
        record[name] = value


def bad_log(display: str, message: str, hint: str | None = None, *, key: str | None = None,
            line: int | None = None, got: Any = None, has_got: bool = False) -> InputError:
    """An :class:`InputError` located at the log file ``display``."""
    return InputError(f"{display}: {message}",
                      [Diagnostic(file=display, message=message, hint=hint, key=key, line=line, got=got,
                                  has_got=has_got)])


class WrongTool(InputError):
    """A JSON document that is not this adapter's tool's: ``what`` names what was expected.

    Raised by an adapter with its own message (``is JSON but not ...``); the dispatcher,
    :func:`evalspec.results.adapters.read_logs`, which knows every tool, turns it into
    ``is a <tool> file, not <what>`` when another tool wrote the document.
    """

    def __init__(self, display: str, doc: Any, what: str, message: str, hint: str) -> None:
        err = bad_log(display, message, hint)
        super().__init__(str(err), err.diagnostics)
        self.display, self.doc, self.what = display, doc, what


@contextmanager
def guard(display: str, tool: str, where: str = "") -> Iterator[None]:
    """Turn a structural surprise in a log (a missing key, a wrong type) into a located error.

    Adapters check what they rely on with their own messages; this is the backstop that
    keeps a log of an unforeseen shape from ever producing a traceback.
    """
    try:
        yield
    except InputError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, UnicodeDecodeError,
            RecursionError) as exc:
        what = f" ({where})" if where else ""
        raise bad_log(display, f"not a {tool} log evalspec can read{what}: unexpected structure: "
                      f"{type(exc).__name__}: {str(exc)[:120]}",
                      f"check that the file was written by {tool} and is complete; `evalspec convert` shows "
                      "what evalspec reads") from None


def read_bytes(path: Path, display: str) -> bytes:
    """The log's bytes: regular files only, size-capped (a FIFO or /dev/zero never hangs the run)."""
    from evalspec.results import files

    return files.read_bytes(Path(path), display)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


#: Deepest nesting of the values a log's provenance keeps (task arguments, a reducer, n-shot...).
MAX_DEPTH = 32
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def log_text(data: bytes, display: str, what: str) -> str:
    """A log's bytes as text (UTF-8, a leading byte-order mark dropped); a located error naming ``what`` otherwise."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise bad_log(display, f"is not UTF-8 text (byte {exc.start}); expected {what}") from None


def load_json(data: bytes, display: str, what: str, line: int | None = None) -> Any:
    """Parse JSON text, a located error when it is not JSON or holds text that is not Unicode."""
    if data[:3] != b"\xef\xbb\xbf":
        try:  # the fast path: the bytes as they are
            return _valid_text(json.loads(data), data, display, line)
        except (ValueError, RecursionError):
            pass  # the exact path below says what is wrong
    text = log_text(data, display, what)
    if not text.strip():
        raise bad_log(display, f"is empty; expected {what}")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise bad_log(display, f"is not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno}); expected "
                      f"{what}", "the file may be truncated; rewrite it with the tool", line=exc.lineno) from None
    except RecursionError:
        raise bad_log(display, f"is JSON nested too deeply to read; expected {what}") from None
    return _valid_text(doc, data, display, line)


def valid_line(doc: Any, text: str, display: str, line: int) -> Any:
    """A parsed JSONL line ``doc`` (from ``text``), refused when it holds a lone surrogate."""
    if "\\u" not in text:
        return doc
    return _valid_text(doc, text.encode("utf-8", "surrogatepass"), display, line)


def _valid_text(doc: Any, data: bytes, display: str, line: int | None) -> Any:
    """``doc``, unless one of its strings holds a lone UTF-16 surrogate (``"\\ud800"``): not text."""
    if _SURROGATE_ESCAPE.search(data) is None:
        return doc
    where = _lone_surrogate(doc)
    if where is not None:
        at = f"line {line}: " if line is not None else ""
        raise bad_log(display, f"{at}the value at {where} is not valid Unicode text (a lone surrogate escape such as "
                      "\\ud800)", "the file was damaged or edited; rewrite it with the tool", line=line)
    return doc


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _lone_surrogate(doc: Any) -> str | None:
    """The path (``a.b[2]``) of the first string or key holding a lone surrogate, or None."""
    stack: list[tuple[Any, str]] = [(doc, "the top")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if _has_surrogate(value):
                return path
        elif isinstance(value, dict):
            for k, v in value.items():
                sub = k if path == "the top" else f"{path}.{k}"
                if _has_surrogate(k):
                    return f"{path} (a key)"
                stack.append((v, sub))
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(value))
    return None


def nesting_path(value: Any, limit: int = MAX_DEPTH) -> str | None:
    """The path of the first value nested more than ``limit`` levels deep in ``value``, or None."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        v, path, depth = stack.pop()
        if depth > limit:
            return path or "the top"
        if isinstance(v, dict):
            stack.extend((x, f"{path}.{k}" if path else str(k), depth + 1) for k, x in v.items())
        elif isinstance(v, (list, tuple)):
            stack.extend((x, f"{path}[{i}]", depth + 1) for i, x in enumerate(v))
    return None


def number_or_none(value: Any) -> float | None:
    """A tool's reported number as a finite float; None when it is not one (text, a huge integer, NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        f = float(value)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def iso_time(value: Any) -> str | None:
    """A time as ISO 8601 UTC text: ISO text is kept (normalised), epoch seconds are converted."""
    if isinstance(value, str):
        return _iso_text(value)
    return _iso_time(value)


@functools.lru_cache(maxsize=4096)
def _iso_text(value: str) -> str | None:
    return _iso_time(value)


def _iso_time(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if not math.isfinite(float(value)):
            return None
        try:
            t = _dt.datetime.fromtimestamp(float(value), tz=_dt.timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
        return t.isoformat().replace("+00:00", "Z")
    if isinstance(value, str):
        s = value.strip()
        try:
            t = _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
        except ValueError:
            try:
                return _iso_time(float(s))
            except ValueError:
                return None
        if t.tzinfo is None:
            t = t.replace(tzinfo=_dt.timezone.utc)
        return t.astimezone(_dt.timezone.utc).isoformat().replace("+00:00", "Z")
    return None


def make_log_file(path: Path, display: str, tool_format: str, digest: str, rows: Rows, unit: str,
                  provenance: dict[str, Any]) -> LogFile:
    provenance = dict(provenance)
    provenance["rows"] = len(rows)
    deep = nesting_path(provenance)
    if deep is not None:
        raise bad_log(display, f"the log's {deep.split('[')[0]} is nested more than {MAX_DEPTH} levels deep, "
                      "which no tool writes", "the file was damaged or edited; use the log the tool wrote")
    return LogFile(path=str(path), display=display, format=tool_format, sha256=digest, columns=rows.columns(),
                   lines=rows.lines(), unit=unit, provenance=provenance)


def mean_or_none(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(vals) / len(vals) if vals else None


def compare_note(tool: str, reported: float | None, recomputed: float | None, why: str) -> str | None:
    """A sentence when the tool's own number and the number recomputed from the rows differ."""
    if reported is None or recomputed is None:
        return None
    if abs(reported - recomputed) <= 1e-9 * max(1.0, abs(reported)):
        return None
    return (f"{tool} reports {reported:.6g}; the same statistic recomputed from the rows evalspec read is "
            f"{recomputed:.6g}. {why}")


# -- the candidate's name, from any field of the log -----------------------------------------

#: The longest candidate name composed from log fields (a whole prompt text is cut, with a digest).
MAX_CANDIDATE_CHARS = 200


def candidate_fields(base: dict[str, Any], **prefixed: Any) -> dict[str, Any]:
    """The fields a candidate's name may be composed of: ``base`` plus ``<prefix>.<key>`` of each mapping."""
    out = {k: v for k, v in base.items() if v is not None}
    for prefix, values in prefixed.items():
        if isinstance(values, dict):
            for key, value in values.items():
                if value is not None:
                    out[f"{prefix}.{key}"] = value
    return out


def _field_text(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    text = value if isinstance(value, str) else str(scalar(value))
    text = " ".join(text.split())
    if len(text) > MAX_CANDIDATE_CHARS:
        text = f"{text[:MAX_CANDIDATE_CHARS - 12]}…{hashlib.sha256(text.encode('utf-8', 'replace')).hexdigest()[:10]}"
    return text


def candidate_name(default: Any, fields: dict[str, Any], options: Options, display: str, tool: str) -> Any:
    """The candidate's name: ``default`` (the tool's model name), or composed of ``options.candidate_from``.

    Several fields are joined with ``|`` in the order given (``model|task_args.prompt`` ->
    ``mockllm/model|terse``). A field the log lacks is a located error listing the fields it has.
    """
    if not options.candidate_from:
        return default
    parts = []
    for name in options.candidate_from:
        if name not in fields:
            have = ", ".join(sorted(fields)) or "none"
            raise bad_log(display, f"the field {name!r} is not in this {tool} log",
                          f"fields this log has: {have}", key="data.candidate_from", got=name, has_got=True)
        parts.append(_field_text(fields[name]))
    return "|".join(parts)


def fields_shown(fields: dict[str, Any]) -> dict[str, str]:
    """The candidate fields as short texts, for the provenance (and the duplicate-rows diagnosis)."""
    return {k: _field_text(v) for k, v in list(fields.items())[:100]}
