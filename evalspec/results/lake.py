"""Results where teams keep them: partitioned Parquet folders and object-store URIs.

Two shapes of ``data.results`` beyond a local file or glob:

* **A folder of tables** (``data.results: lake/``), typically a Hive-partitioned Parquet
  dataset as Spark, Ray Data, DuckDB and ``pyarrow.dataset.write_dataset`` write it:
  ``lake/model=A/date=2026-10-01/part-0.parquet``. Every table file below the folder is read
  (symbolic links are not followed, and at most :data:`MAX_OBJECTS` files are listed), and
  each ``key=value`` folder name on the way becomes a column of that file's rows (the value
  URL-decoded, as Hive writes it). A file that also holds a column of that name is refused:
  which value would be meant?
* **An object-store URI** (``s3://bucket/prefix/``, ``s3://bucket/key.parquet``,
  ``s3://bucket/runs/**/*.jsonl``, ``gs://...``), opened with Arrow's own filesystems
  (:func:`pyarrow.fs.FileSystem.from_uri`), which read the usual environment: the AWS
  variables and profile files for S3 (``AWS_ENDPOINT_URL`` for an S3-compatible server such as
  MinIO), Google's application-default credentials for GCS. evalspec never takes credentials
  from the plan. Other schemes (``hf://``, ``az://``...) are read through ``fsspec`` when it
  and the scheme's package are installed.

Objects are read into memory and parsed by the same readers as local files, so the same
values, checks and errors apply; nothing is copied to the local disk. Where local files would
be reduced while read (:mod:`evalspec.results.stream_reduce`), objects are too: text objects
are streamed once through :class:`ObjectReader`, which hashes what passes; Parquet objects are
read by range while :func:`object_digest` hashes one sequential pass. Each object is
fingerprinted by the SHA-256 of the bytes read (as a local file is), and its size and
modification time (and ETag, where the store reports one: S3 does) are kept in the claim's
``data.files[].location``, so ``evalspec audit`` can say what it re-read and what it could
not reach. An object read more than once in a run (a Parquet object's ranges beside its
hashing pass) is pinned to the ETag its first opening reported: one replaced meanwhile, even
by one of the same size, is refused rather than analysed as a mixture.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import urllib.parse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from evalspec.errors import Diagnostic, InputError
from evalspec.limits import MAX_RESULTS_BYTES

__all__ = ["MAX_OBJECTS", "ObjectReader", "RemoteObject", "check_unchanged", "estimated_object_rows", "format_of",
           "object_digest", "object_head", "object_location", "open_object", "pinned", "store_etag", "is_uri", "list_uri", "read_object", "folder_tables",
           "partition_values", "with_partitions", "object_sha256"]

#: The most files or objects one folder, prefix or glob may list (a prefix holding more is a
#: lake, not a results set: name a partition).
MAX_OBJECTS = 100_000

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_TABLES = (".jsonl", ".ndjson", ".csv", ".parquet", ".pq")
_HIDDEN = ("_", ".")
_READ_BYTES = 8 << 20  # what one request to the store reads when an object is streamed  # _SUCCESS, _common_metadata, .crc files: written beside the data by Spark and Hadoop


def is_uri(text: str) -> bool:
    """Whether ``text`` names an object store (``s3://...``) rather than a local path."""
    return bool(_URI.match(text)) and not text.lower().startswith("file://")


@dataclass(frozen=True)
class RemoteObject:
    """One object listed under a URI: where it is and what the store says of it."""

    uri: str
    path: str  # the filesystem's path (bucket/key)
    size: int
    mtime: str | None
    partitions: tuple[tuple[str, str], ...] = ()
    etag: str | None = None  # set by :func:`pinned`: what the store reported when the read began


def _refuse(uri: str, message: str, hint: str) -> InputError:
    return InputError(f"{uri}: {message}", [Diagnostic(file=uri, message=message, hint=hint)])


def _filesystem(uri: str) -> tuple[Any, str]:
    """Arrow's filesystem for ``uri`` and the path inside it (fsspec for schemes Arrow lacks)."""
    import pyarrow.fs as pafs

    try:
        return pafs.FileSystem.from_uri(uri)
    except (ValueError, OSError, ImportError) as exc:
        arrow_error = str(exc)
    try:
        import fsspec  # noqa: F401  (optional: hf://, az://, ...)
        from fsspec.core import url_to_fs
        from pyarrow.fs import FSSpecHandler, PyFileSystem

        fs, path = url_to_fs(uri)
        return PyFileSystem(FSSpecHandler(fs)), path
    except Exception:  # noqa: BLE001 - any failure here means: this scheme cannot be opened
        raise _refuse(uri, f"cannot open this location ({arrow_error[:200]})",
                      "evalspec reads s3:// and gs:// through Arrow's filesystems (credentials from the "
                      "environment, AWS_ENDPOINT_URL for an S3-compatible server); other schemes need fsspec and "
                      "the scheme's package installed") from None


def _store_error(uri: str, exc: BaseException) -> InputError:
    text = str(exc)
    low = text.lower()
    if "access denied" in low or "forbidden" in low or "403" in low or "permission" in low:
        hint = "the credentials in the environment may not read this object (check the bucket policy and AWS_* variables)"
    elif "nosuchbucket" in low or "bucket does not exist" in low:
        hint = "the bucket does not exist at this endpoint (check the name and AWS_ENDPOINT_URL / the region)"
    elif "not found" in low or "nosuchkey" in low or "does not exist" in low:
        hint = "no object at this key: check the path (keys are case-sensitive)"
    elif "connect" in low or "timeout" in low or "timed out" in low or "resolve" in low:
        hint = "the store could not be reached (check the endpoint and the network)"
    else:
        hint = "check the URI, the credentials and the endpoint"
    return _refuse(uri, f"the object store refused the request ({text[:300]})", hint)


def _glob_root(path: str) -> str:
    """The longest folder of ``path`` before its first glob character."""
    cut = min((i for i, ch in enumerate(path) if ch in "*?["), default=len(path))
    return path[:cut].rsplit("/", 1)[0]


def _match(path: str, pattern: str) -> bool:
    """Glob match where ``**`` spans folders and ``*`` stays inside one (as :mod:`glob`'s recursive mode)."""
    regex = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            regex += "(?:[^/]*/)*"
            i += 3
        elif pattern.startswith("**", i):
            regex += ".*"
            i += 2
        elif pattern[i] == "*":
            regex += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            regex += "[^/]"
            i += 1
        elif pattern[i] == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                regex += re.escape("[")
                i += 1
            else:
                regex += fnmatch.translate(pattern[i:j + 1])[4:-3]
                i = j + 1
        else:
            regex += re.escape(pattern[i])
            i += 1
    return re.fullmatch(regex, path) is not None


def partition_values(relative: str) -> tuple[tuple[str, str], ...]:
    """The Hive partition ``key=value`` folder names of a relative path, outermost first."""
    parts = relative.replace("\\", "/").split("/")[:-1]
    out = []
    for part in parts:
        if "=" in part and not part.startswith("="):
            key, value = part.split("=", 1)
            out.append((urllib.parse.unquote(key), urllib.parse.unquote(value)))
    return tuple(out)


def list_uri(uri: str) -> list[RemoteObject]:
    """The table objects ``uri`` names: one object, every table under a prefix, or a glob's matches."""
    import pyarrow.fs as pafs

    fs, path = _filesystem(uri)
    globbed = any(ch in path for ch in "*?[")
    # each object's URI is the one given with the object's path below the prefix (or the glob's folder)
    # appended: the filesystem's own path may drop what the URI names outside it (a host, an account)
    uri_root = _glob_root(uri) if globbed else uri.rstrip("/")
    try:
        if not globbed:
            info = fs.get_file_info(path)
            if info.type == pafs.FileType.File:
                return [RemoteObject(uri, path, int(info.size), _mtime(info))]
            if info.type == pafs.FileType.NotFound:
                raise _refuse(uri, "no object or prefix at this location",
                              "check the bucket and key (keys are case-sensitive)")
            root = path.rstrip("/")
        else:
            root = _glob_root(path)
        infos = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    except InputError:
        raise
    except (OSError, ValueError) as exc:
        raise _store_error(uri, exc) from None
    objects = []
    for info in infos:
        if info.type != pafs.FileType.File:
            continue
        rel = info.path[len(root):].lstrip("/")
        if any(seg.startswith(_HIDDEN) for seg in rel.split("/")):
            continue
        if globbed and not _match(info.path, path):
            continue
        if not globbed and not info.path.lower().endswith(_TABLES):
            continue
        objects.append(RemoteObject(f"{uri_root}/{rel}", info.path, int(info.size), _mtime(info),
                                    partition_values(rel)))
        if len(objects) > MAX_OBJECTS:
            raise _refuse(uri, f"more than {MAX_OBJECTS:,} objects under this location",
                          "name a partition or a narrower glob")
    if not objects:
        raise _refuse(uri, "no results object (.jsonl, .csv, .parquet) at this location",
                      "check the prefix or the glob")
    return sorted(objects, key=lambda o: o.uri)


def _mtime(info: Any) -> str | None:
    t = getattr(info, "mtime", None)
    return t.isoformat() if t is not None else None


def format_of(name: str, declared: str) -> str:
    from evalspec.results.readers import FORMATS

    if declared in ("jsonl", "csv", "parquet"):
        return declared
    suffix = os.path.splitext(name)[1].lower()
    if suffix not in FORMATS:
        raise _refuse(name, f"cannot tell the format of {name!r} from its extension",
                      "set data.format (jsonl, csv or parquet)")
    return FORMATS[suffix]


def read_object(obj: RemoteObject, declared: str) -> Any:
    """Read one object into a :class:`~evalspec.results.readers.RawFile` (same readers as local files)."""
    from evalspec.results.readers import READERS, RawFile

    if obj.size > MAX_RESULTS_BYTES:
        raise _refuse(obj.uri, f"the object holds {obj.size:,} bytes, more than the {MAX_RESULTS_BYTES:,} evalspec "
                      "reads from one results file", "split the results into several objects (partitions)")
    fmt = format_of(obj.path, declared)
    fs, path = _filesystem(obj.uri)
    try:
        with fs.open_input_stream(path) as stream:
            obj = replace(obj, etag=store_etag(stream))
            data = stream.read(MAX_RESULTS_BYTES + 1)
    except (OSError, ValueError) as exc:
        raise _store_error(obj.uri, exc) from None
    if len(data) > MAX_RESULTS_BYTES:
        raise _refuse(obj.uri, "the object grew beyond the size evalspec reads while it was read",
                      "read it again once it is complete")
    columns, lines, unit = READERS[fmt](bytes(data), obj.uri)
    location = object_location(replace(obj, partitions=()), len(data))  # (with_partitions adds them)
    raw = RawFile(path=obj.uri, display=obj.uri, format=fmt, sha256=hashlib.sha256(data).hexdigest(),
                  columns=columns, lines=lines, unit=unit, location=location)
    return with_partitions(raw, obj.partitions)


class ObjectReader:
    """One object read once, in order, for a streaming reduction: its bytes pass through to Arrow's reader.

    What passes is hashed and counted as :func:`evalspec.results.files.scan` counts a local
    file (SHA-256, newlines, commas, carriage returns, quotes, first 64 KiB, last byte), so the
    claim fingerprints the bytes analysed without a second download or a local copy.
    """

    def __init__(self, obj: RemoteObject) -> None:
        import pyarrow as pa

        fs, path = _filesystem(obj.uri)
        self.obj = obj
        try:  # buffered: each read of the store's stream is one ranged GET
            raw = fs.open_input_stream(path)
        except (OSError, ValueError) as exc:
            raise _store_error(obj.uri, exc) from None
        _same_object(obj, raw)
        self._stream = pa.BufferedInputStream(raw, _READ_BYTES)
        self._digest = hashlib.sha256()
        self.size = self.newlines = self.commas = 0
        self.has_cr = self.has_quote = False
        self.head = self.last = b""
        self.closed = False

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.size

    def read(self, n: int = -1) -> bytes:
        want = MAX_RESULTS_BYTES + 1 - self.size
        if want <= 0:
            return b""  # grown past the limit: refused by :meth:`source`
        try:
            data = bytes(self._stream.read(want if n is None or n < 0 else min(n, want)))
        except (OSError, ValueError) as exc:
            raise _store_error(self.obj.uri, exc) from None
        if data:
            self.size += len(data)
            self._digest.update(data)
            self.newlines += data.count(b"\n")
            self.commas += data.count(b",")
            self.has_cr = self.has_cr or b"\r" in data
            self.has_quote = self.has_quote or b'"' in data
            if len(self.head) < 1 << 16:
                self.head += data[: (1 << 16) - len(self.head)]
            self.last = data[-1:]
        return data

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._stream.close()

    def source(self) -> Any:
        """What the pass learnt, as a :class:`~evalspec.results.files.Source` (the rest read first)."""
        from evalspec.results.files import Source

        while not self.closed and self.read(1 << 20):
            pass
        if self.size > MAX_RESULTS_BYTES:
            raise _refuse(self.obj.uri, "the object grew beyond the size evalspec reads while it was read",
                          "read it again once it is complete")
        return Source(display=self.obj.uri, size=self.size, sha256=self._digest.hexdigest(), newlines=self.newlines,
                      has_cr=self.has_cr, has_quote=self.has_quote, commas=self.commas, head=self.head,
                      last=self.last)


def object_head(obj: RemoteObject) -> bytes:
    """The first 64 KiB of an object (refused, named, where the store refuses)."""
    fs, path = _filesystem(obj.uri)
    try:
        with fs.open_input_stream(path) as stream:
            return bytes(stream.read(1 << 16))
    except (OSError, ValueError) as exc:
        raise _store_error(obj.uri, exc) from None


def open_object(obj: RemoteObject) -> Any:
    """A random-access file on the object (Parquet's reader asks for its footer, then its row groups)."""
    fs, path = _filesystem(obj.uri)
    try:
        handle = fs.open_input_file(path)
    except (OSError, ValueError) as exc:
        raise _store_error(obj.uri, exc) from None
    _same_object(obj, handle)
    return handle


def object_digest(obj: RemoteObject, stop: Any = None) -> tuple[str, int]:
    """SHA-256 and size of one sequential pass over an object (``stop``, once set, ends it early)."""
    fs, path = _filesystem(obj.uri)
    h = hashlib.sha256()
    size = 0
    try:
        with fs.open_input_stream(path) as stream:
            _same_object(obj, stream)
            while stop is None or not stop.is_set():
                chunk = stream.read(_READ_BYTES)
                if not chunk:
                    break
                size += len(chunk)
                h.update(chunk)
    except (OSError, ValueError) as exc:
        raise _store_error(obj.uri, exc) from None
    return h.hexdigest(), size


def check_unchanged(obj: RemoteObject, size: int) -> None:
    """Refuse an object whose size, modification time or ETag is not what the listing and the pin said."""
    from evalspec.results.files import changed

    fs, path = _filesystem(obj.uri)
    try:
        info = fs.get_file_info(path)
        if obj.etag is not None:
            with fs.open_input_stream(path) as stream:  # (opening asks for the object's head only)
                _same_object(obj, stream)
    except InputError:
        raise
    except (OSError, ValueError) as exc:
        raise _store_error(obj.uri, exc) from None
    if size != obj.size or (info.size if info.size is not None else -1) != obj.size or _mtime(info) != obj.mtime:
        raise changed(obj.uri)


def store_etag(handle: Any) -> str | None:
    """The ETag the store sent when ``handle`` was opened (S3 sends one; a local file, GCS through Arrow: none)."""
    try:
        meta = handle.metadata()
    except (AttributeError, OSError, ValueError):
        return None
    for key in ("ETag", "etag", b"ETag", b"etag"):
        value = meta.get(key) if hasattr(meta, "get") else None
        if value:
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
            return text.strip().strip('"') or None
    return None


def pinned(obj: RemoteObject) -> RemoteObject:
    """``obj`` with the ETag the store reports now: every later opening of it in this run must report the same."""
    fs, path = _filesystem(obj.uri)
    try:
        with fs.open_input_stream(path) as stream:
            return replace(obj, etag=store_etag(stream))
    except (OSError, ValueError) as exc:
        raise _store_error(obj.uri, exc) from None


def _same_object(obj: RemoteObject, handle: Any) -> None:
    """Refuse the object where ``handle``'s ETag is not the one it was pinned to (replaced during the run)."""
    from evalspec.results.files import changed

    if obj.etag is not None and store_etag(handle) != obj.etag:
        handle.close()
        raise changed(obj.uri)


def object_location(obj: RemoteObject, size: int) -> dict[str, Any]:
    """The claim's ``data.files[].location`` of an object, as :func:`read_object` records it."""
    location: dict[str, Any] = {"uri": obj.uri, "size": size, "modified": obj.mtime}
    if obj.etag is not None:
        location["etag"] = obj.etag
    if obj.partitions:
        location["partition"] = {k: v for k, v in obj.partitions}
    return location


def estimated_object_rows(objects: list[RemoteObject], formats: list[str]) -> int:
    """Rows of the objects, estimated without reading them (Parquet footers; text by size); -1: unreadable."""
    import pyarrow.parquet as pq

    total = 0
    for obj, fmt in zip(objects, formats):
        if fmt != "parquet":
            total += obj.size // 128
            continue
        try:
            with open_object(obj) as f:
                total += int(pq.ParquetFile(f).metadata.num_rows)
        except Exception:  # noqa: BLE001 - unreadable: the in-memory path says why, at the object
            return -1
    return total


def object_sha256(uri: str) -> tuple[str | None, str]:
    """Re-read ``uri`` for an audit: its SHA-256 and the ETag the store sends now ("" where none),
    or ``None`` and why it could not be read."""
    try:
        fs, path = _filesystem(uri)
        h = hashlib.sha256()
        with fs.open_input_stream(path) as stream:
            etag = store_etag(stream) or ""
            while True:
                chunk = stream.read(1 << 20)
                if not chunk:
                    break
                h.update(chunk)
        return h.hexdigest(), etag
    except InputError as exc:
        return None, str(exc)
    except (OSError, ValueError) as exc:
        return None, str(exc)[:300]


def folder_tables(folder: Path) -> list[tuple[Path, tuple[tuple[str, str], ...]]]:
    """Every table file below ``folder`` with its Hive partition values (links not followed; sorted)."""
    found: list[tuple[Path, tuple[tuple[str, str], ...]]] = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(_HIDDEN))
        for name in sorted(filenames):
            if name.startswith(_HIDDEN) or not name.lower().endswith(_TABLES):
                continue
            path = Path(dirpath) / name
            if path.is_symlink():
                continue
            found.append((path, partition_values(os.path.relpath(path, folder))))
            if len(found) > MAX_OBJECTS:
                raise _refuse(str(folder), f"more than {MAX_OBJECTS:,} results files below this folder",
                              "name a partition folder or a narrower glob")
    return found


def with_partitions(raw: Any, partitions: tuple[tuple[str, str], ...]) -> Any:
    """``raw`` with one constant text column per Hive partition value (refused where the file has it too)."""
    if not partitions:
        return raw
    from evalspec.results.values import CodedColumn, LazyCoded

    columns = dict(raw.columns)
    for key, value in partitions:
        if key in columns:
            raise InputError(f"{raw.display}: column {key!r} is both a partition folder and a column", [Diagnostic(
                file=raw.display, message=f"the column {key!r} is both in the file and in its partition folder "
                f"{key}={value}", hint="rename one of them: evalspec will not guess which value is meant")])
        uniques = np.empty(1, dtype=object)
        uniques[0] = value
        zeros = np.zeros(raw.rows, dtype=np.int8)
        lazy = any(isinstance(c, LazyCoded) for c in columns.values())  # read in batches: one byte a row
        columns[key] = LazyCoded(zeros, uniques) if lazy else CodedColumn.of(zeros, uniques, distinct=True)
    location = dict(raw.location or {})
    location["partition"] = {k: v for k, v in partitions}
    return replace(raw, columns=columns, location=location)
