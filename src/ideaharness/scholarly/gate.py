"""One Semantic Scholar client per run, and what the run has learnt about the service.

Two kinds of failure are told apart, because they call for different answers:

* the host is unreachable (offline, DNS failure, a firewall dropping packets, nothing answering):
  detected once, fast, by a probe before the first request (one GET of the API root, bounded by
  ``probe_timeout_s``; any HTTP status counts as an answer). From then on every call is refused at
  once with :attr:`ScholarGate.reason`, so an offline run does not wait on each instance;
* one request fails (HTTP 400 for an odd query, a 404, a 5xx or 429 after the client's retries,
  a body that is not JSON): only that call fails. The caller skips the unit that needed it and
  counts it; every other instance still uses the service.

Error texts are redacted (:func:`ideaharness.redaction.redact`) before they are kept.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ideaharness.redaction import redact

DEFAULT_BASE_URL = "https://api.semanticscholar.org"
PROBE_TIMEOUT_S = 5.0
REQUEST_TIMEOUT_S = 30.0


class ScholarUnavailable(Exception):
    """A Semantic Scholar call that could not be made or failed; the message says why (redacted)."""


def _is_loopback(url: str) -> bool:
    return url.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]"))


class ScholarGate:
    """Opens the Semantic Scholar client once, probes the host once, and tells failures apart.

    Args:
        base_url: API root (default the public service); a local replay server in tests.
        cache_dir: response cache folder of the client (None = no cache).
        client: an already built client (``SemanticScholar`` or compatible); not probed.
        timeout_s: bound of one request in seconds (``--timeout``, at most 30 s here) and of the
            probe (at most 5 s).

    ``reason`` is None while the host is reachable, else why it is not (set once).
    """

    def __init__(self, base_url: str | None = None, cache_dir: str | None = None, client: Any = None,
                 *, timeout_s: float = REQUEST_TIMEOUT_S) -> None:
        self.reason: str | None = None
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.client = client
        self.timeout_s = min(timeout_s, REQUEST_TIMEOUT_S)
        self.probe_timeout_s = min(timeout_s, PROBE_TIMEOUT_S)
        self.probes = 0
        self._probed = client is not None
        self._lock = asyncio.Lock()
        self._cache_dir = cache_dir

    def _open(self) -> Any:
        if self.client is None:
            from ideaharness.scholarly import SemanticScholar

            local = _is_loopback(self.base_url)
            self.client = SemanticScholar(
                base_url=self.base_url, cache_dir=self._cache_dir,
                min_interval_s=0.0 if local else None, max_retries=1 if local else 3, backoff_base_s=0.2,
                timeout_s=self.timeout_s,
            )
        return self.client

    async def _probe(self) -> None:
        """Decide once whether the host answers at all (any HTTP status does)."""
        import httpx

        if self._probed:
            return
        async with self._lock:  # concurrent first callers wait for the one probe
            if self._probed:
                return
            self.probes += 1
            try:
                async with httpx.AsyncClient(timeout=self.probe_timeout_s) as http:
                    await http.get(self.base_url + "/")
            except (httpx.HTTPError, OSError) as exc:
                self.reason = redact(
                    f"Semantic Scholar unreachable at {self.base_url} (no answer within "
                    f"{self.probe_timeout_s:g} s: {type(exc).__name__}: {exc})"
                )
            self._probed = True

    async def check(self) -> str | None:
        """Probe the host if not done yet; the reason it is unusable, or None when it answers."""
        await self._probe()
        return self.reason

    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``await client.<method>(...)``.

        Raises:
            ScholarUnavailable: the host is unreachable (``reason``), or this one call failed.
        """
        import httpx

        from ideaharness.scholarly.errors import ScholarlyError, ServerError

        await self._probe()
        if self.reason is not None:
            raise ScholarUnavailable(self.reason)
        try:
            return await getattr(self._open(), method)(*args, **kwargs)
        except ServerError as exc:
            message = redact(f"Semantic Scholar {method} failed: {exc}")
            if exc.status is None:  # the connection itself failed after retries: the host went away
                self.reason = message
            raise ScholarUnavailable(message) from None
        except (ScholarlyError, httpx.HTTPError, OSError, ValueError) as exc:
            raise ScholarUnavailable(
                redact(f"Semantic Scholar {method} failed: {type(exc).__name__}: {exc}")
            ) from None

    async def aclose(self) -> None:
        if self.client is not None and hasattr(self.client, "aclose"):
            await self.client.aclose()
