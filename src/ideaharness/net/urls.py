"""Endpoint URLs given by users (``--base-url``, ``--judge-base-url``, ``OPENAI_BASE_URL``), checked
before any request so a typo is refused up front instead of failing every call of a run."""

from __future__ import annotations

from urllib.parse import urlsplit

URL_EXAMPLE = "http://localhost:8000/v1"


def check_base_url(value: str) -> str:
    """``value`` (stripped) if it is an endpoint URL: scheme ``http`` or ``https``, a host, and an
    optional port in 0..65535.

    Raises:
        ValueError: not such a URL (the message gives an example).
    """
    problem = f"not an http(s) URL with a host, e.g. {URL_EXAMPLE}"
    text = value.strip()
    try:
        parts = urlsplit(text)
        _ = parts.port  # a port that is not a number in 0..65535 raises ValueError
    except ValueError:
        raise ValueError(problem) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(problem)
    return text
