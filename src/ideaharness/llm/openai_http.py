"""Transports of ``POST {base_url}/chat/completions`` for the ``openai/`` provider
(:class:`~ideaharness.llm.openai_provider.OpenAIProvider`).

Two transports send the same JSON body and report the same outcomes, so the provider maps errors,
adjusts refused fields and reads replies once for both:

* :class:`AiohttpChat` (the default, ``aiohttp``): one ``aiohttp.ClientSession`` per event loop,
  keep-alive connections without a pool limit (the :class:`~ideaharness.llm.LLM`'s semaphore bounds
  the calls in flight), the body serialised and the reply parsed with ``orjson`` (falling back to the
  standard library for what orjson refuses: lone surrogates, integers beyond 64 bits, NaN).
  Measured by ``benchmarks/call_overhead.py``: about 0.4 ms of client CPU per call on a 2-core
  machine, against about 5 ms for the SDK's client.
* :class:`SDKChat` (``sdk``): the ``openai`` SDK's ``AsyncOpenAI`` (its retries off), as before
  this module existed; the Files and Batches APIs (:mod:`ideaharness.llm.batch`) always use it.

The transport is chosen by the environment variable :data:`TRANSPORT_ENV`
(``IDEAHARNESS_HTTP_CLIENT=sdk`` selects the SDK) or the provider's ``transport`` argument.

Outcomes of one request, the same for both transports:

* a parsed JSON reply (dict, or the SDK's ``ChatCompletion``) for HTTP 2xx;
* :class:`HTTPFailure` for HTTP >= 400, built by :func:`describe_failure` from the status, the body
  and the headers (one neutral description: message, code, param, Retry-After);
* :class:`ReplyNotJSON` for a 2xx body that is not JSON;
* :class:`TransportTimeout` after the per-attempt timeout; :class:`ConnectFailure` when no reply
  came (refused, reset, closed early).

Every client is bound to the event loop that created it and closed when that loop shuts down its
async generators (``asyncio.run``, ``asyncio.Runner``), or by ``aclose()``: no "Unclosed client
session" warnings when a program runs several loops one after another.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

from ideaharness.errors import UserError
from ideaharness.net.retry import parse_retry_after

TRANSPORT_ENV = "IDEAHARNESS_HTTP_CLIENT"
TRANSPORTS = ("aiohttp", "sdk")
"""Values of :data:`TRANSPORT_ENV` / ``transport``: ``aiohttp`` (default) or ``sdk``."""
DEFAULT_TRANSPORT = "aiohttp"
KEEPALIVE_S = 4.0
"""Seconds an idle connection is kept: below the 5 s keep-alive of common servers (uvicorn, which
vLLM uses), so a connection the server is about to close is not reused."""

T = TypeVar("T")


def transport_name(value: str | None = None) -> str:
    """The transport to use: ``value``, else ``$IDEAHARNESS_HTTP_CLIENT``, else ``aiohttp``.

    Raises:
        UserError: a value that is not one of :data:`TRANSPORTS` (names the variable).
    """
    chosen = value if value is not None else os.environ.get(TRANSPORT_ENV, "").strip()
    chosen = (chosen or DEFAULT_TRANSPORT).lower()
    if chosen not in TRANSPORTS:
        where = "transport" if value is not None else f"${TRANSPORT_ENV}"
        raise UserError(f"{where}={chosen!r}: the HTTP client of openai/ models is one of "
                        f"{', '.join(TRANSPORTS)}")
    return chosen


# ---------------------------------------------------------------------------------------- outcomes


class HTTPFailure(Exception):
    """A reply with HTTP status >= 400, described the same way whichever client received it.

    Attributes:
        status: the HTTP status.
        message: the error's ``message`` (``{"error": {"message": ...}}`` or a top-level
            ``message``), else the whole body as text (stripped); may hold an echoed key, so
            redact before showing it.
        code: the error's ``code`` as text, or None.
        param: the error's ``param`` when it is text (the refused body field), or None.
        retry_after_s: seconds from ``retry-after-ms`` / ``Retry-After``, or None.
        headers: the reply's headers, names in lower case.
    """

    def __init__(self, status: int, message: str, *, code: str | None = None, param: str | None = None,
                 retry_after_s: float | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(status, message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param
        self.retry_after_s = retry_after_s
        self.headers = headers or {}

    def __str__(self) -> str:
        return f"HTTP {self.status}: {self.message}"


def describe_failure(status: int, raw: bytes, headers: Mapping[str, str]) -> HTTPFailure:
    """The :class:`HTTPFailure` of an error reply: ``raw`` is its body (decoded as UTF-8, bad bytes
    replaced), ``headers`` its headers (any case)."""
    text = raw.decode("utf-8", "replace").strip()
    message, code, param = text, None, None
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            value = error.get("message")
            if isinstance(value, str) and value:
                message = value
            code = None if error.get("code") is None else str(error.get("code"))
            param = error.get("param") if isinstance(error.get("param"), str) else None
        elif isinstance(error, str) and error:
            message = error
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    return HTTPFailure(status, message, code=code, param=param,
                       retry_after_s=parse_retry_after(lowered), headers=lowered)


class ReplyNotJSON(Exception):
    """An HTTP 2xx reply whose body is not JSON; ``text`` is the body as text."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class TransportTimeout(Exception):
    """No complete reply within the per-attempt timeout."""


class ConnectFailure(Exception):
    """No reply: the connection was refused, reset or closed before a reply came; the message is
    the client's own description (may need redaction)."""


def parse_json(raw: bytes) -> Any:
    """``raw`` parsed as JSON: orjson, else the standard library (which also reads what orjson
    refuses: NaN, integers beyond 64 bits, lone surrogate escapes, a UTF-8 byte-order mark).

    Raises:
        ReplyNotJSON: neither can read it.
    """
    import orjson

    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(raw)
    except ValueError:
        raise ReplyNotJSON(_as_text(raw)) from None


def _as_text(raw: bytes) -> str:
    """``raw`` decoded as :func:`json.loads` decodes bytes (UTF-8, or UTF-16/32 by their byte
    pattern), else as UTF-8 with bad bytes replaced: the text an error message quotes."""
    try:
        return raw.decode(json.detect_encoding(raw), "surrogatepass")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace")


def dump_json(body: Mapping[str, Any]) -> bytes:
    """``body`` as JSON bytes: orjson, else the standard library (ASCII escapes; lone surrogates
    and integers beyond 64 bits survive as the SDK would send them)."""
    import orjson

    try:
        return orjson.dumps(body)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(body).encode("ascii")


# ------------------------------------------------------------------------------ loop-bound clients


class LoopBound(Generic[T]):
    """One client per running event loop, made by ``create`` on first use in that loop and closed
    by ``close`` when the loop shuts down its async generators (``asyncio.run``, ``asyncio.Runner``)
    or at :meth:`aclose`. A client of a loop left behind is dropped (its loop has closed it)."""

    def __init__(self, create: Callable[[], T], close: Callable[[T], Awaitable[None]]) -> None:
        self._create = create
        self._close = close
        self._loop: asyncio.AbstractEventLoop | None = None
        self._value: T | None = None
        self._guard: AsyncGenerator[None, None] | None = None
        self._guarded = False

    async def get(self) -> T:
        """The client of the running loop (made now when there is none), guarded by the loop."""
        loop = asyncio.get_running_loop()
        if self._loop is loop and self._guarded:
            return self._value  # type: ignore[return-value]
        value = self.get_now()
        if not self._guarded and self._guard is not None:
            await self._guard.__anext__()  # the loop now tracks it: its shutdown closes the client
            self._guarded = True
        return value

    def get_now(self) -> T:
        """Like :meth:`get` without awaiting: a client made here is closed by :meth:`aclose` (or by
        the loop, once :meth:`get` has run in it)."""
        loop = asyncio.get_running_loop()
        if self._loop is loop and self._value is not None:
            return self._value
        value = self._create()
        self._loop, self._value = loop, value
        self._guard, self._guarded = self._closer(value), False
        return value

    def current(self) -> T | None:
        """The client of the running loop, or None (no loop, or none made in it yet)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        return self._value if self._loop is loop else None

    async def _closer(self, value: T) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            if self._value is value:
                self._loop, self._value, self._guard, self._guarded = None, None, None, False
            await self._close(value)

    async def aclose(self) -> None:
        """Close the client of the running loop (a client of another loop is left to that loop)."""
        value, guard, guarded = self.current(), self._guard, self._guarded
        self._loop, self._value, self._guard, self._guarded = None, None, None, False
        if value is None:
            return
        if guarded and guard is not None:
            await guard.aclose()
        else:
            await self._close(value)


# ------------------------------------------------------------------------------------- transports


def _user_agent() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        own = version("ideaharness")
    except PackageNotFoundError:
        own = "0"
    import aiohttp

    return f"ideaharness/{own} aiohttp/{aiohttp.__version__}"


def _env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY``,
    honouring ``NO_PROXY``), as the SDK's client would use it; read once per client."""
    from urllib.request import getproxies, proxy_bypass

    parts = urlsplit(url)
    proxies = getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or (parts.hostname and proxy_bypass(parts.hostname)):
        return None
    return proxy


class AiohttpChat:
    """``POST {base_url}/chat/completions`` through one ``aiohttp.ClientSession`` per event loop.

    Args:
        base_url: endpoint root, e.g. ``http://127.0.0.1:8000/v1`` (no trailing slash).
        api_key: sent as ``Authorization: Bearer <key>``; held by the session's headers only.
        timeout_s: per-request timeout, seconds (connect, send and the whole reply).
    """

    name = "aiohttp"

    def __init__(self, *, base_url: str, api_key: str, timeout_s: float) -> None:
        self.url = f"{base_url}/chat/completions"
        self.timeout_s = timeout_s
        self._api_key = api_key
        self._sessions: LoopBound[Any] = LoopBound(self._new_session, _close_session)
        self._proxy: str | None = None

    def __repr__(self) -> str:  # never show the key
        return f"AiohttpChat(url={self.url!r})"

    def _new_session(self) -> Any:
        import aiohttp

        self._proxy = _env_proxy(self.url)
        connector = aiohttp.TCPConnector(limit=0, limit_per_host=0, keepalive_timeout=KEEPALIVE_S)
        headers = {"Authorization": f"Bearer {self._api_key}", "Content-Type": "application/json",
                   "Accept": "application/json", "User-Agent": _user_agent()}
        return aiohttp.ClientSession(connector=connector, headers=headers,
                                     timeout=aiohttp.ClientTimeout(total=self.timeout_s))

    async def post(self, body: Mapping[str, Any]) -> Any:
        """Send ``body``; the parsed JSON reply of a 2xx.

        Raises:
            HTTPFailure, ReplyNotJSON, TransportTimeout, ConnectFailure: see the module docstring.
        """
        import aiohttp

        session = await self._sessions.get()
        try:
            async with session.post(self.url, data=dump_json(body), proxy=self._proxy) as response:
                raw = await response.read()
                status = response.status
                if status >= 400:
                    raise describe_failure(status, raw, response.headers)
        except TimeoutError as exc:  # aiohttp's ServerTimeoutError is one too
            raise TransportTimeout(str(exc)) from exc
        except aiohttp.ClientError as exc:
            raise ConnectFailure(str(exc) or type(exc).__name__) from exc
        return parse_json(raw)

    async def aclose(self) -> None:
        await self._sessions.aclose()


async def _close_session(session: Any) -> None:
    await session.close()


class SDKChat:
    """``POST {base_url}/chat/completions`` through the ``openai`` SDK's ``AsyncOpenAI`` (one per
    event loop, SDK retries off); :meth:`client` also serves the Files and Batches APIs."""

    name = "sdk"

    def __init__(self, *, base_url: str, api_key: str, timeout_s: float) -> None:
        self.base_url = base_url
        self.timeout_s = timeout_s
        self._api_key = api_key
        self._clients: LoopBound[Any] = LoopBound(self._new_client, _close_client)

    def __repr__(self) -> str:  # never show the key
        return f"SDKChat(base_url={self.base_url!r})"

    def _new_client(self) -> Any:
        from openai import AsyncOpenAI

        return AsyncOpenAI(api_key=self._api_key, base_url=self.base_url, timeout=self.timeout_s,
                           max_retries=0)

    def client(self) -> Any:
        """The ``AsyncOpenAI`` of the running loop (the one :meth:`post` uses; made here when none
        exists yet), closed by :meth:`aclose` or when its loop ends."""
        return self._clients.get_now()

    async def post(self, body: Mapping[str, Any]) -> Any:
        """Send ``body``; the SDK's ``ChatCompletion`` of a 2xx.

        Raises:
            HTTPFailure, ReplyNotJSON, TransportTimeout, ConnectFailure: see the module docstring.
        """
        import openai

        client = await self._clients.get()
        try:
            response = await client.chat.completions.create(**body)
        except openai.APIStatusError as exc:
            raise describe_failure(int(exc.status_code), _error_content(exc),
                                   dict(exc.response.headers)) from exc
        except openai.APITimeoutError as exc:
            raise TransportTimeout(str(exc)) from exc
        except openai.APIConnectionError as exc:
            raise ConnectFailure(str(exc.__cause__ or exc)) from exc
        except json.JSONDecodeError as exc:  # a 2xx whose body is not JSON
            raise ReplyNotJSON(exc.doc if isinstance(exc.doc, str) else str(exc)) from exc
        except UnicodeDecodeError as exc:
            raise ReplyNotJSON(bytes(exc.object).decode("utf-8", "replace")) from exc
        return response  # a ChatCompletion, or the body as text when it was not labelled JSON

    async def aclose(self) -> None:
        await self._clients.aclose()


async def _close_client(client: Any) -> None:
    await client.close()


def _error_content(exc: Any) -> bytes:
    """The body of the SDK's error reply as bytes (the SDK read it already)."""
    try:
        return bytes(exc.response.content)
    except Exception:  # a response whose body could not be read: what the SDK kept of it
        body = getattr(exc, "body", None)
        return (body if isinstance(body, str) else json.dumps(body, default=str)).encode("utf-8")
