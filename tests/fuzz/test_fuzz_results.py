"""Fuzzed results files through `evalspec run`: exit 0/1/2, never 70 or a traceback; every error
names its file and line or key; a refused run leaves the previous outputs as they were, a
finished one replaces them whole."""

from __future__ import annotations

from typing import Any

from hypothesis import event, given

from fuzz_strategies import FUZZ, check_one_set, check_outcome, plan_kinds, plan_variant, plant_old_set, \
    results_csv_files, \
    results_files, run_cli


@FUZZ
@given(data=results_files(), kind=plan_kinds)
def test_fuzzed_results_never_crash(tmp_path_factory: Any, data: bytes, kind: str) -> None:
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "results.jsonl").write_bytes(data)
    (folder / "plan.yaml").write_text(plan_variant(kind), encoding="utf-8")
    plant_old_set(folder / "out")
    result = run_cli(folder, ["run", "plan.yaml", "--no-report"])
    event(f"exit {result.exit_code}")
    check_outcome(result)
    check_one_set(folder / "out", result.exit_code)


@FUZZ
@given(data=results_csv_files(), kind=plan_kinds)
def test_fuzzed_csv_results_never_crash(tmp_path_factory: Any, data: bytes, kind: str) -> None:
    folder = tmp_path_factory.mktemp("fuzzcsv")
    (folder / "results.csv").write_bytes(data)
    (folder / "plan.yaml").write_text(plan_variant(kind).replace("results: results.jsonl", "results: results.csv"),
                                      encoding="utf-8")
    plant_old_set(folder / "out")
    result = run_cli(folder, ["run", "plan.yaml", "--no-report"])
    event(f"exit {result.exit_code}")
    check_outcome(result)
    check_one_set(folder / "out", result.exit_code)
