"""Atomic writes: the target gets ordinary permissions, and a failed write changes nothing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from evalspec._atomic import write_bytes_atomic, write_text_atomic


def test_permissions_follow_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        target = write_text_atomic(tmp_path / "claim.json", "{}\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert target.read_text() == "{}\n"


def test_failed_write_leaves_target_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "report.pdf"
    target.write_bytes(b"old")


    with pytest.raises(TypeError):
        write_bytes_atomic(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.pdf"]


def test_creates_parent_folder(tmp_path: Path) -> None:
    target = write_bytes_atomic(tmp_path / "a" / "b" / "x.bin", b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01"
