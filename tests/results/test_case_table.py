"""A pre-aggregated case table (``data.format: case_table``): the same claim as the attempt rows it reduces.

The study of :mod:`tests.results.case_table_study` is run from its attempt rows and from the
case table evalspec reduces them to; every part of the claim but the plan's data block, the
data fingerprint and the command is byte-identical, for every attempt rule counts serve and
both missing-outcome policies that run. Then the plan rule (what a table of counts cannot
serve is refused at ``validate``, at its line), and bad case tables (located errors).
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalspec.errors import InputError, PlanInvalid
from tests.results.case_table_study import (as_case_table_plan, assert_same_claims, plan_text, reference_case_table,
                                            study_rows, write_study)


@pytest.fixture(autouse=True)
def _fixed_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")


@pytest.mark.parametrize(("rule", "policy"), [
    ("first", "count_as_fail"), ("first", "exclude"), ("best_of_k", "count_as_fail"), ("best_of_k", "exclude"),
    ("majority", "count_as_fail"), ("mean", "count_as_fail"), ("pass_at_k", "exclude"), ("pass_hat_k", "count_as_fail"),
])
def test_case_table_gives_the_attempt_rows_claim(tmp_path: Path, rule: str, policy: str) -> None:
    folder = write_study(tmp_path, rule, policy)
    pq.write_table(reference_case_table(folder), folder / "cases.parquet")
    assert_same_claims(folder)


def test_beta_binomial_reads_counts_alike(tmp_path: Path) -> None:
    folder = write_study(tmp_path, "first", "exclude", analyses="""  - {kind: proportion}
  - {kind: beta_binomial, draws: 1000, grid_points: 32, seed: 1}""")
    pq.write_table(reference_case_table(folder), folder / "cases.parquet")
    assert_same_claims(folder)


@pytest.mark.parametrize("policy", ["count_as_fail", "exclude"])
def test_run_variation_reads_counts_alike(tmp_path: Path, policy: str) -> None:
    """Run-to-run variation needs each case's attempts and passes only: the case table gives the attempt rows' claim
    (case c003's fifth attempt and the missing outcomes included)."""
    folder = write_study(tmp_path, "first", policy, analyses="""  - {kind: proportion}
  - {kind: run_variation}""")
    pq.write_table(reference_case_table(folder), folder / "cases.parquet")
    assert_same_claims(folder)
    import json

    from evalspec.run import run_plan

    result = json.loads(json.dumps(run_plan(folder / "plan_ct.yaml"), default=str))
    entry = [a for a in result["analyses"] if a["kind"] == "run_variation"][0]["result"]["candidates"]["A"]
    assert entry["repeated_cases"] > 50 and entry["within_case_variance"] > 0  # (the analysis ran on the counts)


def test_unequal_attempts_under_majority_are_refused_with_why(tmp_path: Path) -> None:
    """Under exclude, missing outcomes leave the two candidates different numbers of attempts on some cases; the
    verdict must also hold with equal numbers, which counts cannot give: the run refuses, at the rule."""
    from evalspec.run import run_plan

    folder = write_study(tmp_path, "majority", "exclude")
    pq.write_table(reference_case_table(folder), folder / "cases.parquet")
    with pytest.raises(InputError) as err:
        run_plan(folder / "plan_ct.yaml")
    d = err.value.diagnostics[0]
    assert d.key == "attempts.rule" and "different numbers of usable attempts" in d.message


def test_a_case_table_as_jsonl_or_csv_reads_alike(tmp_path: Path) -> None:
    folder = write_study(tmp_path)
    table = reference_case_table(folder)
    import pyarrow.csv as pcsv

    pcsv.write_csv(table, folder / "cases.csv")
    (folder / "plan_csv.yaml").write_text(as_case_table_plan(plan_text(), "cases.csv"))
    assert_same_claims(folder, "plan_csv.yaml")


def _validate(tmp_path: Path, text: str) -> PlanInvalid:
    from evalspec.plan import load_plan

    path = tmp_path / "plan.yaml"
    path.write_text(text)
    with pytest.raises(PlanInvalid) as err:
        load_plan(path)
    return err.value


@pytest.mark.parametrize(("analysis", "words"), [
    ("{kind: clustered_mean}", "each attempt's score"),
    ("{kind: sequential_difference, compare: [A, B]}", "timestamp"),
])
def test_kinds_that_read_attempt_rows_are_refused_at_their_line(tmp_path: Path, analysis: str, words: str) -> None:
    text = as_case_table_plan(plan_text(analyses=f"  - {{kind: proportion}}\n  - {analysis}"))
    err = _validate(tmp_path, text)
    found = [d for d in err.diagnostics if d.key == "analyses[1].kind"]
    assert found and "cannot run on a case table" in found[0].message and words in found[0].message
    assert found[0].line == text.splitlines().index(f"  - {analysis}") + 1


def test_majority_answer_is_refused_at_the_rule(tmp_path: Path) -> None:
    text = as_case_table_plan(plan_text()).replace("rule: first", "rule: majority_answer\n  answer: ans\n  target: tgt")
    err = _validate(tmp_path, text)
    assert any(d.key == "attempts.rule" and "answers" in d.message for d in err.diagnostics)


def test_a_column_named_like_a_count_is_refused(tmp_path: Path) -> None:
    text = as_case_table_plan(plan_text()).replace("critical: crit", "critical: passes")
    err = _validate(tmp_path, text)
    assert any(d.key == "data.columns.critical" and "case table's own columns" in d.message for d in err.diagnostics)


def _run_bad(tmp_path: Path, change) -> InputError:  # type: ignore[no-untyped-def]
    from evalspec.run import run_plan

    folder = write_study(tmp_path)
    rows = reference_case_table(folder).to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows), folder / "cases.parquet")
    with pytest.raises(InputError) as err:
        run_plan(folder / "plan_ct.yaml")
    return err.value


def test_a_second_row_for_a_candidate_and_case_is_located(tmp_path: Path) -> None:
    err = _run_bad(tmp_path, lambda rows: rows.append(dict(rows[0])))
    d = err.diagnostics[0]
    assert "duplicate (candidate, case)" in d.message and "cases.parquet" in d.message
    assert d.line == 121  # the appended row (Parquet rows count from 1)


def test_two_versions_of_one_case_are_refused_with_why(tmp_path: Path) -> None:
    def change(rows: list) -> None:
        rows.append({**rows[0], "ver": "v2"})

    err = _run_bad(tmp_path, change)
    assert any("two versions" in d.message for d in err.diagnostics)


def test_a_version_change_inside_a_candidates_data_is_refused_as_for_attempt_rows(tmp_path: Path) -> None:
    """One wording for both paths (results.checks.version_change): A's later cases ran on another version."""
    def change(rows: list) -> None:
        mine = [r for r in rows if r["model"] == "A"]
        for r in mine[len(mine) // 2:]:
            r["ver"] = "v2"

    err = _run_bad(tmp_path, change)
    (d,) = [d for d in err.diagnostics if "model version changes inside the data" in d.message]
    assert d.key == "ver" and "candidate 'A'" in d.message and "'v1'" in d.message and "'v2'" in d.message
    assert "declare candidates.A.version as a list: [v1, v2]" in (d.hint or "")


@pytest.mark.parametrize(("column", "value", "words"), [
    ("duplicate_attempts", 1, "the same attempt appears twice"),
    ("passes", 9, "more passes than attempts"),
    ("attempts", 7, "more attempts kept than the 4 planned"),
    ("unreadable", 2, "could not be read"),
    ("first_outcome", 0.5, "must be 1 (pass), 0 (fail) or empty"),
    ("missing", "x", "whole number"),
])
def test_impossible_counts_are_located(tmp_path: Path, column: str, value: object, words: str) -> None:
    def change(rows: list) -> None:
        if isinstance(value, str):
            for r in rows:
                r[column] = str(r[column])
        rows[5][column] = value

    err = _run_bad(tmp_path, change)
    hit = [d for d in err.diagnostics if d.line == 6]
    assert hit and any(words in d.message for d in hit), [d.message for d in err.diagnostics]


def test_a_missing_count_column_is_named(tmp_path: Path) -> None:
    def change(rows: list) -> None:
        for r in rows:
            del r["extra_attempts"]

    err = _run_bad(tmp_path, change)
    assert "extra_attempts" in err.diagnostics[0].message


def test_the_refusals_follow_the_policy(tmp_path: Path) -> None:
    def change(rows: list) -> None:
        for r in rows[:30]:
            if r["model"] == "A":
                r["missing"] = r["attempts"]
                r["passes"] = 0
                r["first_outcome"] = None

    err = _run_bad(tmp_path, change)
    assert any("above the plan's missing.max_fraction" in d.message for d in err.diagnostics)


def test_reduce_sql_command_prints_sql_and_schema(tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from evalspec.cli import cli

    folder = write_study(tmp_path)
    os.chdir(folder)
    out = CliRunner().invoke(cli, ["reduce-sql", "plan_ct.yaml", "--dialect", "bigquery", "--from", "db.runs"])
    assert out.exit_code == 0, out.output
    assert "FROM db.runs" in out.output and "SAFE_CAST" in out.output and "`passes`" in out.output
    schema = json.loads(CliRunner().invoke(cli, ["reduce-sql", "plan_ct.yaml", "--schema"]).output)
    names = [c["name"] for c in schema["columns"]]
    assert names[:2] == ["model", "case_id"] and "first_outcome" in names and "distinct_lang" in names


def test_the_limits_of_attempt_rows_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A label longer than evalspec accepts and a slice of too many levels are refused as for attempt rows."""
    import evalspec.results.table as table

    monkeypatch.setattr(table, "MAX_SLICE_LEVELS", 50)  # (the study has 120 rows; the limit is 200)

    def change(rows: list) -> None:
        rows[2]["case_id"] = "x" * 600
        for i, r in enumerate(rows):
            r["lang"] = f"l{i}"

    err = _run_bad(tmp_path, change)
    words = [d.message for d in err.diagnostics]
    assert any("longer than the 500 characters" in w for w in words), words
    assert any("distinct values, more than the 50 a slice may have" in w for w in words), words


def test_validate_data_reads_a_case_table(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from evalspec.cli import cli

    folder = write_study(tmp_path)
    pq.write_table(reference_case_table(folder), folder / "cases.parquet")
    os.chdir(folder)
    out = CliRunner().invoke(cli, ["validate", "plan_ct.yaml", "--data", "cases.parquet"])
    assert out.exit_code == 0, out.output
    assert "480 rows" in out.output and "60 cases" in out.output  # attempt rows: 2 x 60 x 4 kept


def test_a_reading_counts_cannot_give_refuses_instead_of_being_skipped() -> None:
    from evalspec.case_views import CaseTableReadings, ReadingUnavailable

    with pytest.raises(ReadingUnavailable, match="does not make from a case table"):
        CaseTableReadings(table=None).some_later_reading  # noqa: B018


@pytest.mark.parametrize(("column", "value"), [("attempts", 0), ("attempts", 9), ("duplicate_attempts", 1),
                                               ("unreadable", 3), ("missing", 9)])
def test_a_count_of_one_value_everywhere_is_located_at_every_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  column: str, value: int) -> None:
    from evalspec.results import case_checks

    def change(rows: list) -> None:
        for r in rows:
            r[column] = value

    once = [(d.file, d.line, d.key, d.message) for d in _run_bad(tmp_path / "once", change).diagnostics]
    monkeypatch.setattr(case_checks, "_one", lambda values: values)  # (every row compared, as before)
    each = [(d.file.replace("each", "once"), d.line, d.key, d.message)
            for d in _run_bad(tmp_path / "each", change).diagnostics]
    assert once == each and any(d[2] == column for d in once)


def test_problems_of_the_case_ids_typed_in_a_thread_keep_their_place(tmp_path: Path) -> None:
    def change(rows: list) -> None:  # (the case ids are typed beside the candidates, clusters and counts)
        rows[2]["model"] = "Z"
        rows[3]["case_id"] = None
        rows[4]["doc"] = None
        rows[5]["passes"] = -1

    err = _run_bad(tmp_path, change)
    assert [(d.key, d.line) for d in err.diagnostics] == [("model", 3), ("case_id", 4), ("doc", 5), ("passes", 6)]


def test_the_counts_checked_beside_the_typing_keep_their_place_among_the_checks(tmp_path: Path) -> None:
    def change(rows: list) -> None:  # (the counts' checks run while the case ids are typed: their problems after
        rows[1]["passes"] = rows[1]["attempts"] + 1  # the clusters', as when checked in turn)
        other = next(r for r in rows[2:] if r["case_id"] == rows[0]["case_id"])
        other["doc"] = "d-elsewhere"

    err = _run_bad(tmp_path, change)
    assert [d.key for d in err.diagnostics] == ["doc", "passes"]


@pytest.mark.parametrize("missing", [False, True])
def test_attributes_that_differ_between_candidates_read_alike_by_every_path(tmp_path: Path, missing: bool,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from evalspec.results import case_checks
    from tests.results.case_table_study import claim_bytes, study_rows

    rows = study_rows()
    for r in rows:  # (B or A says another language for three cases; with ``missing``, A has none for one)
        if (r["model"], r["case_id"]) in (("B", "c005"), ("A", "c008"), ("B", "c011")):
            r["lang"] = "fr"
        if missing and r["model"] == "A" and r["case_id"] == "c007":
            r["lang"] = None
    folder = write_study(tmp_path, "mean", "count_as_fail", rows=rows)
    pq.write_table(reference_case_table(folder), folder / "cases.parquet")
    fast = claim_bytes(folder / "plan_ct.yaml")
    assert "inconsistent_case_attribute" in fast["deviations"] and "c005, c008, c011" in fast["deviations"]
    general = case_checks._down_each_case
    monkeypatch.setattr(case_checks, "_down_each_case", lambda grid, whole: general(grid, False))
    assert claim_bytes(folder / "plan_ct.yaml") == fast  # (every cell read through the missing-aware path)


def test_a_distinct_count_of_one_value_above_one_marks_every_case(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from evalspec.results import case_checks
    from tests.results.case_table_study import claim_bytes

    folder = write_study(tmp_path, "mean", "count_as_fail")
    table = reference_case_table(folder)
    at = table.schema.get_field_index("distinct_lang")
    pq.write_table(table.set_column(at, "distinct_lang", pa.array([2] * table.num_rows)), folder / "cases.parquet")
    once = claim_bytes(folder / "plan_ct.yaml")
    assert "differs between rows of 60 case(s)" in once["deviations"]
    monkeypatch.setattr(case_checks, "_one", lambda values: values)  # (every row compared, as before)
    assert claim_bytes(folder / "plan_ct.yaml") == once


@pytest.mark.parametrize("streamed", [False, True])
def test_a_value_only_a_later_candidate_gives_is_no_slice_group_on_any_path(tmp_path: Path, streamed: bool,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """B alone says ``fr`` (A says ``en`` for those cases): each case takes A's value, so no case is in ``fr``.
    The attempt rows (in memory, or reduced while read) list no empty ``fr`` group, as the case table
    (which cannot see B's ``fr`` beside A's ``en``) does not: the same claim by every path."""
    import json

    from tests.results.case_table_study import claim_bytes, study_rows

    rows = study_rows()
    for r in rows:
        if r["model"] == "B" and r["case_id"] in ("c005", "c011"):
            r["lang"] = "fr"
    folder = write_study(tmp_path, "mean", "count_as_fail", rows=rows)
    pq.write_table(reference_case_table(folder), folder / "cases.parquet")
    if streamed:
        monkeypatch.setenv("EVALSPEC_STREAM_ROWS", "0")
    claim = claim_bytes(folder / "plan.yaml")
    assert "inconsistent_case_attribute" in claim["deviations"] and "c005, c011" in claim["deviations"]
    sliced = next(a for a in json.loads(claim["analyses"]) if a["kind"] == "slices")
    groups = {g["value"]: g["n"] for g in sliced["result"]["slices"][0]["groups"]}
    assert "fr" not in groups and all(n > 0 for n in groups.values()), groups
    assert_same_claims(folder)


@pytest.mark.parametrize("policy", ["count_as_fail", "exclude"])
@pytest.mark.parametrize("unrun", ["A", "B"])
def test_one_case_one_candidate_never_ran_gives_the_attempt_rows_claim(tmp_path: Path, policy: str,
                                                                       unrun: str) -> None:
    """A single case that the candidate (A) or the baseline (B) never ran, and no missing outcome: the readings the
    verdict must survive change that one case (they are made, not skipped as changing nothing: case_views)."""
    rows = [dict(r, passed=bool(r["passed"])) for r in study_rows() if not (r["model"] == unrun and r["case_id"] == "c005")]
    folder = write_study(tmp_path, "first", policy, rows=rows)
    pq.write_table(reference_case_table(folder), folder / "cases.parquet")
    assert_same_claims(folder)
