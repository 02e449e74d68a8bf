"""A scripted chat model: replies come from a function or a list. For tests and dry runs.

It implements :class:`~ideaharness.llm.types.ChatModel` exactly as real providers do, so a
benchmark pipeline can be tested for its logic (a judge that always picks option B, a reply that
never parses) without an LLM. Tests of the LLM layer itself use the real local model or a real
HTTP server.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ideaharness.llm.types import Completion, Message, Usage

Responder = Callable[[list[Message]], str]


class ScriptedModel:
    """Replies by ``responder(messages)``, or pops the next string of a list (cycling if asked).

    ``calls`` keeps every (messages, sample_index) received, for assertions.
    """

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
        max_tokens: int = 1024,
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
