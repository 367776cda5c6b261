"""The note on the claim a run replaces, for a claim of any size (a long one: from the parts after its analyses)."""

from __future__ import annotations

import json

import pytest

from evalspec.commands import run as run_command
from tests.audit.conftest import Workspace, make_workspace


@pytest.fixture()
def ran(tmp_path) -> Workspace:
    """policy-migration, locked before its results, run once (the audit tests' workspace)."""
    w = make_workspace(tmp_path)
    w.lock()
    w.run()
    return w


def _words(claim: dict) -> str:
    return (f"made {claim['created']}, verdict {claim['decision']['verdict']}, "
            f"ledger entry {claim['integrity']['ledger']['seq']}")


def test_a_claim_larger_than_is_read_whole_is_still_described(ran: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    claim = ran.read_claim()
    assert run_command._previous_claim(ran.claim.parent) == _words(claim)  # (read whole)
    monkeypatch.setattr(run_command, "_WHOLE_BYTES", 1000)  # (as a claim of millions of disagreeing cases is)
    assert run_command._previous_claim(ran.claim.parent) == _words(claim)
    res = ran.cli("run", str(ran.plan), "--no-report", day="2026-11-19")
    assert res.exit_code == 0 and f"out ({_words(claim)}); its look stays" in res.output, res.output
    monkeypatch.setattr(run_command, "_TAIL_BYTES", 100)  # (a tail without the claim's format)
    assert run_command._previous_claim(ran.claim.parent) == "not a readable claim"


@pytest.mark.parametrize("edit", ["a time moved ahead", "parts out of order", "a broken end"])
def test_a_large_claim_not_as_evalspec_writes_it_is_not_readable_one_read_whole_is(ran: Workspace, monkeypatch: pytest.MonkeyPatch,
                                                                 edit: str) -> None:
    claim = ran.read_claim()
    if edit == "a time moved ahead":
        text = json.dumps({"created": "2026-01-05T00:00:00Z", **claim}, indent=2)
    elif edit == "parts out of order":
        text = json.dumps({"analyses": claim["analyses"], "claim_format": 2, **dict(reversed(claim.items()))},
                          indent=2)
    else:
        text = ran.claim.read_text(encoding="utf-8")[:-4]
    ran.claim.write_text(text, encoding="utf-8")
    whole = "not a readable claim" if edit == "a broken end" else _words(json.loads(text))  # (read whole)
    assert run_command._previous_claim(ran.claim.parent) == whole
    monkeypatch.setattr(run_command, "_WHOLE_BYTES", 1000)
    assert run_command._previous_claim(ran.claim.parent) == "not a readable claim"


@pytest.mark.parametrize("edit", ["none", "a time moved ahead", "parts out of order", "a broken end", "a broken head"])
def test_a_claim_over_4_mib_is_described_from_its_tail_or_else_read_whole(ran: Workspace,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          edit: str) -> None:
    """Over 4 MiB (here: 1,000 bytes) a claim as evalspec writes it is described from its tail, without reading its
    analyses; one whose tail is not so is read whole, as before, and says what reading it whole says."""
    claim = ran.read_claim()
    text = ran.claim.read_text(encoding="utf-8")
    if edit == "a time moved ahead":
        text = json.dumps({"created": "2026-01-05T00:00:00Z", **claim}, indent=2)
    elif edit == "parts out of order":
        text = json.dumps({"analyses": claim["analyses"], "claim_format": 2, **dict(reversed(claim.items()))},
                          indent=2)
    elif edit == "a broken end":
        text = text[:-4]
    elif edit == "a broken head":  # (its analyses are not JSON: read whole it is not readable; its tail is)
        text = text.replace('"analyses": [', '"analyses": [}', 1)
    ran.claim.write_text(text, encoding="utf-8")
    try:
        whole = _words(json.loads(text))
    except ValueError:
        whole = "not a readable claim"
    monkeypatch.setattr(run_command, "_TAIL_FIRST_BYTES", 1000)
    tails: list[object] = []
    real = run_command._tail_parts
    monkeypatch.setattr(run_command, "_tail_parts", lambda *a: tails.append(real(*a)) or tails[-1])
    got = run_command._previous_claim(ran.claim.parent)
    if edit in ("none", "a broken head"):
        assert tails and tails[-1] is not None and got == _words(claim)  # (from the tail: its analyses not read)
    else:
        assert got == whole and (not tails or tails[-1] is None)
