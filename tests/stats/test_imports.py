"""``import evalspec.stats`` stays cheap: no scipy.stats, scipy.optimize or pandas at import.

Timing is measured, not asserted (``benchmarks/bench_imports.py`` prints it next to
``import numpy, scipy.special``); this test pins the structure that makes it fast.
"""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("scipy.stats", "scipy.optimize", "pandas", "statsmodels", "pymc", "matplotlib")


def test_import_loads_no_heavy_module() -> None:
    code = (
        "import sys, evalspec.stats\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "", f"imported at module level: {out.stdout.strip()}"
