"""Provider for any OpenAI-compatible ``/v1/chat/completions`` endpoint (OpenAI, DeepSeek, vLLM,
Ollama, llama.cpp server), through the ``openai`` SDK's ``AsyncOpenAI``.

The SDK's own retries are off (``max_retries=0``): the :class:`~ideaharness.llm.LLM` façade retries,
so every retry is bounded and counted. One attempt here maps SDK errors to
:class:`~ideaharness.llm.errors.ProviderError` (429/5xx/timeouts/connection errors retryable),
:class:`~ideaharness.errors.UserError` (401/403: key; 404: model or URL) or
:class:`~ideaharness.llm.errors.ContextLengthError`. A reply that is not a chat completion (a body
that is not JSON, a JSON body without ``choices[0].message``) is a retryable ProviderError too.
Every error text is redacted (:func:`ideaharness.redaction.redact`): a server that echoes the key
in its error message never gets it into a record, a result or the console.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from typing import Any
from urllib.parse import urlsplit

from ideaharness.errors import UserError
from ideaharness.llm.errors import ContextLengthError, LLMError, ProviderError
from ideaharness.llm.types import ChatRequest, Completion, Usage
from ideaharness.net.retry import is_retryable_status, parse_retry_after
from ideaharness.redaction import redact

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOOPBACK_DUMMY_KEY = "no-key-needed-for-loopback"


def is_loopback_url(url: str) -> bool:
    """True when ``url``'s host is ``localhost`` or a loopback IP (127.0.0.0/8, ::1)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def derived_seed(seed: int | None, sample_index: int) -> int | None:
    """The seed sent to the backend: ``seed`` itself for sample 0, a distinct one per later sample.

    seed' = (seed * 1_000_003 + sample_index) mod 2**31, so the k-th of n samples (or the k-th retry
    after a parse failure) is not a replay of the first on backends that honour seeds.
    """
    if seed is None:
        return None
    if sample_index == 0:
        return seed
    return (seed * 1_000_003 + sample_index) % (2**31)


class OpenAIProvider:
    """One OpenAI-compatible endpoint and model.

    Args:
        model: the model name sent to the server (without the ``openai/`` prefix).
        base_url: endpoint root, e.g. ``http://127.0.0.1:8000/v1``.
        api_key: the key (from the environment; held only by the SDK client, never logged or cached).
        timeout_s: per-attempt timeout in seconds.
        label: the full model string for messages (``openai/<model>``).
    """

    def __init__(self, model: str, *, base_url: str, api_key: str, timeout_s: float, label: str) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.label = label
        self.timeout_s = timeout_s
        self._api_key = api_key
        self._clients: dict[int, Any] = {}
        self.response_format_supported = True

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIProvider(model={self.model!r}, base_url={self.base_url!r})"

    def _client(self) -> Any:
        # AsyncOpenAI holds a connection pool bound to the running event loop: one client per loop.
        loop_id = id(asyncio.get_running_loop())
        client = self._clients.get(loop_id)
        if client is None:
            from openai import AsyncOpenAI

            client = AsyncOpenAI(
                api_key=self._api_key, base_url=self.base_url, timeout=self.timeout_s, max_retries=0
            )
            self._clients = {loop_id: client}
        return client

    def client(self) -> Any:
        """The SDK's ``AsyncOpenAI`` for this endpoint in the running event loop (SDK retries off);
        the Files and Batches APIs of :mod:`ideaharness.llm.batch` go through it."""
        return self._client()

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body of ``POST /chat/completions`` for ``request`` (no key: that is a header).

        ``seed`` is :func:`derived_seed`; ``response_format`` is set for a ``json_schema`` unless
        this endpoint rejected it before. The same body goes into a Batch API line.
        """
        body: dict[str, Any] = {
            "model": self.model,
            "messages": request.messages,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.top_p is not None:
            body["top_p"] = request.top_p
        seed = derived_seed(request.seed, request.sample_index)
        if seed is not None:
            body["seed"] = seed
        if request.json_schema is not None and self.response_format_supported:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": request.json_schema},
            }
        return body

    async def complete(self, request: ChatRequest) -> Completion:
        """One attempt at ``request``.

        With ``json_schema`` set, sends ``response_format={"type": "json_schema", ...}``; if the
        server rejects it with HTTP 400, retries once without it and remembers that for this
        endpoint (downstream parsing is lenient).

        Raises:
            ProviderError: retryable (429, 5xx, timeout, connection, a malformed reply body) or
                other HTTP failures.
            ContextLengthError: the server reports the prompt is too long.
            UserError: 401/403 (key) or 404 (model or URL).
        """
        import openai

        kwargs = self.request_body(request)
        use_format = "response_format" in kwargs
        start = time.monotonic()
        try:
            try:
                response = await self._client().chat.completions.create(**kwargs)
            except openai.BadRequestError as exc:
                if not use_format or _is_context_error(exc):
                    raise
                self.response_format_supported = False
                kwargs.pop("response_format")
                response = await self._client().chat.completions.create(**kwargs)
        except openai.APIStatusError as exc:
            raise self._map_status_error(exc) from exc
        except openai.APITimeoutError as exc:
            raise ProviderError(
                f"{self.label}: timed out after {self.timeout_s:g} s", retryable=True
            ) from exc
        except openai.APIConnectionError as exc:
            cause = self._redact(str(exc.__cause__ or exc))
            raise ProviderError(
                f"{self.label}: cannot connect to {self.base_url} ({cause})", retryable=True
            ) from exc
        except (ValueError, TypeError, AttributeError, KeyError, openai.OpenAIError) as exc:
            # a 200 whose body is not JSON, or JSON the SDK cannot read as a chat completion
            raise ProviderError(
                f"{self.label}: malformed reply body from {self.base_url} "
                f"({type(exc).__name__}: {_short(self._redact(str(exc)))})",
                retryable=True,
            ) from exc
        latency = time.monotonic() - start
        text, finish_reason, usage = self._read_reply(response)
        return Completion(text=text, model=self.label, usage=usage, latency_s=latency,
                          finish_reason=finish_reason)

    def _read_reply(self, response: Any) -> tuple[str, str | None, Usage]:
        return read_reply(response, self.label)

    def _redact(self, text: str) -> str:
        return redact(text, [self._api_key])

    def _map_status_error(self, exc: Any) -> Exception:
        status = int(exc.status_code)
        detail = _short(self._redact(getattr(exc, "message", "") or str(exc)))
        if status in (401, 403):
            return UserError(
                f"{self.label}: the server at {self.base_url} refused the key (HTTP {status}); "
                "set a valid OPENAI_API_KEY in the environment"
            )
        if status == 404:
            return UserError(
                f"{self.label}: not found at {self.base_url} (HTTP 404: {detail}); check the model name "
                "and --base-url (it usually ends in /v1)"
            )
        if status == 400 and _is_context_error(exc):
            return ContextLengthError(f"{self.label}: prompt too long for the model's context: {detail}")
        retryable = is_retryable_status(status)
        retry_after = parse_retry_after(dict(exc.response.headers)) if retryable else None
        if not retryable:
            return LLMError(f"{self.label}: HTTP {status} from {self.base_url}: {detail}")
        return ProviderError(
            f"HTTP {status}: {detail}", status=status, retryable=True, retry_after_s=retry_after
        )

    async def aclose(self) -> None:
        clients, self._clients = self._clients, {}
        for client in clients.values():
            await client.close()


def read_reply(response: Any, label: str) -> tuple[str, str | None, Usage]:
    """(text, finish reason, usage) of a chat completion; a retryable ProviderError (naming
    ``label``) when the reply lacks ``choices[0].message`` or its content is not text."""
    try:
        choice = response.choices[0]
        content = choice.message.content
        finish_reason = choice.finish_reason
    except (AttributeError, IndexError, KeyError, TypeError) as exc:
        raise ProviderError(
            f"{label}: reply without choices[0].message ({type(exc).__name__})", retryable=True
        ) from exc
    if content is not None and not isinstance(content, str):
        raise ProviderError(f"{label}: reply content is not text", retryable=True)
    usage = getattr(response, "usage", None)
    try:
        counted = Usage(
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )
    except (TypeError, ValueError):
        counted = Usage()
    return content or "", finish_reason, counted


def completion_from_body(body: Any, label: str) -> Completion:
    """A :class:`Completion` (``model`` = ``label``) from the JSON body of a chat completion, e.g.
    the ``response.body`` of a Batch API output line.

    Raises:
        ProviderError: ``body`` is not a chat completion with ``choices[0].message`` text.
    """
    from openai.types.chat import ChatCompletion
    from pydantic import ValidationError

    try:
        response = ChatCompletion.model_validate(body)
    except ValidationError as exc:
        raise ProviderError(
            f"{label}: not a chat completion ({exc.error_count()} problem(s))", retryable=False
        ) from None
    text, finish_reason, usage = read_reply(response, label)
    return Completion(text=text, model=label, usage=usage, finish_reason=finish_reason)


def _is_context_error(exc: Any) -> bool:
    code = str(getattr(exc, "code", "") or "")
    text = str(getattr(exc, "message", "") or exc).lower()
    return code == "context_length_exceeded" or "context length" in text or "context window" in text


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
