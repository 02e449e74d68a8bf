"""The openai/ provider against a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ideaharness.errors import UserError
from ideaharness.llm import LLMError, get_llm
from ideaharness.llm.cache import cache_info
from ideaharness.llm.parsing import extract_json_object
from ideaharness.testing.openai_server import OpenAICompatServer, Reply

MSG = [{"role": "user", "content": "Say hi {x_i} {{"}]
SECRET = "sk-" + "test-SECRET-0123456789abcdef"  # a fake key, assembled so scanners skip it


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as srv:
        yield srv


def _llm(srv: OpenAICompatServer, tmp_path: Path, **kw: object):  # type: ignore[no-untyped-def]
    kw.setdefault("backoff_base_s", 0.05)
    return get_llm("openai/fake-model", base_url=srv.base_url, cache_path=tmp_path / "c.sqlite", **kw)


async def test_429_with_retry_after_is_retried_once_and_cached_once(
    server: OpenAICompatServer, tmp_path: Path
) -> None:
    server.script = [Reply(429, {"error": {"message": "rate limited"}}, {"Retry-After": "1"})]
    llm = _llm(server, tmp_path)
    start = time.monotonic()
    completion = await llm.chat(MSG, max_tokens=8)
    elapsed = time.monotonic() - start
    assert completion.text == "echo: Say hi {x_i} {{" and not completion.cached
    assert elapsed >= 0.95, "Retry-After: 1 must be honoured"
    assert llm.stats.calls == 2 and llm.stats.retries == 1 and llm.stats.failures == 0
    assert cache_info(tmp_path / "c.sqlite").entries == 1
    again = await llm.chat(MSG, max_tokens=8)
    assert again.cached and again.text == completion.text
    assert len(server.requests) == 2 and llm.stats.calls == 2 and llm.stats.cache_hits == 1
    assert cache_info(tmp_path / "c.sqlite").entries == 1


async def test_500_then_success(server: OpenAICompatServer, tmp_path: Path) -> None:
    server.script = [Reply(500, {"error": {"message": "boom"}})]
    llm = _llm(server, tmp_path)
    completion = await llm.chat(MSG)
    assert completion.text.startswith("echo:")
    assert llm.stats.retries == 1 and len(server.requests) == 2
    assert cache_info(tmp_path / "c.sqlite").entries == 1


async def test_persistent_500_gives_up_after_max_retries(server: OpenAICompatServer, tmp_path: Path) -> None:
    server.script = [Reply(503, {"error": {"message": "down"}})] * 10
    llm = _llm(server, tmp_path, max_retries=2)
    with pytest.raises(LLMError, match=r"gave up after 3 attempts \(2 retries\).*HTTP 503"):
        await llm.chat(MSG)
    assert len(server.requests) == 3 and llm.stats.failures == 1
    assert cache_info(tmp_path / "c.sqlite").entries == 0


async def test_401_is_a_user_error_without_retry(server: OpenAICompatServer, tmp_path: Path) -> None:
    server.script = [Reply(401, {"error": {"message": "bad key"}})]
    llm = _llm(server, tmp_path)
    with pytest.raises(UserError, match="OPENAI_API_KEY") as info:
        await llm.chat(MSG)
    assert not isinstance(info.value, LLMError)
    assert len(server.requests) == 1


async def test_400_is_not_retried(server: OpenAICompatServer, tmp_path: Path) -> None:
    server.script = [Reply(400, {"error": {"message": "bad temperature"}})]
    with pytest.raises(LLMError, match="HTTP 400"):
        await _llm(server, tmp_path).chat(MSG)
    assert len(server.requests) == 1


async def test_api_key_is_sent_but_never_stored(
    server: OpenAICompatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    llm = _llm(server, tmp_path)
    await llm.chat(MSG)
    await llm.chat(MSG, sample_index=1)
    auth = {k.lower(): v for k, v in server.requests[0].headers.items()}["authorization"]
    assert auth == f"Bearer {SECRET}"
    blob = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"fake-model" in blob  # the file holds the records ...
    assert SECRET.encode() not in blob  # ... but never the key
    assert SECRET not in repr(llm) and SECRET not in repr(llm.provider)


def test_openai_without_key_for_remote_url_is_a_user_error() -> None:
    with pytest.raises(UserError, match="set OPENAI_API_KEY in the environment"):
        get_llm("openai/gpt-4o-mini", base_url="https://api.example.com/v1", use_cache=False)
    with pytest.raises(UserError, match="set OPENAI_API_KEY"):
        get_llm("openai/gpt-4o-mini", use_cache=False)


@pytest.mark.parametrize("bad", ["gpt-4o", "openai/", "local/qwen-7b", "nosuch/claude", ""])
def test_unknown_model_string_is_a_user_error(bad: str) -> None:
    with pytest.raises(UserError, match="valid forms: openai/<model>.*local/qwen2.5-coder-1.5b"):
        get_llm(bad, use_cache=False)


async def test_json_schema_round_trip(server: OpenAICompatServer, tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}
    server.responder = lambda body: json.dumps({"score": 4})
    completion = await _llm(server, tmp_path).chat(MSG, json_schema=schema)
    sent = server.requests[0].body["response_format"]
    assert sent == {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
    assert extract_json_object(completion.text, required=("score",))["score"] == 4


async def test_rejected_response_format_falls_back_and_is_remembered(tmp_path: Path) -> None:
    schema = {"type": "object"}
    with OpenAICompatServer(lambda body: '```json\n{"a": 1}\n```', reject_response_format=True) as srv:
        llm = _llm(srv, tmp_path)
        first = await llm.chat(MSG, json_schema=schema)
        second = await llm.chat(MSG, json_schema=schema, sample_index=1)
    assert extract_json_object(first.text) == {"a": 1} and second.text == first.text
    assert ["response_format" in r.body for r in srv.requests] == [True, False, False]


async def test_identical_concurrent_requests_make_one_call(
    server: OpenAICompatServer, tmp_path: Path
) -> None:
    server.latency_s = 0.3
    llm = _llm(server, tmp_path)
    results = await asyncio.gather(*(llm.chat(MSG) for _ in range(5)))
    assert len({r.text for r in results}) == 1
    assert len(server.requests) == 1 and llm.stats.calls == 1 and llm.stats.cache_hits == 4


async def test_no_cache_calls_every_time(server: OpenAICompatServer, tmp_path: Path) -> None:
    llm = _llm(server, tmp_path, use_cache=False)
    await llm.chat(MSG)
    await llm.chat(MSG)
    assert len(server.requests) == 2 and llm.stats.cache_hits == 0
    assert not (tmp_path / "c.sqlite").exists()


async def test_sample_index_and_seed_reach_the_server(server: OpenAICompatServer, tmp_path: Path) -> None:
    llm = _llm(server, tmp_path)
    await llm.chat(MSG, seed=7)
    await llm.chat(MSG, seed=7, sample_index=1)
    seeds = [r.body["seed"] for r in server.requests]
    assert seeds[0] == 7 and seeds[1] != 7 and llm.stats.calls == 2


async def test_usage_and_cost(server: OpenAICompatServer, tmp_path: Path) -> None:
    llm = _llm(server, tmp_path, price_per_mtok=(1.0, 2.0))
    completion = await llm.chat([{"role": "user", "content": "one two three"}])
    assert completion.usage.prompt_tokens == 3 and completion.usage.completion_tokens == 4
    assert completion.cost_usd == pytest.approx((3 * 1.0 + 4 * 2.0) / 1e6)
    assert llm.stats.cost_usd == pytest.approx(completion.cost_usd)


async def test_rpm_limit_spaces_requests(server: OpenAICompatServer, tmp_path: Path) -> None:
    llm = _llm(server, tmp_path, rpm=600, use_cache=False, max_concurrency=8)  # one every 0.1 s
    start = time.monotonic()
    await asyncio.gather(*(llm.chat(MSG, sample_index=i) for i in range(6)))
    assert time.monotonic() - start >= 0.45


async def test_cancelled_owner_does_not_cancel_waiters(server: OpenAICompatServer, tmp_path: Path) -> None:
    server.latency_s = 0.3
    llm = _llm(server, tmp_path)
    owner = asyncio.create_task(llm.chat(MSG))
    await asyncio.sleep(0.05)
    waiter = asyncio.create_task(llm.chat(MSG))
    await asyncio.sleep(0.05)
    owner.cancel()
    completion = await waiter
    assert completion.text.startswith("echo:") and owner.cancelled()
    assert cache_info(tmp_path / "c.sqlite").entries == 1
