"""The claim's ``decision`` entry: typed models (the claim's JSON Schema is generated from them)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evalspec.analyses.contract import Caveat, CriticalStatus, Finding, PrimaryInterval, SequentialStatus
from evalspec.decision.verdicts import VerdictCode

__all__ = ["CriticalThreshold", "DecisionRecord", "EstimandCheck", "MissingSensitivity", "Sensitivity", "Thresholds"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CriticalThreshold(_Model):
    max_rate: float
    confidence_level: float = Field(description="Level of the one-sided upper bound.")


class Thresholds(_Model):
    """The preregistered thresholds the verdict applied."""

    minimum_improvement: float
    margin: float | None
    confidence_level: float = Field(description="Two-sided level of the primary interval.")
    one_sided_level: float = Field(
        description="1 - alpha: the level of each bound. Superiority, non-inferiority and equivalence all "
        "use this one error rate."
    )
    critical_failures: CriticalThreshold | None
    minimum_units: int


class Sensitivity(_Model):
    """The whole decision again on another reading of the same results (docs/decision.md, "The estimand guard")."""

    cases: int = Field(description="Cases that reading changes.")
    candidate_more: int = Field(0, description="equal_attempts: cases where the candidate had more attempts.")
    baseline_more: int = Field(0, description="equal_attempts: cases where the baseline had more attempts.")
    estimate: float = Field(description="Case-weighted difference on that reading.")
    low: float | None = Field(None, description="The primary analysis's interval on that reading (None when it "
                              "was not recomputed).")
    high: float | None = None
    informative: bool | None = None
    verdict: VerdictCode | None = Field(None, description="The verdict the decision reaches on that reading (every "
                                        "rule: critical limit, uninformative interval, table).")
    headline: str | None = Field(None, description="That verdict's headline.")


class MissingSensitivity(Sensitivity):
    """The decision again with the candidate's missing and never-run attempts counted as failures."""

    policy: str = Field(description="The plan's missing-outcome policy the verdict used.")


class EstimandCheck(_Model):
    """The estimand guard: does the primary interval bound the quantity the thresholds are about?

    The thresholds are about the case-weighted difference in pass rate (candidate minus
    baseline, each paired case counting once). The decision computes that difference from the
    case outcomes itself, beside the interval it reads.
    """

    estimand: str = Field(description="What the primary interval bounds, as its analysis states it.")
    case_weighted_estimate: float = Field(description="Case-weighted difference of the paired cases, under the "
                                          "plan's missing-outcome policy.")
    cases: int = Field(description="Paired cases behind it.")
    compared: bool = Field(True, description="False when the interval's estimand is not a function of the outcome "
                           "column (people's labels behind a judge): the estimate is then recorded, not compared.")
    interval_contains: bool = Field(description="The primary interval contains the case-weighted estimate (True "
                                    "when not compared).")
    sign_agrees: bool = Field(description="The primary estimate and the case-weighted estimate do not point in "
                              "opposite directions.")
    missing_as_failures: MissingSensitivity | None = None
    missing_against_candidate: Sensitivity | None = Field(None, description="The decision again with the "
                                                          "candidate's missing outcomes as failures and the "
                                                          "baseline's as passes (the least favourable reading; "
                                                          "a caveat, never a change of verdict).")
    equal_attempts: Sensitivity | None = Field(None, description="The decision again with the candidate and the "
                                               "baseline cut to the same number of attempts per case (rules whose "
                                               "outcome depends on it: best_of_k, majority, majority_answer).")
    stands: bool = Field(description="False when the verdict could not stand on the interval alone and was made "
                         "inconclusive (or caveated) by this check.")
    message: str = Field(description="The check in words.")


class DecisionRecord(_Model):
    """The claim's ``decision`` entry: the verdict, why, and what would change it."""

    verdict: VerdictCode
    label: str = Field(description="The verdict in words (VERDICTS, or a variant that says more: 'Gain shown to "
                       "be below the minimum worth acting on').")
    headline: str
    reasons: list[str] = Field(min_length=1)
    what_would_change: list[str]
    escalation: list[str]
    goal: Literal["superiority", "non_inferiority", "equivalence"]
    thresholds: Thresholds
    primary: PrimaryInterval | None = None
    primary_analysis: int | None = Field(None, description="Index of the analysis that offered the primary interval.")
    caveats: list[Caveat] = Field(
        default_factory=list, description="Caveats that bear on the verdict, printed beside it (page 1)."
    )
    critical: list[CriticalStatus] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    sequential: SequentialStatus | None = None
    estimand: EstimandCheck | None = Field(None, description="The estimand guard (None when the decision was given "
                                           "no case outcomes, as in unit tests of the table).")
    units: int
    unit_name: str
