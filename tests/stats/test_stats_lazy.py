"""``evalspec.stats`` loads its submodules lazily, so the plan layer uses kernels without scipy.

Each probe runs in a fresh interpreter and reports which heavy modules it loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import json, sys
{body}
print(json.dumps(sorted(m for m in ("scipy", "pyarrow", "matplotlib", "pymc") if m in sys.modules)))
"""


def _heavy(body: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", _PROBE.format(body=body)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_importing_the_plan_layer_and_a_numpy_kernel_loads_no_scipy() -> None:
    body = ("import evalspec.stats, evalspec.plan, evalspec.plan.rules, evalspec.power\n"
            "from evalspec.analyses.registry import kinds; kinds()\n"
            "from evalspec.stats.power import zero_failure_cases; assert zero_failure_cases(0.5, 0.75) == 3\n")
    assert _heavy(body) == []


def test_a_plan_with_a_critical_limit_validates_without_scipy() -> None:
    body = ("from pathlib import Path\n"
            "from evalspec.plan import load_plan\n"
            "from evalspec.plan.rules import warnings\n"
            "p = load_plan(Path('examples/support-triage/plan.yaml')).plan\n"
            "assert p.decision.critical_failures is not None\n"
            "warnings(p)\n")
    assert _heavy(body) == []


def test_a_name_loads_its_submodule_when_first_used() -> None:
    assert _heavy("import evalspec.stats as s\ns.wilson_limits") == ["scipy"]


def test_every_public_name_resolves() -> None:
    import evalspec.stats as s

    assert set(s.__all__) == set(s._HOMES)
    for name in s.__all__:
        assert getattr(s, name) is not None
    assert "wilson_limits" in dir(s)


def test_no_public_name_is_also_a_submodule() -> None:
    """A submodule named like a function would shadow it once imported (``from evalspec.stats import hdi``)."""
    import pkgutil

    import evalspec.stats as stats

    submodules = {m.name for m in pkgutil.iter_modules(stats.__path__)}
    assert not submodules & set(stats._HOMES), submodules & set(stats._HOMES)
