"""Errors meant for users: the CLI prints their message on one line and exits non-zero."""

from __future__ import annotations


class UserError(Exception):
    """A problem the user can fix (bad input file, unknown model, missing key).

    The message must name the file, row and field, or the fix. The CLI prints it as one line
    (``error: <message>``) and exits with status 2; no traceback.
    """


class DataError(UserError):
    """Bad input data: ``DataError(path, "row 12, field 'abstract': empty")``."""

    def __init__(self, path: object, detail: str) -> None:
        self.path = str(path)
        self.detail = detail
        super().__init__(f"{path}: {detail}")


class ParseError(ValueError):
    """An LLM reply that does not have the demanded shape (raised by parsers, caught by ``judge``)."""
