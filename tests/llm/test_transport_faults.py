"""A broken reply is one attempt's failure, never the run's: HTTP 200 bodies that are not a chat
completion are retried like 5xx; keys echoed by a server never reach an error message (on either
transport of the openai/ provider); and a fault-injecting loopback endpoint (30 % faults) is
survived call by call."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ideaharness.llm import LLMError, get_llm
from ideaharness.llm.openai_http import TRANSPORT_ENV, TRANSPORTS
from ideaharness.testing.openai_server import Faults, OpenAICompatServer, Reply, garble

MSG = [{"role": "user", "content": "Say hi"}]
SECRET = "sk-" + "test-ECHOED-0123456789abcdef"  # a fake key, assembled so scanners skip it


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv(TRANSPORT_ENV, raising=False)


def _llm(srv: OpenAICompatServer, tmp_path: Path, **kw: object):  # type: ignore[no-untyped-def]
    kw.setdefault("backoff_base_s", 0.01)
    return get_llm("openai/m", base_url=srv.base_url, cache_path=tmp_path / "c.sqlite", **kw)


@pytest.mark.parametrize("body", [
    '{"id": "x", "choices": [',          # a 200 cut short: not JSON
    "<html>502 Bad Gateway</html>",      # a proxy's page
    "",                                  # empty body
    '{"choices": "nope"}',               # JSON, but not a chat completion
    "[]",
    '{"choices": [{"message": null}]}',
    '{"choices": []}',
])
async def test_malformed_200_body_is_retried_not_raised(body: str, tmp_path: Path) -> None:
    with OpenAICompatServer(script=[Reply(200, body)]) as srv:
        llm = _llm(srv, tmp_path)
        completion = await llm.chat(MSG)
    assert completion.text == "echo: Say hi"
    assert llm.stats.calls == 2 and llm.stats.retries == 1 and llm.stats.failures == 0


async def test_persistently_broken_body_fails_the_call_with_one_llm_error(tmp_path: Path) -> None:
    with OpenAICompatServer(script=[Reply(200, "not json{")] * 5) as srv:
        llm = _llm(srv, tmp_path, max_retries=2)
        with pytest.raises(LLMError, match=r"gave up after 3 attempts.*malformed reply body") as info:
            await llm.chat(MSG)
    assert not isinstance(info.value.__cause__, json.JSONDecodeError)
    assert len(srv.requests) == 3 and llm.stats.failures == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("status", [400, 500, 404])
async def test_key_echoed_in_an_error_is_redacted(
    status: int, transport: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv(TRANSPORT_ENV, transport)
    echo = {"error": {"message": f"Incorrect API key provided: {SECRET}. Bearer {SECRET[3:]}"}}
    with OpenAICompatServer(script=[Reply(status, echo)] * 3) as srv:
        llm = _llm(srv, tmp_path, max_retries=1)
        with pytest.raises(Exception) as info:  # LLMError for 400/500, UserError for 404
            await llm.chat(MSG)
    text = str(info.value)
    assert "Incorrect API key provided" in text and "[REDACTED]" in text
    assert SECRET not in text and SECRET[3:] not in text


async def test_thirty_percent_faults_are_survived_call_by_call(tmp_path: Path) -> None:
    faults = Faults(rate=0.3, kinds=("429", "500", "hang", "broken_body"), seed=3, hang_s=1.0)
    with OpenAICompatServer(faults=faults) as srv:
        llm = _llm(srv, tmp_path, timeout_s=0.5, max_retries=8, use_cache=False, max_concurrency=8)
        prompts = [[{"role": "user", "content": f"question {i}"}] for i in range(40)]
        completions = await asyncio.gather(*(llm.chat(p) for p in prompts))
    assert [c.text for c in completions] == [f"echo: question {i}" for i in range(40)]
    assert sum(srv.fault_counts.values()) >= 5 and set(srv.fault_counts) <= set(faults.kinds)
    assert llm.stats.failures == 0 and llm.stats.retries == sum(srv.fault_counts.values())


def test_fault_draws_are_seeded_and_independent_of_arrival_order() -> None:
    faults = Faults(rate=0.3, seed=1)
    bodies = [{"messages": [{"role": "user", "content": str(i)}]} for i in range(400)]
    first = [faults.draw(b, 0) for b in bodies]
    assert first == [faults.draw(b, 0) for b in reversed(bodies)][::-1]
    share = sum(k is not None for k in first) / len(first)
    assert 0.2 < share < 0.4 and {k for k in first if k} == set(faults.kinds)
    assert Faults(rate=0.0).draw(bodies[0], 0) is None
    assert garble("a b c d e f", 0) != "a b c d e f" and len(garble("a b c d e f", 0).split()) == 3
