"""Generate results.jsonl for the repeated-trials example (exact vs rephrased, 100 trials each).

THE DATA IS INVENTED (simulated). No model was run. 100 fictional multiple-choice questions each get a
probability of a correct answer in each form, drawn from the hierarchical model of
"Characterizing LLM performance via a Bayesian lens": as written ("exact") from
Beta(mu 0.78, kappa 1.0), rephrased from Beta(mu 0.68, kappa 2.5). The two forms of one question
are tied (a Gaussian copula with correlation 0.85: a hard question stays hard), so rephrasing
makes questions harder on average, more alike in difficulty and answers less consistent, the
pattern the paper reports for several models. Each question is then "answered" 100 times per
form by Bernoulli draws. Three attempts have no outcome (a simulated timeout), inside the
plan's 5 % limit. Seeded, so rerunning writes the same bytes:

    python examples/repeated-trials/generate.py
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np

SEED = 20260501
HERE = Path(__file__).resolve().parent
QUESTIONS = 100
TRIALS = 100


def build() -> list[dict]:
    from scipy import stats

    rng = np.random.default_rng(SEED)
    u = rng.standard_normal(QUESTIONS)
    v = 0.85 * u + np.sqrt(1 - 0.85**2) * rng.standard_normal(QUESTIONS)
    p_exact = stats.beta(0.78 * 1.0, 0.22 * 1.0).ppf(stats.norm.cdf(u))
    p_reph = stats.beta(0.68 * 2.5, 0.32 * 2.5).ppf(stats.norm.cdf(v))
    t0 = dt.datetime(2026, 5, 3, 8, 0, tzinfo=dt.timezone.utc)
    rows = []
    k = 0
    for variant, probs in (("exact", p_exact), ("rephrased", p_reph)):
        for q in range(QUESTIONS):
            correct = rng.random(TRIALS) < probs[q]
            for r in range(TRIALS):
                k += 1
                rows.append({
                    "candidate": variant,
                    "question_id": f"q{q + 1:03d}",
                    "trial": r + 1,
                    "correct": int(correct[r]),
                    "model_version": "2026-05-01",
                    "timestamp": (t0 + dt.timedelta(seconds=2 * k)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                })
    for i in rng.choice(len(rows), 3, replace=False):
        rows[int(i)]["correct"] = None  # a simulated timeout: no outcome
    return rows


def main() -> None:
    rows = build()
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows)
    (HERE / "results.jsonl").write_text(text, encoding="utf-8")
    print(f"wrote {len(rows)} simulated rows to {HERE / 'results.jsonl'}")


if __name__ == "__main__":
    main()
