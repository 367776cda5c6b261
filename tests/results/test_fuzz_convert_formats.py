"""`evalspec convert` on a damaged copy of a real log of every supported tool: exit 0 or a located exit 2.

The adapters' own fuzz tests call the reader; this one goes through the command, so the tidy
table's writing (CSV and JSONL, odd cell values) is covered too. Fixed seed.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from logs_helpers import FIX, LMEVAL, PROMPTFOO_REAL, STRONG  # noqa: E402

from evalspec.cli import cli  # noqa: E402

pytest.importorskip("zstandard")

#: format -> (source file or folder, the file inside it that is damaged)
SOURCES = {
    "inspect": (STRONG, None),
    "lm_eval": (LMEVAL / "coinflip-strong", "samples_evalspec_mc_2026-11-29T11-42-12.595528.jsonl"),
    "promptfoo": (PROMPTFOO_REAL, None),
    "openai_evals": (FIX / "openai_evals" / "coinflip-strong.jsonl", None),
    "helm": (FIX / "helm" / "terse", "per_instance_stats.json"),
    "every_eval_ever": (next((FIX / "every_eval_ever" / "evalspec_gen" / "evalspec" / "coinflip-strong").glob(
        "*_samples.jsonl")), None),
}
_EXTRA = {"lm_eval": ["--task", "evalspec_mc"], "every_eval_ever": ["--task", "exact_match:first"]}


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fmt=st.sampled_from(sorted(SOURCES)), edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)),
                                                              min_size=1, max_size=6),
       cut=st.none() | st.integers(0, 10**6), to=st.sampled_from(["csv", "jsonl"]))
def test_fuzz_convert_every_format(tmp_path: Path, fmt: str, edits: list[tuple[int, int]], cut: int | None,
                                   to: str) -> None:
    src, inner = SOURCES[fmt]
    work = tmp_path / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    if src.is_dir():
        target = work / src.name
        shutil.copytree(src, target)
        damaged = target / inner
    else:
        target = damaged = work / src.name
        shutil.copy(src, target)
    buf = bytearray(damaged.read_bytes())
    for pos, val in edits:
        buf[pos % len(buf)] = val
    if cut is not None:
        buf = buf[: cut % (len(buf) + 1)]
    damaged.write_bytes(bytes(buf))
    res = CliRunner().invoke(cli, ["convert", str(target), "--format", fmt, "--to", to, "-o",
                                   str(tmp_path / f"out.{to}"), *_EXTRA.get(fmt, [])])
    assert res.exit_code in (0, 2), res.output
    assert "internal error" not in res.output and "Traceback" not in res.output
    if res.exit_code == 2:
        assert "work" in res.output  # the damaged log is named
