"""Provider for any OpenAI-compatible ``/v1/chat/completions`` endpoint (OpenAI, DeepSeek, vLLM,
Ollama, llama.cpp server).

Requests go through a lean aiohttp client by default, or through the ``openai`` SDK's
``AsyncOpenAI`` with ``IDEAHARNESS_HTTP_CLIENT=sdk`` (:mod:`ideaharness.llm.openai_http`: both send
the same body and report the same outcomes; the Files and Batches APIs always use the SDK). No
client retries by itself: the :class:`~ideaharness.llm.LLM` façade retries, so every retry is
bounded and counted. One attempt here maps an error reply
(:class:`~ideaharness.llm.openai_http.HTTPFailure`) to
:class:`~ideaharness.llm.errors.ProviderError` (408/429/5xx retryable, with Retry-After),
:class:`~ideaharness.errors.UserError` (401/403: key; 404: model or URL),
:class:`~ideaharness.llm.errors.ContextLengthError` (400/413 saying the context is exceeded) or
:class:`~ideaharness.llm.errors.LLMError` (other statuses); timeouts and connection failures are
retryable ProviderErrors. A reply that is not a chat completion (a body that is not JSON, a JSON
body without ``choices[0].message``, content that is not text) is a retryable ProviderError too.
Every error text is redacted (:func:`ideaharness.redaction.redact`): a server that echoes the key
in its error message never gets it into a record, a result or the console.

Reasoning models: the reply cap goes out as ``max_completion_tokens`` for o-series and GPT-5 names
(:func:`uses_max_completion_tokens`), else as ``max_tokens``; a 400 that names the one sent as
unsupported switches to the other. A 400 that calls ``temperature``, ``top_p``, ``seed`` or
``reasoning_effort`` unsupported (o-series accept only the default temperature) drops it; each
such change is made once, remembered for the endpoint and noted (:attr:`OpenAIProvider.notes`).
``reasoning_effort`` is sent when the role sets one. The reply's reasoning
(``message.reasoning_content``: DeepSeek, vLLM; ``message.reasoning``: OpenRouter, newer vLLM)
becomes :attr:`~ideaharness.llm.types.Completion.reasoning`; usage details become cached and
reasoning token counts (:func:`read_usage`).
"""

from __future__ import annotations

import ipaddress
import math
import re
import time
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel

from ideaharness.llm.errors import ProviderError, short_detail, status_error
from ideaharness.llm.openai_http import (
    AiohttpChat,
    ConnectFailure,
    HTTPFailure,
    ReplyNotJSON,
    SDKChat,
    TransportTimeout,
    transport_name,
)
from ideaharness.llm.types import ChatRequest, Completion, Usage
from ideaharness.redaction import redact

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOOPBACK_DUMMY_KEY = "no-key-needed-for-loopback"
MAX_COMPLETION_TOKENS_PREFIXES = ("o1", "o3", "o4", "gpt-5")
"""Model names (last path segment, any case) that take ``max_completion_tokens`` instead of
``max_tokens`` (OpenAI: "max_tokens ... is not compatible with o-series models", API reference of
``POST /chat/completions``)."""
TOKEN_PARAMS = ("max_tokens", "max_completion_tokens")
DROPPABLE_PARAMS = ("temperature", "top_p", "seed", "reasoning_effort")
"""Body fields sent without when the endpoint calls them unsupported (HTTP 400)."""
_UNSUPPORTED_WORDS = ("unsupported", "not supported", "does not support", "unrecognized", "unknown parameter",
                      "not allowed", "not permitted", "extra inputs are not permitted", "extra_forbidden")
_CONTEXT_WORDS = ("context length", "context window", "context size", "maximum context")
"""Words of an error message that says the prompt does not fit the model's context (OpenAI:
"maximum context length", llama.cpp server: "exceeds the available context size")."""
MAX_ADJUSTMENTS = 6
"""Requests of one attempt re-sent after a 400 that a body change fixes (each change made once)."""


def uses_max_completion_tokens(model: str) -> bool:
    """True when ``model`` (the name sent, e.g. ``o3-mini``, ``gpt-5``, ``org/o4-mini``) is an
    o-series or GPT-5 name (:data:`MAX_COMPLETION_TOKENS_PREFIXES`)."""
    return model.rsplit("/", 1)[-1].lower().startswith(MAX_COMPLETION_TOKENS_PREFIXES)


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
        api_key: the key (from the environment; held only by the HTTP clients, never logged or cached).
        timeout_s: per-attempt timeout in seconds.
        label: the full model string for messages (``openai/<model>``).
        transport: ``"aiohttp"`` (the lean client) or ``"sdk"`` (``AsyncOpenAI``); None reads
            ``$IDEAHARNESS_HTTP_CLIENT`` (default ``aiohttp``;
            :func:`~ideaharness.llm.openai_http.transport_name`).

    Raises:
        UserError: an unknown transport.
    """

    def __init__(self, model: str, *, base_url: str, api_key: str, timeout_s: float, label: str,
                 transport: str | None = None) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.label = label
        self.timeout_s = timeout_s
        self._api_key = api_key
        self.transport = transport_name(transport)
        """``aiohttp`` or ``sdk``: the client chat completions go through."""
        self._sdk = SDKChat(base_url=self.base_url, api_key=api_key, timeout_s=timeout_s)
        self._chat: AiohttpChat | SDKChat = (
            self._sdk if self.transport == "sdk"
            else AiohttpChat(base_url=self.base_url, api_key=api_key, timeout_s=timeout_s))
        self.response_format_supported = True
        self.token_param = "max_completion_tokens" if uses_max_completion_tokens(model) else "max_tokens"
        """The body field that carries the reply cap (switched once on a 400 that refuses it)."""
        self.dropped_params: set[str] = set()
        """Fields of :data:`DROPPABLE_PARAMS` this endpoint refused: sent without from now on."""
        self.notes: list[str] = []
        """One line per change made to fit the endpoint (for the run's notes)."""
        self._token_switched = False

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIProvider(model={self.model!r}, base_url={self.base_url!r})"

    def client(self) -> Any:
        """The SDK's ``AsyncOpenAI`` for this endpoint in the running event loop (SDK retries off);
        the Files and Batches APIs of :mod:`ideaharness.llm.batch` go through it, whatever the
        transport of chat completions."""
        return self._sdk.client()

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body of ``POST /chat/completions`` for ``request`` (no key: that is a header).

        ``seed`` is :func:`derived_seed`; the cap goes as :attr:`token_param` (none when
        ``max_tokens`` is None); ``reasoning_effort`` when set; fields this endpoint refused
        (:attr:`dropped_params`) are left out; ``response_format`` is set for a ``json_schema``
        unless this endpoint rejected it before. The same body goes into a Batch API line.
        """
        body: dict[str, Any] = {"model": self.model, "messages": request.messages}
        optional: dict[str, Any] = {
            "temperature": request.temperature,
            "top_p": request.top_p,
            "seed": derived_seed(request.seed, request.sample_index),
            "reasoning_effort": request.reasoning_effort,
        }
        for name, value in optional.items():
            if value is not None and name not in self.dropped_params:
                body[name] = value
        if request.max_tokens is not None:
            body[self.token_param] = request.max_tokens
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
        endpoint (downstream parsing is lenient). Likewise a 400 that refuses the token field or
        a field of :data:`DROPPABLE_PARAMS` (:meth:`_adjust`) is fixed, remembered and noted.

        Raises:
            ProviderError: retryable (408, 429, 5xx, timeout, connection, a malformed reply body) or
                other HTTP failures.
            ContextLengthError: the server reports the prompt is too long.
            UserError: 401/403 (key) or 404 (model or URL).
        """
        body = self.request_body(request)
        start = time.monotonic()
        try:
            for adjustment in range(MAX_ADJUSTMENTS + 1):
                try:
                    reply = await self._chat.post(body)
                    break
                except HTTPFailure as failure:
                    last = adjustment == MAX_ADJUSTMENTS
                    if (failure.status != 400 or last or _is_context_error(failure)
                            or not self._adjust(failure, body)):
                        raise
        except HTTPFailure as failure:
            raise self._map_status_error(failure) from None
        except TransportTimeout as exc:
            raise ProviderError(
                f"{self.label}: timed out after {self.timeout_s:g} s", retryable=True
            ) from exc
        except ConnectFailure as exc:
            raise ProviderError(
                f"{self.label}: cannot connect to {self.base_url} ({self._redact(str(exc))})", retryable=True
            ) from exc
        except ReplyNotJSON as exc:
            raise ProviderError(f"{self.label}: malformed reply body from {self.base_url} "
                                f"({_not_json(self._redact(exc.text))})", retryable=True) from None
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            # what the SDK raises for a reply it cannot read as a chat completion
            raise ProviderError(
                f"{self.label}: malformed reply body from {self.base_url} "
                f"({type(exc).__name__}: {short_detail(self._redact(str(exc)))})",
                retryable=True,
            ) from exc
        return read_reply(reply, self.label, latency_s=time.monotonic() - start)

    def _adjust(self, failure: HTTPFailure, body: dict[str, Any]) -> bool:
        """Change ``body`` (and this endpoint's memory) to fit a 400; False when nothing fits.

        * the token field sent is refused (``param`` or a quoted name in the message, with a word
          such as "unsupported"): send the other one (:data:`TOKEN_PARAMS`), once per endpoint;
        * a field of :data:`DROPPABLE_PARAMS` is refused that way: leave it out from now on;
        * otherwise, when ``response_format`` was sent: leave it out from now on (as before
          any of the above existed, whatever the 400 says).
        """
        refused = _refused_param(failure, body)
        detail = short_detail(self._redact(failure.message), 160)
        if refused in TOKEN_PARAMS and not self._token_switched:
            other = TOKEN_PARAMS[1 - TOKEN_PARAMS.index(refused)]
            body[other] = body.pop(refused)
            self.token_param, self._token_switched = other, True
            self.notes.append(f"{self.label}: the endpoint refused {refused} (HTTP 400: {detail}); "
                              f"the reply cap is sent as {other}")
            return True
        if refused in DROPPABLE_PARAMS and refused not in self.dropped_params:
            value = body.pop(refused)
            self.dropped_params.add(refused)
            self.notes.append(f"{self.label}: the endpoint refused {refused}={value!r} (HTTP 400: {detail}); "
                              f"requests go without {refused} (the server's default applies)")
            return True
        if "response_format" in body:
            body.pop("response_format")
            self.response_format_supported = False
            self.notes.append(f"{self.label}: the endpoint refused response_format (HTTP 400: {detail}); "
                              "structured output is not requested (replies are parsed leniently)")
            return True
        return False

    def _redact(self, text: str) -> str:
        return redact(text, [self._api_key])

    def _map_status_error(self, failure: HTTPFailure) -> Exception:
        return status_error(
            failure.status, short_detail(self._redact(failure.message or "no message")), label=self.label,
            base_url=self.base_url, key_env="OPENAI_API_KEY", root_hint="it usually ends in /v1",
            context_error=failure.status in (400, 413) and _is_context_error(failure),
            retry_after_s=failure.retry_after_s)

    async def aclose(self) -> None:
        """Close this endpoint's HTTP clients in the running loop (those of loops that ended were
        closed with them)."""
        await self._chat.aclose()
        if self._chat is not self._sdk:
            await self._sdk.aclose()


def read_reply(response: Any, label: str, *, latency_s: float = 0.0) -> Completion:
    """The :class:`Completion` (``model`` = ``label``) of a chat completion, a parsed JSON body (dict)
    or the SDK's ``ChatCompletion`` alike: text, finish reason (None unless text), usage
    (:func:`read_usage`) and the provider's reasoning field (``message.reasoning_content``, else
    ``message.reasoning``; None when neither is non-blank text). The text is as returned:
    ``<think>`` tags are separated later (:func:`~ideaharness.llm.reasoning.with_reasoning`).

    Raises:
        ProviderError: (retryable, naming ``label``) the reply lacks ``choices[0].message`` or its
            content is not text.
    """
    choices = _field(response, "choices")
    choice = choices[0] if isinstance(choices, list | tuple) and choices else None
    message = _field(choice, "message") if _is_record(choice) else None
    if not _is_record(message):
        raise ProviderError(f"{label}: reply without choices[0].message", retryable=True)
    content = _field(message, "content")
    if content is not None and not isinstance(content, str):
        raise ProviderError(f"{label}: reply content is not text", retryable=True)
    finish_reason = _field(choice, "finish_reason")
    reasoning = None
    for name in ("reasoning_content", "reasoning"):
        value = _field(message, name)
        if isinstance(value, str) and value.strip():
            reasoning = value
            break
    return Completion(text=content or "", model=label, usage=read_usage(_field(response, "usage")),
                      finish_reason=finish_reason if isinstance(finish_reason, str) else None,
                      reasoning=reasoning, latency_s=latency_s)


def _is_record(value: Any) -> bool:
    """A JSON object: a dict, or a model the SDK built from one."""
    return isinstance(value, dict | BaseModel)


def read_usage(usage: Any) -> Usage:
    """A chat completion's ``usage`` (an SDK object or a dict), normalised to :class:`Usage`.

    * prompt = ``prompt_tokens``; cached = ``prompt_tokens_details.cached_tokens`` (OpenAI), else
      ``prompt_cache_hit_tokens`` (DeepSeek), capped at prompt;
    * reasoning = ``completion_tokens_details.reasoning_tokens``, else a top-level ``reasoning_tokens``;
    * completion = ``completion_tokens``, plus reasoning once when the reasoning was reported
      OUTSIDE it: ``total_tokens == prompt + completion + reasoning`` (with reasoning > 0), or
      reasoning > completion (it cannot be part of it). Otherwise reasoning is inside, as OpenAI
      reports it, and nothing is added.

    A missing or unreadable usage counts 0 everywhere.
    """
    if usage is None:
        return Usage()
    prompt = _count(_field(usage, "prompt_tokens"))
    completion = _count(_field(usage, "completion_tokens"))
    cached = (_count(_field(_field(usage, "prompt_tokens_details"), "cached_tokens"))
              or _count(_field(usage, "prompt_cache_hit_tokens")))
    reasoning = (_count(_field(_field(usage, "completion_tokens_details"), "reasoning_tokens"))
                 or _count(_field(usage, "reasoning_tokens")))
    total = _field(usage, "total_tokens")
    outside = reasoning > 0 and (
        (isinstance(total, int) and total == prompt + completion + reasoning) or reasoning > completion)
    return Usage(prompt_tokens=prompt, completion_tokens=completion + (reasoning if outside else 0),
                 cached_prompt_tokens=min(cached, prompt), reasoning_tokens=reasoning)


def _field(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _count(value: Any) -> int:
    """A token count: a non-negative int, else 0 (None, text, a negative, a bool, or a float that
    is not finite: JSON's ``Infinity``/``NaN``, which a body may hold)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if isinstance(value, float) and not math.isfinite(value):
        return 0
    return max(int(value), 0)


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
    return read_reply(response, label)


def _refused_param(failure: HTTPFailure, body: dict[str, Any]) -> str | None:
    """The body field a 400 refuses as unsupported (from the error's ``param``, else the first field
    of the body quoted in its message), or None when the message says no such thing."""
    text = failure.message
    lowered = text.lower()
    if not any(word in lowered for word in _UNSUPPORTED_WORDS):
        return None
    candidates = [name for name in (*TOKEN_PARAMS, *DROPPABLE_PARAMS) if name in body]
    if failure.param in candidates:
        return failure.param
    found = [(m.start(), name) for name in candidates
             for m in re.finditer(rf"(?<![\w.]){re.escape(name)}(?![\w])", text)]
    return min(found)[1] if found else None


def _is_context_error(failure: HTTPFailure) -> bool:
    text = failure.message.lower()
    return failure.code == "context_length_exceeded" or any(word in text for word in _CONTEXT_WORDS)


def _not_json(text: str) -> str:
    """What a reply body that is not JSON looked like, for an error message."""
    return f"not JSON: {short_detail(text, 80)}" if text.strip() else "empty body"
