"""Reasoning apart from the answer: the one place a reply's reasoning is separated from what a
parser reads.

Reasoning models return their reasoning in one of these shapes, and every one ends up in
:attr:`~ideaharness.llm.types.Completion.reasoning` while :attr:`~ideaharness.llm.types.Completion.text`
keeps the answer alone:

* leading ``<think>…</think>`` blocks in the text (DeepSeek-R1, QwQ, Qwen3; also ``<thinking>`` and
  ``<reasoning>``; tag names in any case; several blocks one after another). Only blocks that open
  the reply count: a tag later in the reply (inside a JSON string, in prose about tags) is answer;
* a lone closing tag (R1 distills, whose chat template opens ``<think>`` in the prompt): everything
  before the first ``</think>`` is reasoning, unless that tag sits inside a JSON string or an
  opening tag precedes it (a block later in the reply, which is answer);
* an opening tag that is never closed (the reply was cut while reasoning): everything after it is
  reasoning and the answer is empty;
* a provider field (OpenAI-compatible ``message.reasoning_content`` / ``message.reasoning``,
  Anthropic thinking blocks), which the provider passes as ``reasoning``; it comes before any
  tag reasoning when both are present.

A reply whose answer is empty because the reasoning ran out of tokens (finish reason ``length`` or
``max_tokens``, or an unclosed tag) is *truncated reasoning*: :func:`~ideaharness.llm.judge.judge`
counts it as a parse failure with that reason and asks the next attempt with a larger allowance.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ideaharness.llm.types import Completion

REASONING_TAGS = ("think", "thinking", "reasoning")
"""Tag names whose leading blocks are reasoning (matched in any case)."""
TRUNCATING_FINISH_REASONS = frozenset({"length", "max_tokens"})
"""Finish reasons meaning the reply hit its token cap (OpenAI ``length``, Anthropic ``max_tokens``)."""

_NAMES = "|".join(REASONING_TAGS)
_OPENING = re.compile(rf"\s*<({_NAMES})\s*>", re.IGNORECASE)
_LONE_CLOSING = re.compile(rf"</({_NAMES})\s*>", re.IGNORECASE)
_ANY_OPENING = re.compile(rf"<({_NAMES})\s*>", re.IGNORECASE)
_UNESCAPED_QUOTE = re.compile(r'(?<!\\)(?:\\\\)*"')
_JSON_OPENING = re.compile(r"[{\[]")
_JSON_REPLY = re.compile(r"\s*(?:```[\w-]*\s*)?[{\[]")
_MAX_JSON_STARTS = 256


@dataclass(frozen=True)
class Split:
    """A reply cut into its answer and its reasoning.

    ``answer``: what a parser reads (leading whitespace removed when reasoning preceded it);
    ``reasoning``: the reasoning text (provider field first, then tag blocks, joined by a blank
    line), or None when the reply had none; ``truncated``: the reply ran out of tokens while
    reasoning, so no answer came.
    """

    answer: str
    reasoning: str | None
    truncated: bool


def _closing(name: str) -> re.Pattern[str]:
    return re.compile(rf"</{re.escape(name)}\s*>", re.IGNORECASE)


def _inside_json(text: str, at: int) -> bool:
    """Whether offset ``at`` of ``text`` lies inside a JSON value of the answer: a JSON object or
    list that opens before ``at`` decodes past it (at most :data:`_MAX_JSON_STARTS` openings
    tried), or the reply is JSON from its first character and ``at`` sits inside a string (an odd
    number of unescaped double quotes before it: JSON that does not decode, still the answer)."""
    decoder = json.JSONDecoder()
    for n, opening in enumerate(_JSON_OPENING.finditer(text, 0, at)):
        if n >= _MAX_JSON_STARTS:
            break
        try:
            _, end = decoder.raw_decode(text, opening.start())
        except (json.JSONDecodeError, ValueError, RecursionError):
            continue
        if end > at:
            return True
    return bool(_JSON_REPLY.match(text)) and len(_UNESCAPED_QUOTE.findall(text, 0, at)) % 2 == 1


def _tag_blocks(text: str) -> tuple[str, list[str], bool]:
    """``(answer, reasoning blocks, unclosed)`` of ``text`` read for reasoning tags."""
    blocks: list[str] = []
    rest = text
    while opening := _OPENING.match(rest):
        body = rest[opening.end():]
        closing = _closing(opening.group(1)).search(body)
        if closing is None:  # cut while reasoning: the rest is reasoning, no answer came
            blocks.append(body)
            return "", blocks, True
        blocks.append(body[: closing.start()])
        rest = body[closing.end():]
    if blocks:
        return rest.lstrip(), blocks, False
    lone = _LONE_CLOSING.search(text)
    if lone is not None:
        before = text[: lone.start()]
        if not _ANY_OPENING.search(before) and not _inside_json(text, lone.start()):
            return text[lone.end():].lstrip(), [before], False
    return text, [], False


def split_reasoning(
    text: str,
    *,
    reasoning: str | None = None,
    finish_reason: str | None = None,
    reasoning_tokens: int = 0,
) -> Split:
    """Separate a reply's reasoning from its answer (shapes: the module docstring).

    Args:
        text: the reply text as the backend returned it.
        reasoning: reasoning the provider returned in a field of its own (``reasoning_content``,
            thinking blocks), or None.
        finish_reason: the backend's finish reason (``stop``, ``length``, ``max_tokens``, ...), or None.
        reasoning_tokens: reasoning tokens the usage reports (an o-series model reasons without
            returning the text); > 0 counts as reasoning present for ``truncated``.

    Returns:
        The :class:`Split`. ``truncated`` is True when the answer is blank, reasoning was present
        (text, or ``reasoning_tokens`` > 0) and the reply was cut: ``finish_reason`` in
        :data:`TRUNCATING_FINISH_REASONS` or an opening tag never closed.

    >>> split_reasoning("<think>A? no, they share a method</think>\\nC")
    Split(answer='C', reasoning='A? no, they share a method', truncated=False)
    >>> split_reasoning("they share a method</think>\\nB").answer
    'B'
    >>> split_reasoning("<think>first, the originality", finish_reason="length").truncated
    True
    """
    answer, blocks, unclosed = _tag_blocks(text)
    parts = [part.strip() for part in (reasoning, *blocks) if part and part.strip()]
    joined = "\n\n".join(parts) if parts else None
    cut = finish_reason in TRUNCATING_FINISH_REASONS or unclosed
    truncated = not answer.strip() and (joined is not None or reasoning_tokens > 0) and cut
    return Split(answer=answer, reasoning=joined, truncated=truncated)


def with_reasoning(completion: Completion) -> Completion:
    """``completion`` with its reasoning separated (:func:`split_reasoning`): ``text`` the answer,
    ``raw_text`` the reply as returned (only when it differs), ``reasoning``, ``truncated_reasoning``.

    Idempotent: a completion already split (``raw_text`` set) is returned as is, and splitting one
    without tags again gives the same fields, so :class:`~ideaharness.llm.client.LLM` (provider
    replies and cache hits) and :func:`~ideaharness.llm.judge.judge` (any
    :class:`~ideaharness.llm.types.ChatModel`) may both call it. A ``truncated_reasoning`` the
    provider set stays set.
    """
    if completion.raw_text is not None:
        return completion
    split = split_reasoning(
        completion.text,
        reasoning=completion.reasoning,
        finish_reason=completion.finish_reason,
        reasoning_tokens=completion.usage.reasoning_tokens,
    )
    truncated = split.truncated or completion.truncated_reasoning
    if (split.answer == completion.text and split.reasoning == completion.reasoning
            and truncated == completion.truncated_reasoning):
        return completion
    update: dict[str, object] = {"reasoning": split.reasoning, "truncated_reasoning": truncated}
    if split.answer != completion.text:
        update |= {"text": split.answer, "raw_text": completion.text}
    return completion.model_copy(update=update)


__all__ = ["REASONING_TAGS", "TRUNCATING_FINISH_REASONS", "Split", "split_reasoning", "with_reasoning"]
