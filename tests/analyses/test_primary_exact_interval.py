"""Issue 18, study 33: the primary comparison of few independent pass/fail cases holds its level.

Under ``method: auto`` without clusters, a primary ``paired_difference`` of at most
``EXACT_INTERVAL_MAX_CASES`` binary cases reads the interval that inverts the exact unconditional
test (Sidik 2003), not Newcombe's (whose lower end exceeds 0 with probability 3.6 % at n = 10,
truth 0, for a stated 2.5 %). Checked here: by exact enumeration of every table at n = 10 and 20
over a grid of the nuisance (the discordance probability) at truth 0, the lower end exceeds 0 with
probability at most 2.5 %; an explicit ``method: newcombe`` stays Newcombe; and a crafted study
run end to end (``evalspec run`` on a plan in a temporary folder) reports the interval an
independent computation gives.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "run"))

from run_helpers import Workspace  # noqa: E402

from evalspec.analyses.paired import EXACT_INTERVAL_MAX_CASES, EXACT_INTERVAL_METHOD  # noqa: E402
from evalspec.stats import paired_difference_interval  # noqa: E402
from evalspec.stats.paired_exact import paired_exact_interval  # noqa: E402

ALPHA = 0.025


def _p_lower_above_zero(n: int, lower: dict[tuple[int, int], float]) -> float:
    """max over the discordance probability pi of P(lower end > 0) at p12 = p21 = pi / 2 (exact sums).

    The multinomial probability of (b, c) is written out here (binomial of the discordant total
    times a fair split), independently of evalspec's code."""
    worst = 0.0
    for pi in np.linspace(0.005, 1.0, 200):
        tot = 0.0
        for (b, c), low in lower.items():
            if low > 0.0:
                k = b + c
                tot += math.comb(n, k) * pi**k * (1 - pi) ** (n - k) * math.comb(k, b) * 0.5**k
        worst = max(worst, tot)
    return worst


@pytest.mark.parametrize("n", [10, 20])
def test_the_auto_primary_lower_end_exceeds_zero_at_most_2_5_percent_at_truth_zero(n: int) -> None:
    assert n <= EXACT_INTERVAL_MAX_CASES
    # the lower end is at most the estimate, so only b > c can put it above 0
    lower = {(b, c): paired_exact_interval(b, c, n, 0.95)[0]
             for b in range(n + 1) for c in range(n + 1 - b) if b > c}
    assert _p_lower_above_zero(n, lower) <= ALPHA + 1e-9
    # Newcombe (all concordant cases both-pass) exceeds it: the reason for the change
    newcombe = {(b, c): paired_difference_interval(n - b - c, b, c, 0, method="newcombe").low
                for b in range(n + 1) for c in range(n + 1 - b) if b > c}
    assert _p_lower_above_zero(n, newcombe) > ALPHA


PLAN = """\
evalspec: 1
id: study-33
title: Few independent cases
question: Should we move from B to A?
decision_owner: test owner
population: {n} invented cases
data:
  results: results.jsonl
  columns: {{candidate: candidate, outcome: passed}}
candidates:
  A: {{model: m-a, version: v1}}
  B: {{model: m-b, version: v1}}
baseline: B
units: {{case: case_id}}
analyses:
  - {{kind: paired_difference{method}}}
decision: {{minimum_improvement: 0.05, minimum_units: 1}}
systematic_limits: [Invented cases.]
"""


def _study(ws: Workspace, n: int, b: int, c: int, a: int, method: str = "") -> dict:
    rows = []
    for i in range(n):
        x, y = (1, 0) if i < b else (0, 1) if i < b + c else (1, 1) if i < b + c + a else (0, 0)
        for cand, v in (("A", x), ("B", y)):
            rows.append(json.dumps({"candidate": cand, "case_id": f"c{i}", "passed": bool(v)}))
    (ws.path / "results.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (ws.path / "plan.yaml").write_text(PLAN.format(n=n, method=method), encoding="utf-8")
    res = ws.cli("run", "plan.yaml")
    assert res.exit_code in (0, 1), res.output
    claim = json.loads((ws.path / "out" / "claim.json").read_text(encoding="utf-8"))
    (result,) = [r for r in claim["analyses"] if r.get("kind") == "paired_difference"]
    return result


def _interval_of(result: dict) -> tuple[float, float, str]:
    body = result.get("result", result)
    return float(body["low"]), float(body["high"]), str(body["method"])


def test_a_crafted_small_study_reports_the_exact_interval_end_to_end(tmp_path: Path) -> None:
    n, b, c, a = 20, 8, 2, 8  # 8 cases only A passes, 2 only B: Newcombe's lower end is +0.5 points
    low, high, method = _interval_of(_study(Workspace(tmp_path), n, b, c, a))
    assert method == EXACT_INTERVAL_METHOD
    ref_low, ref_high = paired_exact_interval(b, c, n, 0.95)
    assert low == pytest.approx(ref_low, abs=1e-9) and high == pytest.approx(ref_high, abs=1e-9)
    # independently: at the lower end the exact one-sided p-value of H0 "delta <= low" is 2.5 %,
    # the largest over the nuisance of P(a table at least as favourable to A, in Tango's order)
    assert _sup_p_at_least(n, b, c, low) == pytest.approx(ALPHA, abs=2e-4)
    assert low < 0 < _newcombe_low(n, a, b, c)  # Newcombe would have shown a gain


def test_explicit_newcombe_stays_newcombe(tmp_path: Path) -> None:
    n, b, c, a = 20, 7, 1, 8
    low, high, method = _interval_of(_study(Workspace(tmp_path), n, b, c, a, method=", method: newcombe"))
    ref = paired_difference_interval(a, b, c, n - a - b - c, method="newcombe")
    assert method != EXACT_INTERVAL_METHOD
    assert (low, high) == pytest.approx((ref.low, ref.high), abs=1e-12)


def _newcombe_low(n: int, a: int, b: int, c: int) -> float:
    return paired_difference_interval(a, b, c, n - a - b - c, method="newcombe").low


def _tango(b: float, c: float, n: int, d: float) -> float:
    """Tango's (1998) score statistic for H0 p12 - p21 = d (his closed-form restricted MLE)."""
    aa, bb, cc = 2 * n, -b - c + (2 * n - b + c) * d, -c * d * (1 - d)
    q21 = max((-bb + math.sqrt(max(bb * bb - 4 * aa * cc, 0.0))) / (2 * aa), 0.0)
    var = n * (2 * q21 + d * (1 - d))
    num = b - c - n * d
    return num / math.sqrt(var) if var > 0 else (0.0 if num == 0 else math.copysign(math.inf, num))


def _sup_p_at_least(n: int, b: int, c: int, d: float) -> float:
    """sup over the boundary p12 - p21 = d of P(Z(B, C; d) >= Z(b, c; d)), by brute force over all tables."""
    z_obs = _tango(b, c, n, d)
    tables = [(i, j) for i in range(n + 1) for j in range(n + 1 - i)
              if _tango(i, j, n, d) >= z_obs - 1e-9 * max(1.0, abs(z_obs))]
    worst = 0.0
    for pi in np.linspace(abs(d) + 1e-6, 1.0 - 1e-9, 400):
        p12, p21 = (pi + d) / 2, (pi - d) / 2
        tot = sum(math.factorial(n) / (math.factorial(i) * math.factorial(j) * math.factorial(n - i - j))
                  * p12**i * p21**j * (1 - pi) ** (n - i - j) for i, j in tables)
        worst = max(worst, tot)
    return worst
