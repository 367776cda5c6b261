"""External tools of the report tests (chromium, poppler-utils): find them or skip/fail."""

from __future__ import annotations

import os
import shutil

import pytest

__all__ = ["require_tool"]


def require_tool(*names: str) -> str:
    """Path of the first tool found among ``names``; skip (or fail in CI) when none is installed."""
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    reason = f"{' / '.join(names)} not installed (Debian: {'chromium' if 'chromium' in names else 'poppler-utils'})"
    if os.environ.get("EVALSPEC_REQUIRE_TOOLS") == "1":
        pytest.fail(f"{reason}, and EVALSPEC_REQUIRE_TOOLS=1 requires it")
    pytest.skip(reason)
