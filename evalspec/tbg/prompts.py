"""Prompt sets for background-temperature runs: JSONL, one prompt a line.

Each line is an object with an ``id`` (string or integer, unique) and either ``text`` (a
plain prompt) or ``messages`` (a chat: a list of ``{"role": ..., "content": ...}``).
Mistakes are reported at their line (exit 2).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalspec.errors import InputError

__all__ = ["Prompt", "prompts_digest", "read_prompts"]


@dataclass(frozen=True)
class Prompt:
    """One prompt: its id, and its text or chat messages."""

    id: str
    text: str | None = None
    messages: tuple[tuple[str, str], ...] | None = None

    def chat(self) -> list[dict[str, str]]:
        """The prompt as chat messages (a plain text becomes one user message)."""
        if self.messages is not None:
            return [{"role": r, "content": c} for r, c in self.messages]
        return [{"role": "user", "content": self.text or ""}]

    def to_json(self) -> dict[str, Any]:
        if self.messages is not None:
            return {"id": self.id, "messages": self.chat()}
        return {"id": self.id, "text": self.text}


def read_prompts(path: Path | str) -> list[Prompt]:
    """Read a prompts JSONL file; every problem names the file and line."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"{path}: cannot read the prompts file: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: the prompts file is not UTF-8 text") from None
    prompts: list[Prompt] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}: not valid JSON ({exc.msg}); each line must be one object "
                             '{"id": ..., "text": ...}') from None
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected an object with id and text or messages (got {type(obj).__name__})")
        pid = obj.get("id")
        if not isinstance(pid, (str, int)) or isinstance(pid, bool) or str(pid) == "":
            raise InputError(f"{where}: id: missing or not a string/integer (got {pid!r})")
        pid = str(pid)
        if pid in seen:
            raise InputError(f"{where}: id: {pid!r} already used at line {seen[pid]}; ids must be unique")
        seen[pid] = lineno
        text, messages = obj.get("text"), obj.get("messages")
        if (text is None) == (messages is None):
            raise InputError(f"{where}: give exactly one of text or messages")
        if text is not None:
            if not isinstance(text, str):
                raise InputError(f"{where}: text: must be a string (got {type(text).__name__})")
            prompts.append(Prompt(id=pid, text=text))
            continue
        if not isinstance(messages, list) or not messages:
            raise InputError(f"{where}: messages: must be a non-empty list of {{role, content}} objects")
        pairs = []
        for j, m in enumerate(messages):
            if not (isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)):
                raise InputError(f"{where}: messages[{j}]: must be an object with string role and content (got {m!r})")
            pairs.append((m["role"], m["content"]))
        prompts.append(Prompt(id=pid, messages=tuple(pairs)))
    if not prompts:
        raise InputError(f"{path}: no prompts (the file is empty)")
    return prompts


def prompts_digest(prompts: list[Prompt]) -> str:
    """SHA-256 of the prompts' canonical JSON (identifies the set in the manifest)."""
    text = json.dumps([p.to_json() for p in prompts], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
