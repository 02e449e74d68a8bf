"""Reasoning apart from the answer (ideaharness.llm.reasoning) and judge() over reasoning replies:
the parser reads the answer only, the judgment keeps raw text, answer and reasoning, and a reply
that ran out of tokens while reasoning is a parse failure whose next attempt gets twice the
reasoning allowance (issue 21, item 1)."""

from __future__ import annotations

import asyncio
import doctest
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ideaharness.llm.reasoning as reasoning_module
from ideaharness.benchmarks.liveideabench.parsers import parse_fluency
from ideaharness.llm.judge import MAX_GROWN_TOKENS, grown_max_tokens, judge
from ideaharness.llm.reasoning import Split, split_reasoning, with_reasoning
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.llm.types import Completion, Message, Usage

PROPERTIES = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ASK: list[Message] = [{"role": "user", "content": "Grade the two ideas A-D."}]
TAG_NAME = re.compile(r"</?\s*(?:think|thinking|reasoning)\b", re.IGNORECASE)


def test_the_docstring_examples_hold() -> None:
    assert doctest.testmod(reasoning_module).failed == 0


# ----------------------------------------------------------------------------- shapes


def test_the_issue_replies_read_as_their_answer() -> None:
    assert split_reasoning("<think>A? no, they share a method</think>\nC") == Split(
        "C", "A? no, they share a method", False)
    assert split_reasoning("Both use a hydrogel, so not A.\n</think>\nB") == Split(
        "B", "Both use a hydrogel, so not A.", False)


@pytest.mark.parametrize("reply", [
    "<thinking>draft</thinking>\nB", "<THINK>draft</THINK>\nB", "<Reasoning >draft</reasoning>B",
    "  \n<think>draft</think>   B", "<think>draft</Think>\n\nB",
])
def test_tag_names_case_and_spacing(reply: str) -> None:
    assert split_reasoning(reply) == Split("B", "draft", False)


def test_several_leading_blocks_are_joined_in_order() -> None:
    split = split_reasoning("<think>one</think>\n<thinking>two</thinking>\n<think> </think>C")
    assert split == Split("C", "one\n\ntwo", False)


@pytest.mark.parametrize("reply", [
    'B. Models write <think> before </think> their reasoning.',
    '{"idea": "a tokenizer that emits <think> and </think> markers", "title": "tags"}',
    '{"idea": "stop at </think> tokens"}',
    'Here is the JSON: {"idea": "stop at </think> tokens"}',
    '```json\n{"idea": "cut at </think>, then the rest", "rating": 3',  # JSON that does not decode
    "Answer: C\n<think>a block after the answer is answer</think>",
])
def test_tags_that_do_not_lead_the_reply_are_answer(reply: str) -> None:
    assert split_reasoning(reply) == Split(reply, None, False)


def test_a_lone_closing_tag_after_a_draft_json_ends_the_reasoning() -> None:
    reply = 'Draft {"originality": 3, "feasibility": 4} is too low.</think>\n{"originality": 8}'
    draft = 'Draft {"originality": 3, "feasibility": 4} is too low.'
    assert split_reasoning(reply) == Split('{"originality": 8}', draft, False)


@pytest.mark.parametrize("finish", [None, "stop", "length", "max_tokens"])
def test_an_unclosed_tag_is_truncated_reasoning(finish: str | None) -> None:
    split = split_reasoning("<think>First, originality: the idea", finish_reason=finish)
    assert split == Split("", "First, originality: the idea", True)
    cut = split_reasoning("<think>ok</think>\n<think>then more", finish_reason=finish)
    assert cut == Split("", "ok\n\nthen more", True)


def test_the_provider_field_comes_before_tag_reasoning() -> None:
    split = split_reasoning("<think>tag part</think>B", reasoning="field part\n")
    assert split == Split("B", "field part\n\ntag part", False)
    assert split_reasoning("B", reasoning="   ") == Split("B", None, False)


@pytest.mark.parametrize(("text", "kwargs", "truncated"), [
    ("", {"reasoning": "I compare", "finish_reason": "length"}, True),
    ("  \n", {"reasoning": "I compare", "finish_reason": "max_tokens"}, True),  # Anthropic's stop reason
    ("", {"reasoning_tokens": 512, "finish_reason": "length"}, True),  # o-series: reasoning not returned
    ("", {"reasoning": "I compare", "finish_reason": "stop"}, False),  # empty answer, not cut: parser's
    ("", {"finish_reason": "length"}, False),  # no reasoning at all: an empty reply, not reasoning
    ("Answer: B", {"reasoning": "I compare", "finish_reason": "length"}, False),  # an answer came
    ("<think>all</think>", {"finish_reason": "length"}, True),
    ("<think>all</think>", {"finish_reason": "stop"}, False),
])
def test_truncated_means_cut_while_reasoning_with_no_answer(text: str, kwargs: dict[str, Any],
                                                            truncated: bool) -> None:
    assert split_reasoning(text, **kwargs).truncated is truncated


# ----------------------------------------------------------------------------- properties

# reasoning as models write it: prose with draft verdicts, JSON, quotes and brackets, never a tag
REASONING_PIECES = st.sampled_from([
    "Let me compare the two ideas.", "Option A? No, they share a method.", "Answer: B", "C",
    '{"originality": 3, "feasibility": 2, "clarity": 5}', "Rating: 7", "Matched score: 2",
    "Hypothesis: a draft hypothesis that I will revise.", "Selection: candidate 1", "Ranking: B > A > C",
    '```json\n{"rating": 4, "explanation": "draft"}\n```', "[1, 2]", "x < y and y > z", 'a "quoted" word',
    "it is 5\" long", "{ not json", "]", "Wait,", "\n\n", "\t", "<b>bold</b>", "Grade: D",
])
reasoning_text = st.lists(REASONING_PIECES, min_size=1, max_size=12).map(" ".join)
answer_text = st.text(min_size=0, max_size=80).filter(lambda t: not TAG_NAME.search(t))
between = st.sampled_from(["", "\n", "\n\n", " ", "\r\n", "\n \t"])
tag = st.sampled_from(["think", "thinking", "reasoning", "THINK", "Think"])


@PROPERTIES
@given(reasoning=reasoning_text, answer=answer_text, gap=between, name=tag)
def test_a_think_block_before_any_answer_leaves_the_answer(reasoning: str, answer: str, gap: str,
                                                           name: str) -> None:
    split = split_reasoning(f"<{name}>{reasoning}</{name}>{gap}{answer}")
    assert split.answer == answer.lstrip()
    assert split.reasoning == (reasoning.strip() or None)
    assert split.truncated is False


@PROPERTIES
@given(reasoning=reasoning_text, answer=answer_text, gap=between)
def test_a_lone_closing_tag_leaves_the_answer(reasoning: str, answer: str, gap: str) -> None:
    split = split_reasoning(f"Okay. {reasoning}</think>{gap}{answer}")
    assert split.answer == answer.lstrip()
    assert split.reasoning == f"Okay. {reasoning}".strip()


@PROPERTIES
@given(text=answer_text, finish=st.sampled_from([None, "stop", "length"]))
def test_a_reply_without_tags_is_all_answer(text: str, finish: str | None) -> None:
    assert split_reasoning(text, finish_reason=finish) == Split(text, None, False)


tagged_reply = st.lists(st.one_of(reasoning_text, answer_text, st.sampled_from(
    ["<think>", "</think>", "<thinking>", "</THINKING>", "<reasoning>", " </reasoning>", '{"a": "', '"}'])),
    max_size=8).map("".join)


@PROPERTIES
@given(text=tagged_reply, field=st.one_of(st.none(), reasoning_text),
       finish=st.sampled_from([None, "stop", "length", "max_tokens"]), tokens=st.integers(0, 3))
def test_with_reasoning_is_idempotent_and_loses_nothing(text: str, field: str | None, finish: str | None,
                                                        tokens: int) -> None:
    completion = Completion(text=text, model="m", reasoning=field, finish_reason=finish,
                            usage=Usage(reasoning_tokens=tokens))
    once = with_reasoning(completion)
    assert with_reasoning(once) == once
    assert (once.raw_text if once.raw_text is not None else once.text) == text
    assert once.text in text
    if once.raw_text is None:
        assert once.text == text
    else:
        assert once.raw_text != once.text
    split = split_reasoning(text, reasoning=field, finish_reason=finish, reasoning_tokens=tokens)
    assert (once.reasoning, once.truncated_reasoning) == (split.reasoning, split.truncated)


def test_with_reasoning_returns_a_plain_reply_as_is_and_keeps_a_provider_flag() -> None:
    plain = Completion(text="B", model="m", finish_reason="stop")
    assert with_reasoning(plain) is plain
    flagged = Completion(text="", model="m", truncated_reasoning=True)
    assert with_reasoning(flagged).truncated_reasoning is True
    split = with_reasoning(Completion(text="<think>r</think>B", model="m"))
    assert (split.text, split.raw_text, split.reasoning) == ("B", "<think>r</think>B", "r")


# ----------------------------------------------------------------------------- judge()


class ReasoningModel:
    """A ChatModel that reasons ``words`` words before answering ``answer``, the reasoning counted
    against ``max_tokens`` (one token a word, the ``reasoning_budget`` added as :class:`LLM` does):
    cut replies end with an unclosed ``<think>`` or, with ``field``, an empty text and the reasoning
    in the provider field, finish reason "length". ``caps`` records the ``max_tokens`` asked."""

    def __init__(self, answer: str, words: int, *, reasoning_budget: int = 0, field: bool = False) -> None:
        self.model = "fake/reasoner"
        self.answer = answer
        self.words = words
        self.reasoning_budget = reasoning_budget
        self.field = field
        self.caps: list[int | None] = []

    async def chat(self, messages: list[Message], *, max_tokens: int | None = 1024, **_: Any) -> Completion:
        self.caps.append(max_tokens)
        cap = None if max_tokens is None else max_tokens + self.reasoning_budget
        thought = [f"w{i}" for i in range(self.words)]
        cut = cap is not None and self.words + len(self.answer.split()) > cap
        shown = " ".join(thought[: cap] if cut and cap is not None else thought)
        usage = Usage(prompt_tokens=7, completion_tokens=min(cap or 10**9, self.words + 1),
                      reasoning_tokens=min(cap or 10**9, self.words))
        if self.field:
            return Completion(text="" if cut else self.answer, model=self.model, reasoning=shown, usage=usage,
                              finish_reason="length" if cut else "stop")
        text = f"<think>{shown}" + ("" if cut else f"</think>\n{self.answer}")
        return Completion(text=text, model=self.model, usage=usage, finish_reason="length" if cut else "stop")


def test_judge_parses_the_answer_and_records_reply_answer_and_reasoning() -> None:
    reply = "<think>A? no, they share a method</think>\nC"
    judgment = asyncio.run(judge(ScriptedModel([reply]), ASK, parse_fluency, max_tokens=16))
    assert judgment.parse_ok and judgment.parsed == "C"
    assert (judgment.raw_text, judgment.answer) == (reply, "C")
    assert judgment.reasoning == "A? no, they share a method"
    assert judgment.truncated_reasoning is False and judgment.errors == []
    plain = asyncio.run(judge(ScriptedModel(["C"]), ASK, parse_fluency))
    assert (plain.raw_text, plain.answer, plain.reasoning) == ("C", None, None)


@pytest.mark.parametrize("field", [False, True])
def test_a_truncated_attempt_is_a_parse_failure_and_the_next_gets_twice_the_allowance(field: bool) -> None:
    model = ReasoningModel("B", words=40, reasoning_budget=16, field=field)  # 16+16 cut, 16+32 fits
    judgment = asyncio.run(judge(model, ASK, parse_fluency, max_tokens=16))
    assert model.caps == [16, 32]  # sent: 16 + 16 = 32, then 16 + 16 * 2 = 48
    assert judgment.parse_ok and judgment.parsed == "B" and judgment.attempts == 2
    assert judgment.errors == [
        "attempt 1: the reply ran out of tokens while reasoning (cap 32 tokens): no answer"]
    assert judgment.truncated_reasoning is False
    assert judgment.usage["reasoning_tokens"] == 32 + 40


def test_every_attempt_truncated_is_a_counted_truncation() -> None:
    model = ReasoningModel("B", words=10_000, reasoning_budget=100)
    judgment = asyncio.run(judge(model, ASK, parse_fluency, max_tokens=16, max_attempts=3))
    assert model.caps == [16, 116, 316]
    assert not judgment.parse_ok and judgment.parsed is None and judgment.truncated_reasoning is True
    assert [e.split(":")[0] for e in judgment.errors] == ["attempt 1", "attempt 2", "attempt 3"]
    assert all("ran out of tokens while reasoning" in e for e in judgment.errors)
    assert judgment.reasoning is not None and judgment.raw_text.startswith("<think>w0 w1")


def test_without_a_reasoning_budget_the_cap_itself_doubles() -> None:
    model = ReasoningModel("B", words=50)
    judgment = asyncio.run(judge(model, ASK, parse_fluency, max_tokens=16, max_attempts=3))
    assert model.caps == [16, 32, 64] and judgment.parse_ok


def test_no_cap_stays_no_cap() -> None:
    model = ReasoningModel("B", words=50)
    assert asyncio.run(judge(model, ASK, parse_fluency, max_tokens=None)).parse_ok
    assert model.caps == [None]


def test_an_unparsable_answer_does_not_grow_the_cap() -> None:
    model = ReasoningModel("no grade here", words=3, reasoning_budget=8)
    judgment = asyncio.run(judge(model, ASK, parse_fluency, max_tokens=16, max_attempts=2))
    assert model.caps == [16, 16] and not judgment.parse_ok and judgment.truncated_reasoning is False
    assert judgment.answer == "no grade here" and judgment.reasoning == "w0 w1 w2"


@pytest.mark.parametrize(("max_tokens", "budget", "truncations", "expected"), [
    (16, 2048, 0, 16), (16, 2048, 1, 16 + 2048), (16, 2048, 2, 16 + 3 * 2048), (500, 0, 3, 4000),
    (16, 2048, 10, MAX_GROWN_TOKENS), (500, 0, 12, MAX_GROWN_TOKENS), (40_000, 0, 2, 40_000),
    (None, 2048, 3, None),
])
def test_grown_max_tokens(max_tokens: int | None, budget: int, truncations: int,
                          expected: int | None) -> None:
    assert grown_max_tokens(max_tokens, budget, truncations) == expected
