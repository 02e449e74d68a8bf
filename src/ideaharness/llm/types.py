"""Request/response types and the client interface every provider implements."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field, field_validator

from ideaharness.text import replace_lone_surrogates

Message = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": str}


class Usage(BaseModel):
    """Tokens of one reply, normalised over providers' usage shapes.

    ``prompt_tokens``: every input token, cached ones included; ``cached_prompt_tokens``: of those,
    the ones read from the provider's prompt cache (OpenAI ``prompt_tokens_details.cached_tokens``,
    Anthropic ``cache_read_input_tokens``); ``completion_tokens``: every output token, reasoning
    included (a provider that reports reasoning outside ``completion_tokens`` has it added once);
    ``reasoning_tokens``: of those, the ones spent reasoning (``completion_tokens_details.reasoning_tokens``).
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    reasoning_tokens: int = 0


class ChatRequest(BaseModel):
    """Everything that determines a completion; its hash is the cache key.

    ``sample_index`` distinguishes deliberate repeats of the same request (the k-th of n samples,
    or the k-th retry after a parse failure), so each gets its own cache entry.
    ``json_schema`` asks the backend for structured output (llama.cpp grammar, OpenAI
    ``response_format``); parsers stay lenient either way.
    """

    model: str
    messages: list[Message]
    temperature: float = 0.0
    top_p: float | None = None
    max_tokens: int | None = 1024
    """Reply cap sent to the backend (answer and reasoning), tokens; None sends no cap (``--parity``
    where the published code sends none)."""
    seed: int | None = 0
    json_schema: dict[str, Any] | None = None
    sample_index: int = 0
    reasoning_effort: str | None = None
    """``--reasoning-effort`` of the role (none, minimal, low, medium, high) or None (not sent)."""

    @field_validator("messages")
    @classmethod
    def _valid_text(cls, messages: list[Message]) -> list[Message]:
        """Lone surrogates (never valid UTF-8, so unsendable) become U+FFFD."""
        return [{k: replace_lone_surrogates(v) for k, v in m.items()} for m in messages]


class Completion(BaseModel):
    """One reply. A lone surrogate in ``text`` (a server that split an emoji's UTF-16 pair) is
    replaced by U+FFFD, so every reply can be hashed, cached, recorded and shown."""

    text: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    cached: bool = False
    latency_s: float = 0.0
    cost_usd: float | None = None
    finish_reason: str | None = None
    stderr: str | None = None
    """What a system (``cmd:``) wrote on stderr for this reply: its last 4000 characters, redacted;
    None for models."""
    reasoning: str | None = None
    """The reasoning separated from the answer (``<think>`` blocks, ``reasoning_content``,
    thinking blocks; :mod:`ideaharness.llm.reasoning`), or None when the reply had none."""
    raw_text: str | None = None
    """The reply text as the backend returned it when it differs from ``text`` (the answer alone:
    reasoning tags removed); None when ``text`` is the whole reply."""
    truncated_reasoning: bool = False
    """True when the reply ran out of tokens while reasoning: no answer came (``text`` empty)."""

    @field_validator("text")
    @classmethod
    def _valid_text(cls, text: str) -> str:
        return replace_lone_surrogates(text)


@runtime_checkable
class ChatModel(Protocol):
    """What benchmarks call. ``model`` is the full model string (``local/qwen2.5-coder-0.5b``).

    ``max_tokens`` is the cap the ANSWER needs, tokens (None: no cap sent); an :class:`~ideaharness.llm.LLM`
    adds its role's reasoning budget before sending it.
    """

    model: str

    async def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        top_p: float | None = None,
        max_tokens: int | None = 1024,
        seed: int | None = 0,
        json_schema: dict[str, Any] | None = None,
        sample_index: int = 0,
    ) -> Completion: ...
