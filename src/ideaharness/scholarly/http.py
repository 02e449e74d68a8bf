"""One shared async HTTP layer for every scholarly client.

Polite by construction: a per-host minimum interval between requests (aiolimiter,
:class:`~ideaharness.net.ratelimit.HostRateLimits`), the retry policy the LLM layer uses too
(:class:`~ideaharness.net.retry.RetryPolicy`: bounded attempts, full-jitter exponential backoff,
``Retry-After`` honoured and capped; retries on 408 / 429 / 5xx / timeouts / connection errors only),
an on-disk response cache (:mod:`ideaharness.scholarly.cache`) and one exception per
failure class (:mod:`ideaharness.scholarly.errors`). API keys travel in headers or secret query
parameters and are never part of the cache key, the stored data or an error message: every error
text is redacted (:func:`ideaharness.redaction.redact`) of the request's key headers, secret
parameters and secret body fields (a login password), even when the server echoes them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ideaharness.net.ratelimit import HostRateLimits
from ideaharness.net.retry import RetryPolicy, is_retryable_status, parse_retry_after
from ideaharness.redaction import redact
from ideaharness.scholarly.cache import DEFAULT_SECRET_PARAMS, ResponseCache, cache_key, strip_secrets
from ideaharness.scholarly.errors import (
    BadRequest,
    Forbidden,
    NotFound,
    RateLimited,
    ScholarlyError,
    ServerError,
)

if TYPE_CHECKING:
    import httpx

CACHE_FILE = "responses.sqlite"
SECRET_HEADERS = frozenset({"x-api-key", "api-key", "authorization", "cookie", "proxy-authorization"})


def _secret_values(
    headers: Mapping[str, str], params: Mapping[str, Any], body: Any, secret_params: tuple[str, ...]
) -> list[str]:
    """The secret values a request carries: key headers, secret query parameters, secret body fields."""
    names = {p.lower() for p in secret_params}
    values = [v for k, v in headers.items() if k.lower() in SECRET_HEADERS]
    values += [v.split(" ", 1)[1] for v in list(values) if v.lower().startswith("bearer ")]
    values += [str(v) for k, v in params.items() if k.lower() in names and v is not None]
    if isinstance(body, Mapping):
        values += [str(v) for k, v in body.items() if str(k).lower() in names and v is not None]
    return values


@dataclass
class HTTPStats:
    """Counters of one :class:`ScholarlyHTTP`: network requests sent, cache hits, retries, waits.

    ``slept_s`` totals every wait in seconds (per-host pacing and retry backoff); ``retry_wait_s``
    the retry backoff alone.
    """

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    slept_s: float = 0.0
    retry_wait_s: float = 0.0
    by_status: dict[int, int] = field(default_factory=dict)


def _error_text(response: httpx.Response, secrets: list[str]) -> str:
    """The service's error message, redacted before it is shortened (so no key survives in part)."""
    text = response.text.strip()
    try:
        data = response.json()
    except ValueError:
        return redact(text, secrets)[:300] or response.reason_phrase
    if isinstance(data, dict):
        for k in ("error", "message", "detail", "name"):
            if data.get(k):
                return redact(str(data[k]), secrets)[:300]
    return redact(text, secrets)[:300]


class ScholarlyHTTP:
    """Async HTTP client shared by the scholarly clients.

    Args:
        cache_dir: folder of the response cache (``responses.sqlite``); None = no cache.
        min_interval_s: minimum seconds between two requests to the same host; a float for all
            hosts or ``{host: seconds}`` (hosts not listed: 0). S2 with a key: 1.05; arXiv: 3.
        max_retries: retries after the first attempt for 408 / 429 / 5xx / timeouts (then the error
            is raised); 0 disables retries.
        backoff_base_s, backoff_max_s: wait before retry ``k`` (0-based) is
            ``U(0, min(backoff_max_s, backoff_base_s * 2**k))`` (full jitter), unless the server sent
            ``Retry-After`` (then that, capped at ``backoff_max_s``).
        timeout_s: per-request timeout.
        headers: default headers (e.g. ``{"x-api-key": ...}``); never cached or logged.
        secret_params: query parameter names stripped from cache keys and error messages.
        transport: optional httpx transport (tests use a real local server instead).
        jitter_seed: seed of the jitter generator (recorded by builders).
        retry_policy: the retry policy; default one built from ``max_retries``, ``backoff_base_s``,
            ``backoff_max_s`` and ``jitter_seed``.

    ``stats`` counts network requests, cache hits and retries.
    """

    def __init__(
        self,
        *,
        cache_dir: str | Path | None = None,
        min_interval_s: float | Mapping[str, float] = 0.0,
        max_retries: int = 6,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        timeout_s: float = 30.0,
        headers: Mapping[str, str] | None = None,
        secret_params: tuple[str, ...] = DEFAULT_SECRET_PARAMS,
        transport: httpx.AsyncBaseTransport | None = None,
        jitter_seed: int | None = 0,
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        self.retry_policy = retry_policy or RetryPolicy(
            max_retries=max_retries, base_s=backoff_base_s, cap_s=backoff_max_s, seed=jitter_seed
        )
        self.cache = ResponseCache(Path(cache_dir) / CACHE_FILE) if cache_dir is not None else None
        self.pacing = HostRateLimits(min_interval_s)
        self.secret_params = secret_params
        self.stats = HTTPStats()
        self._headers = dict(headers or {})
        import httpx  # ~70 ms to import (its CLI pulls in pygments): only when a client is made

        self._client = httpx.AsyncClient(timeout=timeout_s, transport=transport, follow_redirects=True)

    @property
    def max_retries(self) -> int:
        """Retries after the first attempt, from the retry policy."""
        return self.retry_policy.max_retries

    # -- requests -----------------------------------------------------------------------------
    async def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
        use_cache: bool = True,
    ) -> str:
        """Send one request (or answer it from the cache) and return the response body text.

        Raises:
            BadRequest: 400. Forbidden: 401/403. NotFound: 404 (also when cached).
            RateLimited: 429 after all retries. ServerError: 5xx / timeout after all retries.
            ScholarlyError: any other non-2xx status.
        """
        clean_params = {k: v for k, v in (params or {}).items() if v is not None}
        safe_url = strip_secrets(url, self.secret_params)
        key = cache_key(method, url, clean_params, json_body, self.secret_params)
        if use_cache and self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cache_hits += 1
                status, body = hit
                if status == 404:
                    raise NotFound(body[:300] or "not found", status=404, url=safe_url)
                return body
        host = urlsplit(url).netloc
        all_headers = {**self._headers, **(headers or {})}
        secrets = _secret_values(all_headers, clean_params, json_body, self.secret_params)
        try:
            return await self._send(method, url, safe_url, key, clean_params, json_body, all_headers,
                                    use_cache, host, secrets)
        except ScholarlyError as exc:
            cleaned = redact(str(exc), secrets)
            if cleaned != str(exc):
                exc.args = (cleaned,)
            raise

    async def _send(self, method: str, url: str, safe_url: str, key: str, clean_params: dict[str, Any],
                    json_body: Any, all_headers: dict[str, str], use_cache: bool, host: str,
                    secrets: list[str]) -> str:
        async def attempt() -> str:
            return await self._attempt(method, url, safe_url, key, clean_params, json_body, all_headers,
                                       use_cache, host, secrets)

        def on_retry(_exc: BaseException, wait_s: float) -> None:
            self.stats.retries += 1
            self.stats.retry_wait_s += wait_s
            self.stats.slept_s += wait_s

        try:
            return await self.retry_policy.call(attempt, retryable=_retryable, on_retry=on_retry)
        except (RateLimited, ServerError) as exc:  # retryable kinds escape only when retries are spent
            attempts = self.retry_policy.max_attempts
            raise type(exc)(f"{exc.detail} (gave up after {attempts} attempts)", status=exc.status,
                            url=exc.url) from None

    async def _attempt(self, method: str, url: str, safe_url: str, key: str, clean_params: dict[str, Any],
                       json_body: Any, all_headers: dict[str, str], use_cache: bool, host: str,
                       secrets: list[str]) -> str:
        """One request; raises RateLimited / ServerError for faults the retry policy may retry."""
        import httpx

        waited = self.pacing.waited_s
        await self.pacing.wait_turn(host)
        self.stats.slept_s += self.pacing.waited_s - waited
        self.stats.requests += 1
        try:
            response = await self._client.request(
                method, url, params=clean_params or None, json=json_body, headers=all_headers
            )
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            raise ServerError(f"{type(exc).__name__}: {exc}", url=safe_url) from None
        status = response.status_code
        self.stats.by_status[status] = self.stats.by_status.get(status, 0) + 1
        if 200 <= status < 300:
            body = response.text
            if use_cache and self.cache is not None:
                self.cache.put(key, safe_url, status, body)
            return body
        message = _error_text(response, secrets)
        if is_retryable_status(status):
            cls = RateLimited if status == 429 else ServerError
            raise cls(message, status=status, url=safe_url, retry_after_s=parse_retry_after(response.headers))
        if status == 404:
            if use_cache and self.cache is not None:
                self.cache.put(key, safe_url, status, message)
            raise NotFound(message, status=status, url=safe_url)
        if status == 400:
            raise BadRequest(message, status=status, url=safe_url)
        if status in (401, 403):
            raise Forbidden(
                f"{message} (check the API key / login in the environment)", status=status, url=safe_url
            )
        raise ScholarlyError(message, status=status, url=safe_url)

    async def get_json(self, url: str, *, params: Mapping[str, Any] | None = None, **kw: Any) -> Any:
        """GET and parse JSON (see :meth:`request` for errors)."""
        return _parse_json(await self.request("GET", url, params=params, **kw), url)

    async def post_json(
        self, url: str, *, params: Mapping[str, Any] | None = None, json_body: Any = None, **kw: Any
    ) -> Any:
        """POST a JSON body and parse the JSON reply (see :meth:`request` for errors)."""
        return _parse_json(await self.request("POST", url, params=params, json_body=json_body, **kw), url)

    async def get_text(self, url: str, *, params: Mapping[str, Any] | None = None, **kw: Any) -> str:
        """GET and return the body text (e.g. arXiv Atom XML)."""
        return await self.request("GET", url, params=params, **kw)

    async def aclose(self) -> None:
        """Close the connection pool and the cache."""
        await self._client.aclose()
        if self.cache is not None:
            self.cache.close()

    async def __aenter__(self) -> ScholarlyHTTP:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _retryable(exc: BaseException) -> bool:
    """The faults the retry policy retries: 408 / 429 / 5xx replies, timeouts, connection errors."""
    return isinstance(exc, (RateLimited, ServerError))


def _parse_json(text: str, url: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScholarlyError(
            f"response is not JSON ({exc.msg} at {exc.pos})", url=strip_secrets(url)
        ) from None
