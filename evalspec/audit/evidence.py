"""Evidence from git: what the repository holding the plan shows about its lock and ledger.

The claim, the lock and the ledger are files; whoever can write them can rewrite all three
so that they agree. Git history is outside them: a commit records a version of a file and
when it was committed, and a rewritten file no longer matches its committed versions. So
when the plan's folder is in a git work tree, the audit reads every committed version of
the lock and of the ledger of looks and checks

* that the lock was committed, and no committed version was rewritten (the hash and
  ``locked_at`` of a committed lock are kept, or the lock was re-locked with ``--force``,
  which keeps them in its history);
* that ``locked_at`` agrees with git: the lock is not older than the commit it records as
  its HEAD, and it was first committed before the first result (else git cannot show the
  plan was fixed first);
* that every committed version of the ledger is a prefix of the later ones (looks are only
  ever appended; none removed or edited) and whether the claim's own look is committed.

Commit times are set by whoever commits; commits pushed to a shared remote (or signed) are
the stronger anchor. ``docs/audit.md`` says what each check shows.
"""

from __future__ import annotations

import datetime as _dt
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalspec.audit.model import AuditInputs, CheckResult
from evalspec.process import parse_time

__all__ = ["GitView", "git_view", "lock_in_git", "ledger_in_git"]

#: Most committed versions of one file the audit reads.
MAX_VERSIONS = 200
#: Largest committed version read (bytes).
MAX_VERSION_BYTES = 64 * 1024**2


@dataclass(frozen=True)
class Version:
    commit: str
    time: _dt.datetime
    text: str


class GitView:
    """Read-only git queries in the work tree holding a folder (never writes, takes no lock)."""

    def __init__(self, folder: Path, top: Path) -> None:
        self.folder = folder
        self.top = top

    def run(self, *args: str, text: bool = True) -> Any:
        env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C", GIT_TERMINAL_PROMPT="0")
        try:
            proc = subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=self.top, capture_output=True,
                                  timeout=30, env=env, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        if proc.returncode != 0:
            return None
        return proc.stdout.decode("utf-8", "replace") if text else proc.stdout

    def rel(self, path: Path) -> str | None:
        try:
            return path.resolve().relative_to(self.top).as_posix()
        except ValueError:
            return None

    def tracked(self, rel: str) -> bool:
        return bool((self.run("ls-files", "--", rel) or "").strip())

    def versions(self, rel: str) -> list[Version]:
        """Committed versions of ``rel`` on the current branch, oldest first (at most :data:`MAX_VERSIONS`)."""
        log = self.run("log", f"--max-count={MAX_VERSIONS}", "--format=%H %cI", "--", rel) or ""
        out = []
        for line in reversed(log.splitlines()):
            commit, _, when = line.partition(" ")
            t = parse_time(when)
            size = (self.run("cat-file", "-s", f"{commit}:{rel}") or "").strip()
            if t is None or not size.isdigit() or int(size) > MAX_VERSION_BYTES:
                continue  # deleted in that commit, or too big to be evalspec's
            blob = self.run("show", f"{commit}:{rel}", text=False)
            if blob is not None:
                out.append(Version(commit, t, blob.decode("utf-8", "replace")))
        return out

    def commit_time(self, commit: str) -> _dt.datetime | None:
        if not isinstance(commit, str) or not commit or not all(c in "0123456789abcdef" for c in commit.lower()):
            return None
        return parse_time((self.run("show", "-s", "--format=%cI", commit + "^{commit}") or "").strip())


def git_view(plan_path: Path | None) -> GitView | None:
    """The git work tree holding the plan's folder, or None (no git, or not in a work tree)."""
    if plan_path is None:
        return None
    folder = plan_path.resolve().parent
    probe = GitView(folder, folder)
    top = (probe.run("rev-parse", "--show-toplevel") or "").strip()
    if not top:
        return None
    return GitView(folder, Path(top).resolve())


def _r(id_: str, title: str, status: str, sentence: str, evidence: list[str] | None = None) -> CheckResult:
    return CheckResult(id_, title, status, sentence, list(evidence or []), basis="evidence")  # type: ignore[arg-type]


def _first_result(inputs: AuditInputs) -> _dt.datetime | None:
    dates = (inputs.claim.get("coverage") or {}).get("run_dates")
    return parse_time(dates.get("first")) if isinstance(dates, dict) else None


def _lock_fields(text: str) -> tuple[Any, Any, list[Any]] | None:
    from evalspec._files import loads_json
    from evalspec.errors import InputError

    try:
        data = loads_json(text, display="lock", what="a committed lock")
    except InputError:
        return None
    if not isinstance(data, dict):
        return None
    history = data.get("history") if isinstance(data.get("history"), list) else []
    return data.get("hash"), data.get("locked_at"), history


def lock_in_git(inputs: AuditInputs) -> CheckResult:
    """The lock is committed, unchanged since, and its time agrees with git."""
    title = "Lock anchored in git"
    lock = inputs.lock
    if lock is None:
        return _r("lock_in_git", title, "warning", "There is no lock to look for in git.")
    view = inputs.git if inputs.git is not None else None
    if view is None:
        return _r("lock_in_git", title, "warning",
                  "The plan's folder is not in a git repository, so nothing outside the lock file shows when the plan "
                  "was locked: its time is consistency only. Commit the plan and its lock (or sign the claim with "
                  "`evalspec attest`).")
    rel = view.rel(Path(lock.path))
    if rel is None or not view.tracked(rel):
        return _r("lock_in_git", title, "warning",
                  "The lock file is not committed to the repository the plan is in, so git cannot show when the plan "
                  "was locked; commit it before collecting results.", [f"{rel or lock.path}: untracked"])
    versions = view.versions(rel)
    fails, warns, evidence = [], [], []
    seen: list[tuple[Any, Any, Version]] = []
    for v in versions:
        fields = _lock_fields(v.text)
        if fields is None:
            fails.append(f"the lock committed in {v.commit[:12]} is not a lock file")
            continue
        h, at, history = fields
        if seen:
            ph, pat, pv = seen[-1]
            if (h, at) != (ph, pat):
                kept = any(isinstance(x, dict) and x.get("hash") == ph and x.get("locked_at") == pat for x in history)
                if not kept:
                    fails.append(f"the lock committed in {pv.commit[:12]} (hash {str(ph)[:19]}..., locked_at {pat}) "
                                 f"was rewritten in {v.commit[:12]} (locked_at {at}) without a re-lock recorded in "
                                 "its history")
        seen.append((h, at, v))
    if not seen:
        return _r("lock_in_git", title, "warning", "The lock file is tracked, but no committed version could be read.")
    ch, cat, cv = seen[-1]
    if (lock.hash, lock.locked_at) != (ch, cat):
        kept = any(isinstance(x, dict) and x.get("hash") == ch and x.get("locked_at") == cat for x in lock.history)
        if kept:
            warns.append("the lock was re-locked since its last commit; the new lock is not committed")
        else:
            fails.append(f"the lock file differs from its committed version ({cv.commit[:12]}: locked_at {cat}, hash "
                         f"{str(ch)[:19]}...): it was edited after it was committed")
    # the first commit holding the lock as it is now (or, re-locked, its first version)
    first = next((v for h, at, v in seen if (h, at) == (lock.hash, lock.locked_at)), None)
    evidence.append(f"lock committed in {seen[0][2].commit[:12]} at {seen[0][2].time.isoformat()}")
    locked = parse_time(lock.locked_at)
    head = (lock.git or {}).get("commit") if isinstance(lock.git, dict) else None
    if head:
        head_time = view.commit_time(str(head))
        if head_time is None:
            warns.append(f"the lock records git commit {str(head)[:12]}, which is not in this repository")
        elif locked is not None and locked < head_time:
            fails.append(f"the lock says it was made at {lock.locked_at}, before the commit it records as the work "
                         f"tree's HEAD then ({str(head)[:12]}, committed {head_time.isoformat()}): its time was edited")
    if first is not None and locked is not None and first.time < locked:
        fails.append(f"the lock was committed ({first.commit[:12]}, {first.time.isoformat()}) before the time it says "
                     f"it was made ({lock.locked_at})")
    result = _first_result(inputs)
    anchor = first or seen[0][2]
    if result is not None:
        evidence.append(f"first result {result.isoformat()}")
        if anchor.time > result:
            warns.append(f"the lock was first committed at {anchor.time.isoformat()}, after the first result "
                         f"({result.isoformat()}): git does not show the plan was fixed before the results (the "
                         f"lock's own time, {lock.locked_at}, is consistency only)")
    if fails:
        return _r("lock_in_git", title, "fail", "Git history contradicts the lock: " + fails[0] + ".",
                  fails + warns + evidence)
    if warns:
        return _r("lock_in_git", title, "warning", "The lock is committed, but " + warns[0] + ".", warns + evidence)
    if result is None:
        return _r("lock_in_git", title, "pass",
                  "The lock is committed and unchanged since, and its time agrees with git (the results carry no "
                  "times to compare with the commit).", evidence)
    return _r("lock_in_git", title, "pass",
              "The lock was committed before the first result and is unchanged since: git shows the plan was fixed "
              "before the results.", evidence)


def ledger_in_git(inputs: AuditInputs) -> CheckResult:
    """Every committed version of the ledger is a prefix of the later ones; the claim's look is committed."""
    title = "Ledger anchored in git"
    view = inputs.git
    if view is None:
        return _r("ledger_in_git", title, "warning",
                  "The plan's folder is not in a git repository, so nothing outside the ledger shows that no look was "
                  "removed or edited: the ledger checks are consistency only.")
    path = inputs.ledger_path
    rel = view.rel(path) if path is not None else None
    if rel is None or not view.tracked(rel):
        return _r("ledger_in_git", title, "warning",
                  "The ledger of looks is not committed, so git cannot show that no look was removed or edited; commit "
                  ".evalspec/ledger.jsonl after each run.", [f"{rel or path}: untracked"])
    versions = view.versions(rel)
    now = "\n".join(e.text for e in inputs.ledger or [])
    fails: list[str] = []
    prev: Version | None = None
    for v in versions:
        if prev is not None and not _is_prefix(prev.text, v.text):
            fails.append(f"the ledger committed in {prev.commit[:12]} was rewritten in {v.commit[:12]} "
                         f"({_first_change(prev.text, v.text)})")
        prev = v
    if prev is not None and not _is_prefix(prev.text, now):
        fails.append(f"the ledger differs from its last commit ({prev.commit[:12]}): "
                     f"{_first_change(prev.text, now)}")
    if fails:
        return _r("ledger_in_git", title, "fail", "Git history shows the ledger of looks was rewritten: looks were "
                  "removed or edited.", fails)
    committed = len(_lines(prev.text)) if prev is not None else 0
    total = len(_lines(now))
    seq = _claim_seq(inputs)
    evidence = [f"{committed} of {total} entries committed" + (f" (last commit {prev.commit[:12]})" if prev else "")]
    if seq is not None and seq > committed:
        return _r("ledger_in_git", title, "warning",
                  f"The committed ledger is intact, but the claim's own look (entry {seq}) is not committed yet; "
                  "commit the ledger so that git anchors this look.", evidence)
    return _r("ledger_in_git", title, "pass",
              "Every committed version of the ledger only appended looks: none was removed or edited, and the "
              "claim's look is committed.", evidence)


def _claim_seq(inputs: AuditInputs) -> int | None:
    integrity = inputs.claim.get("integrity")
    ref = integrity.get("ledger") if isinstance(integrity, dict) else None
    seq = ref.get("seq") if isinstance(ref, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def _lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


def _is_prefix(old: str, new: str) -> bool:
    a, b = _lines(old), _lines(new)
    return len(a) <= len(b) and b[: len(a)] == a


def _first_change(old: str, new: str) -> str:
    a, b = _lines(old), _lines(new)
    for i, line in enumerate(a):
        if i >= len(b):
            return f"entries from line {i + 1} on were removed"
        if b[i] != line:
            return f"line {i + 1} was edited or replaced"
    return "changed"
