"""The plan's reduction from attempt rows to its case table, as SQL for the engine that holds the rows.

``evalspec reduce-sql PLAN --dialect duckdb|spark|bigquery --from TABLE`` prints one ``SELECT``
statement: it reads the attempt rows under the plan's column names, types them as evalspec's
readers do (pass/fail words, a score against its pass threshold, ``data.missing_values``,
repeat numbers, ISO 8601 times), keeps the first ``attempts.repeats`` attempts of each
candidate × case by repeat number and writes one row per candidate × case × model version
with the columns of :func:`evalspec.plan.case_table.case_table_columns`. Rows evalspec would
refuse are counted, not dropped (``duplicate_attempts``, ``unreadable``, ``lacking_record``),
and ``evalspec run`` refuses them at their case-table row.

The dialects differ in quoting (``"x"`` against ```x```), the text and float types, the
failure-tolerant cast, the NaN test, the time type and "the value at the lowest repeat
number" (``arg_min``, ``min_by``, ``ARRAY_AGG(... ORDER BY ... LIMIT 1)``); the statement is
otherwise the same. :func:`evalspec.results.case_reduce.reduce_rows` computes the same table in
evalspec (the tests compare the two on DuckDB and on Spark).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalspec.plan.case_table import attribute_columns, case_table_columns

__all__ = ["DIALECTS", "reduce_sql"]

# the readers' vocabulary (evalspec.results.table): pass/fail words and the texts that mean "missing"
_TRUE = ("pass", "passed", "true", "t", "yes", "y", "c", "correct", "1", "1.0", "success", "ok")
_FALSE = ("fail", "failed", "false", "f", "no", "n", "i", "incorrect", "0", "0.0", "failure")
_MISSING = ("", "na", "nan", "null", "none")


@dataclass(frozen=True)
class Dialect:
    name: str
    quote: str
    text: str
    double: str
    try_cast: str
    isnan: str
    time: str
    integer: str

    def q(self, name: str) -> str:
        """A quoted identifier."""
        return self.quote + name.replace(self.quote, self.quote * 2) + self.quote

    def cast(self, expr: str, typ: str) -> str:
        return f"{self.try_cast}({expr} AS {typ})"

    def first_by(self, value: str, order: str) -> str:
        """The value at the lowest ``order`` (rows where ``order`` is NULL left out)."""
        if self.name == "duckdb":
            return f"arg_min({value}, {order})"
        if self.name == "spark":
            return f"min_by({value}, {order})"
        return f"ARRAY_AGG(IF({order} IS NULL, NULL, {value}) IGNORE NULLS ORDER BY {order} LIMIT 1)[SAFE_OFFSET(0)]"


DIALECTS: dict[str, Dialect] = {
    "duckdb": Dialect("duckdb", '"', "VARCHAR", "DOUBLE", "TRY_CAST", "isnan", "TIMESTAMPTZ", "BIGINT"),
    "spark": Dialect("spark", "`", "STRING", "DOUBLE", "TRY_CAST", "isnan", "TIMESTAMP", "BIGINT"),
    "bigquery": Dialect("bigquery", "`", "STRING", "FLOAT64", "SAFE_CAST", "IS_NAN", "TIMESTAMP", "INT64"),
}


def _words(values: tuple[str, ...] | list[str]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


def _is_missing(d: Dialect, expr: str) -> str:
    return f"({expr} IS NULL OR LOWER(TRIM(CAST({expr} AS {d.text}))) IN ({_words(_MISSING)}))"


def _outcome(plan: Any, d: Dialect) -> tuple[str, str]:
    """``(outcome, unreadable)``: the attempt's outcome 1.0 / 0.0 / NULL, and whether it could not be read."""
    col = d.q(plan.data.columns.outcome)
    declared = [str(v) for v in (plan.data.missing_values or [])]
    absent = _is_missing(d, col)
    if declared:
        absent = f"({absent} OR TRIM(CAST({col} AS {d.text})) IN ({_words(declared)}))"
    if plan.data.outcome.type == "score":
        score = d.cast(col, d.double)
        value = (f"CASE WHEN {absent} OR {d.isnan}({score}) THEN NULL "
                 f"WHEN {score} >= {float(plan.data.outcome.pass_threshold)!r} THEN 1.0 ELSE 0.0 END")
        bad = (f"CASE WHEN {absent} THEN 0 WHEN {score} IS NULL THEN 1 WHEN {d.isnan}({score}) THEN 0 "
               f"WHEN ABS({score}) > 1e12 THEN 1 ELSE 0 END")
        return value, bad
    text = f"LOWER(TRIM(CAST({col} AS {d.text})))"
    value = (f"CASE WHEN {absent} THEN NULL WHEN {text} IN ({_words(_TRUE)}) THEN 1.0 "
             f"WHEN {text} IN ({_words(_FALSE)}) THEN 0.0 ELSE NULL END")
    bad = f"CASE WHEN {absent} THEN 0 WHEN {text} IN ({_words(_TRUE + _FALSE)}) THEN 0 ELSE 1 END"
    return value, bad


def _typed(plan: Any, d: Dialect, source: str) -> tuple[str, list[str]]:
    """The first step: each attempt row typed, under short internal names."""
    cols = plan.data.columns
    outcome, bad_outcome = _outcome(plan, d)
    parts = [f"TRIM(CAST({d.q(cols.candidate)} AS {d.text})) AS c_cand",
             f"TRIM(CAST({d.q(plan.units.case)} AS {d.text})) AS c_case"]
    keys = ["c_cand", "c_case"]
    if plan.units.cluster is not None:
        parts.append(f"TRIM(CAST({d.q(plan.units.cluster)} AS {d.text})) AS c_cluster")
    if cols.model_version is not None:
        parts.append(f"TRIM(CAST({d.q(cols.model_version)} AS {d.text})) AS c_version")
        keys.append("c_version")
    bad = [bad_outcome]
    if cols.repeat is not None:
        rep = d.cast(d.q(cols.repeat), d.double)
        parts.append(f"{rep} AS c_repeat")
        bad.append(f"CASE WHEN {rep} IS NULL OR {rep} <> FLOOR({rep}) OR ABS({rep}) > 1000000 THEN 1 ELSE 0 END")
    else:
        parts.append("1 AS c_repeat")
    parts.append(f"{outcome} AS c_outcome")
    if cols.timestamp is not None:
        ts = d.q(cols.timestamp)
        parts.append(f"{d.cast(ts, d.time)} AS c_time")
        bad.append(f"CASE WHEN NOT {_is_missing(d, ts)} AND {d.cast(ts, d.time)} IS NULL THEN 1 ELSE 0 END")
    parts.append(f"GREATEST({', '.join(bad)}) AS c_bad" if len(bad) > 1 else f"{bad[0]} AS c_bad")
    if plan.record:
        roles = {"model_version": cols.model_version, "timestamp": cols.timestamp, "candidate": cols.candidate,
                 "repeat": cols.repeat, "outcome": cols.outcome}
        lacking = " OR ".join(_is_missing(d, d.q(roles.get(item) or item)) for item in plan.record)
        parts.append(f"CASE WHEN {lacking} THEN 1 ELSE 0 END AS c_lacking")
    for i, col in enumerate(attribute_columns(plan)):
        parts.append(f"CASE WHEN {_is_missing(d, d.q(col))} THEN NULL ELSE {d.q(col)} END AS a_{i}")
    body = ",\n    ".join(parts)
    return f"typed AS (\n  SELECT\n    {body}\n  FROM {source}\n)", keys


def reduce_sql(plan: Any, *, source: str = "results", dialect: str = "duckdb") -> str:
    """One ``SELECT`` statement from the attempt rows in ``source`` to ``plan``'s case table."""
    d = DIALECTS[dialect]
    typed, keys = _typed(plan, d, source)
    planned = int(plan.attempts.repeats)
    part = ", ".join(keys)
    ranked = (f"ranked AS (\n  SELECT *, ROW_NUMBER() OVER (PARTITION BY {part} ORDER BY c_repeat) AS c_rank\n"
              "  FROM typed\n)")
    answered = (f"answered AS (\n  SELECT *, SUM(CASE WHEN c_rank <= {planned} AND c_outcome IS NOT NULL THEN 1 ELSE 0 "
                f"END) OVER (PARTITION BY {part} ORDER BY c_rank ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) "
                "AS c_answered\n  FROM ranked\n)")
    kept = f"c_rank <= {planned}"
    group = ["c_cand", "c_case"] + (["c_cluster"] if plan.units.cluster is not None else []) + keys[2:]
    cols = plan.data.columns
    exprs: dict[str, str] = {cols.candidate: "c_cand", plan.units.case: "c_case"}
    if plan.units.cluster is not None:
        exprs[plan.units.cluster] = "c_cluster"
    if cols.model_version is not None:
        exprs[cols.model_version] = "c_version"
    k = int(plan.attempts.k or 1)
    exprs.update({
        "attempts": f"SUM(CASE WHEN {kept} THEN 1 ELSE 0 END)",
        "extra_attempts": f"SUM(CASE WHEN {kept} THEN 0 ELSE 1 END)",
        "missing": f"SUM(CASE WHEN {kept} AND c_outcome IS NULL THEN 1 ELSE 0 END)",
        "passes": f"SUM(CASE WHEN {kept} AND c_outcome = 1 THEN 1 ELSE 0 END)",
        "duplicate_attempts": "COUNT(*) - COUNT(DISTINCT c_repeat)",
        "unreadable": "SUM(c_bad)",
        "lacking_record": "SUM(c_lacking)",
        "first_outcome": "MAX(CASE WHEN c_rank = 1 THEN c_outcome END)",
        "first_answered_outcome": f"MAX(CASE WHEN {kept} AND c_answered = 1 AND c_outcome IS NOT NULL THEN c_outcome END)",
        f"passes_in_first_{k}": f"SUM(CASE WHEN c_rank <= {min(k, planned)} AND c_outcome = 1 THEN 1 ELSE 0 END)",
        f"answered_passes_in_first_{k}": f"SUM(CASE WHEN {kept} AND c_answered <= {k} AND c_outcome = 1 THEN 1 ELSE 0 "
                                         "END)",
        f"missing_in_first_{k}": f"SUM(CASE WHEN c_rank <= {min(k, planned)} AND c_outcome IS NULL THEN 1 ELSE 0 END)",
        "first_time": "MIN(c_time)",
        "last_time": "MAX(c_time)",
    })
    for i, col in enumerate(attribute_columns(plan)):
        exprs[col] = d.first_by(f"a_{i}", f"CASE WHEN {kept} AND a_{i} IS NOT NULL THEN c_repeat END")
        exprs[f"distinct_{col}"] = f"COUNT(DISTINCT CASE WHEN {kept} THEN a_{i} END)"
    def typed_as(c: Any) -> str:
        if c.type == "integer":
            return f"CAST({exprs[c.name]} AS {d.integer})"
        if c.type == "outcome":
            return f"CAST({exprs[c.name]} AS {d.double})"
        return exprs[c.name]

    select = ",\n  ".join(f"{typed_as(c)} AS {d.q(c.name)}" for c in case_table_columns(plan))
    return (f"-- the case table of plan {plan.id!r} (evalspec reduce-sql, dialect {dialect}): one row per "
            f"candidate x case\nWITH {typed},\n{ranked},\n{answered}\nSELECT\n  {select}\nFROM answered\n"
            f"GROUP BY {', '.join(group)}\n")
