"""Every benchmark's reply parsers read the answer only, whatever reasoning comes before it (issue
21, done-when 1): a property test over every registered benchmark's parsers (any accepted answer,
wrapped after any ``<think>`` block, after reasoning closed by a lone ``</think>``, or with the
reasoning in the provider's field, parses to the same value), and held-out-style tests per reasoning
shape: think tags, a lone closing tag, ``reasoning_content`` from a loopback OpenAI-compatible
server, and truncated reasoning (a parse failure with that reason, never a value)."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ideaharness.llm.client import get_llm
from ideaharness.llm.judge import judge
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.llm.types import Completion, Message, Usage
from ideaharness.runner import registry
from ideaharness.testing.openai_server import OpenAICompatServer, Reply
from tests.llm.reasoning_replies import NOT_REPLY_PARSERS, REPLY_PARSERS, ReplyParser

PROPERTIES = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ASK: list[Message] = [{"role": "user", "content": "Answer as asked."}]
CASES = [pytest.param(p, id=f"{bench}:{p.step}") for bench, parsers in REPLY_PARSERS.items() for p in parsers]


def _shipped() -> dict[str, type]:
    """The registered benchmarks that ship with ideaharness or an installed package (not toy
    benchmarks a test registers for itself)."""
    return {name: cls for name, cls in registry.benchmarks().items()
            if not cls.__module__.startswith("tests.")}


def test_every_registered_benchmark_has_its_reply_parsers_listed() -> None:
    missing = [name for name in _shipped() if not REPLY_PARSERS.get(name)]
    assert not missing, f"benchmarks without reply parsers in tests/llm/reasoning_replies.py: {missing}"
    assert set(REPLY_PARSERS) <= set(_shipped()), "an entry names a benchmark that is not registered"


def _package_parsers(package: str) -> Iterator[tuple[str, Any]]:
    module = importlib.import_module(package)
    names = [package] + [f"{package}.{m.name}" for m in pkgutil.iter_modules(module.__path__)]
    for name in names:
        for attr, value in vars(importlib.import_module(name)).items():
            if attr.startswith("parse_") and inspect.isfunction(value) and value.__module__ == name:
                yield f"{name}.{attr}", value


def test_every_parser_a_benchmark_package_defines_is_listed() -> None:
    listed: dict[str, set[Any]] = {}
    for name, cls in _shipped().items():
        package = cls.__module__.rsplit(".", 1)[0]
        listed.setdefault(package, set()).update(p.function for p in REPLY_PARSERS.get(name, []))
    unlisted = [qualified for package, functions in listed.items()
                for qualified, fn in _package_parsers(package)
                if fn not in functions and qualified not in NOT_REPLY_PARSERS]
    assert not unlisted, f"reply parsers missing from tests/llm/reasoning_replies.py: {unlisted}"


@pytest.mark.parametrize("parser", CASES)
def test_the_examples_parse_to_different_values(parser: ReplyParser) -> None:
    first, second = (parser.parse(e) for e in parser.examples)
    assert first != second  # so a draft left in the reasoning would change the value read


# ----------------------------------------------------------------------------- property


class FieldModel:
    """A ChatModel whose reply carries its reasoning in the provider field (``reasoning_content``)."""

    def __init__(self, answer: str, reasoning: str) -> None:
        self.model = "fake/field"
        self.answer, self.reasoning = answer, reasoning

    async def chat(self, messages: list[Message], **_: Any) -> Completion:
        return Completion(text=self.answer, model=self.model, reasoning=self.reasoning, finish_reason="stop",
                          usage=Usage(completion_tokens=9, reasoning_tokens=5))


DRAFTS = st.sampled_from([
    "Answer: B", "A", "Rating: 3", '{"rating": 2, "explanation": "draft"}',
    '{"originality": 2, "feasibility": 9, "clarity": 1}', "Hypothesis: a draft to revise.",
    "Matched score: 5", "Selection: candidate 1", "Ranking: D > C > B > A", "Title: Draft",
    '```json\n{"closest_option": "A", "final_choice": 1}\n```', '["x"]', "{ not json"])
reasoning_text = st.lists(st.one_of(DRAFTS, st.sampled_from(["Let me check.", "Wait,", "so", "\n\n"])),
                          min_size=1, max_size=8).map(lambda parts: "Okay. " + " ".join(parts))
SHAPES = ("think", "thinking", "blocks", "lone", "field")


def _wrapped(shape: str, reasoning: str, answer: str, gap: str) -> Any:
    if shape == "field":
        return FieldModel(answer, reasoning)
    text = {"think": f"<think>{reasoning}</think>{gap}{answer}",
            "thinking": f"<THINKING>\n{reasoning}\n</Thinking>{gap}{answer}",
            "blocks": f"<think>{reasoning}</think>\n<think>Check once more.</think>{gap}{answer}",
            "lone": f"{reasoning}\n</think>{gap}{answer}"}[shape]
    return ScriptedModel([text])


@pytest.mark.parametrize("parser", CASES)
@PROPERTIES
@given(data=st.data(), reasoning=reasoning_text, shape=st.sampled_from(SHAPES),
       gap=st.sampled_from(["", "\n", "\n\n", " "]))
def test_any_accepted_answer_after_any_reasoning_parses_the_same(
        parser: ReplyParser, data: st.DataObject, reasoning: str, shape: str, gap: str) -> None:
    answer = data.draw(parser.answers, label="answer")
    expected = parser.parse(answer)  # the strategy draws accepted answers only
    judgment = asyncio.run(judge(_wrapped(shape, reasoning, answer, gap), ASK, parser.parse, max_attempts=1))
    assert judgment.parse_ok, judgment.errors
    assert judgment.parsed == expected
    assert judgment.reasoning is not None and "Okay." in judgment.reasoning
    assert judgment.truncated_reasoning is False


# ----------------------------------------------------------------------------- held-out shapes


def _draft_reasoning(draft: str) -> str:
    return ("Let me weigh the two options carefully before answering.\nA first draft of the answer:\n"
            f"{draft}\nOn reflection that draft is wrong, so the final answer differs.")


@pytest.mark.parametrize("parser", CASES)
@pytest.mark.parametrize("shape", ["think", "lone"])
@pytest.mark.parametrize("order", [0, 1])
def test_held_out_tagged_reasoning_with_a_draft_answer(parser: ReplyParser, shape: str, order: int) -> None:
    answer, draft = parser.examples[order], parser.examples[1 - order]
    reasoning = _draft_reasoning(draft)
    opening = "<think>\n" if shape == "think" else ""
    reply = f"{opening}{reasoning}\n</think>\n\n{answer}"
    judgment = asyncio.run(judge(ScriptedModel([reply]), ASK, parser.parse, max_attempts=1))
    assert judgment.parse_ok, judgment.errors
    assert judgment.parsed == parser.parse(answer)
    assert (judgment.raw_text, judgment.answer, judgment.reasoning) == (reply, answer, reasoning)


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as running:
        yield running


def _body(content: str, reasoning: str, finish: str) -> dict[str, Any]:
    return {"id": "r", "object": "chat.completion", "model": "reasoner",
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": content,
                                     "reasoning_content": reasoning}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 120, "total_tokens": 150,
                      "completion_tokens_details": {"reasoning_tokens": 100}}}


def _ask(server: OpenAICompatServer, parser: ReplyParser, replies: list[dict[str, Any]],
         **kwargs: Any) -> Any:
    server.script = [Reply(body=b) for b in replies]
    server.requests.clear()
    llm = get_llm("openai/reasoner", base_url=server.base_url, use_cache=False, max_retries=0)

    async def go() -> Any:
        try:
            return await judge(llm, ASK, parser.parse, **kwargs)
        finally:
            await llm.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("parser", CASES)
def test_held_out_reasoning_content_from_an_openai_compatible_server(server: OpenAICompatServer,
                                                                     parser: ReplyParser) -> None:
    answer, draft = parser.examples
    reasoning = _draft_reasoning(draft)
    judgment = _ask(server, parser, [_body(answer, reasoning, "stop")], max_attempts=1)
    assert judgment.parse_ok, judgment.errors
    assert judgment.parsed == parser.parse(answer)
    assert (judgment.raw_text, judgment.answer, judgment.reasoning) == (answer, None, reasoning)
    assert judgment.usage["reasoning_tokens"] == 100


@pytest.mark.parametrize("parser", CASES)
def test_held_out_truncated_reasoning_is_a_parse_failure_with_that_reason(server: OpenAICompatServer,
                                                                          parser: ReplyParser) -> None:
    cut = _draft_reasoning(parser.examples[1])[:90]
    judgment = _ask(server, parser, [_body("", cut, "length")] * 2, max_attempts=2, max_tokens=64)
    assert not judgment.parse_ok and judgment.parsed is None
    assert judgment.truncated_reasoning is True and judgment.reasoning == cut.strip()
    assert len(judgment.errors) == 2
    assert all("ran out of tokens while reasoning" in e for e in judgment.errors)
    caps = [r.body.get("max_tokens", r.body.get("max_completion_tokens")) for r in server.requests]
    assert len(caps) == 2 and caps[1] > caps[0] > 64  # the reasoning budget added, then doubled
