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


def _same_examples_in_any_order() -> None:
    """Keep each property test's examples independent of the tests that ran before it.

    Hypothesis (6.131 and later) also draws constants it finds in the project's modules that are
    already imported, and it reads them when it first generates an example after a new module
    appears. Which evalspec modules are imported depends on the tests run before in the same
    process (under pytest-xdist, on each worker's share), so even a derandomized test drew other
    examples in the full suite than alone: a property test that counted its examples' outcomes
    passed alone and failed in the suite. One fixed, empty pool of such constants makes the
    examples a function of the test's own code again. (A private hook: without it, as in older
    Hypothesis versions, nothing is changed.)
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - another Hypothesis layout: nothing to pin
        return
    if callable(getattr(providers, "_get_local_constants", None)) and hasattr(providers, "Constants"):
        empty = providers.Constants()
        providers._get_local_constants = lambda: empty


_same_examples_in_any_order()


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
