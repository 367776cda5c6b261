"""`evalspec tbg estimate` on damaged reference and target folders: a located exit 2, never 70.

Structure-aware mutation (fixed seed, no database): a manifest field, a shard line or a target
line replaced by a hostile value, deleted, duplicated or cut short.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tbg_synthetic import SyntheticModel, write_reference_folder  # noqa: E402

GRID = [0.0, 0.1, 0.3, 0.7]
HOSTILE = [None, True, -1, 0, 1e308, float("inf"), "", "x", [], {}, [[-5]], [[2**40]], [["a"]], [1, 2],
           {"a": 1}, "9" * 5000, 2**70]
SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None)


@pytest.fixture(scope="module")
def good(tmp_path_factory: Any) -> Path:
    root = tmp_path_factory.mktemp("tbg-good")
    model = SyntheticModel(prompts=6, seed=0)
    write_reference_folder(root / "ref", model.table(GRID, 4, seed=1), name="ref")
    sut = model.answers(0.1, 4, seed=9)
    (root / "sut.jsonl").write_text("".join(json.dumps({"prompt": p, "repeat": i, "tokens": list(a)}) + "\n"
                                            for p, answers in sut.items() for i, a in enumerate(answers)))
    return root


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:6]):
            out += _paths(v, path + (i,))
    return out


def _mutate_json(text: str, rnd: random.Random) -> str:
    doc = json.loads(text)
    paths = [p for p in _paths(doc) if p]
    if not paths:
        return json.dumps(rnd.choice(HOSTILE), allow_nan=True)
    path = rnd.choice(paths)
    target = doc
    for k in path[:-1]:
        target = target[k]
    if rnd.random() < 0.25 and isinstance(target, dict):
        del target[path[-1]]
    else:
        target[path[-1]] = rnd.choice(HOSTILE)
    return json.dumps(doc, allow_nan=True)


def _damage(folder: Path, rnd: random.Random, where: str) -> None:
    if where == "manifest":
        p = folder / "ref" / "manifest.json"
        p.write_text(_mutate_json(p.read_text(), rnd))
        return
    p = rnd.choice(sorted((folder / "ref" / "shards").glob("*.jsonl"))) if where == "shard" else folder / "sut.jsonl"
    lines = p.read_text().splitlines()
    i = rnd.randrange(len(lines))
    op = rnd.choice(["mutate", "mutate", "mutate", "delete", "duplicate", "truncate"])
    if op == "mutate":
        lines[i] = _mutate_json(lines[i], rnd)
    elif op == "delete":
        del lines[i]
    elif op == "duplicate":
        lines.insert(i, lines[i])
    else:
        lines[i] = lines[i][: rnd.randrange(len(lines[i]) + 1)]
    p.write_text("\n".join(lines) + "\n")


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), where=st.sampled_from(["manifest", "shard", "target"]))
def test_damaged_inputs_are_located_errors(tmp_path_factory: Any, good: Path, seed: int, where: str) -> None:
    from evalspec.cli import cli

    folder = tmp_path_factory.mktemp("tbg")
    shutil.copytree(good, folder, dirs_exist_ok=True)
    _damage(folder, random.Random(seed), where)
    res = CliRunner().invoke(cli, ["tbg", "estimate", "--reference", str(folder / "ref"), "--target",
                                   str(folder / "sut.jsonl"), "--resamples", "100"], catch_exceptions=True)
    assert res.exit_code in (0, 2), (res.exit_code, res.output[-1500:], res.exception)
    assert "Traceback" not in res.output and "internal error" not in res.output, res.output
    if res.exit_code == 2:
        first = res.output.strip().splitlines()[0]
        assert first.startswith(str(folder)), first
    shutil.rmtree(folder, ignore_errors=True)
