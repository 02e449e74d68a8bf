"""Request/response types and the client interface every provider implements."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field, field_validator

from ideaharness.text import replace_lone_surrogates

Message = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": str}


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


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
    max_tokens: int = 1024
    seed: int | None = 0
    json_schema: dict[str, Any] | None = None
    sample_index: int = 0

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

    @field_validator("text")
    @classmethod
    def _valid_text(cls, text: str) -> str:
        return replace_lone_surrogates(text)


@runtime_checkable
class ChatModel(Protocol):
    """What benchmarks call. ``model`` is the full model string (``local/qwen2.5-coder-0.5b``)."""

    model: str

    async def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        top_p: float | None = None,
        max_tokens: int = 1024,
        seed: int | None = 0,
        json_schema: dict[str, Any] | None = None,
        sample_index: int = 0,
    ) -> Completion: ...
