"""The prompt hash (the id of a rendered prompt in every recorded judgment and in prompts.jsonl)
is byte-for-byte the one earlier versions computed, whichever serialiser writes the JSON."""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ideaharness.llm.judge import prompt_hash

judge_module = importlib.import_module("ideaharness.llm.judge")  # ideaharness.llm.judge is also a function


def frozen_prompt_hash(messages: Sequence[Any]) -> str:
    """``prompt_hash`` as of commit 557d2f6, copied verbatim."""
    blob = json.dumps(list(messages), sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


chars = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
special = st.sampled_from(["\ud800", "\udfff", "\ud83d\ude00", "\u2028", "\x85", "\x00", "\x1f", "\x7f", '"',
                           "\\", "é", "\U0010ffff", ": ", ", "])
text = st.lists(st.one_of(chars, special), max_size=10).map("".join)
messages = st.lists(st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["system", "user"]), "content": text}),
    st.dictionaries(text, text, max_size=3),
    st.dictionaries(text, st.one_of(st.none(), st.integers(), st.floats(), text), max_size=3),
    st.lists(text, max_size=2),
), max_size=4)


@settings(max_examples=800, deadline=None)
@given(messages)
def test_prompt_hash_is_unchanged(msgs: list[Any]) -> None:
    try:
        expected: str | type[BaseException] = frozen_prompt_hash(msgs)
    except Exception as exc:  # noqa: BLE001 (a lone surrogate: the same error as ever)
        expected = type(exc)
    if isinstance(expected, str):
        assert prompt_hash(msgs) == expected
    else:
        with pytest.raises(expected):
            prompt_hash(msgs)


def test_rendered_prompts_take_the_fast_path() -> None:
    from ideaharness.prompts import render

    msgs = render("ideabench_overlap", idea="an idea with é and {braces}", target="an abstract\nwith lines")
    assert judge_module._fast_messages_json(msgs) is not None
    assert prompt_hash(msgs) == frozen_prompt_hash(msgs)
