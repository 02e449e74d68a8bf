"""Endpoint URLs given by users (``--base-url``, ``--judge-base-url``, ``OPENAI_BASE_URL``), checked
before any request so a typo is refused up front instead of failing every call of a run."""

from __future__ import annotations

from urllib.parse import urlsplit

URL_EXAMPLE = "http://localhost:8000/v1"


def check_base_url(value: str) -> str:
    """``value`` (stripped) if it is an endpoint URL: scheme ``http`` or ``https``, a host, and an
    optional port in 1..65535. A ``:`` with no port after it (``http://127.0.0.1:/v1``) is refused:
    :func:`urllib.parse.urlsplit` reads it as no port, and the request would silently go to port 80
    (443).

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
    if parts.netloc.endswith(":") or parts.port == 0:
        raise ValueError(f"no port after ':' (give one in 1..65535, e.g. {URL_EXAMPLE}, or drop the ':')"
                         if parts.port is None else f"port 0 cannot be connected to, e.g. {URL_EXAMPLE}")
    return text
