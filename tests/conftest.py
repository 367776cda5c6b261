"""Every property test in the suite is deterministic: one hypothesis profile for all of them.

``derandomize=True`` draws the examples from a seed fixed by each test's own code, and
``database=None`` keeps no examples between runs, so the README's test command gives the same
result on every machine and every run. A test's own ``@settings(...)`` inherits these (it sets
only what it names, such as ``max_examples``). ``deadline=None``: the shared 2-core machines
time one example differently from run to run, and a timing is not what these tests assert.
"""

from hypothesis import settings

settings.register_profile("evalspec", derandomize=True, database=None, deadline=None, print_blob=True)
settings.load_profile("evalspec")


# --- no test writes into the repository's examples -------------------------------------------
# A run beside a plan appends a look to the ledger next to it (`.evalspec/ledger.jsonl`) and writes
# `out/`; a test that ran a bundled example in place would leave a look behind that changes the
# next run's claim ("look 2 of a design planned for 1") and the goldens made from it. Every test
# copies an example into its own temporary folder instead. The whole run fails when anything under
# examples/ was written (checked once, in the process that started pytest); run serially
# (`-p no:xdist` or `-n 0`), the guard names the test that wrote.

import os  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

_EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
_AT_START: dict[str, tuple[int, int]] = {}


def _written_beside_examples() -> dict[str, tuple[int, int]]:
    found: dict[str, tuple[int, int]] = {}
    for pattern in ("*/.evalspec/**/*", "*/out/**/*", "*/*.lock.json"):
        for p in _EXAMPLES.glob(pattern):
            if p.is_file():
                st = p.stat()
                found[str(p.relative_to(_EXAMPLES))] = (st.st_size, st.st_mtime_ns)
    return found


def _changed(before: dict[str, tuple[int, int]]) -> list[str]:
    return sorted(k for k, v in _written_beside_examples().items() if before.get(k) != v)


def _in_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    if not _in_worker(session.config):
        _AT_START.update(_written_beside_examples())


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _in_worker(session.config):
        return
    changed = _changed(_AT_START)
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("FAILED: a test wrote into the repository's examples/ (copy the example into "
                                f"tmp_path and run it there): {', '.join(changed)}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def _examples_stay_untouched(request: pytest.FixtureRequest):
    if _in_worker(request.config) or os.environ.get("PYTEST_XDIST_WORKER"):
        yield  # another worker may be writing at the same time: the session's check decides
        return
    before = _written_beside_examples()
    yield
    changed = _changed(before)
    assert not changed, ("this test wrote into the repository's examples/ (copy the example into "
                         f"tmp_path and run it there): {', '.join(changed)}")
