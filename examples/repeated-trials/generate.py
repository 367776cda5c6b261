"""Generate results.jsonl for the repeated-trials example (exact vs rephrased, 5 repeats).

THE DATA IS INVENTED. No model was run: each of 40 fictional multiple-choice questions
gets a difficulty, its rephrased form is a little harder, and one model "answers" each
form five times at temperature 0.7 by drawing from a Bernoulli with that probability.
Three attempts have no outcome (a simulated timeout), inside the plan's 5 % limit, so the
run reports them. Seeded, so rerunning writes the same bytes:

    python examples/repeated-trials/generate.py
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np

SEED = 20260501
HERE = Path(__file__).resolve().parent
QUESTIONS = 40
REPEATS = 5


def build() -> list[dict]:
    rng = np.random.default_rng(SEED)
    base_logit = rng.normal(1.2, 1.3, size=QUESTIONS)
    t0 = dt.datetime(2026, 5, 3, 8, 0, tzinfo=dt.timezone.utc)
    rows = []
    k = 0
    for q in range(QUESTIONS):
        for variant, shift in (("exact", 0.0), ("rephrased", -0.6)):
            p = 1 / (1 + np.exp(-(base_logit[q] + shift)))
            for r in range(1, REPEATS + 1):
                k += 1
                rows.append({
                    "candidate": "M",
                    "case_id": f"q{q + 1:03d}-{variant}",
                    "question_id": f"q{q + 1:03d}",
                    "variant": variant,
                    "repeat": r,
                    "correct": bool(rng.random() < p),
                    "seed": int(1000 * r + q),
                    "model_version": "2026-05-01",
                    "timestamp": (t0 + dt.timedelta(seconds=7 * k)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                })
    for i in rng.choice(len(rows), 3, replace=False):
        rows[int(i)]["correct"] = None  # a simulated timeout: no outcome
    return rows


def main() -> None:
    rows = build()
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)
    (HERE / "results.jsonl").write_text(text, encoding="utf-8")
    print(f"wrote {len(rows)} invented rows to {HERE / 'results.jsonl'}")


if __name__ == "__main__":
    main()
