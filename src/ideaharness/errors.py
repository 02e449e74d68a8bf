"""Errors meant for users: the CLI prints their message on one line and exits non-zero.

Exit statuses (README, docs/runs.md): 0 the run is complete; 1 a usage or input error
(:class:`UserError`); 3 a partial run (:class:`PartialRunError`: some units failed or were skipped
after retries; ``results.json`` names them); 130 interrupted (Ctrl-C); 143 terminated (SIGTERM).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_USER_ERROR = 1
EXIT_PARTIAL = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class UserError(Exception):
    """A problem the user can fix (bad input file, unknown model, missing key).

    The message must name the file, row and field, or the fix. The CLI prints it as one line
    (``error: <message>``) and exits with :attr:`exit_code` (1); no traceback.
    """

    exit_code: int = EXIT_USER_ERROR


class PartialRunError(UserError):
    """The run ended with units that failed or were skipped after retries (exit status 3).

    Everything finished is saved; running the same command again retries the missing units.
    """

    exit_code = EXIT_PARTIAL


class Terminated(KeyboardInterrupt):
    """The run received SIGTERM (a scheduler stopping it): handled like Ctrl-C — records kept,
    results and report written — then the CLI exits with status 143 (128 + 15)."""

    exit_code = EXIT_TERMINATED


class DataError(UserError):
    """Bad input data: ``DataError(path, "row 12, field 'abstract': empty")``."""

    def __init__(self, path: object, detail: str) -> None:
        self.path = str(path)
        self.detail = detail
        super().__init__(f"{path}: {detail}")


class ParseError(ValueError):
    """An LLM reply that does not have the demanded shape (raised by parsers, caught by ``judge``)."""


class DataWarning(UserWarning):
    """Input that loads but was changed or is incomplete (e.g. a lone surrogate replaced by U+FFFD).

    Issued with :func:`warnings.warn`; the CLI prints it as one line ``warning: <message>``.
    """


class StorageError(UserError):
    """A file of the run, the cache or a dataset cannot be written (disk full, read-only, quota).

    Nothing is left half-written; once the cause is fixed, the same command resumes.
    """


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or quota) is full: ``OSError`` ENOSPC/EDQUOT or SQLite's
    "database or disk is full"."""
    import errno
    import sqlite3

    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
    if isinstance(exc, sqlite3.OperationalError):
        return "full" in str(exc).lower()
    return False


def storage_error(path: object, exc: BaseException) -> StorageError:
    """The one-line :class:`StorageError` for a failed write of ``path``.

    Disk full: names the path and what to free; anything else: the path and the system's reason.
    """
    if is_disk_full(exc):
        return StorageError(
            f"{path}: no space left on the device; free space there (old run directories, "
            "`ideaharness cache clear`, temporary files), then run the same command again to resume"
        )
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return StorageError(f"{path}: cannot be written ({reason})")
