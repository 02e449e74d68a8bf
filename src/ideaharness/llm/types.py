"""Request/response types and the client interface every provider implements."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

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


class Completion(BaseModel):
    text: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    cached: bool = False
    latency_s: float = 0.0
    cost_usd: float | None = None
    finish_reason: str | None = None


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
