"""Atomic file writes shared by every step that writes output (lock, claim, report).

A write goes to a temporary file in the target folder, is flushed and fsynced, gets the
permissions a plain ``open(path, "w")`` would have (``0o666`` less the umask; ``mkstemp``
alone would leave ``0o600``), and replaces the target with :func:`os.replace`. A failure at
any point removes the temporary file and leaves the target as it was: never half a file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["write_bytes_atomic", "write_text_atomic", "folder_lock", "OutputSet", "LOCK_WAIT_SECONDS"]


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes_atomic(path: Path | str, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; create the parent folder if needed."""
    path = Path(path)
    _refuse_special(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # name the file the user asked for, not the temporary name beside it
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_current_umask())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename == tmp:
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise
    return path


def _refuse_special(path: Path) -> None:
    """A device, named pipe or socket where a file is to be written is refused: replacing it would
    destroy it (``--output /dev/null`` run as root would leave a regular file at ``/dev/null``)."""
    import stat

    try:
        st = os.stat(path)
    except OSError:
        return
    if not stat.S_ISREG(st.st_mode):
        from evalspec._files import special_kind
        from evalspec.errors import InputError

        raise InputError(f"{path}: is {special_kind(st.st_mode)}, not a file; evalspec writes its outputs as new "
                         "files (atomically) and will not replace it; name a file path")


def write_text_atomic(path: Path | str, text: str) -> Path:
    """Write ``text`` (UTF-8, ``\\n`` line endings as given) to ``path`` atomically."""
    return write_bytes_atomic(path, text.encode("utf-8"))


# -- folders written by one process at a time ----------------------------------------------

#: Seconds a command waits for another evalspec process writing the same folder.
LOCK_WAIT_SECONDS = 120.0


@contextlib.contextmanager
def folder_lock(folder: Path | str, *, wait: float | None = None) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (an advisory ``flock`` on the folder itself).

    Two evalspec processes writing the same folder (two ``run`` into one ``--out``, two
    ``lock`` of one plan) take turns instead of mixing their files. The lock needs no lock
    file and is released by the operating system when its holder ends, even by ``kill -9``.
    Waits at most ``wait`` seconds (default :data:`LOCK_WAIT_SECONDS`), then refuses (exit 2).
    Where ``flock`` does not exist (Windows) this is a no-op.
    """
    import time

    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        deadline = time.monotonic() + (LOCK_WAIT_SECONDS if wait is None else wait)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    from evalspec.errors import InputError

                    raise InputError(f"{folder}: another evalspec process is writing to this folder; wait for it to "
                                     "finish, or choose another folder") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


class OutputSet:
    """The files of one run (claim and reports), written as one set.

    Everything is first written into a fresh hidden staging folder inside the target
    folder (:meth:`path`). :meth:`commit` then, holding :func:`folder_lock` on the target,
    removes *every* output of an earlier run (reports first, the claim last), moves the new
    files in (the claim first) and removes the staging folder. Killed at any moment, the
    target holds part of the old set or part of the new set, never a claim of one run beside
    a report of another; concurrent runs into one folder take turns. Leaving the ``with``
    block with an exception commits nothing.
    """

    #: Every file a run may leave in its output folder, in the order they are moved in; the
    #: statement and signature (`evalspec attest`), the audit report and the CI recipe's summary,
    #: JUnit report and audit text (ci/evalspec-ci.sh) are about one claim, so a new run removes
    #: them with the old claim.
    NAMES: tuple[str, ...] = ("claim.json", "report.html", "report.pdf", "claim.intoto.json", "claim.intoto.json.sig",
                              "audit.html", "audit.pdf", "summary.md", "gate.junit.xml", "audit.txt")
    #: Further outputs of a run, by name pattern (``--save-posterior`` writes ``posterior-<label>.nc``).
    PATTERNS: tuple[str, ...] = ("posterior-*.nc",)
    STAGING_PREFIX = ".evalspec-staging-"

    def __init__(self, target: Path | str, names: tuple[str, ...] | None = None,
                 patterns: tuple[str, ...] | None = None) -> None:
        self.target = Path(target)
        self.names = tuple(names) if names is not None else self.NAMES
        self.patterns = tuple(patterns) if patterns is not None else self.PATTERNS
        self.staging: Path | None = None
        self.committed: list[Path] = []

    def __enter__(self) -> OutputSet:
        from evalspec._files import refuse_symlinked_folder

        refuse_symlinked_folder(self.target, what="the output folder", option="--out")
        try:
            self.target.mkdir(parents=True, exist_ok=True)
            self.staging = Path(tempfile.mkdtemp(prefix=self.STAGING_PREFIX, dir=self.target))
        except OSError as exc:  # name the folder the user chose, not a temporary name inside it
            raise OSError(exc.errno, exc.strerror, str(self.target)) from None
        return self

    def path(self, name: str) -> Path:
        """Where to write output ``name`` (one of :attr:`names`) before the commit."""
        if name not in self.names:
            raise ValueError(f"{name!r} is not one of this output set's files {self.names}")
        assert self.staging is not None, "use OutputSet as a context manager"
        return self.staging / name

    def commit(self) -> list[Path]:
        """Replace the previous run's outputs by the staged ones; return the files now in place."""
        import shutil
        import time

        assert self.staging is not None
        staged = [n for n in self.names if (self.staging / n).is_file()]
        staged += sorted(p.name for pat in self.patterns for p in self.staging.glob(pat) if p.is_file())
        with folder_lock(self.target):
            old = [p.name for pat in self.patterns for p in self.target.glob(pat)]
            for name in [*old, *reversed(self.names)]:  # the old claim goes last
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.target / name)
            _fsync_folder(self.target)
            for name in staged:  # the claim first: a report or posterior is never without its claim
                os.replace(self.staging / name, self.target / name)
            _fsync_folder(self.target)
            self.committed = [self.target / n for n in staged]
            for old in self.target.glob(self.STAGING_PREFIX + "*"):  # left by a killed run, not one running now
                with contextlib.suppress(OSError):
                    if old != self.staging and time.time() - old.stat().st_mtime > 3600:
                        shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(self.staging, ignore_errors=True)
        self.staging = None
        return self.committed

    def commit_beside(self, claim: Path | None = None, claim_sha256: str | None = None) -> list[Path]:
        """Move the staged files in beside a claim, replacing only files of the same names.

        For outputs made *from* a claim (``report``, ``audit --report``): holding the same folder
        lock as :meth:`commit`, the claim in the folder must still be the one they were made
        from (``claim_sha256`` of its bytes), else nothing is moved and an ``InputError`` says
        so: a report is never left beside a newer claim that a run wrote meanwhile.
        """
        import hashlib
        import shutil

        assert self.staging is not None
        staged = [n for n in self.names if (self.staging / n).is_file()]
        with folder_lock(self.target):
            if claim is not None and claim_sha256 is not None:
                try:
                    now = hashlib.sha256(claim.read_bytes()).hexdigest() if claim.is_file() else None
                except OSError:
                    now = None
                if now != claim_sha256:
                    from evalspec.errors import InputError

                    raise InputError(f"{claim}: the claim changed (or was removed) while its report was made, "
                                     "probably by an `evalspec run` into the same folder; nothing was written. "
                                     "Run the command again on the new claim.")
            for name in staged:
                os.replace(self.staging / name, self.target / name)
            _fsync_folder(self.target)
            self.committed = [self.target / n for n in staged]
        shutil.rmtree(self.staging, ignore_errors=True)
        self.staging = None
        return self.committed

    def __exit__(self, *exc: object) -> None:
        import shutil

        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging = None


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
