"""Process exit codes of the ``evalspec`` command, in one place.

They follow black and httpie: a script can tell "the check ran and found problems"
from "you called me wrong" from "evalspec itself broke".
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Exit status of every ``evalspec`` subcommand."""

    OK = 0
    """Success: the plan is valid, the run finished, the audit passed."""

    CHECK_FAILED = 1
    """The command ran and a check found problems (invalid plan, failed audit, refused re-lock; for
    ``evalspec gate``: the verdict is not an acceptable one, or a process check failed)."""

    BAD_INPUT = 2
    """Bad input or usage: unreadable file, YAML syntax, bad results data, unknown option."""

    INTERNAL_ERROR = 70
    """A bug in evalspec (EX_SOFTWARE). A short message is printed; ``--debug`` shows the traceback."""
