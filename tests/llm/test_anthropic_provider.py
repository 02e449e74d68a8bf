"""The anthropic/ provider through the real SDK against the loopback Anthropic API server on 127.0.0.1:
request shape, thinking -> reasoning, usage and cost, the response cache, errors and redaction."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ideaharness.errors import UserError
from ideaharness.llm import LLMError, get_llm
from ideaharness.llm.anthropic_provider import (
    MIN_THINKING_BUDGET,
    NO_CAP_MAX_TOKENS,
    SAMPLING_NOTE,
    AnthropicProvider,
    completion_from_body,
    root_url,
    usage_of,
)
from ideaharness.llm.cache import cache_info
from ideaharness.llm.errors import ContextLengthError, ProviderError
from ideaharness.llm.pricing import Price, cost_of
from ideaharness.llm.providers import accepts_base_url, provider_names
from ideaharness.llm.types import ChatRequest, Usage
from ideaharness.testing.anthropic_server import Answer, AnthropicServer, Reply, api_error

SECRET = "sk-ant-" + uuid.uuid4().hex + "-test"  # made per session: no key-like literal in the tree
MSG = [{"role": "system", "content": "You grade ideas."}, {"role": "user", "content": "Grade: one two three"}]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[AnthropicServer]:
    with AnthropicServer() as srv:
        yield srv


def _llm(srv: AnthropicServer, tmp_path: Path, model: str = "claude-test", **kw: object):  # type: ignore[no-untyped-def]
    kw.setdefault("backoff_base_s", 0.01)
    return get_llm(f"anthropic/{model}", base_url=srv.base_url, cache_path=tmp_path / "c.sqlite", **kw)


def test_registered_as_an_endpoint_provider() -> None:
    assert "anthropic" in provider_names() and accepts_base_url("anthropic/claude-x")


async def test_messages_system_and_default_thinking(server: AnthropicServer, tmp_path: Path) -> None:
    llm = _llm(server, tmp_path)
    completion = await llm.chat(MSG, max_tokens=16)
    body = server.requests[0].body
    assert body["system"] == "You grade ideas."
    assert body["messages"] == [{"role": "user", "content": "Grade: one two three"}]
    assert body["model"] == "claude-test"
    # the answer's cap plus the role's (auto) reasoning budget, which is the thinking budget
    assert llm.reasoning_budget == 2048
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048} and body["max_tokens"] == 16 + 2048
    assert not {"temperature", "top_p", "top_k", "seed"} & set(body)
    assert completion.text == "echo: Grade: one two three" and completion.finish_reason == "stop"
    assert llm.provider.notes == [f"anthropic/claude-test: {SAMPLING_NOTE}"]
    headers = {k.lower(): v for k, v in server.requests[0].headers.items()}
    assert headers["anthropic-version"] == "2026-10-21"


async def test_thinking_blocks_become_reasoning_and_text_the_answer(tmp_path: Path) -> None:
    answer = Answer("C", thinking="A? no, they share a method. B? no.")
    with AnthropicServer(lambda body: answer) as srv:
        completion = await _llm(srv, tmp_path).chat(MSG, max_tokens=4)
    assert completion.text == "C" and completion.reasoning == "A? no, they share a method. B? no."
    assert completion.raw_text is None and not completion.truncated_reasoning
    assert completion.usage.reasoning_tokens == 8 and completion.usage.completion_tokens == 9


async def test_reasoning_that_fills_the_cap_is_truncated_reasoning(tmp_path: Path) -> None:
    with AnthropicServer(lambda body: Answer("B", thinking="hmm " * 5000)) as srv:
        completion = await _llm(srv, tmp_path, reasoning_budget=1024).chat(MSG, max_tokens=4)
        assert srv.requests[0].body["max_tokens"] == 4 + 1024
    assert completion.text == "" and completion.finish_reason == "length"
    assert completion.truncated_reasoning and completion.reasoning


async def test_no_budget_sends_no_thinking_and_effort_goes_in_output_config(tmp_path: Path) -> None:
    with AnthropicServer() as srv:
        await _llm(srv, tmp_path, reasoning_budget=0).chat(MSG, max_tokens=16)
        await _llm(srv, tmp_path, reasoning_budget=0, reasoning_effort="minimal").chat(MSG, max_tokens=16)
        await _llm(srv, tmp_path, reasoning_budget=4096, reasoning_effort="none").chat(MSG, max_tokens=16)
        await _llm(srv, tmp_path, reasoning_budget=4096, reasoning_effort="high").chat(MSG, max_tokens=16)
    plain, minimal, none, high = (r.body for r in srv.requests)
    assert "thinking" not in plain and "output_config" not in plain and plain["max_tokens"] == 16
    assert minimal["thinking"] == {"type": "adaptive"} and minimal["output_config"] == {"effort": "low"}
    assert none["thinking"] == {"type": "disabled"} and "output_config" not in none
    assert high["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert high["output_config"] == {"effort": "high"} and high["max_tokens"] == 16 + 4096


def _body(budget: int, cap: int | None, effort: str | None = None) -> dict:
    provider = AnthropicProvider("m", base_url="http://127.0.0.1:1", api_key="k", timeout_s=1,
                                 label="anthropic/m")
    provider.reasoning_budget = budget
    sent = None if cap is None else cap + budget  # what LLM.request sends: the answer's cap + budget
    return provider.request_body(ChatRequest(model="anthropic/m", messages=MSG, max_tokens=sent,
                                             reasoning_effort=effort))


@given(budget=st.integers(0, 40_000), answer=st.integers(1, 20_000),
       effort=st.sampled_from([None, "minimal", "low", "medium", "high"]))
def test_every_thinking_request_keeps_the_api_rules_and_the_answer_room(budget: int, answer: int,
                                                                         effort: str | None) -> None:
    body = _body(budget, answer, effort)
    thinking = body.get("thinking")
    if budget == 0:
        assert thinking is None or thinking == {"type": "adaptive"}
        assert body["max_tokens"] == answer
        return
    tokens = thinking["budget_tokens"]
    assert tokens == max(budget, MIN_THINKING_BUDGET) and tokens < body["max_tokens"]
    assert body["max_tokens"] - tokens >= answer  # the answer keeps the room it asked for


def test_a_request_without_a_cap_still_sends_max_tokens() -> None:
    assert _body(0, None)["max_tokens"] == NO_CAP_MAX_TOKENS
    assert _body(2048, None)["max_tokens"] == NO_CAP_MAX_TOKENS + 2048


def test_small_budget_is_raised_to_the_api_minimum_and_the_cap_follows() -> None:
    body = _body(100, 16)
    assert body["thinking"]["budget_tokens"] == 1024 and body["max_tokens"] == 16 + 1024


async def test_usage_normalisation_and_cost_with_prompt_cache_fields(tmp_path: Path) -> None:
    answer = Answer("seven out of ten", thinking="a b c", cache_read_input_tokens=3,
                    cache_creation_input_tokens=2)
    price = Price(input=3.0, output=15.0, cached_input=0.3)
    with AnthropicServer(lambda body: answer) as srv:
        llm = _llm(srv, tmp_path, price_per_mtok=price)
        completion = await llm.chat(MSG, max_tokens=16)
    # prompt: 3 + 4 words = 7 tokens, of which 3 read from the cache, 2 written, 2 fresh
    usage = completion.usage
    assert usage == Usage(prompt_tokens=7, cached_prompt_tokens=3, completion_tokens=7, reasoning_tokens=3)
    expected = ((7 - 3) * 3.0 + 3 * 0.3 + 7 * 15.0) / 1e6  # cache writes billed at the input price
    assert completion.cost_usd == pytest.approx(expected) == pytest.approx(cost_of(usage, price))
    assert llm.stats.cached_prompt_tokens == 3 and llm.stats.reasoning_tokens == 3
    assert llm.stats.cost_usd == pytest.approx(expected)


@given(st.fixed_dictionaries({}, optional={
    "input_tokens": st.integers(0, 10**6), "output_tokens": st.integers(0, 10**6),
    "cache_read_input_tokens": st.one_of(st.none(), st.integers(0, 10**6)),
    "cache_creation_input_tokens": st.one_of(st.none(), st.integers(0, 10**6)),
    "output_tokens_details": st.one_of(st.none(), st.fixed_dictionaries(
        {"thinking_tokens": st.integers(0, 2 * 10**6)})),
}))
def test_usage_of_any_reported_shape(raw: dict) -> None:
    usage = usage_of(raw)
    read = raw.get("cache_read_input_tokens") or 0
    assert usage.prompt_tokens == (raw.get("input_tokens", 0) + read
                                   + (raw.get("cache_creation_input_tokens") or 0))
    assert usage.cached_prompt_tokens == read <= usage.prompt_tokens
    assert usage.completion_tokens == raw.get("output_tokens", 0)
    assert 0 <= usage.reasoning_tokens <= usage.completion_tokens


def test_usage_counts_that_are_not_finite_count_zero() -> None:
    usage = usage_of({"input_tokens": float("inf"), "output_tokens": float("nan"),
                      "cache_read_input_tokens": 2})
    assert usage == Usage(prompt_tokens=2, cached_prompt_tokens=2, completion_tokens=0, reasoning_tokens=0)


async def test_a_repeated_request_comes_from_the_response_cache(server: AnthropicServer,
                                                                 tmp_path: Path) -> None:
    server.responder = lambda body: Answer("C", thinking="reasons")
    llm = _llm(server, tmp_path)
    first = await llm.chat(MSG, max_tokens=4)
    again = await llm.chat(MSG, max_tokens=4)
    assert again.cached and (again.text, again.reasoning) == (first.text, first.reasoning) == ("C", "reasons")
    assert len(server.requests) == 1 and llm.stats.calls == 1 and llm.stats.cache_hits == 1
    other = await llm.chat(MSG, max_tokens=4, sample_index=1)  # a deliberate repeat is its own draw
    assert not other.cached and len(server.requests) == 2
    assert cache_info(tmp_path / "c.sqlite").entries == 2


async def test_429_with_retry_after_and_529_overloaded_are_retried(server: AnthropicServer,
                                                                    tmp_path: Path) -> None:
    server.script = [Reply(429, api_error(429, "rate_limit_error", "slow down")[1], {"retry-after": "1"}),
                     Reply(529, api_error(529, "overloaded_error", "Overloaded")[1])]
    llm = _llm(server, tmp_path)
    start = time.monotonic()
    completion = await llm.chat(MSG, max_tokens=8)
    assert time.monotonic() - start >= 0.95, "retry-after: 1 must be honoured"
    assert completion.text.startswith("echo:") and llm.stats.retries == 2 and len(server.requests) == 3


async def test_persistent_overload_gives_up(server: AnthropicServer, tmp_path: Path) -> None:
    server.script = [Reply(529, api_error(529, "overloaded_error", "Overloaded")[1])] * 5
    with pytest.raises(LLMError, match=r"gave up after 3 attempts.*HTTP 529.*Overloaded"):
        await _llm(server, tmp_path, max_retries=2).chat(MSG)
    assert cache_info(tmp_path / "c.sqlite").entries == 0


async def test_a_wrong_key_is_a_user_error_that_never_shows_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    server_side = "-".join(["not", "the", "client", "key"])  # a made-up value, not a credential
    with AnthropicServer(api_key=server_side) as srv:  # its 401 echoes the key it got
        llm = _llm(srv, tmp_path)
        with pytest.raises(UserError, match="ANTHROPIC_API_KEY") as info:
            await llm.chat(MSG)
    assert not isinstance(info.value, LLMError) and SECRET not in str(info.value)
    assert len(srv.requests) == 0  # refused before the messages route: no retry either


async def test_an_echoed_key_is_redacted_from_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    echo = api_error(400, "invalid_request_error", f"bad request from key {SECRET}")[1]
    with AnthropicServer(script=[Reply(400, echo)], api_key=SECRET) as srv:
        llm = _llm(srv, tmp_path)
        with pytest.raises(LLMError, match="HTTP 400") as info:
            await llm.chat(MSG)
        assert len(srv.requests) == 1  # a 400 is not retried
        await llm.chat(MSG, sample_index=1)
        auth = {k.lower(): v for k, v in srv.requests[-1].headers.items()}["authorization"]
    assert SECRET not in str(info.value) and auth == f"Bearer {SECRET}"
    blob = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"claude-test" in blob and SECRET.encode() not in blob
    assert SECRET not in repr(llm) and SECRET not in repr(llm.provider)


async def test_unknown_model_and_too_long_prompt(tmp_path: Path) -> None:
    with AnthropicServer(models={"claude-test"}, context_window=5) as srv:
        with pytest.raises(UserError, match=r"not found .*HTTP 404.*model: claude-nope") as info:
            await _llm(srv, tmp_path, model="claude-nope").chat(MSG)
        assert not isinstance(info.value, LLMError)
        with pytest.raises(ContextLengthError, match="prompt is too long: 7 tokens > 5"):
            await _llm(srv, tmp_path).chat(MSG)
        assert len(srv.requests) == 2


async def test_malformed_body_is_retried_then_fails(server: AnthropicServer, tmp_path: Path) -> None:
    server.script = [Reply(200, "{not json")] * 2
    with pytest.raises(LLMError, match="malformed reply body"):
        await _llm(server, tmp_path, max_retries=1).chat(MSG)
    assert len(server.requests) == 2


async def test_refused_features_fall_back_once_and_are_remembered(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}}
    with AnthropicServer(lambda body: json.dumps({"score": 4}), adaptive_only={"claude-new"},
                         no_structured_output={"claude-new"}, no_thinking={"claude-old"}) as srv:
        new = _llm(srv, tmp_path, model="claude-new")
        first = await new.chat(MSG, max_tokens=8, json_schema=schema)
        await new.chat(MSG, max_tokens=8, json_schema=schema, sample_index=1)
        sent = [r.body for r in srv.requests]
        assert json.loads(first.text) == {"score": 4}
        assert sent[0]["thinking"]["type"] == "enabled"
        assert sent[0]["output_config"]["format"]["schema"] == schema
        assert sent[1]["thinking"] == {"type": "adaptive"} and "output_config" in sent[1]
        assert sent[2]["thinking"] == {"type": "adaptive"} and "output_config" not in sent[2]
        assert len(sent) == 4 and sent[3] == sent[2]  # remembered: the second call sent what works
        assert any("adaptive thinking sent instead" in n for n in new.provider.notes)
        assert any("structured output" in n for n in new.provider.notes)
        old = _llm(srv, tmp_path, model="claude-old")
        await old.chat(MSG, max_tokens=8)
        assert srv.requests[-2].body["thinking"]["type"] == "enabled"
        assert "thinking" not in srv.requests[-1].body


def test_key_and_endpoint_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UserError, match="set ANTHROPIC_API_KEY in the environment"):
        get_llm("anthropic/claude-x", use_cache=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "not a url")
    with pytest.raises(UserError, match="ANTHROPIC_BASE_URL"):
        get_llm("anthropic/claude-x", use_cache=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/v1")
    llm = get_llm("anthropic/claude-x", use_cache=False)  # loopback: no key needed
    assert llm.base_url == "http://127.0.0.1:9" == root_url("http://127.0.0.1:9/v1/")


async def test_base_url_ending_in_v1_reaches_the_api(server: AnthropicServer, tmp_path: Path) -> None:
    llm = get_llm("anthropic/claude-test", base_url=server.base_url + "/v1", use_cache=False)
    assert (await llm.chat(MSG)).text.startswith("echo:")


def test_without_the_sdk_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # import anthropic -> ImportError
    with pytest.raises(UserError, match=r"pip install 'ideaharness\[anthropic\]'"):
        get_llm("anthropic/claude-x", base_url="http://127.0.0.1:9", use_cache=False)


def test_a_batch_result_message_is_read_like_a_reply() -> None:
    body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "max_tokens",
            "content": [{"type": "thinking", "thinking": "t", "signature": "s"},
                        {"type": "text", "text": "x"}],
            "usage": {"input_tokens": 2, "output_tokens": 3, "cache_read_input_tokens": 1}}
    completion = completion_from_body(body, "anthropic/m")
    assert (completion.text, completion.reasoning, completion.finish_reason) == ("x", "t", "length")
    assert completion.usage.prompt_tokens == 3 and completion.usage.cached_prompt_tokens == 1
    with pytest.raises(ProviderError, match="not an Anthropic message"):
        completion_from_body({"content": "nope"}, "anthropic/m")


async def test_identical_concurrent_requests_make_one_call(server: AnthropicServer, tmp_path: Path) -> None:
    server.latency_s = 0.3
    llm = _llm(server, tmp_path)
    results = await asyncio.gather(*(llm.chat(MSG) for _ in range(4)))
    assert len({r.text for r in results}) == 1 and len(server.requests) == 1
