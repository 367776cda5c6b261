"""``evalspec reduce-sql``: the SQL, run on DuckDB and on a local Spark session, gives evalspec's own case table.

For each attempt rule counts serve (and both policies that run), the statement the plan emits is
run on the study's attempt rows; its output must equal, column by column, the case table
:func:`evalspec.results.case_reduce.reduce_rows` computes from the same rows, and ``evalspec run``
on the engine's output gives the claim of the attempt rows (byte-identical but for the plan's
data block and the data fingerprint). Rows evalspec refuses (a duplicate attempt, an unreadable
outcome) are counted by the SQL and refused at their case-table row.

BigQuery is not reachable here: its statement is parsed by sqlglot's BigQuery grammar (a
syntax check, not a run; the ``test`` extra has sqlglot), and that check is shown to refuse a
broken statement. DuckDB is in the ``test`` extra, pyspark (with Java 17) in the ``lake`` extra; without them
these tests skip, and under ``EVALSPEC_REQUIRE_TOOLS=1`` (CI) they fail instead. One Spark
session serves the module; the Spark tests are ``slow`` (CI's second line).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalspec.errors import InputError
from tests.results.case_table_study import (as_case_table_plan, assert_same_claims, reference_case_table, study_rows,
                                            write_study)

RULES = [("first", "count_as_fail"), ("first", "exclude"), ("best_of_k", "exclude"), ("majority", "count_as_fail"),
         ("mean", "exclude"), ("pass_at_k", "count_as_fail")]


def _need(module: str) -> Any:
    try:
        return __import__(module)
    except ImportError:
        if os.environ.get("EVALSPEC_REQUIRE_TOOLS") == "1":
            pytest.fail(f"{module} is not installed (pip install -e '.[lake]'); EVALSPEC_REQUIRE_TOOLS=1 requires it")
        pytest.skip(f"{module} is not installed")


@pytest.fixture(autouse=True)
def _fixed_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")


def _sql(folder: Path, dialect: str, source: str) -> str:
    from evalspec.results.reduce_sql import reduce_sql
    from evalspec.run import load_plan_for_run

    return reduce_sql(load_plan_for_run(folder / "plan_ct.yaml").plan, source=source, dialect=dialect)


def _utc(table: pa.Table) -> pa.Table:
    """Times as UTC instants (Spark writes its session-zone times without a zone; evalspec reads those as UTC)."""
    for i, f in enumerate(table.schema):
        if pa.types.is_timestamp(f.type):
            table = table.set_column(i, f.name, table.column(i).cast(pa.timestamp("us", tz="UTC")))
    return table


def _same_table(got: pa.Table, want: pa.Table, key: tuple[str, str] = ("model", "case_id")) -> None:
    assert got.column_names == want.column_names
    got, want = _utc(got), _utc(want)
    order = [(k, "ascending") for k in key]
    got, want = got.sort_by(order), want.sort_by(order)
    for name in want.column_names:
        a, b = got.column(name).to_pylist(), want.column(name).to_pylist()
        assert a == b, (name, [(x, y) for x, y in zip(a, b) if x != y][:5])


# -- DuckDB ----------------------------------------------------------------------------------


def _duckdb(folder: Path) -> pa.Table:
    duckdb = _need("duckdb")
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    return con.sql(_sql(folder, "duckdb", f"read_parquet('{folder / 'raw.parquet'}')")).to_arrow_table()


@pytest.mark.parametrize(("rule", "policy"), RULES)
def test_duckdb_gives_evalspecs_case_table_and_claim(tmp_path: Path, rule: str, policy: str) -> None:
    folder = write_study(tmp_path, rule, policy)
    table = _duckdb(folder)
    _same_table(table, reference_case_table(folder))
    pq.write_table(table, folder / "cases.parquet")
    assert_same_claims(folder)


def test_duckdb_counts_what_evalspec_would_refuse(tmp_path: Path) -> None:
    from evalspec.run import run_plan

    rows = study_rows()
    rows.append(dict(rows[0]))  # a duplicate attempt
    rows[10]["passed"] = "maybe"  # an unreadable outcome (the column becomes text)
    for r in rows:
        r["passed"] = None if r["passed"] is None else str(r["passed"])
    folder = write_study(tmp_path, rows=rows)
    pq.write_table(_duckdb(folder), folder / "cases.parquet")
    with pytest.raises(InputError) as err:
        run_plan(folder / "plan_ct.yaml")
    words = " ".join(d.message for d in err.value.diagnostics)
    assert "the same attempt appears twice" in words and "could not be read" in words


def test_a_score_outcome_and_missing_values_read_alike(tmp_path: Path) -> None:
    rows = study_rows()
    for i, r in enumerate(rows):
        r["passed"] = None if r["passed"] is None else ("ERROR" if i % 97 == 0 else str(0.9 if r["passed"] else 0.2))
    folder = write_study(tmp_path, rows=rows)
    for name in ("plan.yaml", "plan_ct.yaml"):
        text = (folder / name).read_text().replace(
            "  columns:", "  outcome: {type: score, pass_threshold: 0.5}\n  missing_values: [ERROR]\n  columns:")
        (folder / name).write_text(text)
    table = _duckdb(folder)
    _same_table(table, reference_case_table(folder))
    pq.write_table(table, folder / "cases.parquet")
    assert_same_claims(folder)


# -- BigQuery (parsed, not run) ----------------------------------------------------------------


@pytest.mark.parametrize(("rule", "policy"), RULES)
def test_the_bigquery_statement_parses_as_bigquery(tmp_path: Path, rule: str, policy: str) -> None:
    sqlglot = _need("sqlglot")
    folder = write_study(tmp_path, rule, policy)
    sql = _sql(folder, "bigquery", "`project.dataset.results`")
    tree = sqlglot.parse_one(sql, read="bigquery", error_level=sqlglot.ErrorLevel.RAISE)
    assert tree.find(sqlglot.exp.Select) is not None
    tables = {t.sql(dialect="bigquery") for t in tree.find_all(sqlglot.exp.Table)}
    assert "`project.dataset.results`" in " ".join(tables) or "project.dataset.results" in " ".join(tables), tables
    # the check can fail: one separator dropped, one parenthesis doubled
    for broken in (sql.replace(",\n", "\n", 1), sql.replace("OVER (", "OVER ((", 1)):
        with pytest.raises(sqlglot.errors.ParseError):
            sqlglot.parse_one(broken, read="bigquery", error_level=sqlglot.ErrorLevel.RAISE)


# -- Spark -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spark() -> Any:
    _need("pyspark")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        if os.environ.get("EVALSPEC_REQUIRE_TOOLS") == "1":
            pytest.fail("Java is not installed (openjdk-17-jre-headless); EVALSPEC_REQUIRE_TOOLS=1 requires it")
        pytest.skip("Java is not installed")
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[1]").appName("evalspec-reduce-sql")
               .config("spark.sql.session.timeZone", "UTC").config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "1").getOrCreate())
    yield session
    session.stop()


@pytest.mark.slow  # a Spark session takes about 30 s to start on a loaded 2-core machine: CI's second line
@pytest.mark.parametrize(("rule", "policy"), [("first", "exclude"), ("best_of_k", "count_as_fail")])
def test_spark_gives_evalspecs_case_table_and_claim(tmp_path: Path, spark: Any, rule: str, policy: str) -> None:
    folder = write_study(tmp_path, rule, policy)
    spark.read.parquet(str(folder / "raw.parquet")).createOrReplaceTempView("results")
    out = folder / "spark_cases"
    spark.sql(_sql(folder, "spark", "results")).coalesce(1).write.parquet(str(out))
    table = pq.read_table(next(out.glob("*.parquet")))
    _same_table(table, reference_case_table(folder))
    # the plan reads Spark's output folder as Spark wrote it (part files, _SUCCESS, .crc files)
    (folder / "plan_spark.yaml").write_text(as_case_table_plan((folder / "plan.yaml").read_text(), "spark_cases"))
    assert_same_claims(folder, "plan_spark.yaml")
