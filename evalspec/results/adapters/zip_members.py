"""The members of a zip log (inspect_ai's ``.eval``), read defensively.

A tool log is input a user supplies, so nothing in it may crash evalspec or exhaust its
memory. The central directory is parsed by the standard library (it knows zip64), but
every member is read here: its local header must match the directory entry, its declared
size and compression ratio are checked *before* it is inflated, inflation stops at the
declared size (a member that inflates to more is refused, so a lying header cannot
expand a 3 MB file into 3 GB), and the CRC must match. Two members of one name are
refused (which of two ``header.json`` would be the log?). Any failure is an
:class:`~evalspec.errors.InputError` naming the file and the member.

Compression methods: stored (0), DEFLATE (8), and zstd (93, inspect_ai's current
format, read with the ``zstandard`` package).
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from dataclasses import dataclass

from evalspec.errors import InputError
from evalspec.results.adapters.base import bad_log

__all__ = ["ZipLog", "open_zip", "MAX_MEMBER_BYTES", "MAX_UNZIPPED_BYTES", "MAX_RATIO"]

#: Largest uncompressed member read (bytes): one sample or the header of a log.
MAX_MEMBER_BYTES = 256 * 1024**2
#: Largest total of the uncompressed members read from one log (bytes).
MAX_UNZIPPED_BYTES = 2 * 1024**3
#: Largest compression ratio of a member above :data:`_RATIO_FLOOR` bytes (a zip bomb's is in the thousands).
MAX_RATIO = 1000
_RATIO_FLOOR = 4 * 1024**2
_STORED, _DEFLATE, _ZSTD = 0, 8, 93
_LOCAL = struct.Struct("<4sHHHHHIIIHH")
_CORRUPT = "the file was damaged or cut short; use a complete copy of the log, or rerun the evaluation"


@dataclass
class ZipLog:
    """A parsed zip directory: member names (unique) -> entries, in directory order."""

    data: bytes
    display: str
    members: dict[str, zipfile.ZipInfo]
    inflated: int = 0

    def read(self, name: str) -> bytes:
        """The uncompressed bytes of member ``name`` (checked: sizes, ratio, local header, CRC)."""
        info = self.members[name]
        size = info.file_size
        if size > MAX_MEMBER_BYTES:
            raise self._refuse(name, f"declares {size:,} uncompressed bytes, more than the {MAX_MEMBER_BYTES:,} "
                               "evalspec reads from one member", "this is not a log inspect_ai writes (a sample is "
                               "far smaller); if it is, split the evaluation into smaller runs")
        if size > _RATIO_FLOOR and size > MAX_RATIO * max(info.compress_size, 1):
            raise self._refuse(name, f"would inflate {info.compress_size:,} bytes into {size:,} (more than "
                               f"{MAX_RATIO}x): a zip bomb, not a log", "use the log file inspect_ai wrote")
        if self.inflated + size > MAX_UNZIPPED_BYTES:
            raise self._refuse(name, f"the members read so far inflate to more than {MAX_UNZIPPED_BYTES:,} bytes",
                               "split the evaluation into smaller logs")
        raw = self._compressed(info)
        out = self._inflate(info, raw)
        if len(out) != size:
            raise self._refuse(name, f"inflates to {'more' if len(out) > size else 'fewer'} bytes than the "
                               f"{size:,} its header declares", _CORRUPT)
        if zlib.crc32(out) & 0xFFFFFFFF != info.CRC:
            raise self._refuse(name, "fails its CRC check", _CORRUPT)
        self.inflated += size
        return out

    def _compressed(self, info: zipfile.ZipInfo) -> bytes:
        start = info.header_offset
        head = self.data[start:start + _LOCAL.size]
        if len(head) < _LOCAL.size:
            raise self._refuse(info.filename, "its local header lies past the end of the file", _CORRUPT)
        sig, _ver, flags, method, _t, _d, _crc, _cs, _us, name_len, extra_len = _LOCAL.unpack(head)
        if sig != b"PK\x03\x04":
            raise self._refuse(info.filename, "has no local header where the directory points", _CORRUPT)
        local_name = self.data[start + _LOCAL.size:start + _LOCAL.size + name_len]
        try:
            named = local_name.decode("utf-8") if flags & 0x800 else local_name.decode("cp437")
        except UnicodeDecodeError:
            named = None
        if named != info.orig_filename:
            raise self._refuse(info.filename, "its local header names another member", _CORRUPT)
        if flags & 0x1:
            raise self._refuse(info.filename, "is encrypted", "inspect_ai never encrypts its logs; use the log it wrote")
        if method != info.compress_type:
            raise self._refuse(info.filename, "its local header and the directory disagree on the compression",
                               _CORRUPT)
        begin = start + _LOCAL.size + name_len + extra_len
        raw = self.data[begin:begin + info.compress_size]
        if len(raw) < info.compress_size:
            raise self._refuse(info.filename, "is cut short", _CORRUPT)
        return raw

    def _inflate(self, info: zipfile.ZipInfo, raw: bytes) -> bytes:
        cap = info.file_size + 1  # one byte more than declared tells a lying header
        method = info.compress_type
        try:
            if method == _STORED:
                return raw[:cap]
            if method == _DEFLATE:
                return zlib.decompressobj(-15).decompress(raw, cap)
            if method == _ZSTD:
                return _unzstd(raw, cap, self.display)
        except zlib.error as exc:
            raise self._refuse(info.filename, f"is corrupt (DEFLATE: {exc})", _CORRUPT) from None
        raise self._refuse(info.filename, f"uses zip compression method {method}, which evalspec cannot read "
                           "(stored, DEFLATE and zstd are read)",
                           "rewrite the log with `inspect log convert --to json` and read the .json")

    def _refuse(self, name: str, message: str, hint: str) -> InputError:
        return bad_log(self.display, f"member {name} {message}", hint)


def _unzstd(raw: bytes, cap: int, display: str) -> bytes:
    try:
        import zstandard
    except ImportError:
        raise bad_log(display, "this .eval log is compressed with zstd, which needs the Python package `zstandard`",
                      "pip install zstandard") from None
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True)
    chunks: list[bytes] = []
    got = 0
    try:
        while got < cap:
            chunk = reader.read(min(cap - got, 8 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except zstandard.ZstdError as exc:
        raise bad_log(display, f"a zstd member is corrupt ({exc})", _CORRUPT) from None
    return b"".join(chunks)


def open_zip(data: bytes, display: str) -> ZipLog:
    """The directory of the zip ``data``; a located error when it is not a zip evalspec can read."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except NotImplementedError as exc:  # a "version needed to extract" above what zipfile knows: damaged
        raise bad_log(display, f"is not a readable .eval file: its zip directory asks for a feature evalspec cannot "
                      f"read ({exc})", _CORRUPT) from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError, struct.error, IndexError,
            OverflowError, UnicodeDecodeError, MemoryError) as exc:
        raise bad_log(display, f"is not a readable .eval file (zip): {exc}",
                      "the file is truncated or corrupt (was the run still writing it?); rerun, or convert a "
                      "complete copy with `inspect log convert`") from None
    members: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        if info.filename in members:
            raise bad_log(display, f"is not a readable .eval file: the zip holds two members named {info.filename}",
                          "inspect_ai writes each member once; the file was altered or assembled by hand: use the "
                          "log inspect_ai wrote")
        members[info.filename] = info
    return ZipLog(data=data, display=display, members=members)
