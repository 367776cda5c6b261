"""The preregistered evaluation plan, as pydantic models.

Each field answers a question the guide "Repeat AI evaluations and report uncertainty honestly" says a plan must
settle *before* results are seen: who decides what, on which population; which cases
are the independent units; how repeats reduce to one outcome; how uncertainty is
computed; what difference is worth acting on; when to stop; which slices are
confirmatory; and which systematic limits no interval covers.

All models forbid unknown keys (``extra="forbid"``) so a misspelt key is an error at
its line. YAML keys equal the Python attribute names. Rules within one section are
declared here in ``__section_rules__`` (with the fields they read); rules across
sections live in :mod:`evalspec.plan.rules`. Both run when the plan validates, and the
loader runs them on the valid parts of a plan that has field errors, so every problem
is reported at once.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterable, Iterator
from typing import Annotated, Any, ClassVar, Literal, Union, cast

from pydantic import (
    BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_validator, model_serializer, model_validator,
)
from pydantic_core import PydanticCustomError

from evalspec.analyses.registry import params_models
from evalspec.analyses.contract import Issue, default_comparison
from evalspec.plan import rules as _rules

Identifier = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z][A-Za-z0-9_.\-]*$",
        max_length=100,
        description="A name: starts with a letter; letters, digits, '_', '-', '.'.",
    ),
]
ColumnName = Annotated[str, Field(min_length=1, max_length=200, description="A column of the results table.")]
Fraction = Annotated[float, Field(ge=0.0, le=1.0)]
ConfidenceLevel = Annotated[float, Field(gt=0.0, lt=1.0, description="Confidence level in (0, 1).")]


SectionRule = tuple[tuple[str, ...], Callable[[Any], Iterable[Issue]]]


class _Strict(BaseModel):
    """Base of every plan model: unknown keys are errors; values are frozen and stripped.

    ``__section_rules__`` lists rules *within* one section as ``(fields read, rule)``;
    ``rule(section)`` yields :class:`~evalspec.analyses.contract.Issue` objects with paths
    relative to the section. They run after the fields validate, and the loader also
    runs them when an unrelated field of the section is broken (pydantic alone would
    then skip them), so every problem is reported at once.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)
    __section_rules__: ClassVar[tuple[SectionRule, ...]] = ()

    @model_validator(mode="after")
    def _section_checks(self) -> Any:
        issues = [issue for _, rule in self.__section_rules__ for issue in rule(self)]
        if issues:
            raise _rule_error(*issues)
        return self


def _rule_error(*issues: Issue) -> PydanticCustomError:
    """A ``plan_rule`` error carrying one or more :class:`~evalspec.analyses.contract.Issue`.

    Paths in the issues are relative to the model that raises it; the loader turns
    each issue into its own located diagnostic (pydantic alone would keep one message).
    """
    summary = "; ".join(f"{'.'.join(map(str, i.path))}: {i.message}" for i in issues)
    return PydanticCustomError("plan_rule", "{summary}", {"summary": summary, "issues": list(issues)})


def _drop_unset_additions(data: Any, names: tuple[str, ...]) -> Any:
    """Leave out fields added after plan format 1 shipped while they hold their empty default.

    The plan hash is taken over the dump with defaults filled in; dropping these keys
    when unused keeps the hash (and so every existing lock) of a plan that does not use
    them exactly as before.
    """
    if isinstance(data, dict):
        for name in names:
            if name in data and data[name] in (None, False, {}, []):
                del data[name]
    return data


# -- rules within one section (see _Strict.__section_rules__) -------------------------------


def _outcome_rules(o: Any) -> Iterator[Issue]:
    if o.type == "score" and o.pass_threshold is None:
        yield Issue(("pass_threshold",), "a score outcome needs pass_threshold", "a score >= it passes")
    if o.type == "binary" and o.pass_threshold is not None:
        yield Issue(("pass_threshold",), "pass_threshold applies only when type is 'score'")


def _attempts_rules(a: Any) -> Iterator[Issue]:
    if a.rule == "majority_answer":
        for name in ("answer", "target"):
            if getattr(a, name) is None:
                yield Issue((name,), f"rule majority_answer needs the {name} column",
                                   "answer = the answer each attempt gave; target = the correct answer")
    else:
        for name in ("answer", "target"):
            if getattr(a, name) is not None:
                yield Issue((name,), f"{name} applies only to rule majority_answer (rule is {a.rule!r})")
    if a.rule in ("best_of_k", "pass_at_k", "pass_hat_k"):
        if a.k is None:
            yield Issue(("k",), f"rule {a.rule} needs k", "k = how many of the first attempts count"
                               if a.rule == "best_of_k" else "k = the number of attempts the estimate is about")
        elif a.k > a.repeats:
            yield Issue(("k",), f"k = {a.k} exceeds the planned repeats ({a.repeats})")
    elif a.k is not None:
        yield Issue(("k",), f"k applies only to rules best_of_k, pass_at_k and pass_hat_k (rule is {a.rule!r})")


def _data_rules(d: Any) -> Iterator[Issue]:
    if d.format in ("auto", "jsonl", "csv", "parquet", "case_table"):
        logs = "tool logs (format inspect, lm_eval, promptfoo, openai_evals, helm or every_eval_ever)"
        if d.select is not None:
            yield Issue(("select",), f"select applies to {logs}, not to format {d.format!r}",
                               "remove it, or set data.format to the tool that wrote the logs")
        if d.candidate_from:
            yield Issue(("candidate_from",), f"candidate_from applies to {logs}, not to format {d.format!r}",
                               "remove it, or name the candidate column in data.columns.candidate")
        if d.allow_partial:
            yield Issue(("allow_partial",), f"allow_partial applies to {logs}, not to format {d.format!r}",
                               "remove it")


def _power_rules(p: Any) -> Iterator[Issue]:
    if p.cluster_size_cv is not None and p.cluster_size is None:
        yield Issue(("cluster_size_cv",), "cluster_size_cv needs cluster_size (the average cases per cluster)",
                    "add power.cluster_size, or remove cluster_size_cv")


def _decision_rules(d: Any) -> Iterator[Issue]:
    if d.goal in ("non_inferiority", "equivalence") and d.margin is None:
        yield Issue(("margin",), f"goal {d.goal} needs a margin", "a positive difference in pass rate, e.g. 0.02")


def _stopping_rules(st: Any) -> Iterator[Issue]:
    if st.rule == "fixed" and st.looks != 1:
        yield Issue(("looks",), f"a fixed design has exactly one look (got {st.looks})",
                           "use rule: sequential for planned interim looks")
    if st.rule == "sequential" and st.looks < 2:
        yield Issue(("looks",), "a sequential design plans at least 2 looks", "or use rule: fixed")


class Dataset(_Strict):
    """What the cases are (reported under 'what the number covers')."""

    name: str = Field(description="Dataset name, e.g. 'policy-qa'.")
    split: str | None = Field(None, description="Split or sample, e.g. 'test' or 'Q3 2026 traffic sample'.")
    version: str | None = Field(None, description="Dataset version or content hash.")


class Columns(_Strict):
    """Where each role lives in the results table (column names, after reading).

    ``units.case`` and ``units.cluster`` name the case and cluster columns; this block
    names the rest. Optional roles may be omitted when the data has no such column.
    """

    candidate: ColumnName = Field("candidate", description="Column naming the candidate (a key of `candidates`).")
    repeat: ColumnName | None = Field("repeat", description="Column numbering repeats of a case (1, 2, ...); null if one attempt.")
    outcome: ColumnName = Field("outcome", description="Pass/fail (true/false, 1/0, pass/fail, C/I, "
                                "correct/incorrect, yes/no) or a numeric score.")
    model_version: ColumnName | None = Field(None, description="Column with the model version actually served.")
    timestamp: ColumnName | None = Field(None, description="Column with the run time of each row (ISO 8601).")
    critical: ColumnName | None = Field(None, description="Column flagging critical cases (truthy = critical).")


class Outcome(_Strict):
    """How to read the outcome column."""

    type: Literal["binary", "score"] = Field(
        "binary", description="'binary': pass/fail values; 'score': a number compared with `pass_threshold`."
    )
    pass_threshold: float | None = Field(
        None, description="For scores: a score >= this value passes. Required when type is 'score'."
    )

    __section_rules__ = ((("type", "pass_threshold"), _outcome_rules),)


CandidateField = Annotated[str, Field(
    pattern=r"^[A-Za-z_][A-Za-z0-9_-]*(\.[^\s.][^\s]{0,199})?$", max_length=220,
    description="A log field: a name (model, solver, tags, provider, prompt...) or <block>.<key> (task_args.prompt).")]


class Select(_Strict):
    """Which part of an evaluation tool's log is the outcome, when the log holds several."""

    task: str | None = Field(None, description="Task name (inspect_ai task, lm-evaluation-harness task).")
    scorer: str | None = Field(None, description="inspect_ai scorer whose value is the outcome.")
    metric: str | None = Field(
        None, description="lm-evaluation-harness metric (acc, exact_match...); the key of a dict-valued inspect_ai "
        "score; a promptfoo named score.",
    )
    filter: str | None = Field(None, description="lm-evaluation-harness filter (none, first, maj@3...).")
    case_field: str | None = Field(
        None, description="Where the case id comes from: a field of the lm-evaluation-harness document (e.g. id); "
        "for promptfoo description, vars.<name>, metadata.<name> or testIdx.",
    )


class Data(_Strict):
    """Where the per-case results are and how to read them."""

    results: str | list[str] = Field(
        description="Path, glob or folder (or a list), relative to the plan file, of the results files or the "
        "evaluation tool's logs; a folder of tables may be Hive-partitioned (model=A/part-0.parquet), and an "
        "object-store URI (s3://bucket/prefix/, gs://..., a glob) is read where it is."
    )
    format: Literal["auto", "jsonl", "csv", "parquet", "inspect", "lm_eval", "promptfoo", "openai_evals", "helm",
                    "every_eval_ever", "case_table"] = Field(
        "auto", description="File format; 'auto' decides by extension; inspect, lm_eval, promptfoo, openai_evals, helm "
        "and every_eval_ever read those tools' files unchanged (inspect_ai, lm-evaluation-harness, promptfoo, "
        "openai/evals record logs, HELM run folders, Every Eval Ever instance-level records); 'case_table' reads a "
        "pre-aggregated table, one row per candidate and case (`evalspec reduce-sql` computes it where the rows are).",
    )
    columns: Columns = Field(default_factory=Columns, description="Column of each role.")
    outcome: Outcome = Field(default_factory=Outcome, description="How to read outcomes.")
    dataset: Dataset | None = Field(None, description="Dataset name, split and version.")
    select: Select | None = Field(
        None, description="For tool logs: the task, scorer, metric, filter and case id field that make the outcome.",
    )
    candidate_from: list[CandidateField] | None = Field(
        None, description="For tool logs: the log fields whose values name each candidate, joined with '|' (model, "
        "task_args.<name>, solver, metadata.<name>, tags for inspect_ai; model, model_args.<name>, gen_kwargs.<name> "
        "for lm-evaluation-harness; provider, prompt, prompt_file, prompt_id for promptfoo). Use it when several "
        "logs of one model differ in a prompt or solver; then map the names with candidate_names.",
        min_length=1, max_length=8,
    )
    candidate_names: dict[str, Identifier] = Field(
        default_factory=dict,
        description="Candidate names as the results write them (e.g. 'coinflip/strong') -> keys of `candidates`.",
    )
    missing_values: list[str | int | float] = Field(
        default_factory=list,
        description="Raw outcome values that mean 'no outcome' (e.g. ERROR, timeout); they follow the plan's "
        "missing-outcome policy and are counted.",
    )
    allow_partial: bool = Field(
        False, description="Read the completed samples of a tool run that stopped early (status error or "
        "cancelled), flagged as partial, instead of refusing it.",
    )
    grader: Literal["model", "people", "program"] | None = Field(
        None, description="Who graded the outcomes: 'model' (an LLM judge), 'people' or 'program' (an exact check). "
        "With 'model' and no analysis measuring the grader against people's labels (judge_corrected), the report "
        "states it as a limit; tool logs of model-graded scorers say so themselves.",
    )

    __section_rules__ = ((("format", "select", "allow_partial", "candidate_from"), _data_rules),)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _drop_unset_additions(handler(self), ("select", "candidate_from", "candidate_names", "missing_values",
                                                     "allow_partial", "grader"))

    @field_validator("results")
    @classmethod
    def _nonempty(cls, v: str | list[str]) -> str | list[str]:
        items = [v] if isinstance(v, str) else v
        if not items or any(not s.strip() for s in items):
            raise ValueError("must name at least one file or glob, none empty")
        return v


class Candidate(_Strict):
    """One system under evaluation."""

    model: str = Field(description="Model identifier as the provider names it, e.g. 'vendor/model-x'.")
    version: str | list[str] | None = Field(
        None,
        description="Expected model version; a list declares several versions that may be pooled knowingly.",
    )
    settings: dict[str, Any] = Field(default_factory=dict, description="Generation settings (temperature, ...).")
    description: str | None = Field(None, description="Free text.")


class Units(_Strict):
    """The unit of analysis: cases nested in clusters (the independent resampling unit)."""

    case: ColumnName = Field(description="Column identifying a case; repeats share it.")
    cluster: ColumnName | None = Field(
        None,
        description="Column grouping cases that are not independent (same document, customer...). "
        "The cluster is then the resampling unit.",
    )


class Attempts(_Strict):
    """How repeats of a case reduce to one case outcome; applied identically to every candidate."""

    repeats: int = Field(1, ge=1, le=10_000, description="Planned repeats per case.")
    rule: Literal["first", "best_of_k", "majority", "majority_answer", "mean", "pass_at_k", "pass_hat_k"] = Field(
        "first",
        description="'first': first attempt; 'best_of_k': pass if any of the first k passes (later attempts are "
        "discarded); 'majority': pass if more than half pass (a tie fails); 'majority_answer': the most common "
        "answer across the attempts is graded against the target (maj@k, self-consistency; a tie goes to the answer "
        "given first); 'mean': fraction of repeats passing; 'pass_at_k': chance that at least one of k attempts "
        "passes, estimated from all repeats (Chen et al. 2021); 'pass_hat_k': chance that all k attempts pass "
        "(pass^k), from all repeats.",
    )
    k: int | None = Field(None, ge=1, description="For best_of_k: how many attempts count; for pass_at_k / "
                          "pass_hat_k: the k of pass@k / pass^k.")
    answer: ColumnName | None = Field(None, description="For majority_answer: the column with each attempt's answer.")
    target: ColumnName | None = Field(None, description="For majority_answer: the column with the correct answer.")

    __section_rules__ = ((("rule", "repeats", "k", "answer", "target"), _attempts_rules),)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _drop_unset_additions(handler(self), ("answer", "target"))


class Missing(_Strict):
    """What a missing outcome (error, timeout, no score) counts as."""

    policy: Literal["count_as_fail", "exclude", "error"] = Field(
        "count_as_fail",
        description="'count_as_fail': a missing outcome is a failure; 'exclude': drop the attempt and report it; "
        "'error': refuse to run.",
    )
    max_fraction: Fraction = Field(
        0.05, description="Largest tolerated fraction of missing outcomes per candidate; above it the run refuses."
    )


class CriticalFailureLimit(_Strict):
    """A non-negotiable limit on failures of critical cases, fixed before the test."""

    max_rate: float = Field(
        gt=0.0, le=1.0,
        description="Largest acceptable critical-failure rate, above 0 (no bound can fall below 0); the exact "
                    "one-sided upper bound must stay below it."
    )
    confidence_level: ConfidenceLevel = Field(0.95, description="Level of the one-sided upper bound.")


#: The verdict codes a plan may list as acceptable to a gate (the same codes as
#: :data:`evalspec.decision.VERDICTS`, which a test keeps equal; the plan layer sits below the decision).
AcceptableVerdict = Literal[
    "worth_acting_on", "too_small", "no_material_gain", "inconclusive", "regression", "non_inferior",
    "not_non_inferior", "equivalent", "not_equivalent", "blocked", "too_few_units", "no_comparison",
]


class Decision(_Strict):
    """The preregistered decision rule (the guide's 'Make the decision threshold explicit')."""

    goal: Literal["superiority", "non_inferiority", "equivalence"] = Field(
        "superiority", description="What the candidate must show against the baseline."
    )
    minimum_improvement: Fraction = Field(
        0.0, description="Smallest difference in pass rate worth acting on (superiority), e.g. 0.03 = 3 points."
    )
    margin: Annotated[float, Field(gt=0.0, le=1.0)] | None = Field(
        None, description="Non-inferiority or equivalence margin in pass rate, e.g. 0.02."
    )
    confidence_level: ConfidenceLevel = Field(
        0.95, description="Two-sided level of the primary interval the decision reads; each bound is one-sided at "
        "1 - (1 - level)/2 (97.5 % for 0.95), the one error rate of superiority, non-inferiority and equivalence."
    )
    critical_failures: CriticalFailureLimit | None = Field(
        None, description="Limit on critical-case failures; exceeding it, or failing to rule it out, blocks."
    )
    minimum_units: int = Field(
        10, ge=1, description="Fewest independent units (clusters if declared, else cases) to reach any verdict."
    )
    acceptable: list[AcceptableVerdict] | None = Field(
        None, min_length=1, description="Verdicts a CI gate accepts (`evalspec gate` exits 0 for them when the "
        "process checks pass), e.g. [worth_acting_on, too_small]; unset: the gate needs --accept."
    )

    __section_rules__ = ((("goal", "margin"), _decision_rules),)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _drop_unset_additions(handler(self), ("acceptable",))


class UnitOrder(_Strict):
    """The preregistered random order in which the harness evaluates the cases (``evalspec order`` writes it)."""

    file: str = Field(description="The order file, relative to the plan: one case per line, in the order to run "
                      "them (clusters kept together).")
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] = Field(
        description="SHA-256 of the order file as written: the plan's hash (and its lock) covers the order itself.")
    seed: int = Field(description="The seed the order was drawn with.")

    @field_validator("file")
    @classmethod
    def _beside_the_plan(cls, v: str) -> str:
        import pathlib

        parts = pathlib.PurePosixPath(v.replace("\\", "/")).parts
        if not v.strip() or v.startswith(("/", "\\")) or ":" in v or ".." in parts:
            raise ValueError("must be a file inside the plan's folder (a relative path without '..')")
        return v


class Stopping(_Strict):
    """When data collection stops; recorded so repeated looks are visible."""

    rule: Literal["fixed", "sequential"] = Field("fixed", description="Fixed sample or planned sequential looks.")
    max_units: int | None = Field(None, ge=1, description="Most independent units to collect.")
    decision_date: _dt.date | None = Field(None, description="Date (YYYY-MM-DD) by which the decision is made.")
    looks: int = Field(1, ge=1, le=1000, description="Planned looks at the data (1 for a fixed design).")
    order: UnitOrder | None = Field(
        None, description="The preregistered random order of the cases (written by `evalspec order`). A sequential "
        "design needs it: its confidence sequence assumes each new unit is a random draw, and at each look the "
        "analysed units must be the first ones of this order.")

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _drop_unset_additions(handler(self), ("order",))

    @field_validator("decision_date", mode="before")
    @classmethod
    def _date_only(cls, v: Any) -> Any:
        if isinstance(v, _dt.datetime):
            raise ValueError("must be a date (YYYY-MM-DD), not a date-time")
        if isinstance(v, str):
            try:
                return _dt.date.fromisoformat(v.strip())
            except ValueError:
                raise ValueError("must be a date written YYYY-MM-DD") from None
        return v

    __section_rules__ = ((("rule", "looks"), _stopping_rules),)


class PowerAssumptions(_Strict):
    """Assumptions for ``evalspec power`` before any data (Miller 2024, "Adding Error Bars to Evals", eq. 9-10).

    Set them from earlier evaluations or a pilot; ``evalspec power --pilot FILE`` estimates
    them from pilot results instead.
    """

    omega2: Annotated[float, Field(gt=0.0, le=1.0)] | None = Field(
        None, description="Variance across cases of the true per-case difference in pass rate (omega^2), e.g. 0.111."
    )
    sigma2_candidate: Fraction = Field(
        0.0, description="Run-to-run variance of the candidate's outcome within a case (sigma_A^2); 0 if deterministic."
    )
    sigma2_baseline: Fraction = Field(0.0, description="Run-to-run variance of the baseline's outcome within a case.")
    icc: Fraction = Field(0.0, description="Intra-cluster correlation of per-case differences (with units.cluster).")
    cluster_size: Annotated[float, Field(ge=1.0)] | None = Field(
        None, description="Average cases per cluster (with units.cluster); the design effect is 1 + (m - 1) * icc."
    )
    cluster_size_cv: Annotated[float, Field(ge=0.0, le=10.0)] | None = Field(
        None, description="How unequal the cluster sizes are: their coefficient of variation (standard deviation / "
        "mean; 0 = equal, about 1 = as spread as a geometric distribution), with cluster_size. Set, `evalspec power` "
        "simulates lognormal sizes with this spread through the interval evalspec applies (seeded); unset, the "
        "sizes are taken as equal, which overstates power when they are not."
    )

    __section_rules__ = ((("cluster_size", "cluster_size_cv"), _power_rules),)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _drop_unset_additions(handler(self), ("cluster_size_cv",))


class Slice(_Strict):
    """A declared (confirmatory) slice."""

    name: Identifier = Field(description="Slice name used in reports.")
    column: ColumnName = Field(description="Results column whose values define the slice groups.")
    values: list[str | int | bool] | None = Field(None, description="Groups to report; default all values found.")


def _analysis_union() -> Any:
    """The discriminated union of every registered kind's parameter model (``kind`` selects one)."""
    models = tuple(params_models().values())
    if len(models) == 1:
        return models[0]
    return Annotated[Union[models], Field(discriminator="kind")]  # noqa: UP007


AnalysisSpec = _analysis_union()


class Plan(_Strict):
    """A preregistered evaluation plan (``plan.yaml``)."""

    evalspec: Literal[1] = Field(description="Plan format version; currently 1.")
    id: Identifier = Field(description="Stable identifier of this evaluation, e.g. 'policy-qa-migration'.")
    title: str = Field(description="Human title.")
    question: str = Field(description="The decision question, e.g. 'Should production move from B to A?'.")
    decision_owner: str = Field(description="Who takes the decision.")
    population: str = Field(description="Target population the cases are meant to represent.")
    data: Data = Field(description="Where the per-case results are and how to read them.")
    candidates: dict[Identifier, Candidate] = Field(min_length=1, description="Name -> candidate.")
    baseline: Identifier | None = Field(None, description="The candidate others are compared with.")
    units: Units = Field(description="The case column and the cluster column, the independent resampling unit.")
    attempts: Attempts = Field(default_factory=Attempts, description="Planned repeats per case and the rule that reduces them.")
    missing: Missing = Field(default_factory=Missing, description="What a missing outcome counts as, and how many are tolerated.")
    analyses: list[AnalysisSpec] = Field(min_length=1, description="Analyses to run, in order.")  # type: ignore[valid-type]
    decision: Decision = Field(default_factory=Decision, description="The preregistered decision rule: goal, thresholds, limits.")
    stopping: Stopping = Field(default_factory=Stopping, description="When data collection stops: units, date, planned looks.")
    slices: list[Slice] = Field(default_factory=list, description="Declared (confirmatory) slices.")
    systematic_limits: list[str] = Field(
        default_factory=list,
        description="Known limits no interval covers (language range, label noise, provider alias...).",
    )
    record: list[ColumnName] = Field(
        default_factory=list,
        description="Metadata every results row must carry: a role of data.columns (model_version, timestamp) "
        "or a results column (prompt_version, grader_version, seed...).",
    )
    power: PowerAssumptions | None = Field(
        None, description="Assumptions for `evalspec power` (sample size before any data); optional."
    )
    period: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$", max_length=64)] | None = Field(
        None, description="For a recurring evaluation: the period this plan covers, e.g. '2026-W49'. One plan file "
        "per period, each locked before its data: a new period is a new look budget, and the audit fails a claim "
        "whose data an earlier period of the same id already analysed."
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _drop_unset_additions(handler(self), ("power", "period"))

    @model_validator(mode="after")
    def _cross_checks(self) -> Plan:
        issues = _rules.check(_rules.PlanView.from_plan(self))
        if issues:
            raise _rule_error(*issues)
        return self

    # -- convenience ------------------------------------------------------------------
    def primary_comparison(self) -> tuple[str, str] | None:
        """(candidate, baseline) of the primary comparison (the analysis with ``primary: true``), if any."""
        for a in self.analyses:
            a = cast(Any, a)
            if _rules.offers_primary(a) and "compare" in type(a).model_fields:
                if a.compare is not None:
                    return tuple(a.compare)  # type: ignore[return-value]
                return default_comparison(self.candidates, self.baseline)
        return None
