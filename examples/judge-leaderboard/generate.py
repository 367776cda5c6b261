"""Generate results.jsonl for the judge-leaderboard example (a model judge, a labelled subset, five candidates).

THE DATA IS INVENTED. No model was run and nobody graded anything: 80 fictional support
articles each give 5 questions (400 cases; the article is the cluster). Five summariser
configurations answer every question; a latent difficulty per question and a shift per
article are shared by all candidates (pairing, clustering). The **true** outcome (what a
person would say) is a Bernoulli draw; the **judge** (a model grader) copies it, except
that it passes a share of failed answers, more often for ``v2`` (35 %) than for the others
(8 %) — a judge that likes ``v2``'s style. People graded a simple random 20 % of the
questions (every candidate's answer to each drawn question), drawn before any grading as
``evalspec draw-labels`` draws it (seed 2026; the same function): ``cases.csv`` lists the
questions, ``labelled.txt`` is the draw the plan records (``labelled_subset.file`` and its
SHA-256), and only the drawn questions get a human label. Seeded, so rerunning writes the
same bytes:

    python examples/judge-leaderboard/generate.py
    evalspec draw-labels examples/judge-leaderboard/plan.yaml --cases examples/judge-leaderboard/cases.csv
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from evalspec.label_draw import draw_labelled  # noqa: E402  (the draw `evalspec draw-labels` makes)

SEED = 20261201
DRAW_SEED = 2026
HERE = Path(__file__).resolve().parent
ARTICLES = 80
QUESTIONS = 5
EFFECT = {"current": 0.0, "v2": 0.1, "v3": 0.55, "v4": 0.6, "small": -0.7}
LENIENT = {"current": 0.08, "v2": 0.35, "v3": 0.08, "v4": 0.08, "small": 0.08}
LABELLED_FRACTION = 0.2


def build() -> tuple[list[dict], list[dict], str]:
    rng = np.random.default_rng(SEED)
    cases = []
    for art in range(ARTICLES):
        shift = rng.normal(0.0, 0.7)
        for q in range(QUESTIONS):
            cases.append({"article": f"kb-{art + 1:03d}", "question_id": f"Q{len(cases) + 1:04d}",
                          "logit": 0.6 + shift + rng.normal(0.0, 1.0)})
    draw = draw_labelled([c["question_id"] for c in cases], [c["article"] for c in cases], None,
                         fraction=LABELLED_FRACTION, seed=DRAW_SEED)
    drawn = {i for i, c in enumerate(cases) if c["question_id"] in set(draw.cases)}
    rows = []
    for cand in EFFECT:
        for i, c in enumerate(cases):
            p = 1 / (1 + np.exp(-(c["logit"] + EFFECT[cand])))
            truth = bool(rng.random() < p)
            judge = truth or bool(rng.random() < LENIENT[cand])
            rows.append({"candidate": cand, "question_id": c["question_id"], "article": c["article"],
                         "judge_pass": judge, "human_pass": truth if i in drawn else None,
                         "grader_version": "judge-rubric-2"})
    return rows, cases, draw.text()


def main() -> None:
    rows, cases, draw = build()
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)
    (HERE / "results.jsonl").write_text(text, encoding="utf-8")
    (HERE / "cases.csv").write_text("question_id,article\n" + "".join(f"{c['question_id']},{c['article']}\n"
                                                                        for c in cases), encoding="utf-8")
    (HERE / "labelled.txt").write_text(draw, encoding="utf-8")
    print(f"wrote {len(rows)} invented rows to {HERE / 'results.jsonl'}, the case list and the labelling draw")


if __name__ == "__main__":
    main()
