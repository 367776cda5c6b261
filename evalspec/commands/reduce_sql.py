"""``evalspec reduce-sql PLAN``: the plan's reduction from attempt rows to its case table, as SQL.

Prints one ``SELECT`` statement for the engine that holds the attempt rows (``--dialect
duckdb``, ``spark`` or ``bigquery``), reading the table ``--from`` names under the plan's
column names and giving one row per candidate × case: the case table
``data.format: case_table`` reads (docs/case_table.md). Run it where the rows are, write the
result as Parquet (or CSV, JSONL) beside the plan, and ``evalspec run`` does the inference.
``--schema`` prints the columns of the plan's case table as JSON instead.

Exit status: 0 printed; 1 the plan is invalid.
"""

from __future__ import annotations

import click

__all__ = ["reduce_sql"]


@click.command("reduce-sql")
@click.argument("plan", type=click.Path(dir_okay=False, path_type=str))
@click.option("--dialect", type=click.Choice(["duckdb", "spark", "bigquery"]), default="duckdb", show_default=True,
              help="SQL dialect of the engine that holds the attempt rows.")
@click.option("--from", "source", default="results", show_default=True, metavar="TABLE",
              help="The table of attempt rows: a name, or a table expression (read_parquet('runs/*.parquet')).")
@click.option("--schema", "schema", is_flag=True, help="Print the case table's columns as JSON instead of the SQL.")
def reduce_sql(plan: str, dialect: str, source: str, schema: bool) -> None:
    """Print the SQL that reduces PLAN's attempt rows to its case table (one row per candidate x case).

    The plan's column names, attempt rule, repeats, missing values and outcome reading are
    built in; run the statement where the rows live and point data.results at its output
    with data.format: case_table.
    """
    from evalspec.plan.load import load_plan

    loaded = load_plan(plan)
    if schema:
        import json

        from evalspec.plan.case_table import case_table_columns

        cols = [{"name": c.name, "type": c.type, "meaning": c.meaning, **({"plan_key": c.key} if c.key else {})}
                for c in case_table_columns(loaded.plan)]
        click.echo(json.dumps({"plan": loaded.plan.id, "one_row_per": "candidate x case (x model version)",
                               "columns": cols}, indent=2))
        return
    from evalspec.results.reduce_sql import reduce_sql as generate

    click.echo(generate(loaded.plan, source=source, dialect=dialect), nl=False)
