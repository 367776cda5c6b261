"""Read a plan file safely into plain Python data plus the position of every value.

Everything that can go wrong *before* the schema is checked is caught here and
reported as an :class:`~evalspec.errors.InputError` (exit code 2) with a located
:class:`~evalspec.errors.Diagnostic`: a missing path, a directory, an unreadable or
huge file, a file that is not UTF-8, YAML syntax errors, tab indentation, duplicate
keys (PyYAML would silently keep the last), an empty document, a list or scalar
where a mapping belongs, unsupported tags, recursive aliases and alias bombs
("billion laughs": a few lines whose aliases expand to billions of values).

PyYAML's safe loader composes the node graph (linear in the file size); this module
then builds the Python values itself, so it can count every value it creates, record
each node's line and column, and check keys. Mapping keys are read as the text
written (``yes:`` is the key ``"yes"``, not ``True``): every key in a plan is a name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import Any

import yaml

from evalspec.errors import Diagnostic, InputError
from evalspec.plan.positions import Path, Pos, PositionMap, excerpt, format_path

__all__ = ["MAX_PLAN_BYTES", "MAX_VALUES", "MAX_DEPTH", "SourceDocument", "read_source", "parse_source",
           "refuse_other_document", "binary_kind", "log_kind"]

#: Largest plan file accepted; a plan is a few kilobytes, a bigger file is a mistake.
MAX_PLAN_BYTES = 1024 * 1024
#: Most values (mappings, lists, scalars) a plan may expand to, aliases included.
MAX_VALUES = 20_000
#: Deepest nesting accepted.
MAX_DEPTH = 64

_MERGE_TAG = "tag:yaml.org,2002:merge"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_SCALAR_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    _TIMESTAMP_TAG,
}
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class SourceDocument:
    """A parsed plan document: the data, where each value is, and the text it came from."""

    file: str
    text: str
    data: dict[str, Any]
    positions: PositionMap

    @property
    def lines(self) -> list[str]:
        """The source split into lines (no line ends)."""
        return self.text.splitlines()


def diagnostic_at(
    file: str,
    lines: list[str],
    line: int | None,
    col: int | None,
    message: str,
    *,
    key: str | None = None,
    hint: str | None = None,
    width: int = 1,
    got: Any = None,
    has_got: bool = False,
) -> Diagnostic:
    """A :class:`Diagnostic` at ``line:col`` with the source excerpt and a caret."""
    text = excerpt(lines, line, col, width) if line is not None and col is not None else ""
    return Diagnostic(
        file=file,
        message=message,
        line=line,
        col=col,
        key=key or None,
        got=got,
        has_got=has_got,
        hint=hint,
        excerpt=text or None,
    )


# -- reading bytes ------------------------------------------------------------------------


def read_source(path: str | os.PathLike[str], display: str | None = None) -> str:
    """Read a plan file as text, refusing what cannot be a plan. Raises :class:`InputError`."""
    fs = FsPath(path)
    name = display if display is not None else str(path)
    try:
        st = fs.stat()
    except FileNotFoundError:
        raise _input_error(name, "no such file", _similar_files(fs)) from None
    except NotADirectoryError:
        raise _input_error(name, "no such file (a part of the path is a file, not a folder)") from None
    except PermissionError:
        raise _input_error(name, "cannot be read: permission denied") from None
    except OSError as exc:
        raise _input_error(name, f"cannot be read: {exc.strerror or exc}") from None
    if fs.is_dir():
        inside = fs / "plan.yaml"
        hint = f"did you mean {os.path.join(name, 'plan.yaml')}?" if inside.is_file() else "pass the plan file"
        raise _input_error(name, "is a directory, not a plan file", hint)
    import stat as _stat

    if not _stat.S_ISREG(st.st_mode):  # a named pipe would block forever, a device never end
        kind = ("a named pipe" if _stat.S_ISFIFO(st.st_mode) else "a device"
                if _stat.S_ISCHR(st.st_mode) or _stat.S_ISBLK(st.st_mode) else "a socket or other special file")
        raise _input_error(name, f"is not a regular file ({kind})", "pass the plan file")
    if st.st_size > MAX_PLAN_BYTES:
        raise _too_big(name, st.st_size)
    try:
        fd = os.open(fs, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(MAX_PLAN_BYTES + 1)
    except PermissionError:
        raise _input_error(name, "cannot be read: permission denied") from None
    except OSError as exc:
        raise _input_error(name, f"cannot be read: {exc.strerror or exc}") from None
    if len(raw) > MAX_PLAN_BYTES:
        raise _too_big(name, len(raw))
    return decode_source(raw, name)


def decode_source(raw: bytes, name: str) -> str:
    """Decode plan bytes as UTF-8 (a leading byte-order mark is allowed)."""
    for bom, enc in ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
                     (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16")):
        if raw.startswith(bom):
            raise _input_error(name, f"is encoded as {enc}, not UTF-8", "save the file as UTF-8", line=1, col=1)
    what = binary_kind(raw)
    if what is not None:
        raise _input_error(name, f"this is {what}, not a plan", _PASS_THE_PLAN, line=1, col=1)
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        shown = raw[exc.start : exc.start + 1].hex()
        prefix = raw[raw.rfind(b"\n", 0, exc.start) + 1 : exc.start].decode("utf-8", "replace")
        lines = raw.decode("utf-8", "replace").splitlines()
        raise InputError(
            f"{name} is not UTF-8",
            [
                diagnostic_at(
                    name, lines, line, len(prefix) + 1,
                    f"not valid UTF-8: byte 0x{shown} (at byte offset {exc.start})",
                    hint="save the file as UTF-8",
                )
            ],
        ) from None


#: Binary files a plan is mistaken for, by their first bytes.
_BINARY_KINDS = (
    (b"PK\x03\x04", "a zip archive (an inspect_ai .eval log is one)"),
    (b"PAR1", "a Parquet file (a results table)"),
    (b"\x1f\x8b", "a gzip-compressed file"),
    (b"%PDF", "a PDF document (an evalspec report is one)"),
)
_PASS_THE_PLAN = ("pass the plan: the YAML file whose `data.results` names the results or logs "
                  "(`evalspec init` writes one)")
#: Top-level keys only a plan has: a mapping with none of them is some other document.
_PLAN_KEYS = ("evalspec", "id", "title", "question", "decision_owner", "population", "data", "candidates",
              "baseline", "units", "attempts", "missing", "analyses", "decision", "stopping", "slices",
              "systematic_limits", "record", "power")


def binary_kind(raw: bytes) -> str | None:
    """What a binary file is by its first bytes ("a zip archive (...)"), or None."""
    return next((what for magic, what in _BINARY_KINDS if raw.startswith(magic)), None)


def log_kind(data: Any) -> str | None:
    """Which evaluation tool's JSON log a parsed document is ("an inspect_ai log"), or None."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("eval"), dict) and ("status" in data or "samples" in data):
        return "an inspect_ai log"
    if "lm_eval_version" in data or ("results" in data and "configs" in data):
        return "an lm-evaluation-harness results file"
    if "evalId" in data or ("results" in data and "shareableUrl" in data):
        return "a promptfoo results file"
    return None


def refuse_other_document(doc: SourceDocument) -> None:
    """Raise :class:`InputError` when the parsed document is a claim, a lock file or a tool's log.

    Called by the plan loader before the schema check, which would otherwise list each of
    the document's keys as unknown.
    """
    other = _other_document(doc.data, doc.file)
    if other is not None:
        message, hint = other
        raise InputError(f"{doc.file}: {message}", [diagnostic_at(doc.file, doc.lines, 1, 1, message, hint=hint)])


def _other_document(data: dict[str, Any], file: str) -> tuple[str, str] | None:
    """(what it is, what to do) when a parsed mapping is a known document that is not a plan; else None.

    Claims, lock files and the JSON logs of evaluation tools hold some of a plan's key names
    (``analyses``, ``data``, ``plan``), so without this their every key is reported as unknown.
    """
    def named(key: str) -> str:
        value = data.get(key)
        return value if isinstance(value, str) and value else ""

    if "claim_format" in data and "decision" in data:
        plan = data.get("plan") if isinstance(data.get("plan"), dict) else {}
        where = plan.get("path") if isinstance(plan.get("path"), str) else ""
        return ("this is a claim record written by `evalspec run`, not a plan",
                f"render it with `evalspec report {file}`, check it with `evalspec audit {file}`; `evalspec run` "
                "and `evalspec validate` take the plan (YAML)" + (f"; the claim was made from {where}" if where else ""))
    if "locked_at" in data and "hash" in data and "plan_file" in data:
        return ("this is a lock file written by `evalspec lock`, not a plan",
                "pass the plan it locks" + (f" ({named('plan_file')}, beside it)" if named("plan_file") else ""))
    if any(k in data for k in _PLAN_KEYS[:8]) and "results" not in data and "evalId" not in data:
        return None
    what = log_kind(data)
    if what is None:
        if any(k in data for k in _PLAN_KEYS) or len(data) < 3:
            return None
        keys = ", ".join(list(map(str, data))[:5]) + (", ..." if len(data) > 5 else "")
        return (f"not a plan: none of its {len(data)} top-level keys ({keys}) is a plan key",
                "a plan starts with `evalspec: 1`, `id:`, `title:` ...; " + _PASS_THE_PLAN)
    return (f"this looks like {what}, not a plan",
            "point the plan's `data.results` at it (with `data.format`), and pass the plan (YAML); "
            "`evalspec init` writes one")


def _too_big(name: str, size: int) -> InputError:
    return _input_error(
        name,
        f"is {size:,} bytes; a plan may be at most {MAX_PLAN_BYTES:,} bytes",
        "is this a results file? A plan names its results under data.results",
    )


def _input_error(name: str, message: str, hint: str | None = None, line: int | None = None,
                 col: int | None = None) -> InputError:
    diag = Diagnostic(file=name, message=message, hint=hint, line=line, col=col)
    return InputError(f"{name}: {message}", [diag])


def _similar_files(fs: FsPath) -> str | None:
    import difflib

    parent = fs.parent if str(fs.parent) else FsPath(".")
    try:
        names = [p.name for p in parent.iterdir() if p.suffix in (".yaml", ".yml")]
    except OSError:
        return None
    # compare the names without the extension: every candidate ends in .yaml, which alone made
    # 'nope.yaml' look like 'p3.yaml'
    stems = {FsPath(n).stem: n for n in names}
    close = [stems[m] for m in difflib.get_close_matches(fs.stem, list(stems), n=1, cutoff=0.6)]
    if close:
        return f"did you mean {os.path.join(str(fs.parent), close[0]) if str(fs.parent) != '.' else close[0]}?"
    return None


# -- parsing YAML --------------------------------------------------------------------------


def parse_source(text: str, file: str) -> SourceDocument:
    """Parse plan text into a :class:`SourceDocument`. Raises :class:`InputError`."""
    lines = text.splitlines()
    if not text.strip() or all(not ln.strip() or ln.lstrip().startswith("#") for ln in lines):
        raise InputError(
            f"{file}: the plan is empty",
            [Diagnostic(file=file, message="the plan is empty", line=1, col=1,
                        hint="run `evalspec init` for a commented starter plan")],
        )
    loader = _Loader(text)
    try:
        try:
            root = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise (_results_not_plan(file, lines) or _syntax_error(exc, file, lines)) from None
    except RecursionError:
        raise InputError(f"{file}: nested too deeply", [Diagnostic(
            file=file, message=f"nested too deeply (more than {MAX_DEPTH} levels)", line=1, col=1)]) from None
    if root is None:  # only comments / document markers
        raise InputError(f"{file}: the plan is empty", [Diagnostic(file=file, message="the plan is empty",
                                                                     line=1, col=1)])
    if not isinstance(root, yaml.MappingNode):
        looks_like_results = _results_not_plan(file, lines)
        if looks_like_results is not None:
            raise looks_like_results
        kind = "a list" if isinstance(root, yaml.SequenceNode) else "a single value"
        line, col = root.start_mark.line + 1, root.start_mark.column + 1
        raise InputError(f"{file}: not a mapping", [diagnostic_at(
            file, lines, line, col, f"the plan must be a mapping of keys to values, but this is {kind}",
            hint="start with `evalspec: 1` then `id: ...` at the left margin")])
    builder = _Builder(file, lines, _Loader(""))
    try:
        data = builder.build(root, (), None, 0)
    except _Stop:
        data = {}
    except RecursionError:
        raise InputError(f"{file}: nested too deeply", [Diagnostic(
            file=file, message=f"nested too deeply (more than {MAX_DEPTH} levels)", line=1, col=1)]) from None
    if builder.problems:
        first = builder.problems[0]
        raise InputError(f"{file}: {first.message}", builder.problems)
    return SourceDocument(file=file, text=text, data=data, positions=builder.positions)


def _results_not_plan(file: str, lines: list[str]) -> InputError | None:
    """An error saying the file looks like a results table (JSON lines or CSV), not a plan; else None."""
    import json

    first = next((ln.strip() for ln in lines if ln.strip()), "")
    what = None
    if first.startswith("{"):
        try:
            json.loads(first)
            what = "JSON lines, one record per line"
        except ValueError:
            what = None
    elif first.count(",") >= 2 and ": " not in first and not first.startswith(("#", "-")):
        what = "a CSV table"
    if what is None:
        return None
    message = f"this looks like a results file ({what}), not a plan"
    return InputError(f"{file}: {message}", [diagnostic_at(
        file, lines, 1, 1, message,
        hint="pass the plan: the YAML file whose `data.results` names this file (`evalspec init` writes one)")])


def _syntax_error(exc: yaml.YAMLError, file: str, lines: list[str]) -> InputError:
    tabs = [(i + 1, ln.index("\t") + 1) for i, ln in enumerate(lines)
            if "\t" in ln[: len(ln) - len(ln.lstrip(" \t"))]]
    if tabs:
        diags = [diagnostic_at(file, lines, ln, col, "tab character in indentation",
                               hint="YAML indents with spaces only; replace the tab with spaces")
                 for ln, col in tabs[:20]]
        return InputError(f"{file}: tab character in indentation", diags)
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"YAML syntax error: {problem}"
    if context and str(problem).startswith("but "):
        message = f"YAML syntax error: {context}, {problem}"
    elif context and getattr(exc, "context_mark", None) is not None and exc.context_mark is not mark:
        cm = exc.context_mark
        message += f" ({context} at line {cm.line + 1}, column {cm.column + 1})"
    elif context:
        message += f" ({context})"
    if mark is None and isinstance(exc, yaml.reader.ReaderError):
        before = "\n".join(lines)[: exc.position]
        line = before.count("\n") + 1
        col = len(before) - (before.rfind("\n") + 1) + 1
        char = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
        message = f"YAML cannot contain the control character U+{char:04X}"
        return InputError(f"{file}: {message}", [diagnostic_at(file, lines, line, col, message,
                                                               hint="remove it; is this a binary file?")])
    if mark is None:
        return InputError(f"{file}: {message}", [Diagnostic(file=file, message=message)])
    line, col = mark.line + 1, mark.column + 1
    if line > len(lines) and lines:  # error at end of input: point at the last line's end
        line, col = len(lines), len(lines[-1]) + 1
    hint = _syntax_hint(str(problem))
    glued = _colon_without_space(lines, line) if "mapping values are not allowed" in str(problem) \
        or "expected ':'" in str(problem) else None
    if glued is not None:  # `results:r.jsonl` is one word to YAML, so the error shows only on a later line
        g_line, g_col, g_text = glued
        key, value = g_text.split(":", 1)
        message = f"YAML syntax error: no space after the colon in `{g_text}`, so YAML reads it as one word"
        return InputError(f"{file}: {message}", [diagnostic_at(
            file, lines, g_line, g_col, message, hint=f"write `{key}: {value}` (a space after the colon)",
            width=len(g_text))])
    if "did not find expected key" in str(problem) or "expected <block end>" in str(problem):
        hint = ("the indentation of this line does not match the lines around it: keys of one mapping start in "
                "the same column (YAML indents with spaces)")
    return InputError(f"{file}: {message}", [diagnostic_at(file, lines, line, col, message, hint=hint)])


def _colon_without_space(lines: list[str], line: int) -> tuple[int, int, str] | None:
    """(line, col, text) of a ``key:value`` written without a space at or just above ``line``, else None."""
    import re

    for n in range(min(line, len(lines)), max(0, line - 3), -1):
        text = lines[n - 1]
        m = re.match(r"^(\s*)([A-Za-z_][\w.-]*:[^\s:/][^\s]*)\s*(#.*)?$", text)
        if m:
            return n, len(m.group(1)) + 1, m.group(2)
    return None


def _syntax_hint(problem: str) -> str | None:
    if "expected a single document" in problem or "another document" in problem:
        return "a plan is one YAML document; remove the `---` separator"
    if "mapping values are not allowed" in problem:
        return "a value containing ': ' must be quoted"
    if "could not find expected ':'" in problem:
        return "each line in a mapping is `key: value`"
    if "found undefined alias" in problem:
        return "define the anchor (&name) before using the alias (*name)"
    return None


class _Builder:
    """Builds Python values from composed nodes, recording positions and problems."""

    def __init__(self, file: str, lines: list[str], constructor: Any) -> None:
        self.file = file
        self.lines = lines
        self.constructor = constructor
        self.positions = PositionMap()
        self.problems: list[Diagnostic] = []
        self.count = 0
        self.seen: set[int] = set()
        self.aliased = False
        self.active: set[int] = set()
        self.top: tuple[yaml.Node, str] | None = None  # the top-level key being built

    @staticmethod
    def _tag(node: yaml.Node) -> str:
        tag = str(node.tag)
        return "!!" + tag[len("tag:yaml.org,2002:"):] if tag.startswith("tag:yaml.org,2002:") else tag

    def _problem(self, node: yaml.Node, path: Path, message: str, hint: str | None = None) -> None:
        line, col = node.start_mark.line + 1, node.start_mark.column + 1
        self.problems.append(diagnostic_at(self.file, self.lines, line, col, message,
                                           key=format_path(path), hint=hint))

    def _record(self, node: yaml.Node, path: Path, key_node: yaml.Node | None) -> None:
        s, e = node.start_mark, node.end_mark
        source = node.value if isinstance(node, yaml.ScalarNode) else None
        self.positions.add(path, Pos(
            line=s.line + 1, col=s.column + 1, end_line=e.line + 1, end_col=e.column + 1,
            key_line=key_node.start_mark.line + 1 if key_node is not None else None,
            key_col=key_node.start_mark.column + 1 if key_node is not None else None,
            source=source,
        ))

    def build(self, node: yaml.Node, path: Path, key_node: yaml.Node | None, depth: int) -> Any:
        self.count += 1
        if id(node) in self.seen and not isinstance(node, yaml.ScalarNode):
            self.aliased = True
        self.seen.add(id(node))
        if self.count > MAX_VALUES:
            where, at = (self.top[0], (self.top[1],)) if self.top is not None else (node, path)
            if self.aliased:
                message = (f"aliases (*name) repeating anchors (&name) expand this value to more than "
                           f"{MAX_VALUES:,} values; refused as an alias bomb ('billion laughs')")
                hint = "a plan needs no such repetition; write the values out"
            else:
                message = f"the plan holds more than {MAX_VALUES:,} values; refused"
                hint = "a plan is a short description; data belongs in the results files"
            self._problem(where, at, message, hint=hint)
            raise _Stop
        if depth > MAX_DEPTH:
            self._problem(node, path, f"nested more than {MAX_DEPTH} levels deep")
            raise _Stop
        self._record(node, path, key_node)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        if id(node) in self.active:
            self._problem(node, path, "recursive alias: this value contains itself",
                          hint="an alias (*name) may not refer to an anchor (&name) that encloses it")
            raise _Stop
        self.active.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                if node.tag != _SEQ_TAG:
                    self._problem(node, path, f"unsupported YAML tag {self._tag(node)}", hint="remove the tag")
                return [self.build(item, path + (i,), None, depth + 1) for i, item in enumerate(node.value)]
            return self._mapping(node, path, depth)
        finally:
            self.active.discard(id(node))

    def _scalar(self, node: yaml.ScalarNode, path: Path) -> Any:
        if node.tag not in _SCALAR_TAGS:
            self._problem(node, path, f"unsupported YAML tag {self._tag(node)}",
                          hint="plans use plain values; remove the tag")
            return node.value
        try:
            value = self.constructor.construct_object(node)
        except Exception:  # noqa: BLE001 - e.g. 2026-02-30 matches the timestamp pattern but is no date
            if node.tag == _TIMESTAMP_TAG:
                return node.value  # left as text: the schema then says what a date must look like
            self._problem(node, path, f"cannot read {node.value!r} as {node.tag.rsplit(':', 1)[-1]}")
            return node.value
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            self._problem(node, path, f"{node.value} is not a finite number; a plan's numbers must be finite",
                          hint=f'write a number; if you mean the text, quote it: "{node.value}"')
            return node.value
        return value

    def _mapping(self, node: yaml.MappingNode, path: Path, depth: int) -> dict[Any, Any]:
        if node.tag != _MAP_TAG:
            self._problem(node, path, f"unsupported YAML tag {self._tag(node)}", hint="remove the tag")
        out: dict[Any, Any] = {}
        first_seen: dict[Any, yaml.Node] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:  # merged first, so the mapping's own keys override them
                self._merge(value_node, path, out, depth)
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self._problem(key_node, path, "a key must be a plain name, not a list or mapping")
                continue
            key = key_node.value
            if key in first_seen:
                prev = first_seen[key]
                self._problem(key_node, path + (key,),
                              f"duplicate key (first written at line {prev.start_mark.line + 1}); "
                              "YAML would silently keep only the last value",
                              hint="keep one of them")
                continue
            first_seen[key] = key_node
            if not path:
                self.top = (key_node, key)
            out[key] = self.build(value_node, path + (key,), key_node, depth + 1)
        return out

    def _merge(self, value_node: yaml.Node, path: Path, out: dict[Any, Any], depth: int) -> None:
        sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        for src in sources:  # earlier sources take precedence (YAML merge key spec)
            if not isinstance(src, yaml.MappingNode):
                self._problem(src, path, "a merge key (<<) needs a mapping or a list of mappings")
                continue
            if id(src) in self.active:
                self._problem(src, path, "recursive alias: this value contains itself")
                raise _Stop
            self.count += 1
            self.active.add(id(src))
            try:
                merged = self._mapping(src, path, depth + 1)
            finally:
                self.active.discard(id(src))
            for key, value in merged.items():
                out.setdefault(key, value)


class _Stop(Exception):
    """Abort building; the problem is already recorded."""

