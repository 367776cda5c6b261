"""inspect_ai ``.eval`` zips read defensively: every damaged container is a located exit-2 error.

Crafted damage (a "version needed" byte, two ``header.json``, a zip bomb, a lying size, an
encrypted member) and a structure-aware fuzz of the central directory, the local headers
and the end record of a real log (fixed seed). Also the other corruptions of tool logs
that once escaped as internal errors: values nested hundreds of levels deep, a reported
number that is not a number, a lone UTF-16 surrogate in a name.
"""

from __future__ import annotations

import io
import json
import struct
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from logs_helpers import LMEVAL, STRONG, WEAK_JSON, promptfoo_doc  # noqa: E402

from evalspec.cli import cli  # noqa: E402
from evalspec.errors import InputError  # noqa: E402
from evalspec.results.adapters import Options, read_logs  # noqa: E402
from evalspec.results.adapters.zip_members import MAX_MEMBER_BYTES, open_zip  # noqa: E402

pytest.importorskip("zstandard")

DATA = STRONG.read_bytes()


def _members() -> dict[str, bytes]:
    z = open_zip(DATA, "strong")
    return {name: z.read(name) for name in z.members}


def _zip(members: list[tuple[str, bytes]], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with _quiet(), zipfile.ZipFile(out, "w", method) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return out.getvalue()


class _quiet:  # zipfile warns about a duplicate name; the duplicate is the point
    def __enter__(self) -> None:
        import warnings

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc: object) -> None:
        self._w.__exit__(*exc)


def _refused(tmp_path: Path, data: bytes, expect: str, name: str = "bad.eval") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    res = CliRunner().invoke(cli, ["convert", str(path), "--format", "inspect"])
    assert res.exit_code == 2, res.output
    assert "internal error" not in res.output and "Traceback" not in res.output
    assert name in res.output and expect in res.output, res.output
    return res.output


def _cd_entries(data: bytes) -> list[int]:
    """Offsets of the central directory entries (from the end record)."""
    eocd = data.rfind(b"PK\x05\x06")
    count, _size, offset = struct.unpack("<HII", data[eocd + 10:eocd + 20])
    out, pos = [], offset
    for _ in range(count):
        assert data[pos:pos + 4] == b"PK\x01\x02"
        out.append(pos)
        n, x, c = struct.unpack("<HHH", data[pos + 28:pos + 34])
        pos += 46 + n + x + c
    return out


def test_corrupted_version_needed_byte_is_a_located_error(tmp_path: Path) -> None:
    buf = bytearray(DATA)
    buf[_cd_entries(DATA)[0] + 6] = 64  # "version needed to extract" 6.4: zipfile raised NotImplementedError
    _refused(tmp_path, bytes(buf), "zip directory asks for a feature")


def test_two_header_members_are_refused_not_read_as_success(tmp_path: Path) -> None:
    members = _members()
    header = json.loads(members["header.json"])
    failed = {**header, "status": "error", "error": {"message": "crashed"}}
    others = [(n, b) for n, b in members.items() if n != "header.json"]
    data = _zip([("header.json", json.dumps(failed).encode()), *others, ("header.json", members["header.json"])])
    _refused(tmp_path, data, "two members named header.json")


def test_the_real_log_repacked_with_deflate_reads_the_same() -> None:
    members = _members()
    z = open_zip(_zip(list(members.items())), "repacked")
    assert {n: z.read(n) for n in z.members} == members


def _bomb(declared: int | None) -> bytes:
    """A log whose one sample inflates to 64 MiB of spaces; ``declared`` rewrites its stated size."""
    members = _members()
    big = b"{" + b" " * (64 * 1024**2) + b"}"
    data = bytearray(_zip([("header.json", members["header.json"]), ("samples/q00_epoch_1.json", big)]))
    if declared is not None:
        pos = _cd_entries(bytes(data))[1]
        data[pos + 24:pos + 28] = struct.pack("<I", declared)
    return bytes(data)


def test_a_zip_bomb_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    _refused(tmp_path, _bomb(None), "more than 1000x")  # 64 MiB from ~65 KB
    _refused(tmp_path, _bomb(0xFFFFFFFF), f"more than the {MAX_MEMBER_BYTES:,}")  # declares 4 GB
    _refused(tmp_path, _bomb(1000), "inflates to more bytes than the 1,000 its header declares")  # lies: small


def test_encrypted_and_unknown_compression_are_refused(tmp_path: Path) -> None:
    members = _members()
    data = bytearray(_zip([("header.json", members.pop("header.json")), *members.items()]))  # the header first
    first = _cd_entries(bytes(data))[0]
    local = struct.unpack("<I", data[first + 42:first + 46])[0]
    enc = bytearray(data)
    enc[local + 6] |= 1
    _refused(tmp_path, bytes(enc), "is encrypted")
    for pos in (first + 10, local + 8):
        data[pos:pos + 2] = struct.pack("<H", 14)  # LZMA, in both headers
    _refused(tmp_path, bytes(data), "compression method 14")


# -- structure-aware fuzz: the fields of the zip's headers -----------------------------------

_CD_FIELDS = [(4, "H"), (6, "H"), (8, "H"), (10, "H"), (16, "I"), (20, "I"), (24, "I"), (28, "H"), (30, "H"),
              (32, "H"), (34, "H"), (42, "I")]
_LOCAL_FIELDS = [(4, "H"), (6, "H"), (8, "H"), (14, "I"), (18, "I"), (22, "I"), (26, "H"), (28, "H")]
_EOCD_FIELDS = [(4, "H"), (6, "H"), (8, "H"), (10, "H"), (12, "I"), (16, "I"), (20, "H")]


def _targets(data: bytes) -> list[tuple[int, str]]:
    zf = zipfile.ZipFile(io.BytesIO(data))
    out = [(cd + off, fmt) for cd in _cd_entries(data) for off, fmt in _CD_FIELDS]
    out += [(info.header_offset + off, fmt) for info in zf.infolist() for off, fmt in _LOCAL_FIELDS]
    eocd = data.rfind(b"PK\x05\x06")
    return out + [(eocd + off, fmt) for off, fmt in _EOCD_FIELDS]


# a log of the header and three samples keeps each example fast; the fields are those of the real log
_SMALL = _zip([(n, b) for n, b in _members().items() if n == "header.json" or n.startswith("samples/q0")][:4])
_SMALL_ZSTD = DATA
_VALUES = st.sampled_from([0, 1, 2, 8, 20, 45, 63, 64, 93, 0x800, 0xFFFF, 0xFFFFFFFF]) | st.integers(0, 2**32 - 1)


@settings(max_examples=80, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(["deflate", "zstd"]), data=st.data())
def test_fuzz_zip_headers(tmp_path: Path, which: str, data: st.DataObject) -> None:
    source = _SMALL if which == "deflate" else _SMALL_ZSTD
    targets = _targets(source)
    edits = data.draw(st.lists(st.tuples(st.sampled_from(targets), _VALUES), min_size=1, max_size=4))
    buf = bytearray(source)
    for (pos, fmt), value in edits:
        width = struct.calcsize("<" + fmt)
        buf[pos:pos + width] = struct.pack("<" + fmt, value % (1 << (8 * width)))
    path = tmp_path / "fuzz.eval"
    path.write_bytes(bytes(buf))
    try:
        read_logs([path], "inspect", Options())
    except InputError as exc:
        assert "fuzz.eval" in exc.render()


# -- other corruptions that once escaped as internal errors ---------------------------------


def _deep(n: int) -> object:
    value: object = "x"
    for _ in range(n):
        value = [value]
    return value


def test_a_reducer_nested_300_deep_is_refused(tmp_path: Path) -> None:
    doc = json.loads(WEAK_JSON.read_text())
    doc["results"]["scores"][0]["reducer"] = _deep(300)
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="nested more than 32 levels"):
        read_logs([path], "inspect", Options())


def _lm_eval_copy(tmp_path: Path, edit: object) -> Path:
    import shutil

    dst = tmp_path / "strong"
    shutil.copytree(LMEVAL / "coinflip-strong", dst)
    rp = next(dst.glob("results_*.json"))
    res = json.loads(rp.read_text())
    edit(res)  # type: ignore[operator]
    rp.write_text(json.dumps(res))
    return rp


@pytest.mark.parametrize("edit, nested", [
    (lambda r: r.__setitem__("n-shot", {"evalspec_mc": _deep(300)}), True),
    (lambda r: r["results"]["evalspec_mc"].__setitem__("acc_stderr,none", 10**400), False),
    (lambda r: r["results"]["evalspec_mc"].__setitem__("acc,none", "0.7"), False),
])
def test_lm_eval_results_that_are_not_numbers(tmp_path: Path, edit: object, nested: bool) -> None:
    rp = _lm_eval_copy(tmp_path, edit)
    if nested:
        with pytest.raises(InputError, match="nested more than 32 levels"):
            read_logs([rp], "lm_eval", Options(task="evalspec_mc"))
        return
    (lf,) = read_logs([rp], "lm_eval", Options(task="evalspec_mc"))
    rep = lf.provenance["reported"]
    assert all(v is None or isinstance(v, float) for v in (rep["value"], rep["stderr"]))
    assert any("not a finite number" in n for n in lf.provenance["notes"])
    json.dumps(lf.provenance, allow_nan=False)  # the claim can hold it


def test_lm_eval_outcome_too_large_for_a_number(tmp_path: Path) -> None:
    rp = _lm_eval_copy(tmp_path, lambda r: None)
    sp = next(rp.parent.glob("samples_evalspec_mc_*.jsonl"))
    lines = sp.read_text().splitlines()
    first = json.loads(lines[0])
    first["acc"] = 10**400
    sp.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    with pytest.raises(InputError, match="not a finite number") as info:
        read_logs([rp], "lm_eval", Options(task="evalspec_mc"))
    assert sp.name in info.value.render()


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_promptfoo_provider_with_a_lone_surrogate(tmp_path: Path, suffix: str) -> None:
    doc = promptfoo_doc(n_tests=3, repeat=2)
    doc["results"]["results"][1]["provider"]["id"] = "str\ud800ong"
    path = tmp_path / f"r{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(doc))
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in doc["results"]["results"]))
    with pytest.raises(InputError, match="not valid Unicode") as info:
        read_logs([path], "promptfoo", Options())
    assert path.name in info.value.render()
    doc["results"]["results"][1]["provider"]["id"] = "str\U0001F600ong"  # a real pair is text
    path.write_text(json.dumps(doc) if suffix == ".json" else
                    "".join(json.dumps(r) + "\n" for r in doc["results"]["results"]))
    read_logs([path], "promptfoo", Options())
