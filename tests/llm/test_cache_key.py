"""The response-cache key is byte-for-byte the one earlier versions computed, whichever serialiser
writes it (orjson on the fast path, json otherwise): existing cache files must keep hitting."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ideaharness.llm import cache as cache_module
from ideaharness.llm.cache import LATER_FIELDS, request_key
from ideaharness.llm.types import ChatRequest


def frozen_request_key(request: ChatRequest, base_url: str | None = None) -> str:
    """``request_key`` as of commit 557d2f6, copied verbatim: the reference every key must equal."""
    payload: dict[str, Any] = request.model_dump(mode="json")
    for name, default in LATER_FIELDS.items():
        if payload.get(name, default) == default:
            payload.pop(name, None)
    payload["base_url"] = base_url.rstrip("/") if base_url else None
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


# every code point, lone surrogates included, plus the characters JSON writers treat specially
chars = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
special = st.sampled_from(["\ud800", "\udfff", "\ud83d\ude00", "\u2028", "\u2029", "\x85", "\x00", "\x1f",
                           "\x7f", '"', "\\", "/", "\ufeff", "\uffff", "é", "\U0010ffff"])
text = st.lists(st.one_of(chars, special), max_size=12).map("".join)
floats = st.one_of(st.floats(), st.sampled_from([0.0, -0.0, 0.7, 1e-05, 1e16, 1e15, 5e-324, 1.5e300,
                                                 9007199254740993.0, 0.1 + 0.2, 123456789.123]))
ints = st.one_of(st.integers(), st.sampled_from([2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**63) - 1]))
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), ints, floats, text),
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(text, children, max_size=4)),
    max_leaves=16,
)
messages = st.lists(
    st.one_of(
        st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant"]), "content": text}),
        st.dictionaries(text, text, max_size=3),
    ),
    max_size=4,
)
base_urls = st.one_of(st.none(), st.just(""), text, st.sampled_from(["http://h/v1", "http://h/v1/", "https://a//"]))


@st.composite
def validated_requests(draw: st.DrawFn) -> ChatRequest:
    """Requests as the client builds them (validated), every field drawn."""
    return ChatRequest(
        model=draw(text),
        messages=draw(messages),
        temperature=draw(floats),
        top_p=draw(st.one_of(st.none(), floats)),
        max_tokens=draw(st.one_of(st.none(), ints)),
        seed=draw(st.one_of(st.none(), ints)),
        json_schema=draw(st.one_of(st.none(), st.dictionaries(text, json_values, max_size=4))),
        sample_index=draw(ints),
        reasoning_effort=draw(st.one_of(st.none(), st.sampled_from(["none", "low", "high"]), text)),
    )


odd = st.one_of(json_values, st.tuples(ints, text), st.just({1: "a"}), st.just(b"bytes"))


@st.composite
def constructed_requests(draw: st.DrawFn) -> ChatRequest:
    """Requests built without validation (``model_construct``): any field may hold another type."""
    fields: dict[str, Any] = {
        "model": draw(st.one_of(text, odd)),
        "messages": draw(st.one_of(messages, st.lists(st.dictionaries(text, odd, max_size=2), max_size=2))),
        "temperature": draw(st.one_of(floats, ints, st.booleans())),
        "top_p": draw(st.one_of(st.none(), floats, ints)),
        "max_tokens": draw(st.one_of(st.none(), ints, st.booleans(), floats)),
        "seed": draw(st.one_of(st.none(), ints, st.booleans())),
        "json_schema": draw(st.one_of(st.none(), st.dictionaries(text, odd, max_size=3))),
        "sample_index": draw(st.one_of(ints, st.booleans())),
        "reasoning_effort": draw(st.one_of(st.none(), text)),
    }
    return ChatRequest.model_construct(**fields)


def same_outcome(request: ChatRequest, base_url: str | None) -> None:
    try:
        expected: str | type[BaseException] = frozen_request_key(request, base_url)
    except Exception as exc:  # noqa: BLE001 (the new key must fail the same way)
        expected = type(exc)
    if isinstance(expected, str):
        assert request_key(request, base_url) == expected
    else:
        with pytest.raises(expected):
            request_key(request, base_url)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(validated_requests(), base_urls)
def test_key_of_every_validated_request_is_unchanged(request: ChatRequest, base_url: str | None) -> None:
    same_outcome(request, base_url)


@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic: "serialized value may not be as expected"
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(constructed_requests(), base_urls)
def test_key_of_requests_built_without_validation_is_unchanged(request: ChatRequest,
                                                                base_url: str | None) -> None:
    same_outcome(request, base_url)


@settings(max_examples=300, deadline=None)
@given(floats, floats, st.one_of(st.none(), st.dictionaries(text, json_values, max_size=3)))
def test_floats_anywhere_keep_their_key(temperature: float, top_p: float, schema: dict | None) -> None:
    request = ChatRequest(model="openai/m", messages=[{"role": "user", "content": "q"}],
                          temperature=temperature, top_p=top_p, json_schema=schema)
    same_outcome(request, "http://h/v1")


@pytest.mark.parametrize("effort", [None, "low"])
def test_later_fields_at_their_default_are_left_out(effort: str | None) -> None:
    request = ChatRequest(model="m", messages=[{"role": "user", "content": "q"}], reasoning_effort=effort)
    assert request_key(request) == frozen_request_key(request)
    assert (request_key(request) == request_key(request.model_copy(update={"reasoning_effort": None}))) is (
        effort is None)


def test_the_fast_path_serves_ordinary_requests() -> None:
    """What a run sends (validated text, float temperature, a JSON schema) is written by orjson,
    so the speed-up is real; the equality above is what makes it safe."""
    request = ChatRequest(model="openai/m", messages=[{"role": "user", "content": "Rate é {x} \n 😀"}],
                          temperature=0.7, top_p=0.9, max_tokens=64, seed=1,
                          json_schema={"type": "object",
                                       "properties": {"a": {"type": "number", "minimum": 0.5}}})
    assert cache_module._fast_canonical(request, "http://h/v1/") is not None
    lone = request.model_copy(update={"json_schema": {"title": "\ud800"}})
    assert cache_module._fast_canonical(lone, None) is None  # orjson cannot write it: json does
    assert request_key(lone) == frozen_request_key(lone)
