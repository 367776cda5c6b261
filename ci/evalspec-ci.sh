#!/usr/bin/env bash
# evalspec in CI: validate --locked, run --locked, audit, gate; a Markdown summary and a JUnit report.
#
# The same recipe for GitHub Actions (action.yml calls this script), GitLab CI and a plain shell
# (docs/ci.md). Settings come from the environment:
#   EVALSPEC_PLAN     the plan file (required)
#   EVALSPEC_OUT      the folder for this run's outputs (default: <plan dir>/out/ci-<run id>, one per run,
#                     so a re-run never replaces an earlier claim)
#   EVALSPEC_RUN_ID   names the default folder (default: $GITHUB_RUN_ID-$GITHUB_RUN_ATTEMPT, $CI_PIPELINE_ID, or
#                     the UTC time)
#   EVALSPEC_ACCEPT   acceptable verdicts, comma-separated (default: the plan's decision.acceptable)
#   EVALSPEC_REPORT   html | pdf | both | none (default html)
# Exit status: the gate's (0 acceptable verdict and sound process, 1 not, 2 bad input), or the audit's
# when the audit fails (a claim that does not reproduce) and the gate did not. Quiet on success
# apart from each step's one line.
set -uo pipefail

plan="${EVALSPEC_PLAN:?set EVALSPEC_PLAN to the plan file}"
run_id="${EVALSPEC_RUN_ID:-${GITHUB_RUN_ID:+${GITHUB_RUN_ID}-${GITHUB_RUN_ATTEMPT:-1}}}"
run_id="${run_id:-${CI_PIPELINE_ID:-$(date -u +%Y%m%dT%H%M%SZ)}}"
out="${EVALSPEC_OUT:-$(dirname "$plan")/out/ci-${run_id}}"
report="${EVALSPEC_REPORT:-html}"

step() { echo "evalspec-ci: $*" >&2; }

evalspec validate --locked -q "$plan" || { rc=$?; step "the plan is not valid and locked (exit $rc)"; exit "$rc"; }
if [ "$report" = none ]; then run_args=(--no-report); else run_args=(--format "$report"); fi
evalspec run --locked "$plan" --out "$out" "${run_args[@]}" || { rc=$?; step "run refused (exit $rc)"; exit "$rc"; }
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "out=$out"
    echo "claim=$out/claim.json"
    echo "summary=$out/summary.md"
    echo "junit=$out/gate.junit.xml"
    echo "ledger=$(dirname "$plan")/.evalspec/ledger.jsonl"
  } >>"$GITHUB_OUTPUT"
fi
evalspec report "$out/claim.json" --format markdown --out "$out" >/dev/null || exit $?
audit_rc=0
evalspec audit "$out/claim.json" >"$out/audit.txt" || audit_rc=$?
[ "$audit_rc" -eq 2 ] && { cat "$out/audit.txt" >&2; exit 2; }
gate_args=(--junit "$out/gate.junit.xml")
[ -n "${EVALSPEC_ACCEPT:-}" ] && gate_args+=(--accept "$EVALSPEC_ACCEPT")
gate_rc=0
evalspec gate "$out/claim.json" "${gate_args[@]}" || gate_rc=$?
if [ "$audit_rc" -ne 0 ]; then
  step "the audit found problems: $out/audit.txt lists every check"
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  printf 'gate=%s\naudit=%s\n' "$gate_rc" "$audit_rc" >>"$GITHUB_OUTPUT"
fi
if [ "$gate_rc" -ne 0 ]; then exit "$gate_rc"; fi
exit "$audit_rc"
