"""The network layer both the LLM and scholarly clients use: Retry-After parsing, full-jitter backoff,
aiolimiter pacing, and one retry policy proven shared on real loopback servers."""

from __future__ import annotations

import asyncio
import json
import random
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ideaharness.llm import LLMError, get_llm
from ideaharness.llm.client import LLM
from ideaharness.net import HostRateLimits, RetryPolicy, backoff_delay, parse_retry_after, rate_limiter
from ideaharness.scholarly.errors import NotFound, ServerError
from ideaharness.scholarly.http import ScholarlyHTTP
from ideaharness.testing.openai_server import OpenAICompatServer
from ideaharness.testing.openai_server import Reply as LLMReply
from ideaharness.testing.scholarly_replay import ReplayServer
from ideaharness.testing.scholarly_replay import Reply as S2Reply

NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
MSG = [{"role": "user", "content": "hi"}]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "1"}, 1.0),
        ({"retry-after": "2.5"}, 2.5),
        ({"Retry-After": "Sun, 29 Nov 2026 12:00:30 GMT"}, 30.0),
        ({"Retry-After": "Sun, 29 Nov 2026 11:59:00 GMT"}, 0.0),  # in the past: no wait
        ({"retry-after-ms": "1500", "Retry-After": "9"}, 1.5),
        ({"Retry-After": "soon"}, None),
        ({}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers, now=NOW) == expected


def test_backoff_is_full_jitter_and_capped() -> None:
    rng = random.Random(0)
    for retry in range(12):
        high = min(5.0, 0.5 * 2**retry)
        draws = [backoff_delay(retry, base_s=0.5, cap_s=5.0, rng=rng) for _ in range(200)]
        assert all(0.0 <= d <= high for d in draws)
        assert max(draws) > 0.8 * high  # uses the whole interval, not a fixed fraction
        assert min(draws) < 0.2 * high  # full jitter reaches down to 0
    assert backoff_delay(10_000, cap_s=3.0, rng=rng) <= 3.0


def test_policy_caps_retry_after_and_rejects_bad_settings() -> None:
    policy = RetryPolicy(max_retries=2, base_s=1.0, cap_s=4.0, seed=0)
    assert policy.delay(0, retry_after_s=30.0) == 4.0
    assert policy.delay(5, retry_after_s=0.5) == 0.5
    assert policy.max_attempts == 3
    with pytest.raises(ValueError):
        RetryPolicy(max_retries=-1)
    with pytest.raises(ValueError):
        RetryPolicy(cap_s=-1.0)


async def test_policy_retries_only_retryable_faults() -> None:
    policy = RetryPolicy(max_retries=3, base_s=0.0, seed=0)
    calls = []

    async def fails_with(exc: Exception) -> None:
        calls.append(exc)
        raise exc

    with pytest.raises(KeyError):
        await policy.call(lambda: fails_with(KeyError("x")), retryable=lambda e: isinstance(e, OSError))
    assert len(calls) == 1
    calls.clear()
    with pytest.raises(OSError):
        await policy.call(lambda: fails_with(OSError("x")), retryable=lambda e: isinstance(e, OSError))
    assert len(calls) == 4  # 1 + max_retries


def test_rate_limiter_rejects_bad_rates() -> None:
    with pytest.raises(ValueError):
        rate_limiter(0)
    with pytest.raises(ValueError):
        rate_limiter(60, burst=0)


async def test_rate_limiter_spaces_acquisitions() -> None:
    limiter = rate_limiter(1200)  # one every 0.05 s, burst 1
    start = time.monotonic()
    stamps = []

    async def take() -> None:
        await limiter.acquire()
        stamps.append(time.monotonic() - start)

    await asyncio.gather(*(take() for _ in range(11)))
    assert stamps[0] < 0.03
    assert stamps[-1] >= 0.45  # 10 waits of 0.05 s
    assert stamps[-1] < 1.5


async def test_rate_limiter_burst() -> None:
    limiter = rate_limiter(60, burst=5)  # 5 at once, then one per second
    start = time.monotonic()
    for _ in range(5):
        await limiter.acquire()
    assert time.monotonic() - start < 0.1


async def test_host_rate_limits_pace_each_host_separately() -> None:
    limits = HostRateLimits({"a": 0.1})
    start = time.monotonic()
    for _ in range(4):
        await limits.wait_turn("a")
        await limits.wait_turn("b")  # not listed: no pacing
    assert 0.3 <= time.monotonic() - start < 1.5
    assert 0.25 <= limits.waited_s < 1.5


def _llm_on(srv: OpenAICompatServer, policy: RetryPolicy) -> LLM:
    llm = get_llm("openai/m", base_url=srv.base_url, use_cache=False)
    llm.retry_policy = policy
    return llm


async def test_llm_and_scholarly_layers_share_one_retry_policy() -> None:
    """Same policy, same faults, same waits: an LLM call and a scholarly call back off identically.

    Two 503s without Retry-After, then success: both layers draw the same two full-jitter waits from
    equally seeded policies. Then a 429 with Retry-After 5 s under a 0.2 s cap: both wait the cap.
    """
    paper_path = "/graph/v1/paper/P1"
    with OpenAICompatServer() as llm_srv, ReplayServer() as s2_srv:
        llm_srv.script = [LLMReply(503, {"error": {"message": "busy"}})] * 2
        s2_srv.add("GET", paper_path, [S2Reply(503, "{}")] * 2 + [S2Reply(200, '{"paperId": "P1"}')])
        llm = _llm_on(llm_srv, RetryPolicy(max_retries=3, base_s=0.2, cap_s=1.0, seed=7))
        http = ScholarlyHTTP(retry_policy=RetryPolicy(max_retries=3, base_s=0.2, cap_s=1.0, seed=7))
        try:
            await llm.chat(MSG)
            assert json.loads(await http.get_text(s2_srv.base_url + paper_path)) == {"paperId": "P1"}
        finally:
            await llm.aclose()
            await http.aclose()
        expected = RetryPolicy(base_s=0.2, cap_s=1.0, seed=7)
        waits = [expected.delay(0), expected.delay(1)]
        assert llm.stats.retries == http.stats.retries == 2
        assert llm.stats.retry_wait_s == pytest.approx(sum(waits))
        assert http.stats.retry_wait_s == pytest.approx(sum(waits))

        llm_srv.script = [LLMReply(429, {"error": {"message": "slow down"}}, {"Retry-After": "5"})]
        s2_srv.add("GET", paper_path + "x", [S2Reply(429, "{}", {"Retry-After": "5"}), S2Reply(200, "{}")])
        llm = _llm_on(llm_srv, RetryPolicy(max_retries=3, base_s=0.0, cap_s=0.2))
        http = ScholarlyHTTP(retry_policy=RetryPolicy(max_retries=3, base_s=0.0, cap_s=0.2))
        try:
            start = time.monotonic()
            await llm.chat(MSG)
            await http.get_text(s2_srv.base_url + paper_path + "x")
            elapsed = time.monotonic() - start
        finally:
            await llm.aclose()
            await http.aclose()
        assert llm.stats.retry_wait_s == http.stats.retry_wait_s == pytest.approx(0.2)
        assert 0.4 <= elapsed < 4.0  # both honoured Retry-After, capped: not 2 x 5 s


async def test_both_layers_give_up_after_the_same_attempts_and_never_retry_a_404(tmp_path: Path) -> None:
    with OpenAICompatServer() as llm_srv, ReplayServer() as s2_srv:
        llm_srv.script = [LLMReply(500, {"error": {"message": "down"}})] * 3
        s2_srv.add("GET", "/down", [S2Reply(500, "{}")])
        s2_srv.add("GET", "/gone", [S2Reply(404, '{"error": "no such paper"}')])
        llm = _llm_on(llm_srv, RetryPolicy(max_retries=2, base_s=0.0))
        http = ScholarlyHTTP(retry_policy=RetryPolicy(max_retries=2, base_s=0.0))
        try:
            with pytest.raises(LLMError, match="gave up after 3 attempts"):
                await llm.chat(MSG)
            with pytest.raises(ServerError, match="gave up after 3 attempts"):
                await http.get_text(s2_srv.base_url + "/down")
            with pytest.raises(NotFound):
                await http.get_text(s2_srv.base_url + "/gone")
        finally:
            await llm.aclose()
            await http.aclose()
        assert len(llm_srv.requests) == 3
        assert s2_srv.log.count(s2_srv.log[0]) == 3 and s2_srv.log[-1][1] == 404 and len(s2_srv.log) == 4
        assert llm.stats.retries == http.stats.retries == 2
