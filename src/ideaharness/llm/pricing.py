"""Prices of a model and the one rule that turns a reply's tokens into dollars.

A :class:`Price` is what ``--price IN,OUT[,CACHED_IN]`` says: USD per million tokens for fresh
input, output and (optionally) input read from the provider's prompt cache. :func:`cost_of`
applies :data:`COST_RULE` to a normalised :class:`~ideaharness.llm.types.Usage`:

    cost = ((prompt - cached) * IN + cached * (CACHED_IN or IN) + completion * OUT) / 1e6   [USD]

``completion`` already holds the reasoning tokens (they are billed as output by OpenAI, Anthropic
and DeepSeek: OpenAI "reasoning tokens ... are billed as output tokens", platform.openai.com/docs/
guides/reasoning); a provider that reports them outside ``completion_tokens`` has them added once
when its usage is read (:mod:`ideaharness.llm.openai_provider`), so they are never billed twice.
Anthropic cache writes are counted as fresh input (billed at IN, although Anthropic charges 1.25x
for them: a lower bound, stated in :data:`COST_RULE`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ideaharness.llm.types import Usage

COST_RULE: dict[str, Any] = {
    "formula": "((prompt_tokens - cached_prompt_tokens) * input + cached_prompt_tokens * "
               "(cached_input or input) + completion_tokens * output) / 1e6",
    "unit": "USD; prices in USD per million tokens",
    "input": "prompt tokens not read from the provider's prompt cache (cache writes included)",
    "cached_input": "prompt tokens read from the provider's prompt cache (OpenAI "
                    "prompt_tokens_details.cached_tokens, Anthropic cache_read_input_tokens); "
                    "billed at the input price when no cached price is given",
    "output": "completion tokens, reasoning tokens included (counted once: a provider that reports "
              "them outside completion_tokens has them added to completion_tokens)",
    "not_billed": "cache hits of ideaharness's own response cache, failed attempts, local models and systems",
}
"""Which tokens are billed at which price (written into ``results.json``'s ``cost`` block)."""


class Price(BaseModel):
    """A model's price, USD per million tokens.

    Args:
        input: fresh (uncached) prompt tokens, >= 0.
        output: completion tokens (reasoning included), >= 0.
        cached_input: prompt tokens read from the provider's prompt cache, >= 0; None bills them at
            ``input``.
    """

    model_config = ConfigDict(frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)

    @classmethod
    def of(cls, value: Price | tuple[float, ...] | list[float] | None) -> Price | None:
        """A Price from ``(IN, OUT)`` or ``(IN, OUT, CACHED_IN)`` (USD per million tokens), a Price
        itself, or None.

        Raises:
            ValueError: a tuple of another length or a negative price.
        """
        if value is None or isinstance(value, Price):
            return value
        parts = tuple(float(v) for v in value)
        if len(parts) not in (2, 3):
            raise ValueError(f"a price is IN,OUT or IN,OUT,CACHED_IN (USD per million tokens), got {parts}")
        return cls(input=parts[0], output=parts[1], cached_input=parts[2] if len(parts) == 3 else None)

    def as_tuple(self) -> tuple[float, ...]:
        """``(IN, OUT)``, or ``(IN, OUT, CACHED_IN)`` when a cached price is set (USD per million)."""
        if self.cached_input is None:
            return (self.input, self.output)
        return (self.input, self.output, self.cached_input)

    def describe(self) -> dict[str, Any]:
        """The price and the rule it is applied by, for ``results.json`` (USD per million tokens)."""
        return {
            "input_usd_per_mtok": self.input,
            "output_usd_per_mtok": self.output,
            "cached_input_usd_per_mtok": self.cached_input if self.cached_input is not None else self.input,
            "cached_input_given": self.cached_input is not None,
            "rule": COST_RULE["formula"],
        }


def cost_of(usage: Usage, price: Price) -> float:
    """Dollars one reply cost under ``price`` (:data:`COST_RULE`).

    cost = ((prompt - cached) * IN + cached * (CACHED_IN or IN) + completion * OUT) / 1e6

    Args:
        usage: the reply's normalised tokens (``cached_prompt_tokens`` is part of ``prompt_tokens``,
            ``reasoning_tokens`` part of ``completion_tokens``). A cached count above the prompt count
            (a provider's inconsistent report) is capped at the prompt count.
        price: USD per million tokens.

    Returns:
        USD, >= 0.
    """
    cached = min(max(usage.cached_prompt_tokens, 0), max(usage.prompt_tokens, 0))
    fresh = max(usage.prompt_tokens, 0) - cached
    cached_price = price.input if price.cached_input is None else price.cached_input
    completion = max(usage.completion_tokens, 0)
    return (fresh * price.input + cached * cached_price + completion * price.output) / 1e6
