"""Errors meant for users: the CLI prints their message on one line and exits non-zero.

Exit statuses (README, docs/runs.md): 0 the run is complete; 1 a usage or input error
(:class:`UserError`); 3 a partial run (:class:`PartialRunError`: some units failed or were skipped
after retries; ``results.json`` names them); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_USER_ERROR = 1
EXIT_PARTIAL = 3
EXIT_INTERRUPTED = 130


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


class DataError(UserError):
    """Bad input data: ``DataError(path, "row 12, field 'abstract': empty")``."""

    def __init__(self, path: object, detail: str) -> None:
        self.path = str(path)
        self.detail = detail
        super().__init__(f"{path}: {detail}")


class ParseError(ValueError):
    """An LLM reply that does not have the demanded shape (raised by parsers, caught by ``judge``)."""
