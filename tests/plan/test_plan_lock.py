"""The canonical hash and the lock file.

Invariants: comments, key order, whitespace, flow/block style and explicitly written
defaults never change the hash; every value change that still validates does.
Lock rules: re-locking an unchanged plan is a no-op; a changed plan is refused with the
changed keys (exit 1) unless --force, which keeps the old hash in the lock's history.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalspec.cli import cli
from evalspec.plan import (
    canonical_data,
    canonical_hash,
    diff_keys,
    load_plan,
    lock_path,
    read_lock,
)
from evalspec.plan.model import Plan

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "policy-migration" / "plan.yaml"
RAW: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
HASH = canonical_hash(RAW)


def _shuffled(value: Any, rnd: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rnd.shuffle(items)
        return {k: _shuffled(v, rnd) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rnd) for v in value]
    return value


def _commented(text: str, rnd: random.Random) -> str:
    out = []
    for line in text.splitlines():
        if rnd.random() < 0.3:
            out.append(" " * rnd.randrange(4) + "# a comment: with 'quotes' and: colons")
        if rnd.random() < 0.2:
            out.append("")
        if rnd.random() < 0.3 and not line.rstrip().endswith(("|", ">", ",", "[", "{", "-")):
            line = line + "   # trailing"
        out.append(line + " " * rnd.randrange(3))
    return "\n".join(out) + "\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), indent=st.integers(2, 6), flow=st.sampled_from([None, False]))
def test_layout_never_changes_the_hash(tmp_path: Path, seed: int, indent: int, flow: bool | None) -> None:
    rnd = random.Random(seed)
    text = yaml.safe_dump(_shuffled(RAW, rnd), sort_keys=False, indent=indent, default_flow_style=flow,
                          allow_unicode=True, width=10_000)
    plan = tmp_path / "plan.yaml"
    plan.write_text(_commented(text, rnd), encoding="utf-8")
    assert canonical_hash(load_plan(plan)) == HASH


def test_explicit_defaults_hash_like_omitted_ones() -> None:
    explicit = json.loads(json.dumps(RAW, default=str))
    explicit["decision"]["goal"] = "superiority"  # already the default
    explicit["attempts"]["rule"] = "first"
    explicit["missing"] = {"policy": "count_as_fail", "max_fraction": 0.02}
    explicit["analyses"][1]["bootstrap_interval"] = "percentile"  # this parameter's default
    explicit["decision"]["minimum_units"] = 10
    explicit["candidates"]["A"]["settings"]["temperature"] = 0.0  # 0 and 0.0 are one number
    assert canonical_hash(explicit) == HASH


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, path + (k,))]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, path + (i,))]
    return [(path, value)]


def _mutations(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value * 2 + 3]
    if isinstance(value, float):
        return [value / 2, min(0.999, value * 1.5 + 0.001)]
    if isinstance(value, str):
        return [value + "x", "Z" + value]
    return [str(value) + "x"]


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


def test_every_value_change_changes_the_hash() -> None:
    changed = 0
    for path, value in _leaves(RAW):
        for new in _mutations(value):
            data = json.loads(json.dumps(RAW, default=str))
            _set(data, path, new)
            try:
                Plan.model_validate(data)
            except Exception:  # noqa: BLE001 - this mutation is not a valid plan; nothing to hash
                continue
            changed += 1
            assert canonical_hash(data) != HASH, path
            keys = [c.key for c in diff_keys(canonical_data(RAW), canonical_data(data))]
            assert keys, path
    assert changed > 40  # the test really exercised many leaves


def _lock(args: list[str], env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli, ["lock", *args], env=env)


@pytest.fixture()
def plan_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "plan.yaml"
    shutil.copyfile(EXAMPLE, dest)
    return dest


def test_lock_records_hash_time_version_and_canonical_plan(plan_copy: Path) -> None:
    result = _lock([str(plan_copy)], env={"SOURCE_DATE_EPOCH": "1767225600"})
    assert result.exit_code == 0, result.output
    data = json.loads(lock_path(plan_copy).read_text(encoding="utf-8"))
    assert lock_path(plan_copy).name == "plan.yaml.lock.json"
    assert data["hash"] == HASH
    assert data["locked_at"] == "2026-01-01T00:00:00Z"
    from evalspec import __version__

    assert data["evalspec_version"] == __version__
    assert data["plan"] == canonical_data(RAW)
    assert data["history"] == []
    assert read_lock(plan_copy).hash == HASH


def test_relock_unchanged_is_a_noop(plan_copy: Path) -> None:
    assert _lock([str(plan_copy)], env={"SOURCE_DATE_EPOCH": "1000"}).exit_code == 0
    before = lock_path(plan_copy).read_bytes()
    plan_copy.write_text(plan_copy.read_text() + "\n# only a comment\n", encoding="utf-8")
    result = _lock([str(plan_copy)], env={"SOURCE_DATE_EPOCH": "2000"})
    assert result.exit_code == 0
    assert "nothing to do" in result.output
    assert lock_path(plan_copy).read_bytes() == before


def test_changed_plan_refused_without_force_then_forced(plan_copy: Path) -> None:
    assert _lock([str(plan_copy)]).exit_code == 0
    before = lock_path(plan_copy).read_bytes()
    text = plan_copy.read_text().replace("minimum_improvement: 0.03", "minimum_improvement: 0.01")
    plan_copy.write_text(text.replace("seed: 7", "seed: 8"), encoding="utf-8")
    refused = _lock([str(plan_copy)])
    assert refused.exit_code == 1
    assert "changed decision.minimum_improvement: 0.03 -> 0.01" in refused.output
    assert "changed analyses[1].seed: 7 -> 8" in refused.output
    assert "--force" in refused.output
    assert lock_path(plan_copy).read_bytes() == before  # untouched
    forced = _lock([str(plan_copy), "--force"])
    assert forced.exit_code == 0, forced.output
    data = json.loads(lock_path(plan_copy).read_text())
    assert data["hash"] == canonical_hash(load_plan(plan_copy))
    assert [h["hash"] for h in data["history"]] == [HASH]


def test_validate_reports_lock_state(plan_copy: Path) -> None:
    missing = CliRunner().invoke(cli, ["validate", "--locked", str(plan_copy)])
    assert missing.exit_code == 1 and "not locked" in missing.output
    assert _lock([str(plan_copy)]).exit_code == 0
    ok = CliRunner().invoke(cli, ["validate", "--locked", str(plan_copy)])
    assert ok.exit_code == 0 and "lock matches" in ok.output
    plan_copy.write_text(plan_copy.read_text().replace("max_units: 400", "max_units: 300"), encoding="utf-8")
    changed = CliRunner().invoke(cli, ["validate", str(plan_copy)])
    assert changed.exit_code == 0 and "changed since locked" in changed.output and "stopping.max_units" in changed.output
    strict = CliRunner().invoke(cli, ["validate", "--locked", str(plan_copy)])
    assert strict.exit_code == 1


def test_malformed_lock_is_a_located_input_error(plan_copy: Path) -> None:
    lock_path(plan_copy).write_text('{"format": "evalspec-lock/1",\n "hash": }\n', encoding="utf-8")
    result = _lock([str(plan_copy)])
    assert result.exit_code == 2
    assert "plan.yaml.lock.json:2:10: the lock file is not valid JSON" in result.output
    assert "Traceback" not in result.output
    assert _lock([str(plan_copy), "--force"]).exit_code == 0
    assert read_lock(plan_copy).hash == HASH


def test_bad_source_date_epoch(plan_copy: Path) -> None:
    result = _lock([str(plan_copy)], env={"SOURCE_DATE_EPOCH": "yesterday"})
    assert result.exit_code == 2 and "SOURCE_DATE_EPOCH" in result.output


def test_lock_of_invalid_plan_is_refused(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(EXAMPLE.read_text().replace("baseline: B", "baseline: Q"), encoding="utf-8")
    result = _lock([str(plan)])
    assert result.exit_code == 1 and "baseline" in result.output
    assert not lock_path(plan).exists()


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_lock_records_git_commit_and_dirty_flag(tmp_path: Path) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@e", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=tmp_path, env=env, check=True, capture_output=True,
                              text=True).stdout.strip()

    git("init", "-q")
    plan = tmp_path / "plan.yaml"
    shutil.copyfile(EXAMPLE, plan)
    (tmp_path / "other.txt").write_text("a\n")
    git("add", "plan.yaml", "other.txt")
    git("commit", "-q", "-m", "plan")
    head = git("rev-parse", "HEAD")
    assert _lock([str(plan)]).exit_code == 0
    data = json.loads(lock_path(plan).read_text())
    assert data["git"] == {"commit": head, "dirty": False, "plan_uncommitted": False}
    (tmp_path / "other.txt").write_text("b\n")
    assert _lock([str(plan), "--force"]).exit_code == 0  # unchanged plan: no-op, lock kept
    assert json.loads(lock_path(plan).read_text())["git"]["dirty"] is False
    lock_path(plan).unlink()
    assert _lock([str(plan)]).exit_code == 0
    assert json.loads(lock_path(plan).read_text())["git"] == {"commit": head, "dirty": True,
                                                             "plan_uncommitted": False}


def test_lock_outside_git_records_null(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = tmp_path / "plan.yaml"
    shutil.copyfile(EXAMPLE, plan)
    monkeypatch.setenv("PATH", str(tmp_path / "no-such-bin"))  # git cannot be found at all
    assert _lock([str(plan)]).exit_code == 0
    assert json.loads(lock_path(plan).read_text())["git"] is None


def test_lock_write_is_atomic(plan_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure while writing leaves neither a partial lock nor a temporary file."""
    import evalspec.plan.lock as lockmod

    def boom(*a: Any, **k: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(lockmod.os, "fsync", boom)
    with pytest.raises(OSError):
        lockmod.write_lock(load_plan(plan_copy))
    assert sorted(p.name for p in plan_copy.parent.iterdir()) == ["plan.yaml"]


def test_flow_style_and_anchors_do_not_change_the_hash(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(RAW, default_flow_style=True, width=60), encoding="utf-8")
    assert canonical_hash(load_plan(plan)) == HASH
    text = EXAMPLE.read_text().replace("settings: {temperature: 0, system_prompt: config-a-v3}",
                                       "settings: &s {temperature: 0, system_prompt: config-a-v3}")
    plan.write_text(text, encoding="utf-8")
    assert canonical_hash(load_plan(plan)) == HASH


def test_canonical_hash_accepts_plan_loaded_plan_and_mapping(plan_copy: Path) -> None:
    loaded = load_plan(plan_copy)
    assert canonical_hash(loaded) == canonical_hash(loaded.plan) == canonical_hash(RAW) == HASH
    assert HASH.startswith("sha256:") and len(HASH) == len("sha256:") + 64
    assert read_lock(plan_copy) is None
    with pytest.raises(TypeError):
        canonical_hash(42)


def test_lock_prints_the_warnings_validate_gives_and_still_locks(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from evalspec.cli import cli

    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    res = runner.invoke(cli, ["lock", str(tmp_path / "plan.yaml")])
    assert res.exit_code == 0, res.output
    assert "systematic_limits[0]: warning: this limit is still the example text of `evalspec init`" in res.stderr
    assert (tmp_path / "plan.yaml.lock.json").is_file()
