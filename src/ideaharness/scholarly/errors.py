"""Errors raised by the scholarly clients (Semantic Scholar, OpenAlex, arXiv, OpenReview).

Each carries the HTTP status, the URL without secrets and the service's error text, so the CLI
can print one line that says what to fix.
"""

from __future__ import annotations

from ideaharness.errors import UserError


class ScholarlyError(UserError):
    """A scholarly API call failed; ``status`` is the HTTP status (None for transport errors).

    ``detail`` is the service's message alone; ``retry_after_s`` the server's Retry-After (seconds)
    when it sent one, read by the shared retry policy (:mod:`ideaharness.net.retry`).
    """

    def __init__(self, message: str, *, status: int | None = None, url: str | None = None,
                 retry_after_s: float | None = None) -> None:
        self.status = status
        self.url = url
        self.detail = message
        self.retry_after_s = retry_after_s
        prefix = f"HTTP {status} " if status is not None else ""
        where = f"from {url}" if url else ""
        super().__init__(f"{prefix}{where}: {message}".strip(": ").strip())


class BadRequest(ScholarlyError):
    """HTTP 400: a parameter or field name the service does not accept (fix the query)."""


class Forbidden(ScholarlyError):
    """HTTP 401/403: missing, wrong or blocked API key / login (or a bot challenge)."""


class NotFound(ScholarlyError):
    """HTTP 404: the paper / work / note id is unknown to the service."""


class RateLimited(ScholarlyError):
    """HTTP 429 still returned after every allowed retry (slow down or get an API key)."""


class ServerError(ScholarlyError):
    """HTTP 5xx or a timeout / connection error still failing after every allowed retry."""


class ConfigError(UserError):
    """A client is missing configuration (credentials, a review-form table entry, ...)."""
