"""Generate results.jsonl for the policy-migration example (the worked example of the guide "Repeat AI evaluations and report uncertainty honestly").

THE DATA IS INVENTED. Nothing here was measured on any model: the rows are constructed
to reproduce the guide's fictional numbers exactly — 100 policy questions, configuration
A passes 82 and B passes 78, 8 cases where only A passes and 4 where only B passes (a
paired difference of 4 points) — spread over 20 fictional policy documents (5 questions
each), with four topics, 12 critical questions (both configurations fail the same one),
timestamps and model versions. Seeded, so rerunning writes the same bytes:

    python examples/policy-migration/generate.py
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np

SEED = 20261001
HERE = Path(__file__).resolve().parent
TOPICS = ["refunds", "shipping", "warranty", "privacy"]


def build() -> list[dict]:
    rng = np.random.default_rng(SEED)
    n = 100
    # joint outcomes: a both pass, b A only, c B only, d neither (the guide: 74, 8, 4, 14)
    cells = np.array(["a"] * 74 + ["b"] * 8 + ["c"] * 4 + ["d"] * 14)
    cells = cells[rng.permutation(n)]
    a_pass = np.isin(cells, ["a", "b"])
    b_pass = np.isin(cells, ["a", "c"])
    # 12 critical questions: 11 that both pass and one that both fail
    both = np.flatnonzero(cells == "a")
    neither = np.flatnonzero(cells == "d")
    critical = np.zeros(n, dtype=bool)
    critical[rng.choice(both, 11, replace=False)] = True
    critical[rng.choice(neither, 1)] = True
    start = {"A": dt.datetime(2026, 10, 2, 9, 0, tzinfo=dt.timezone.utc),
             "B": dt.datetime(2026, 10, 2, 13, 0, tzinfo=dt.timezone.utc)}
    version = {"A": "2026-10-01", "B": "2026-06-15"}
    rows = []
    for cand, passed in (("A", a_pass), ("B", b_pass)):
        for i in range(n):
            doc = i // 5
            t = start[cand] + dt.timedelta(seconds=int(37 * i + rng.integers(0, 20)))
            rows.append({
                "candidate": cand,
                "case_id": f"q{i + 1:03d}",
                "policy_doc": f"doc-{doc + 1:02d}",
                "topic": TOPICS[doc % 4],
                "repeat": 1,
                "passed": bool(passed[i]),
                "critical": bool(critical[i]),
                "model_version": version[cand],
                "timestamp": t.strftime("%Y-%m-%dT%H:%M:%SZ"),
            })
    return rows


def main() -> None:
    rows = build()
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)
    (HERE / "results.jsonl").write_text(text, encoding="utf-8")
    print(f"wrote {len(rows)} invented rows to {HERE / 'results.jsonl'}")


if __name__ == "__main__":
    main()
