"""Structured LLM steps: call, parse, retry a bounded number of times, record everything.

Every benchmark step that needs a typed answer from a model goes through :func:`judge`. A reply
that cannot be parsed is retried (as a new sample, so a cached failure is not replayed) up to
``max_attempts`` times and then returned with ``parse_ok=False`` and ``parsed=None``; callers
count it as a parse failure and never turn it into a score, rank or win.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ideaharness.errors import ParseError
from ideaharness.llm.types import ChatModel, Message
from ideaharness.schema import Judgment

T = TypeVar("T")

DEFAULT_MAX_ATTEMPTS = 3


def prompt_hash(messages: Sequence[Message]) -> str:
    """sha256 (first 16 hex digits) of the messages, the id of a rendered prompt."""
    blob = json.dumps(list(messages), sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


async def judge(
    model: ChatModel,
    messages: list[Message],
    parse: Callable[[str], T],
    *,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    positions: list[str] | None = None,
    temperature: float = 0.0,
    max_tokens: int = 1024,
    seed: int | None = 0,
    json_schema: dict[str, Any] | None = None,
    sample_index: int = 0,
    retry_temperature: float = 0.7,
) -> Judgment:
    """Ask ``model`` and parse the reply, retrying parse failures at most ``max_attempts`` times.

    Args:
        parse: turns raw text into a value; raises :class:`ParseError` (or ValueError) when the
            text does not have the demanded shape.
        positions: the order in which the items were shown, recorded in the judgment.
        sample_index: base sample index; attempt k uses ``sample_index + k * 1000`` so retries get
            their own cache entries while first attempts stay cacheable.
        retry_temperature: temperature of attempts after the first when ``temperature`` is lower
            (a greedy decoder would repeat the same unparsable reply).

    Returns:
        A :class:`Judgment`; ``parse_ok`` False means every attempt failed to parse.
    """
    if max_attempts < 1:
        raise ValueError("max_attempts must be >= 1")
    errors: list[str] = []
    raw = ""
    stderr: str | None = None
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    for attempt in range(max_attempts):
        completion = await model.chat(
            messages,
            temperature=temperature if attempt == 0 else max(temperature, retry_temperature),
            max_tokens=max_tokens,
            seed=seed,
            json_schema=json_schema,
            sample_index=sample_index + attempt * 1000,
        )
        raw = completion.text
        stderr = getattr(completion, "stderr", None)
        usage["prompt_tokens"] += completion.usage.prompt_tokens
        usage["completion_tokens"] += completion.usage.completion_tokens
        try:
            value = parse(raw)
        except (ParseError, ValueError) as exc:
            errors.append(f"attempt {attempt + 1}: {exc}")
            continue
        return Judgment(
            judge_model=model.model,
            prompt_hash=prompt_hash(messages),
            raw_text=raw,
            parsed=value,
            parse_ok=True,
            attempts=attempt + 1,
            errors=errors,
            positions=positions,
            usage=usage,
            stderr=stderr,
        )
    return Judgment(
        judge_model=model.model,
        prompt_hash=prompt_hash(messages),
        raw_text=raw,
        parsed=None,
        parse_ok=False,
        attempts=max_attempts,
        errors=errors,
        positions=positions,
        usage=usage,
        stderr=stderr,
    )
