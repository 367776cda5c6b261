"""Which outcomes a model graded: the fact tool logs show, and the systematic limit it implies.

A verdict on a model grader's labels (an LLM judge) is a verdict on the judge unless people
labelled a random subset and an analysis measures the judge against them (``judge_corrected``).
The logs show when the outcome came from a model grader:

* inspect_ai: the outcome's scorer is one of its model-graded scorers (``model_graded_qa``,
  ``model_graded_fact``, or a scorer whose name says ``model_graded``);
* promptfoo: an assertion of a model-graded type (``llm-rubric``, ``model-graded-closedqa``,
  ``factuality``, ``g-eval``...).

Each adapter records the names it found in its provenance as ``graded_by_model`` (a list; empty
when none); the plan can also say so itself (``data.grader: model``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["PROMPTFOO_MODEL_ASSERTIONS", "grader_limits", "inspect_model_scorer", "promptfoo_model_assertions"]

#: promptfoo assertion types graded by a model (promptfoo's "model-graded metrics").
PROMPTFOO_MODEL_ASSERTIONS = frozenset({
    "llm-rubric", "model-graded-closedqa", "model-graded-factuality", "factuality", "g-eval", "select-best",
    "answer-relevance", "context-faithfulness", "context-recall", "context-relevance", "search-rubric",
})


def inspect_model_scorer(scorer: str | None) -> list[str]:
    """``[scorer]`` when inspect_ai's scorer ``scorer`` is model-graded, else ``[]``."""
    return [scorer] if isinstance(scorer, str) and "model_graded" in scorer else []


def promptfoo_model_assertions(results: list[Any]) -> list[str]:
    """The model-graded assertion types used by promptfoo ``results`` (sorted, each once)."""
    found: set[str] = set()

    def visit(asserts: Any) -> None:
        for a in asserts if isinstance(asserts, list) else []:
            if not isinstance(a, dict):
                continue
            kind = a.get("type")
            if isinstance(kind, str) and kind.removeprefix("not-") in PROMPTFOO_MODEL_ASSERTIONS:
                found.add(kind)
            visit(a.get("assert"))  # assert-sets nest their assertions

    for r in results:
        if not isinstance(r, dict):
            continue
        test = r.get("testCase")
        visit(test.get("assert") if isinstance(test, dict) else None)
        grading = r.get("gradingResult")
        comps = grading.get("componentResults") if isinstance(grading, dict) else None
        visit([c.get("assertion") for c in comps if isinstance(c, dict)] if isinstance(comps, list) else None)
    return sorted(found)


def grader_limits(plan: Any, raws: list[Any]) -> list[dict[str, str]]:
    """The one systematic limit of an unvalidated model grader, as a ``systematic_limits.detected`` entry.

    Said when the outcomes come from a model grader (the plan's ``data.grader: model``, or a log's
    ``graded_by_model``) and no analysis of the plan measures the grader against human labels of a
    labelled subset (an analysis with a ``human_label``).
    """
    if any(getattr(a, "human_label", None) for a in getattr(plan, "analyses", []) or []):
        return []
    names: list[str] = []
    for r in raws:
        prov = getattr(r, "provenance", None)
        if isinstance(prov, dict):
            names += [str(n) for n in prov.get("graded_by_model") or [] if str(n) not in names]
    declared = getattr(getattr(plan, "data", None), "grader", None) == "model"
    if not names and not declared:
        return []
    how = f" ({', '.join(names)})" if names else ""
    return [{"code": "unvalidated_judge",
             "message": f"The outcomes were graded by a model{how}, and no one checked its grades against people's on "
             "a random sample of cases: the verdict treats the grader's labels as the truth, and a grader that "
             "favours one candidate moves it."}]
