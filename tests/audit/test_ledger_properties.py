"""Property: any single edit, removal (but the last) or swap of ledger lines breaks the chain, and is named."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.ledger import LedgerEntry, entry_self_hash, entry_line, new_entry, verify


def _chain(n: int) -> list[LedgerEntry]:
    entries: list[LedgerEntry] = []
    for i in range(n):
        claim = {"created": f"2026-11-{i + 1:02d}T00:00:00Z", "plan": {"id": "p", "hash": f"sha256:{i}", "lock": {}},
                 "data": {"files": [{"path": "r.jsonl", "sha256": f"{i:064d}", "rows": 10 + i}]},
                 "coverage": {"independent_units": {"count": 10 + i, "unit": "cases"}}, "decision": {"verdict": "x"}}
        e = new_entry(claim, "plan.yaml", entries)
        e["claim_sha256"] = f"{i:064x}"
        e["entry_sha256"] = entry_self_hash(e)
        entries.append(LedgerEntry(line=i + 1, text=entry_line(e), data=e))
    return entries


def _reparse(lines: list[str]) -> list[LedgerEntry]:
    return [LedgerEntry(line=i + 1, text=t, data=json.loads(t)) for i, t in enumerate(lines)]


FIELDS = ["verdict", "time", "plan_hash", "cases", "units_seen", "data", "seq", "prev_sha256", "claim_sha256"]


@settings(max_examples=80, deadline=None)
@given(n=st.integers(2, 8), op=st.sampled_from(["edit", "delete", "swap"]), data=st.data())
def test_tampering_is_always_detected(n: int, op: str, data: st.DataObject) -> None:
    entries = _chain(n)
    assert verify(entries).ok
    lines = [e.text for e in entries]
    if op == "edit":
        i = data.draw(st.integers(0, n - 1))
        key = data.draw(st.sampled_from(FIELDS))
        obj = json.loads(lines[i])
        obj[key] = {"tampered": True}
        lines[i] = entry_line(obj)
    elif op == "delete":
        i = data.draw(st.integers(0, n - 2))  # the last line is covered by the claim (see test_tampering.py)
        del lines[i]
    else:
        i = data.draw(st.integers(0, n - 2))
        j = data.draw(st.integers(i + 1, n - 1))
        lines[i], lines[j] = lines[j], lines[i]
    check = verify(_reparse(lines))
    assert not check.ok
    assert all(p.message.startswith(("entry", "entries")) for p in check.problems)


def test_verify_reads_a_file(tmp_path: Path) -> None:
    p = tmp_path / "ledger.jsonl"
    p.write_text("".join(e.text + "\n" for e in _chain(3)), encoding="utf-8")
    assert verify(p).ok and len(verify(p).entries) == 3
