"""Provider for Anthropic's Messages API (``anthropic/<model>``), through the official ``anthropic``
SDK's ``AsyncAnthropic`` (optional extra: ``pip install 'ideaharness[anthropic]'``).

What a :class:`~ideaharness.llm.types.ChatRequest` becomes (:meth:`AnthropicProvider.request_body`,
the same body goes into a Message Batches request):

* ``system`` messages are joined (blank line between) into the top-level ``system``; the other
  messages keep their order and roles.
* ``max_tokens`` is required by the API: the request's cap (the answer's cap plus the role's
  reasoning budget, added by :class:`~ideaharness.llm.LLM`), or :data:`NO_CAP_MAX_TOKENS` plus the
  budget when the request sends no cap (``--parity`` where the published code sends none).
* Thinking: with a reasoning budget B > 0, ``thinking={"type": "enabled", "budget_tokens": b}`` where
  b = max(B, :data:`MIN_THINKING_BUDGET`). The API requires 1024 <= budget_tokens < max_tokens, so
  when b > B the cap grows by b - B (the answer keeps the room it asked for), and the cap is at
  least b + 1. With no budget but a reasoning effort (low/medium/high; ``minimal`` is sent as
  ``low``), thinking is ``{"type": "adaptive"}`` and ``output_config.effort`` carries the effort;
  effort ``none`` sends ``{"type": "disabled"}`` and no budget. Thinking tokens count against
  ``max_tokens`` (Anthropic), as every reasoning budget here does.
* Sampling: the SDK (>= 2.0) speaks API version 2026-10-21, which has no ``temperature``, ``top_p``
  or ``top_k`` (any of them is a 400, even at their defaults) and never had ``seed``: none is sent,
  and :attr:`AnthropicProvider.notes` says so once. A request's ``sample_index`` still keys its own
  cache entry, so repeated samples are separate draws.
* ``json_schema`` becomes ``output_config.format = {"type": "json_schema", "schema": ...}``
  (structured outputs); parsers stay lenient either way.

A 400 that names a feature this model does not take (``thinking``, ``adaptive``,
``output_config.format``, ``effort``) makes the attempt go again without it (enabled thinking first
falls back to adaptive when the message names adaptive), remembered for the endpoint and noted in
:attr:`AnthropicProvider.notes` — like the OpenAI provider's ``response_format`` fallback.

The reply: ``thinking`` blocks → :attr:`~ideaharness.llm.types.Completion.reasoning` (joined by a
blank line), ``text`` blocks → ``text``; stop reason ``max_tokens`` (and
``model_context_window_exceeded``) → finish reason ``length``, ``end_turn``/``stop_sequence`` →
``stop``. Usage is normalised (:func:`usage_of`): prompt = ``input_tokens`` +
``cache_read_input_tokens`` + ``cache_creation_input_tokens`` (the API's "total input tokens"),
cached = ``cache_read_input_tokens`` (cache writes are billed at the input price by
:func:`~ideaharness.llm.pricing.cost_of`, a lower bound: Anthropic charges 1.25x for them),
completion = ``output_tokens`` (thinking included), reasoning = ``output_tokens_details.thinking_tokens``.

Errors (the SDK's own retries are off, ``max_retries=0``: the façade retries): 429, 529 (overloaded),
other 5xx, timeouts, connection errors and malformed bodies are retryable
:class:`~ideaharness.llm.errors.ProviderError` s; 401/403 (key) and 404 (model or URL) are
:class:`~ideaharness.errors.UserError`; a prompt too long is
:class:`~ideaharness.llm.errors.ContextLengthError`; other statuses are
:class:`~ideaharness.llm.errors.LLMError`. Every error text is redacted
(:func:`ideaharness.redaction.redact`, the key included). The key comes from
``ANTHROPIC_API_KEY`` only and is held by the SDK client alone (sent as ``Authorization: Bearer``).

Sources: the SDK's ``messages.create`` / ``ThinkingConfigEnabledParam`` ("Must be ≥1024 and less than
``max_tokens``") / ``Usage`` docstrings (anthropic 2.16), and its API-version constant.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ideaharness.llm.errors import LLMError, ProviderError, short_detail, status_error
from ideaharness.llm.types import ChatRequest, Completion, Message, Usage
from ideaharness.net.retry import is_retryable_status, parse_retry_after
from ideaharness.redaction import redact

DEFAULT_BASE_URL = "https://api.anthropic.com"
MIN_THINKING_BUDGET = 1024
"""The API's smallest ``thinking.budget_tokens``."""
NO_CAP_MAX_TOKENS = 8192
"""Answer tokens asked for a request that sends no cap: the API requires ``max_tokens`` (the
reasoning budget is added to it); 8192 is at or under the output limit of every current Claude model."""
EFFORTS: dict[str, str] = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}
"""``--reasoning-effort`` values → ``output_config.effort`` (the API has no ``minimal``)."""
STOP_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}
"""Anthropic stop reasons → the finish reasons the rest of ideaharness reads (others kept as given)."""
SAMPLING_NOTE = (
    "temperature, top_p and seed are not sent (the Anthropic API version of the SDK, 2026-10-21, has "
    "no sampling parameters): replies are sampled at the model's defaults"
)
BATCH_API = "anthropic"
"""What :mod:`ideaharness.llm.batch` names this provider's batch API (Message Batches)."""


def root_url(url: str) -> str:
    """The API root the SDK wants (it adds ``/v1/...`` itself): ``url`` without trailing ``/`` and
    without a trailing ``/v1`` (so ``--base-url http://host:8080/v1`` works like ``http://host:8080``)."""
    url = url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def system_and_messages(messages: list[Message]) -> tuple[str | None, list[dict[str, str]]]:
    """(``system`` text or None, the other messages) of a chat: system messages joined by a blank
    line; the others in order, as ``{"role", "content"}``. A chat of system messages only is sent
    as one user message (the API needs at least one message)."""
    system = [m["content"] for m in messages if m.get("role") == "system"]
    rest = [{"role": m["role"], "content": m["content"]} for m in messages if m.get("role") != "system"]
    text = "\n\n".join(system) if system else None
    if not rest:
        return None, [{"role": "user", "content": text or ""}]
    return text, rest


def usage_of(usage: Any) -> Usage:
    """A normalised :class:`Usage` from an Anthropic ``usage`` (object or dict): prompt = input +
    cache read + cache creation tokens, cached = cache read, completion = output (thinking
    included), reasoning = ``output_tokens_details.thinking_tokens`` (at most completion). Missing
    or unreadable fields count 0."""

    def field(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

    def count(obj: Any, name: str) -> int:
        try:
            return max(int(field(obj, name) or 0), 0)
        except (TypeError, ValueError, OverflowError):  # NaN, Infinity (JSON a body may hold)
            return 0

    if usage is None:
        return Usage()
    read = count(usage, "cache_read_input_tokens")
    prompt = count(usage, "input_tokens") + read + count(usage, "cache_creation_input_tokens")
    completion = count(usage, "output_tokens")
    details = field(usage, "output_tokens_details")
    thinking = count(details, "thinking_tokens") if details is not None else 0
    return Usage(prompt_tokens=prompt, completion_tokens=completion, cached_prompt_tokens=read,
                 reasoning_tokens=min(thinking, completion))


def read_message(message: Any, label: str) -> tuple[str, str | None, str | None, Usage]:
    """(text, reasoning or None, finish reason, usage) of an Anthropic message.

    Raises:
        ProviderError: (retryable) the message has no list of content blocks.
    """
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        raise ProviderError(f"{label}: reply without a list of content blocks", retryable=True)
    texts: list[str] = []
    thoughts: list[str] = []
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text" and isinstance(getattr(block, "text", None), str):
            texts.append(block.text)
        elif kind == "thinking" and isinstance(getattr(block, "thinking", None), str):
            if block.thinking.strip():
                thoughts.append(block.thinking.strip())
    stop = getattr(message, "stop_reason", None)
    finish = STOP_REASONS.get(stop, stop) if isinstance(stop, str) else None
    reasoning = "\n\n".join(thoughts) if thoughts else None
    return "".join(texts), reasoning, finish, usage_of(getattr(message, "usage", None))


def completion_from_message(message: Any, label: str, latency_s: float = 0.0) -> Completion:
    """A :class:`Completion` (``model`` = ``label``) from an Anthropic message object."""
    text, reasoning, finish, usage = read_message(message, label)
    return Completion(text=text, model=label, usage=usage, latency_s=latency_s, finish_reason=finish,
                      reasoning=reasoning)


def completion_from_body(body: Any, label: str) -> Completion:
    """A :class:`Completion` from the JSON of an Anthropic message, e.g. the ``result.message`` of a
    Message Batches results line.

    Raises:
        ProviderError: (not retryable) ``body`` is not a message with content blocks.
    """
    from anthropic.types import Message as AnthropicMessage
    from pydantic import ValidationError

    try:
        message = AnthropicMessage.model_validate(body)
    except ValidationError as exc:
        raise ProviderError(f"{label}: not an Anthropic message ({exc.error_count()} problem(s))",
                            retryable=False) from None
    try:
        return completion_from_message(message, label)
    except ProviderError as exc:
        raise ProviderError(str(exc), retryable=False) from None


class AnthropicProvider:
    """One Anthropic endpoint (api.anthropic.com or a compatible one) and model.

    Args:
        model: the model name sent to the API (without the ``anthropic/`` prefix).
        base_url: the API root (``https://api.anthropic.com``; a trailing ``/v1`` is dropped).
        api_key: the key (from the environment; held only by the SDK client, never logged or cached).
        timeout_s: per-attempt timeout in seconds.
        label: the full model string for messages (``anthropic/<model>``).

    ``reasoning_budget`` (tokens) is set by :class:`~ideaharness.llm.LLM` to the role's budget:
    the thinking budget of every request. ``notes`` lists, once each, what this provider changed
    in what it sends (parameters not sent, features a model refused).
    """

    batch_api = BATCH_API

    def __init__(self, model: str, *, base_url: str, api_key: str, timeout_s: float, label: str) -> None:
        self.model = model
        self.base_url = root_url(base_url)
        self.label = label
        self.timeout_s = timeout_s
        self.reasoning_budget = 0
        self.notes: list[str] = []
        self.thinking_mode = "enabled"
        """``enabled`` (a budget), ``adaptive`` (the model refused enabled and named adaptive) or
        ``off`` (the model refused thinking: none is sent)."""
        self.effort_supported = True
        self.format_supported = True
        self._api_key = api_key
        self._clients: dict[int, Any] = {}

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicProvider(model={self.model!r}, base_url={self.base_url!r})"

    def _client(self) -> Any:
        # AsyncAnthropic holds a connection pool bound to the running event loop: one client per loop.
        loop_id = id(asyncio.get_running_loop())
        client = self._clients.get(loop_id)
        if client is None:
            from anthropic import AsyncAnthropic

            client = AsyncAnthropic(api_key=self._api_key, base_url=self.base_url, timeout=self.timeout_s,
                                    max_retries=0)
            self._clients = {loop_id: client}
        return client

    def client(self) -> Any:
        """The SDK's ``AsyncAnthropic`` for this endpoint in the running event loop (SDK retries off);
        the Message Batches calls of :mod:`ideaharness.llm.batch` go through it."""
        return self._client()

    def note(self, text: str) -> None:
        """Add ``text`` (prefixed with the model) to :attr:`notes` unless it is there already."""
        line = f"{self.label}: {text}"
        if line not in self.notes:
            self.notes.append(line)

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body of ``POST /v1/messages`` for ``request`` (no key: that is a header); the
        rules are the module docstring's. The same body is a Message Batches request's ``params``."""
        system, messages = system_and_messages(request.messages)
        effort = request.reasoning_effort
        budget = 0 if effort == "none" else max(self.reasoning_budget, 0)
        cap = request.max_tokens if request.max_tokens is not None else NO_CAP_MAX_TOKENS + budget
        body: dict[str, Any] = {"model": self.model, "max_tokens": max(cap, 1), "messages": messages}
        if system is not None:
            body["system"] = system
        output: dict[str, Any] = {}
        if effort == "none":
            if self.thinking_mode != "off":
                body["thinking"] = {"type": "disabled"}
        elif self.thinking_mode != "off" and (budget > 0 or effort is not None):
            if budget > 0 and self.thinking_mode == "enabled":
                tokens = max(budget, MIN_THINKING_BUDGET)
                body["max_tokens"] = max(cap + tokens - budget, tokens + 1)
                body["thinking"] = {"type": "enabled", "budget_tokens": tokens}
            else:
                body["thinking"] = {"type": "adaptive"}
        if effort in EFFORTS and self.effort_supported:
            output["effort"] = EFFORTS[effort]
        if request.json_schema is not None and self.format_supported:
            output["format"] = {"type": "json_schema", "schema": request.json_schema}
        if output:
            body["output_config"] = output
        return body

    async def complete(self, request: ChatRequest) -> Completion:
        """One attempt at ``request``.

        A 400 naming a feature the model does not take (thinking, adaptive thinking, structured
        output, effort) is answered by sending again without it, at most once per feature, and
        remembered for this endpoint (:attr:`notes`).

        Raises:
            ProviderError: retryable (429, 529, 5xx, timeout, connection, a malformed reply body) or
                other HTTP failures.
            ContextLengthError: the API reports the prompt is too long.
            UserError: 401/403 (key) or 404 (model or URL).
            LLMError: another refusal (HTTP 400, 413, ...).
        """
        import anthropic

        if request.temperature or request.top_p is not None or request.seed is not None:
            self.note(SAMPLING_NOTE)
        start = time.monotonic()
        try:
            for _ in range(4):  # each pass drops one refused feature at most
                body = self.request_body(request)
                try:
                    response = await self._client().messages.create(**body)
                    break
                except anthropic.BadRequestError as exc:
                    if _is_context_error(exc) or not self._drop_refused_feature(exc, body):
                        raise
            else:  # pragma: no cover - four features cannot all be refused
                raise LLMError(f"{self.label}: the API refused every fallback of the request")
        except anthropic.APIStatusError as exc:
            raise self._map_status_error(exc) from exc
        except anthropic.APITimeoutError as exc:
            raise ProviderError(f"{self.label}: timed out after {self.timeout_s:g} s",
                                retryable=True) from exc
        except anthropic.APIConnectionError as exc:
            cause = self._redact(str(exc.__cause__ or exc))
            raise ProviderError(f"{self.label}: cannot connect to {self.base_url} ({cause})",
                                retryable=True) from exc
        except (ValueError, TypeError, AttributeError, KeyError, anthropic.AnthropicError) as exc:
            raise ProviderError(
                f"{self.label}: malformed reply body from {self.base_url} "
                f"({type(exc).__name__}: {short_detail(self._redact(str(exc)))})",
                retryable=True,
            ) from exc
        return completion_from_message(response, self.label, time.monotonic() - start)

    def _drop_refused_feature(self, exc: Any, body: dict[str, Any]) -> bool:
        """Turn off the feature a 400 names (and note it); False when it names none that was sent."""
        text = str(getattr(exc, "message", "") or exc).lower()
        thinking = body.get("thinking", {}).get("type")
        output = body.get("output_config", {})
        if thinking == "enabled" and "thinking" in text and "adaptive" in text:
            self.thinking_mode = "adaptive"
            self.note("thinking with a budget refused by the model; adaptive thinking sent instead")
            return True
        if "format" in output and any(w in text for w in ("format", "schema", "structured")):
            self.format_supported = False
            self.note("structured output (output_config.format) refused by the model; not sent")
            return True
        if "effort" in output and "effort" in text:
            self.effort_supported = False
            self.note("output_config.effort refused by the model; not sent")
            return True
        if thinking is not None and "thinking" in text:
            self.thinking_mode = "off"
            self.note("thinking refused by the model; no thinking parameter sent")
            return True
        return False

    def _redact(self, text: str) -> str:
        return redact(text, [self._api_key])

    def _map_status_error(self, exc: Any) -> Exception:
        status = int(exc.status_code)
        retry_after = parse_retry_after(dict(exc.response.headers)) if is_retryable_status(status) else None
        return status_error(
            status, short_detail(self._redact(getattr(exc, "message", "") or str(exc))), label=self.label,
            base_url=self.base_url, key_env="ANTHROPIC_API_KEY",
            root_hint="the API root, e.g. https://api.anthropic.com",
            context_error=status == 400 and _is_context_error(exc), retry_after_s=retry_after)

    async def aclose(self) -> None:
        clients, self._clients = self._clients, {}
        for client in clients.values():
            await client.close()


def _is_context_error(exc: Any) -> bool:
    text = str(getattr(exc, "message", "") or exc).lower()
    return "prompt is too long" in text or "context window" in text or "context length" in text
