"""The fuzz suite: hostile plans, results and claims through the CLI, in-process.

Budget: ``EVALSPEC_FUZZ_EXAMPLES`` examples per test (default 20, fixed seed); set it to a
few thousand for a long campaign, e.g. ``EVALSPEC_FUZZ_EXAMPLES=2000 pytest tests/fuzz``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "run"))
