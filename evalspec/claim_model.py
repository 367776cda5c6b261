"""The claim record as a pydantic model: the contract between ``run`` and ``report``/``audit``.

Each analysis record is typed by its kind's models from the registry (a discriminated union
on ``kind``: ``params`` by the kind's parameter model, ``result`` by its result model), so
the claim's JSON Schema (``evalspec schema --claim``, checked in as
``schemas/claim.schema.json``) is generated, never written by hand, and a result's shape is
written once: in its kind's module.

A claim of another ``claim_format`` is refused before validation (see
:func:`evalspec.report.load.load_claim`); a claim whose inner types are wrong (hand-edited)
gets a located message naming the key path.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel, ConfigDict, Discriminator, Field, SerializerFunctionWrapHandler, Tag, create_model, model_serializer,
)

from evalspec.analyses.contract import Caveat, Offers, SeedUse

__all__ = ["CLAIM_FORMAT", "ProcessRecord", "claim_model", "kind_info", "claim_schema", "claim_schema_text", "record_model"]

#: Version of the claim's shape. 2: typed analysis records (result, caveats, seeds, offers),
#: the typed decision record, seeds used and declared-but-unused.
CLAIM_FORMAT = 2


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Note(_Strict):
    """A deviation from the plan or a detected systematic limit."""

    code: str
    message: str


class LockHistory(_Strict):
    """An earlier lock, replaced with ``--force``: its hash and when it was made."""

    hash: str | None = None
    locked_at: str | None = None


class LockInfo(_Strict):
    path: str | None = None
    exists: bool
    matches: bool | None = None
    locked_at: str | None = None
    git_commit: str | None = None
    history: list[LockHistory] = Field(
        default_factory=list, description="Earlier locks this one replaced with `evalspec lock --force`, oldest first.")


class PlanBlock(_Strict):
    """The plan the run followed: where it was, its hash and lock, its text and validated content."""

    path: str
    id: str
    title: str
    question: str
    decision_owner: str
    population: str
    hash: str
    lock: LockInfo
    registered: dict[str, Any] = Field(description="The validated plan with every default filled in.")
    source: str = Field(description="The plan file's text as read.")


class DataFile(_Strict):
    path: str
    sha256: str
    rows: int
    format: str
    provenance: dict[str, Any] | None = Field(
        None, description="For an evaluation tool's log (inspect_ai, lm-evaluation-harness, promptfoo): the tool and "
        "its version, every file read with its SHA-256, rows, errors and missing outcomes, the selections made, and "
        "the tool's own reported metric and stderr beside the same statistic recomputed from the rows. Absent for "
        "tables.",
    )
    location: dict[str, Any] | None = Field(
        None, description="For an object read from an object store (s3://, gs://...): its URI, size in bytes and "
        "modification time as the store reported them, and its ETag where the store reports one (S3); for a file of a Hive-partitioned folder: the partition "
        "values its folders gave its rows. Absent for a plain local file.",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for key in ("provenance", "location"):
                if data.get(key) is None:
                    data.pop(key, None)  # tables: the record stays as it was
        return data


class DataBlock(_Strict):
    files: list[DataFile]


class SeedRecord(_Strict):
    """A seed an analysis actually used."""

    analysis: int
    kind: str
    purpose: str
    seed: int


class DeclaredSeed(_Strict):
    """A seed the plan set explicitly that the analysis did not use (e.g. the method chosen has no randomness)."""

    analysis: int
    kind: str
    key: str
    seed: int


class Seeds(_Strict):
    used: list[SeedRecord] = Field(default_factory=list)
    declared_unused: list[DeclaredSeed] = Field(default_factory=list)


class DatasetInfo(_Strict):
    name: str
    split: str | None = None
    version: str | None = None


class CandidateCoverage(_Strict):
    model: str
    declared_version: str | list[str] | None = None
    versions_seen: dict[str, int] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    rows: int
    cases: int


class CasesCoverage(_Strict):
    total: int
    paired: int
    only: dict[str, int]


class UnitsCoverage(_Strict):
    count: int
    unit: str


class RepeatsCoverage(_Strict):
    planned: int
    observed_min: int
    observed_max: int


class AttemptRuleCoverage(_Strict):
    rule: str
    k: int | None = None
    question: str


class IntervalCoverage(_Strict):
    method: str
    confidence_level: float


class MissingEntry(_Strict):
    missing: int
    attempts: int
    fraction: float
    policy: str


class RunDates(_Strict):
    first: str
    last: str


class Coverage(_Strict):
    """What the number covers: population, candidates as run, cases, units, repeats, rule, interval."""

    dataset: DatasetInfo | None = None
    population: str
    candidates: dict[str, CandidateCoverage]
    baseline: str | None = None
    cases: CasesCoverage
    clusters: int | None = None
    cluster_column: str | None = None
    independent_units: UnitsCoverage
    repeats: RepeatsCoverage
    attempt_rule: AttemptRuleCoverage
    interval: IntervalCoverage | None = None
    missing: dict[str, MissingEntry] = Field(default_factory=dict)
    run_dates: RunDates | None = None


class SystematicLimits(_Strict):
    stated: list[str] = Field(default_factory=list)
    detected: list[Note] = Field(default_factory=list)


class ProcessFinding(_Strict):
    """One process check that did not pass (see :mod:`evalspec.process`)."""

    check: str = Field(description="The check's id, as `evalspec audit` names it.")
    title: str
    status: Literal["warning", "fail"]
    sentence: str
    short: str | None = Field(None, description="The phrase the report's one-line process status uses.")
    evidence: list[str] = Field(default_factory=list)
    covers: list[str] = Field(default_factory=list, description="Codes of the claim's deviations this finding states.")


class ProcessRecord(_Strict):
    """Was the claim made the way the plan promised? The process checks `run` can make, as the audit makes them."""

    status: Literal["as_planned", "unverified", "departed"] = Field(
        description="as_planned: every check passed; unverified: something could not be checked; departed: a check "
        "failed.")
    line: str = Field(description="One line for the report's first page.")
    exploratory: bool = Field(description="A failure that means the result cannot be read as confirmatory (the plan "
                              "not locked, or locked after the results; more looks than planned).")
    findings: list[ProcessFinding] = Field(default_factory=list)


class LedgerRef(_Strict):
    file: str
    seq: int
    prev_sha256: str | None = None


class Integrity(_Strict):
    """The claim's self-hash and where its entry sits in the ledger of looks (added when the run is sealed)."""

    of: str
    ledger: LedgerRef | None = None
    sha256: str


class RecordBase(_Strict):
    """Fields every analysis record has; ``params`` and ``result`` are typed per kind."""

    index: int = Field(description="Position in the plan's analyses list.")
    kind: str
    label: str
    caveats: list[Caveat] = Field(default_factory=list)
    seeds: list[SeedUse] = Field(default_factory=list)
    offers: Offers = Field(default_factory=Offers)


class OtherRecord(RecordBase):
    """A record of a kind this evalspec does not know (rendered with the generic section)."""

    params: dict[str, Any]
    result: dict[str, Any]


def _model_name(kind: str) -> str:
    return "".join(part.capitalize() for part in kind.split("_")) + "Record"


def record_model(kind: str) -> type[RecordBase]:
    """The record model of ``kind``: ``params`` and ``result`` typed by its registry entry."""
    from evalspec.analyses.registry import get_kind

    k = get_kind(kind)
    model: type[RecordBase] = create_model(  # type: ignore[call-overload]
        _model_name(kind), __base__=RecordBase,
        kind=(Literal[kind], ...),  # type: ignore[valid-type,arg-type]
        params=(k.params, ...),
        result=(k.result, ...),
    )
    return model


def _tag(value: Any) -> str:
    from evalspec.analyses.registry import KIND_MODULES

    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if isinstance(kind, str) and kind in KIND_MODULES else "__other__"


def claim_model(kinds: Iterable[str] | None = None) -> type[BaseModel]:
    """The :class:`Claim` model, its analysis records a union over every registered kind.

    Built on each call from the registry (about 35 ms), so nothing is cached at module level
    and a kind added to the registry is typed at once. ``kinds`` (the kinds a run's plan names)
    narrows the union to those registered kinds: a claim that holds records of these kinds only
    validates and dumps exactly as with the whole union, and the other kinds' result models are
    not built (a record of another registered kind would be refused).
    """
    from evalspec.analyses.registry import KIND_MODULES
    from evalspec.decision import DecisionRecord

    wanted = KIND_MODULES if kinds is None else set(kinds)
    members = [Annotated[record_model(kind), Tag(kind)] for kind in KIND_MODULES if kind in wanted]
    members.append(Annotated[OtherRecord, Tag("__other__")])
    record = Annotated[Union[tuple(members)], Discriminator(_tag)]  # type: ignore[valid-type]  # noqa: UP007

    class Claim(_Strict):
        """An evalspec claim record (claim.json)."""

        claim_format: Literal[2] = Field(description="Version of this record's shape.")
        evalspec_version: str
        created: str = Field(description="UTC time YYYY-MM-DDTHH:MM:SSZ (SOURCE_DATE_EPOCH when set).")
        command: list[str]
        plan: PlanBlock
        data: DataBlock
        software: dict[str, str]
        seeds: Seeds
        coverage: Coverage
        analyses: list[record]  # type: ignore[valid-type]
        decision: DecisionRecord
        deviations: list[Note] = Field(default_factory=list)
        process: ProcessRecord | None = Field(None, description="The process checks run made (absent in older claims).")
        systematic_limits: SystematicLimits
        integrity: Integrity | None = None

    return Claim


def __getattr__(name: str) -> Any:  # ``from evalspec.claim_model import Claim``
    if name == "Claim":
        return claim_model()
    raise AttributeError(name)


_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def claim_schema() -> dict[str, Any]:
    """The claim's JSON Schema (draft 2020-12), generated from :func:`claim_model`."""
    from evalspec.analyses.registry import KIND_MODULES

    body = claim_model().model_json_schema(mode="validation")
    # a record of an unknown kind is any kind but the registered ones (so exactly one branch matches)
    other = body.get("$defs", {}).get("OtherRecord", {}).get("properties", {}).get("kind")
    if other is not None:
        other["not"] = {"enum": list(KIND_MODULES)}
    schema: dict[str, Any] = {"$schema": _DIALECT}
    schema.update(body)
    schema["title"] = "evalspec claim"
    schema["description"] = (
        f"An evalspec claim record (claim.json), format {CLAIM_FORMAT}. Generated from evalspec's pydantic "
        "models by `evalspec schema --claim`; each analysis record is typed by its kind."
    )
    return schema


def claim_schema_text() -> str:
    """The schema as the exact text of ``schemas/claim.schema.json`` (2-space indent, final newline)."""
    import json

    return json.dumps(claim_schema(), indent=2, ensure_ascii=False) + "\n"


def kind_info(kind: str) -> tuple[str | None, int]:
    """(title, report order) of a registered kind; (None, 1000) for one this evalspec does not know."""
    from evalspec.analyses.registry import KIND_MODULES, get_kind

    if kind not in KIND_MODULES:
        return None, 1000
    k = get_kind(kind)
    return k.title, k.order
