"""Structured LLM steps: call, parse, retry a bounded number of times, record everything.

Every benchmark step that needs a typed answer from a model goes through :func:`judge`. A reply
that cannot be parsed is retried (as a new sample, so a cached failure is not replayed) up to
``max_attempts`` times and then returned with ``parse_ok=False`` and ``parsed=None``; callers
count it as a parse failure and never turn it into a score, rank or win.

The parser reads the answer alone: every reply goes through
:func:`~ideaharness.llm.reasoning.with_reasoning` (``<think>`` blocks, a lone closing tag,
``reasoning_content``), and the judgment records the reply as returned (``raw_text``), the answer
read (``answer``, when it differs) and the reasoning. A reply that ran out of tokens while
reasoning (no answer) is a parse failure with that reason, and the next attempt is asked with
twice the reasoning allowance (:func:`grown_max_tokens`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import orjson

from ideaharness.errors import ParseError
from ideaharness.llm.reasoning import with_reasoning
from ideaharness.llm.types import ChatModel, Completion, Message
from ideaharness.schema import Judgment

T = TypeVar("T")

DEFAULT_MAX_ATTEMPTS = 3
MAX_GROWN_TOKENS = 32768
"""The largest cap :func:`grown_max_tokens` asks for after truncated reasoning, tokens."""


def prompt_hash(messages: Sequence[Message]) -> str:
    """sha256 (first 16 hex digits) of the messages, the id of a rendered prompt: of the UTF-8 of
    ``json.dumps(list(messages), sort_keys=True, ensure_ascii=False)``, whose bytes are assembled
    from orjson's strings when every message is a dict of strings (the same bytes, faster).

    Raises:
        UnicodeEncodeError: a text holds a lone surrogate (as ever: it cannot be sent either).
    """
    blob = _fast_messages_json(messages)
    if blob is None:
        blob = json.dumps(list(messages), sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def _fast_messages_json(messages: Sequence[Message]) -> bytes | None:
    """``json.dumps(list(messages), sort_keys=True, ensure_ascii=False).encode()`` for messages that
    are dicts of strings (json's ", " and ": " separators around orjson's strings, which json
    writes alike when ``ensure_ascii`` is off), or None for anything else (json writes it)."""
    parts = []
    try:
        for message in messages:
            if type(message) is not dict:
                return None
            items = []
            for name in sorted(message):
                value = message[name]
                if type(name) is not str or type(value) is not str:
                    return None
                items.append(orjson.dumps(name) + b": " + orjson.dumps(value))
            parts.append(b"{" + b", ".join(items) + b"}")
    except TypeError:  # a lone surrogate: json.dumps writes it and the encoding refuses it, as ever
        return None
    return b"[" + b", ".join(parts) + b"]"


def grown_max_tokens(max_tokens: int | None, reasoning_budget: int, truncations: int) -> int | None:
    """The answer cap of an attempt after ``truncations`` replies ran out of tokens while reasoning.

    Each truncation doubles the reasoning allowance: ``max_tokens + budget * (2**t - 1)``, so the
    cap sent (the :class:`~ideaharness.llm.client.LLM` adds its ``reasoning_budget``) is
    ``max_tokens + budget * 2**t``; a model without a reasoning budget gets ``max_tokens * 2**t``.
    Never above :data:`MAX_GROWN_TOKENS` (nor below ``max_tokens``).

    Args:
        max_tokens: the step's answer cap, tokens; None (no cap sent) stays None.
        reasoning_budget: the model's reasoning budget, tokens, >= 0.
        truncations: truncated attempts so far, >= 0.

    Returns:
        The cap to pass to ``chat``, tokens, or None.
    """
    if max_tokens is None or truncations <= 0:
        return max_tokens
    if reasoning_budget > 0:
        grown = max_tokens + reasoning_budget * ((1 << truncations) - 1)
    else:
        grown = max_tokens << truncations
    return max(max_tokens, min(grown, MAX_GROWN_TOKENS))


def truncation_error(attempt: int, max_tokens: int | None, reasoning_budget: int) -> str:
    """The parse error of attempt ``attempt`` (1-based) whose reply ran out of tokens while
    reasoning; ``max_tokens`` is the answer cap it was asked with (the reasoning budget added)."""
    cap = "no cap sent" if max_tokens is None else f"cap {max_tokens + reasoning_budget} tokens"
    return f"attempt {attempt}: the reply ran out of tokens while reasoning ({cap}): no answer"


def _usage(total: dict[str, int], completion: Completion) -> None:
    total["prompt_tokens"] += completion.usage.prompt_tokens
    total["completion_tokens"] += completion.usage.completion_tokens
    for name in ("cached_prompt_tokens", "reasoning_tokens"):  # recorded when a provider reports them
        value = getattr(completion.usage, name)
        if value:
            total[name] = total.get(name, 0) + value


async def judge(
    model: ChatModel,
    messages: list[Message],
    parse: Callable[[str], T],
    *,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    positions: list[str] | None = None,
    temperature: float = 0.0,
    max_tokens: int | None = 1024,
    seed: int | None = 0,
    json_schema: dict[str, Any] | None = None,
    sample_index: int = 0,
    retry_temperature: float = 0.7,
) -> Judgment:
    """Ask ``model`` and parse the reply's answer, retrying parse failures at most ``max_attempts`` times.

    Args:
        parse: turns the answer text (the reply with its reasoning removed,
            :func:`~ideaharness.llm.reasoning.with_reasoning`) into a value; raises
            :class:`ParseError` (or ValueError) when the text does not have the demanded shape.
        positions: the order in which the items were shown, recorded in the judgment.
        max_tokens: the answer cap, tokens (the model adds its reasoning budget); None sends no cap.
            After a reply that ran out of tokens while reasoning, the next attempt's cap is
            :func:`grown_max_tokens` (the model's ``reasoning_budget`` attribute, 0 when it has none).
        sample_index: base sample index; attempt k uses ``sample_index + k * 1000`` so retries get
            their own cache entries while first attempts stay cacheable.
        retry_temperature: temperature of attempts after the first when ``temperature`` is lower
            (a greedy decoder would repeat the same unparsable reply).

    Returns:
        A :class:`Judgment` of the last attempt: ``raw_text`` the reply as returned, ``answer``
        the text parsed when it differs, ``reasoning``, ``truncated_reasoning``; ``parse_ok``
        False means every attempt failed to parse (a truncated one with the error
        :func:`truncation_error`).
    """
    if max_attempts < 1:
        raise ValueError("max_attempts must be >= 1")
    budget = int(getattr(model, "reasoning_budget", 0) or 0)
    errors: list[str] = []
    last: Completion | None = None
    stderr: str | None = None
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    truncations = 0
    for attempt in range(max_attempts):
        cap = grown_max_tokens(max_tokens, budget, truncations)
        sampling: dict[str, Any] = {"max_tokens": cap}  # None: no cap sent (ChatRequest.max_tokens)
        completion = with_reasoning(await model.chat(
            messages,
            temperature=temperature if attempt == 0 else max(temperature, retry_temperature),
            seed=seed,
            json_schema=json_schema,
            sample_index=sample_index + attempt * 1000,
            **sampling,
        ))
        last = completion
        stderr = getattr(completion, "stderr", None)
        _usage(usage, completion)
        if completion.truncated_reasoning:
            errors.append(truncation_error(attempt + 1, cap, budget))
            truncations += 1
            continue
        try:
            value = parse(completion.text)
        except (ParseError, ValueError) as exc:
            errors.append(f"attempt {attempt + 1}: {exc}")
            continue
        return _judgment(model, messages, completion, value, True, attempt + 1, errors, positions, usage,
                         stderr)
    assert last is not None  # max_attempts >= 1
    return _judgment(model, messages, last, None, False, max_attempts, errors, positions, usage, stderr)


def _judgment(model: ChatModel, messages: Sequence[Message], completion: Completion, value: Any, ok: bool,
              attempts: int, errors: list[str], positions: list[str] | None, usage: dict[str, int],
              stderr: str | None) -> Judgment:
    raw = completion.raw_text if completion.raw_text is not None else completion.text
    return Judgment(
        judge_model=model.model,
        prompt_hash=prompt_hash(messages),
        raw_text=raw,
        parsed=value,
        parse_ok=ok,
        attempts=attempts,
        errors=errors,
        positions=positions,
        usage=usage,
        stderr=stderr,
        answer=completion.text if completion.text != raw else None,
        reasoning=completion.reasoning,
        truncated_reasoning=completion.truncated_reasoning,
    )
