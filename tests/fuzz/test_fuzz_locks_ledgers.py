"""Hand-edited locks and ledgers, and JSON nested deep, through `lock`, `run` and `audit`:
exit 0/1/2 with a message naming the file, never 70, a traceback or a hang."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from fuzz_strategies import BASE_ROWS, FUZZ, hostile_values, plan_variant, run_cli

_NAMED = ("plan.yaml.lock.json", ".evalspec/ledger.jsonl", "out/claim.json", "plan.yaml", "results.jsonl")


def _check(result: Any) -> None:
    text = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert result.exit_code in (0, 1, 2), (result.exit_code, text[-2000:])
    assert "Traceback" not in text and "internal error" not in text, text[-2000:]
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), repr(result.exception)
    if result.exit_code == 2:
        first = result.stderr.splitlines()[0]
        assert first.startswith(_NAMED), first


@pytest.fixture(scope="module")
def locked_and_run(tmp_path_factory: Any) -> dict[str, bytes]:
    """The files of a plan locked and run once: plan, results, lock, ledger, claim."""
    folder = tmp_path_factory.mktemp("base")
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in BASE_ROWS), encoding="utf-8")
    (folder / "plan.yaml").write_text(plan_variant("binary"), encoding="utf-8")
    assert run_cli(folder, ["lock", "plan.yaml"]).exit_code == 0
    result = run_cli(folder, ["run", "plan.yaml", "--no-report"])
    assert result.exit_code == 0, result.output
    return {name: (folder / name).read_bytes() for name in _NAMED}


def _place(files: dict[str, bytes], folder: Path) -> None:
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, path + (i,))
    return out


def _mutate(doc: Any, rnd: random.Random, values: list[Any]) -> Any:
    doc = copy.deepcopy(doc)
    for value in values:
        if isinstance(value, tuple):
            value = f"__deep_{value[1]}__"  # spelled out by _dumps (json.dumps itself recurses)
        paths = [p for p in _paths(doc) if p]
        if not paths:
            return value
        path = rnd.choice(paths)
        target = doc
        for k in path[:-1]:
            target = target[k]
        if rnd.random() < 0.2 and isinstance(target, dict):
            del target[path[-1]]
        else:
            target[path[-1]] = value
    return doc


def _dumps(doc: Any) -> str:
    """JSON text of ``doc`` with each ``"__deep_N__"`` replaced by arrays and objects nested N deep."""
    import re

    def nested(m: re.Match[str]) -> str:
        n = int(m.group(1))
        return '{"k": [' * (n // 2) + "1" + "]}" * (n // 2)

    return re.sub(r'"__deep_(\d+)__"', nested, json.dumps(doc, allow_nan=True))


deep_values = st.integers(150, 3000).map(lambda n: ("deep", n))  # built in the test (hypothesis prints it)
values = st.lists(st.one_of(hostile_values, hostile_values, deep_values), min_size=1, max_size=3)
damage = st.sampled_from(["none", "none", "duplicate_key", "nan", "truncate", "bigint"])


def _damage(text: str, how: str, rnd: random.Random) -> str:
    if how == "duplicate_key" and '{"' in text:
        return text.replace('{"', '{"format": 1, "', 1)
    if how == "nan":
        return text.replace("null", "NaN", 1)
    if how == "truncate":
        return text[: rnd.randrange(len(text) + 1)]
    if how == "bigint":
        return text.replace("null", "9" * 5000, 1)
    return text


@FUZZ
@given(seed=st.integers(0, 2**32 - 1), new=values, how=damage)
def test_hand_edited_locks_never_crash(tmp_path_factory: Any, locked_and_run: dict[str, bytes], seed: int,
                                       new: list[Any], how: str) -> None:
    rnd = random.Random(seed)
    folder = tmp_path_factory.mktemp("lock")
    _place(locked_and_run, folder)
    lock = _mutate(json.loads(locked_and_run["plan.yaml.lock.json"]), rnd, new)
    (folder / "plan.yaml.lock.json").write_text(_damage(_dumps(lock), how, rnd), encoding="utf-8")
    for args in (["audit", "out/claim.json", "--no-reproduce", "--json"], ["lock", "plan.yaml"],
                 ["run", "plan.yaml", "--no-report"]):
        result = run_cli(folder, args)
        event(f"{args[0]} exit {result.exit_code}")
        _check(result)


@FUZZ
@given(seed=st.integers(0, 2**32 - 1), new=values, how=damage, extra=st.booleans())
def test_hand_edited_ledgers_never_crash(tmp_path_factory: Any, locked_and_run: dict[str, bytes], seed: int,
                                         new: list[Any], how: str, extra: bool) -> None:
    rnd = random.Random(seed)
    folder = tmp_path_factory.mktemp("ledger")
    _place(locked_and_run, folder)
    lines = locked_and_run[".evalspec/ledger.jsonl"].decode("utf-8").splitlines()
    entry = _mutate(json.loads(lines[-1]), rnd, new)
    lines[-1] = _damage(_dumps(entry), how, rnd)
    if extra:
        lines.append(lines[-1])
    (folder / ".evalspec" / "ledger.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for args in (["audit", "out/claim.json", "--no-reproduce", "--json"], ["run", "plan.yaml", "--no-report"]):
        result = run_cli(folder, args)
        event(f"{args[0]} exit {result.exit_code}")
        _check(result)


@FUZZ
@given(seed=st.integers(0, 2**32 - 1), new=st.lists(deep_values, min_size=1, max_size=2))
def test_deeply_nested_claims_never_crash(tmp_path_factory: Any, locked_and_run: dict[str, bytes], seed: int,
                                          new: list[Any]) -> None:
    rnd = random.Random(seed)
    folder = tmp_path_factory.mktemp("deep")
    _place(locked_and_run, folder)
    claim = _mutate(json.loads(locked_and_run["out/claim.json"]), rnd, new)
    (folder / "out" / "claim.json").write_text(_dumps(claim), encoding="utf-8")
    for args in (["audit", "out/claim.json", "--no-reproduce", "--json"], ["report", "out/claim.json", "--format",
                                                                            "html"], ["attest", "out/claim.json"]):
        result = run_cli(folder, args)
        event(f"{args[0]} exit {result.exit_code}")
        _check(result)
