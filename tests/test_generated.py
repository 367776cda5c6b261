"""The checked-in generated files (schemas, the README's plan reference) are exactly what the code generates.

Full text, not a sample of keys: a deleted row, a stale description or a new kind's missing
parameters fail here. Regenerate all of them with ``python -m evalspec.regenerate``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalspec.regenerate import generated, main

ROOT = Path(__file__).resolve().parents[1]
FILES = generated(ROOT)


@pytest.mark.parametrize("path", list(FILES), ids=lambda p: str(p.relative_to(ROOT)))
def test_generated_file_is_up_to_date(path: Path) -> None:
    current = path.read_text(encoding="utf-8")
    assert current == FILES[path], (f"{path.relative_to(ROOT)} is out of date with the code; regenerate it: "
                                    "python -m evalspec.regenerate")


def test_a_deleted_reference_row_is_caught(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    for path, text in FILES.items():
        (tmp_path / path.relative_to(ROOT)).write_text(text, encoding="utf-8")
    readme = tmp_path / "README.md"
    lines = readme.read_text(encoding="utf-8").splitlines(keepends=True)
    row = next(i for i, line in enumerate(lines) if line.startswith("| `resamples` |"))
    readme.write_text("".join(lines[:row] + lines[row + 1:]), encoding="utf-8")
    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert main(["--root", str(tmp_path)]) == 0
    assert readme.read_text(encoding="utf-8") == FILES[ROOT / "README.md"]
    assert main(["--check", "--root", str(tmp_path)]) == 0
