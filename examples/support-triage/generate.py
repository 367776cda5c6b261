"""Generate results.jsonl for the support-triage example (clusters, repeats, critical cases, slices).

THE DATA IS INVENTED. No router was run: 60 fictional business accounts each send 4–7
tickets; each ticket has a difficulty shared by both routers (pairing), each account
shifts the difficulty of its tickets (clustering), router A is better on average, and
each router "triages" each ticket five times by Bernoulli draws (run variation). About
a quarter of tickets are safety-critical and both routers handle those well. A
``handling_quality`` score (0–10) per attempt feeds the clustered-mean analysis. Two
attempts have no outcome (a simulated timeout; counted as failures by the plan).
Seeded, so rerunning writes the same bytes:

    python examples/support-triage/generate.py
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np

SEED = 20261031
HERE = Path(__file__).resolve().parent
ACCOUNTS = 60
REPEATS = 5


def build() -> list[dict]:
    rng = np.random.default_rng(SEED)
    tickets = []
    for acc in range(ACCOUNTS):
        shift = rng.normal(0.0, 0.8)
        language = rng.choice(["en", "de", "fr"], p=[0.7, 0.2, 0.1])
        for t in range(int(rng.integers(4, 8))):
            tickets.append({
                "account": f"acct-{acc + 1:03d}",
                "ticket_id": f"T{len(tickets) + 1:04d}",
                "channel": str(rng.choice(["email", "chat"], p=[0.55, 0.45])),
                "language": str(language),
                "safety_critical": bool(rng.random() < 0.25),
                "logit": 1.3 + shift + rng.normal(0.0, 1.2),
            })
    t0 = dt.datetime(2026, 10, 27, 8, 0, tzinfo=dt.timezone.utc)
    effect = {"A": 1.3, "B": 0.0}
    version = {"A": "2026-10-20", "B": "2026-07-01"}
    rows = []
    k = 0
    for router in ("A", "B"):
        for tk in tickets:
            logit = tk["logit"] + effect[router] + (4.0 if tk["safety_critical"] else 0.0)
            p = 1 / (1 + np.exp(-logit))
            for attempt in range(1, REPEATS + 1):
                k += 1
                ok = bool(rng.random() < p)
                rows.append({
                    "router": router,
                    "ticket_id": tk["ticket_id"],
                    "account": tk["account"],
                    "channel": tk["channel"],
                    "language": tk["language"],
                    "safety_critical": tk["safety_critical"],
                    "attempt": attempt,
                    "correct": ok,
                    "handling_quality": round(float(np.clip(rng.normal(7.5 if ok else 4.0, 1.2), 0, 10)), 1),
                    "model_version": version[router],
                    "grader_version": "rubric-3",
                    "ts": (t0 + dt.timedelta(seconds=11 * k)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                })
    for i in rng.choice(len(rows), 2, replace=False):
        rows[int(i)]["correct"] = None  # a simulated timeout: no outcome
    return rows


def main() -> None:
    rows = build()
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)
    (HERE / "results.jsonl").write_text(text, encoding="utf-8")
    print(f"wrote {len(rows)} invented rows to {HERE / 'results.jsonl'}")


if __name__ == "__main__":
    main()
