"""Scripted chat models: replies come from a function, a list or a file. For tests and dry runs.

:class:`ScriptedModel` implements :class:`~ideaharness.llm.types.ChatModel` exactly as real
providers do, so a benchmark pipeline can be tested for its logic (a judge that always picks
option B, a reply that never parses) without an LLM, from Python. Tests of the LLM layer itself
use the real local model or a real HTTP server (:mod:`ideaharness.testing`).

:class:`ScriptedProvider` is the ``scripted/`` provider of the model-string registry, so a dry
run works from the CLI and a ``--config`` file, behind the usual cache, retries and accounting:

* ``scripted/echo`` answers every prompt with the text of its last message;
* ``scripted/<file>`` answers from a file of reply rules (relative to the working directory;
  ``scripted//abs/path.jsonl`` for an absolute one). JSON Lines (``.jsonl``, one rule per line;
  blank lines and lines starting with ``#`` skipped) or a JSON list (``.json``). A rule is a
  JSON string (the reply to any prompt) or an object ``{"reply": "...", "match": "<regex>"}``:
  the first rule whose ``match`` is found (:func:`re.search`, DOTALL) in the request's messages
  (contents joined by blank lines, system first) gives the reply; a rule without ``match``
  matches every prompt. The same prompt always gets the same reply, whatever the order the
  requests arrive in. A prompt no rule matches fails that call (not retried; the unit is a
  failed unit of the run, re-asked by a re-run).

The file's sha256 is part of the cache key (as the provider's ``base_url``,
``scripted:sha256=<digest>``), so an edited file is never answered from the cache of the old one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ideaharness.errors import UserError
from ideaharness.llm.errors import ProviderError
from ideaharness.llm.types import ChatRequest, Completion, Message, Usage

Responder = Callable[[list[Message]], str]


class ScriptedModel:
    """Replies by ``responder(messages)``, or pops the next string of a list (cycling if asked).

    ``calls`` keeps every (messages, sample_index) received, for assertions. ``max_tokens`` (None
    allowed) and the other sampling arguments are accepted and ignored; ``reasoning_budget`` is 0.
    """

    reasoning_budget = 0

    def __init__(
        self,
        responder: Responder | Sequence[str],
        model: str = "scripted/test",
        *,
        cycle: bool = False,
    ) -> None:
        self.model = model
        self.calls: list[tuple[list[Message], int]] = []
        if callable(responder):
            self._responder: Responder = responder
        else:
            replies = list(responder)
            state = {"i": 0}

            def next_reply(_: list[Message]) -> str:
                i = state["i"]
                if i >= len(replies):
                    if not cycle or not replies:
                        raise RuntimeError(f"ScriptedModel ran out of replies after {len(replies)}")
                    i %= len(replies)
                state["i"] += 1
                return replies[i]

            self._responder = next_reply

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
    ) -> Completion:
        self.calls.append((messages, sample_index))
        text = self._responder(messages)
        return Completion(
            text=text,
            model=self.model,
            usage=Usage(
                prompt_tokens=sum(len(m["content"].split()) for m in messages),
                completion_tokens=len(text.split()),
            ),
        )


ECHO = "echo"
"""``scripted/echo``: the reply is the last message's text."""


@dataclass(frozen=True)
class ReplyRule:
    """One rule of a replies file: ``reply`` for a prompt in which ``match`` is found (None: any)."""

    reply: str
    match: re.Pattern[str] | None = None

    def matches(self, prompt: str) -> bool:
        return self.match is None or self.match.search(prompt) is not None


def load_reply_rules(path: str | Path) -> list[ReplyRule]:
    """The rules of a replies file (format: the module docstring).

    Returns:
        The rules in file order, at least one.

    Raises:
        UserError: the file is missing or unreadable, not UTF-8, holds a line (``.jsonl``) or an
            entry (``.json``) that is not a string or a ``{"reply", "match"}`` object, a ``match``
            that is no valid regular expression, or no rule at all. The message names the file
            and the line (``.jsonl``) or entry index (``.json``).
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise UserError(f"scripted/{path}: no such file of replies") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"scripted/{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise UserError(f"scripted/{path}: cannot be read ({exc.strerror or exc})") from None
    entries: list[tuple[str, Any]] = []
    if file.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"{file}: not JSON ({exc.msg}, line {exc.lineno})") from None
        if not isinstance(data, list):
            raise UserError(f"{file}: a .json file of replies holds a list of rules")
        entries = [(f"entry {i}", item) for i, item in enumerate(data)]
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                entries.append((f"line {number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise UserError(f"{file}, line {number}: not JSON ({exc.msg})") from None
    rules = [_rule(file, where, item) for where, item in entries]
    if not rules:
        raise UserError(f"{file}: no reply rules")
    return rules


def _rule(file: Path, where: str, item: Any) -> ReplyRule:
    if isinstance(item, str):
        return ReplyRule(item)
    if not isinstance(item, dict) or not isinstance(item.get("reply"), str) or set(item) - {"reply", "match"}:
        raise UserError(f'{file}, {where}: a rule is a JSON string or {{"reply": "...", "match": "<regex>"}}')
    pattern = item.get("match")
    if pattern is None:
        return ReplyRule(item["reply"])
    if not isinstance(pattern, str):
        raise UserError(f"{file}, {where}: 'match' is a regular expression (a string)")
    try:
        return ReplyRule(item["reply"], re.compile(pattern, re.DOTALL))
    except re.error as exc:
        raise UserError(f"{file}, {where}: 'match' {pattern!r} is no regular expression ({exc})") from None


def _prompt(messages: Sequence[Message]) -> str:
    return "\n\n".join(m["content"] for m in messages)


class ScriptedProvider:
    """The ``scripted/`` provider (see the module docstring): ``name`` is ``echo`` or a file of
    reply rules, read once when the provider is built.

    Raises:
        UserError: from :func:`load_reply_rules` for a file that cannot serve.
    """

    def __init__(self, name: str) -> None:
        self.label = f"scripted/{name}"
        self.rules: list[ReplyRule] | None = None
        self.base_url: str | None = None
        if name != ECHO:
            self.rules = load_reply_rules(name)
            digest = hashlib.sha256(Path(name).read_bytes()).hexdigest()
            self.base_url = f"scripted:sha256={digest}"

    def reply(self, messages: Sequence[Message]) -> str:
        """The reply to ``messages``.

        Raises:
            ProviderError: (not retryable) no rule matches the prompt, or no messages to echo.
        """
        if self.rules is None:
            if not messages:
                raise ProviderError(f"{self.label}: no message to echo", retryable=False)
            return messages[-1]["content"]
        prompt = _prompt(messages)
        for rule in self.rules:
            if rule.matches(prompt):
                return rule.reply
        start = " ".join(messages[-1]["content"].split())[:80] if messages else ""
        raise ProviderError(f"{self.label}: no rule matches the prompt starting {start!r}", retryable=False)

    async def complete(self, request: ChatRequest) -> Completion:
        text = self.reply(request.messages)
        return Completion(
            text=text,
            model=self.label,
            usage=Usage(
                prompt_tokens=sum(len(m["content"].split()) for m in request.messages),
                completion_tokens=len(text.split()),
            ),
            finish_reason="stop",
        )

    async def aclose(self) -> None:
        return None
