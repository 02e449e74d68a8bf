"""The openai/ provider's two transports (aiohttp, the default; the openai SDK) behave as one:
for the same server replies they send the same bodies, return the same Completion and raise the
same exception (type, text, retryable, status, Retry-After), make the same adjustments after a 400
and note them alike. Real loopback servers, no mock of the HTTP layer."""

from __future__ import annotations

import asyncio
import gc
import json
import string
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ideaharness.errors import UserError
from ideaharness.llm import get_llm
from ideaharness.llm.errors import ContextLengthError, LLMError, ProviderError
from ideaharness.llm.openai_http import TRANSPORT_ENV, TRANSPORTS, transport_name
from ideaharness.llm.openai_provider import DROPPABLE_PARAMS, TOKEN_PARAMS, OpenAIProvider
from ideaharness.llm.types import ChatRequest, Completion
from ideaharness.testing.fast_server import FastServer
from ideaharness.testing.openai_server import OpenAICompatServer, Reply

SECRET = "sk-" + "test-TRANSPORT-0123456789abcdef"  # a fake key, assembled so scanners skip it


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", TRANSPORT_ENV):
        monkeypatch.delenv(name, raising=False)


# ------------------------------------------------------------------------------------ strategies

counts = st.one_of(st.none(), st.integers(-5, 5000), st.floats(0, 5000, allow_nan=False),
                   st.sampled_from(["12", True, [], {}, float("inf"), float("nan")]))
texts = st.text(max_size=40)  # any unicode, lone surrogates included (sent as JSON escapes)


@st.composite
def usages(draw: st.DrawFn) -> Any:
    """Usage shapes: OpenAI (details inside), DeepSeek (prompt_cache_hit_tokens, reasoning outside
    with a total that counts it), none, or junk."""
    shape = draw(st.sampled_from(["none", "junk", "plain", "openai", "outside"]))
    if shape == "none":
        return None
    if shape == "junk":
        return draw(st.sampled_from(["x", 3, [], {"prompt_tokens": "many"}]))
    usage: dict[str, Any] = {"prompt_tokens": draw(counts), "completion_tokens": draw(counts)}
    if shape in ("openai", "outside"):
        reasoning = draw(st.integers(0, 3000))
        if draw(st.booleans()):
            usage["prompt_tokens_details"] = {"cached_tokens": draw(counts)}
        else:
            usage["prompt_cache_hit_tokens"] = draw(counts)
        if draw(st.booleans()):
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
        else:
            usage["reasoning_tokens"] = reasoning
        if shape == "outside":
            prompt, completion = usage["prompt_tokens"], usage["completion_tokens"]
            if isinstance(prompt, int) and isinstance(completion, int) and not isinstance(prompt, bool):
                usage["total_tokens"] = prompt + completion + reasoning
    return usage


@st.composite
def completions(draw: st.DrawFn) -> Any:
    """A chat completion body, now and then with a malformed part."""
    message: dict[str, Any] = {"role": "assistant",
                               "content": draw(st.one_of(texts, st.none(), st.sampled_from([5, ["a"]])))}
    for name in ("reasoning_content", "reasoning"):
        if draw(st.booleans()):
            message[name] = draw(st.one_of(texts, st.just("  "), st.just(7)))
    choice: dict[str, Any] = {"index": 0, "message": message,
                              "finish_reason": draw(st.sampled_from(["stop", "length", None, 3]))}
    body: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
                            "choices": [choice]}
    usage = draw(usages())
    if usage is not None:
        body["usage"] = usage
    broken = draw(st.sampled_from(["none"] * 6 + ["no choices", "empty", "message null", "message text",
                                                  "choice null", "choices object"]))
    if broken == "no choices":
        del body["choices"]
    elif broken == "empty":
        body["choices"] = []
    elif broken == "message null":
        choice["message"] = None
    elif broken == "message text":
        choice["message"] = "hello"
    elif broken == "choice null":
        body["choices"] = [None]
    elif broken == "choices object":
        body["choices"] = {"0": choice}
    return body


not_json = st.one_of(
    st.sampled_from(['{"id": "x", "choices": [', "<html>502 Bad Gateway</html>", "", "   ", "nul",
                     f"upstream said: invalid key {SECRET}", b"\xff\xfe{not utf-8", "[]", "42", '"text"',
                     "null"]),
    st.text(alphabet=string.printable, max_size=30),
)

ERROR_STATUSES = [400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 529]


@st.composite
def error_replies(draw: st.DrawFn) -> Reply:
    status = draw(st.sampled_from(ERROR_STATUSES))
    message = draw(st.one_of(
        texts,
        st.sampled_from(["This model's maximum context length is 8192 tokens", "context window exceeded",
                         "the request exceeds the available context size", f"Incorrect API key {SECRET}",
                         "rate limited", "upstream down"]),
    ))
    error: dict[str, Any] = {"message": message, "type": "invalid_request_error"}
    if draw(st.booleans()):
        error["code"] = draw(st.sampled_from(["context_length_exceeded", "rate_limit", 42, None]))
    if draw(st.booleans()):
        error["param"] = draw(st.sampled_from([None, "temperature", "max_tokens", 3]))
    body: Any = draw(st.sampled_from(["nested", "top", "string error", "text", "empty"]))
    body = {"nested": {"error": error}, "top": error, "string error": {"error": message},
            "text": message, "empty": ""}[body]
    headers: dict[str, str] = {}
    retry = draw(st.sampled_from([None, "1", "0.25", "-3", "soon", "Wed, 21 Oct 2015 07:28:00 GMT", "ms"]))
    if retry == "ms":
        headers["retry-after-ms"] = "250"
    elif retry is not None:
        headers["Retry-After"] = retry
    return Reply(status, body, headers)


@st.composite
def adjustment_400(draw: st.DrawFn) -> Reply:
    """A 400 refusing a body field (by ``param`` or by naming it), or response_format."""
    name = draw(st.sampled_from([*TOKEN_PARAMS, *DROPPABLE_PARAMS, "response_format"]))
    word = draw(st.sampled_from(["Unsupported parameter", "is not supported with this model",
                                 "Unrecognized request argument", "Extra inputs are not permitted"]))
    by_param = draw(st.booleans())
    error = {"message": f"{word}: '{name}'." if not by_param else f"{word}.",
             "type": "invalid_request_error", "param": name if by_param else None}
    return Reply(400, {"error": error})


@st.composite
def scenarios(draw: st.DrawFn) -> list[Reply]:
    """The replies one attempt meets, in order: up to three 400s that an adjustment may fix, then
    a final reply (a completion, an error, or a body that is not JSON)."""
    replies = draw(st.lists(adjustment_400(), max_size=3))
    final = draw(st.one_of(completions().map(lambda b: Reply(200, b)), error_replies(),
                           not_json.map(lambda b: Reply(200, b))))  # type: ignore[arg-type]
    return [*replies, final, final]  # a spare reply: an adjustment may re-send once more


requests = st.builds(
    ChatRequest,
    model=st.just("openai/m"),
    messages=st.lists(st.fixed_dictionaries({"role": st.sampled_from(["system", "user"]), "content": texts}),
                      min_size=1, max_size=3),
    temperature=st.sampled_from([0.0, 0.7, 1.0]),
    top_p=st.sampled_from([None, 0.9]),
    max_tokens=st.sampled_from([None, 64, 2048]),
    seed=st.sampled_from([None, 0, 17]),
    json_schema=st.sampled_from([None, {"type": "object", "properties": {"rating": {"type": "integer"}}}]),
    sample_index=st.integers(0, 3),
    reasoning_effort=st.sampled_from([None, "low"]),
)


# ------------------------------------------------------------------------------------- outcomes


def _outcome(result: Completion | BaseException) -> tuple[Any, ...]:
    if isinstance(result, Completion):
        return ("completion", result.model_dump(exclude={"latency_s"}))
    return ("error", type(result).__name__, str(result), getattr(result, "retryable", None),
            getattr(result, "status", None), getattr(result, "retry_after_s", None))


async def _attempt(transport: str, server: OpenAICompatServer, model: str, request: ChatRequest,
                   key: str) -> tuple[tuple[Any, ...], list[str], tuple[Any, ...]]:
    provider = OpenAIProvider(model, base_url=server.base_url, api_key=key, timeout_s=10,
                              label=f"openai/{model}", transport=transport)
    try:
        result: Completion | BaseException = await provider.complete(request)
    except (ProviderError, UserError) as exc:
        result = exc
    finally:
        await provider.aclose()
    state = (provider.token_param, sorted(provider.dropped_params), provider.response_format_supported)
    return _outcome(result), list(provider.notes), state


@pytest.fixture(scope="module")
def shared_server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as server:
        yield server


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=scenarios(), request=requests, model=st.sampled_from(["gpt-4o-mini", "o3-mini"]))
def test_both_transports_give_the_same_completion_or_error(
    shared_server: OpenAICompatServer, script: list[Reply], request: ChatRequest, model: str
) -> None:
    server = shared_server
    seen: dict[str, tuple[Any, ...]] = {}
    bodies: dict[str, list[dict[str, Any]]] = {}
    for transport in TRANSPORTS:
        server.script, server.requests = list(script), []
        outcome, notes, state = asyncio.run(_attempt(transport, server, model, request, SECRET))
        bodies[transport] = [r.body for r in server.requests]
        auth = {k.lower(): v for k, v in server.requests[0].headers.items()}
        assert auth["authorization"] == f"Bearer {SECRET}"
        assert auth["content-type"] == "application/json"
        seen[transport] = (outcome, notes, state)
        text = json.dumps([outcome, notes], default=str)
        assert SECRET not in text and SECRET[3:] not in text, "the key must never reach an error or a note"
    assert seen["aiohttp"] == seen["sdk"]
    assert bodies["aiohttp"] == bodies["sdk"], "both transports must send the same JSON bodies"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_each_kind_of_reply_maps_as_documented(transport: str) -> None:
    """One example of each kind on each transport, so a regression shows by name (the property
    test above checks that the transports agree)."""
    cases: list[tuple[Reply, type[BaseException] | None, str]] = [
        (Reply(200, {"choices": [{"message": {"content": "hi", "reasoning_content": "think"},
                                  "finish_reason": "length"}],
                     "usage": {"prompt_tokens": 5, "completion_tokens": 10,
                               "completion_tokens_details": {"reasoning_tokens": 4}}}), None, "hi"),
        (Reply(401, {"error": {"message": "bad key"}}), UserError, "refused the key (HTTP 401)"),
        (Reply(403, {"error": {"message": "forbidden"}}), UserError, "refused the key (HTTP 403)"),
        (Reply(404, {"error": {"message": "no such model"}}), UserError, "not found at"),
        (Reply(400, {"error": {"message": "maximum context length is 8192 tokens"}}), ContextLengthError,
         "prompt too long"),
        (Reply(413, {"error": {"message": "exceeds the available context size"}}), ContextLengthError,
         "prompt too long"),
        (Reply(413, "request entity too large"), LLMError, "HTTP 413 from"),
        (Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "2"}), ProviderError,
         "HTTP 429: slow down"),
        (Reply(503, "<html>down</html>"), ProviderError, "HTTP 503: <html>down</html>"),
        (Reply(200, "<html>proxy</html>"), ProviderError, "malformed reply body from"),
        (Reply(200, {"choices": []}), ProviderError, "reply without choices[0].message"),
        (Reply(200, {"choices": [{"message": {"content": 5}}]}), ProviderError, "content is not text"),
    ]
    for reply, kind, text in cases:
        with OpenAICompatServer(script=[reply]) as server:
            provider = OpenAIProvider("m", base_url=server.base_url, api_key="k-local", timeout_s=5,
                                      label="openai/m", transport=transport)
            try:
                result: Completion | BaseException = await provider.complete(
                    ChatRequest(model="openai/m", messages=[{"role": "user", "content": "x"}]))
            except (ProviderError, UserError) as exc:
                result = exc
            await provider.aclose()
        if kind is None:
            assert isinstance(result, Completion) and result.text == text
            assert result.reasoning == "think" and result.finish_reason == "length"
            assert result.usage.completion_tokens == 10 and result.usage.reasoning_tokens == 4
        else:
            assert type(result) is kind and text in str(result), (reply, result)
            if isinstance(result, ProviderError) and reply.status == 429:
                assert result.retryable and result.retry_after_s == 2.0 and result.status == 429
            if isinstance(result, ProviderError) and reply.status == 200:
                assert result.retryable


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_token_counts_that_are_not_finite_count_zero(transport: str) -> None:
    """A body's ``Infinity``/``NaN`` token count (JSON a server may write) is an unreadable count
    (0), not an OverflowError that fails the unit."""
    body = {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": float("inf"), "completion_tokens": float("nan"), "total_tokens": 3}}
    with OpenAICompatServer(script=[Reply(200, body)]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, api_key="k-local", timeout_s=5,
                                  label="openai/m", transport=transport)
        try:
            result = await provider.complete(ChatRequest(model="openai/m",
                                                         messages=[{"role": "user", "content": "x"}]))
        finally:
            await provider.aclose()
    assert result.text == "hi" and result.usage.prompt_tokens == 0 and result.usage.completion_tokens == 0


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_timeouts_and_refused_connections_are_retryable(transport: str) -> None:
    with OpenAICompatServer(latency_s=1.0) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, api_key="k-local", timeout_s=0.2,
                                  label="openai/m", transport=transport)
        request = ChatRequest(model="openai/m", messages=[{"role": "user", "content": "x"}])
        with pytest.raises(ProviderError, match=r"timed out after 0.2 s") as timed_out:
            await provider.complete(request)
        url = server.base_url
        await provider.aclose()
    assert timed_out.value.retryable and timed_out.value.status is None
    dead = OpenAIProvider("m", base_url=url, api_key="k-local", timeout_s=2, label="openai/m",
                          transport=transport)
    with pytest.raises(ProviderError, match=r"cannot connect to http://127\.0\.0\.1") as refused:
        await dead.complete(request)
    await dead.aclose()
    assert refused.value.retryable and refused.value.status is None


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_key_never_reaches_errors_notes_records_or_logs(
    transport: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv(TRANSPORT_ENV, transport)
    echo = f"invalid key {SECRET} (Bearer {SECRET[3:]})"
    script = [Reply(400, {"error": {"message": f"temperature is not supported; {echo}",
                                    "param": "temperature"}}),
              Reply(500, {"error": {"message": echo}}),
              Reply(200, f"<html>{echo}</html>"),
              Reply(200, {"choices": [{"message": {"content": "fine"}}]})]
    caplog.set_level("DEBUG")
    with OpenAICompatServer(script=script) as server:
        llm = get_llm("openai/m", base_url=server.base_url, cache_path=tmp_path / "c.sqlite",
                      backoff_base_s=0.01, max_retries=3)
        assert llm.provider.transport == transport

        async def run() -> tuple[Completion, list[str]]:
            try:
                return await llm.chat([{"role": "user", "content": "hi"}]), llm.notes
            finally:
                await llm.aclose()

        completion, notes = asyncio.run(run())
        headers = {k.lower(): v for k, v in server.requests[0].headers.items()}
    assert completion.text == "fine" and llm.stats.retries == 2
    assert headers["authorization"] == f"Bearer {SECRET}"
    assert notes and "[REDACTED]" in notes[0]
    stored = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    for text in (json.dumps(notes), caplog.text, repr(llm), repr(llm.provider), stored.decode("latin-1")):
        assert SECRET not in text and SECRET[3:] not in text


def test_the_transport_comes_from_the_environment_or_the_argument(monkeypatch: pytest.MonkeyPatch) -> None:
    assert transport_name() == "aiohttp"
    monkeypatch.setenv(TRANSPORT_ENV, "SDK")
    assert transport_name() == "sdk" and transport_name("aiohttp") == "aiohttp"
    assert get_llm("openai/m", base_url="http://127.0.0.1:9/v1", use_cache=False).provider.transport == "sdk"
    monkeypatch.setenv(TRANSPORT_ENV, "requests")
    with pytest.raises(UserError, match=rf"\${TRANSPORT_ENV}='requests'.*aiohttp, sdk"):
        get_llm("openai/m", base_url="http://127.0.0.1:9/v1", use_cache=False)


def test_the_pool_never_holds_back_the_concurrency_asked_for() -> None:
    """150 calls in flight (above aiohttp's default pool of 100) all reach the server at once."""
    with FastServer(latency_s=0.5) as server:
        llm = get_llm("openai/m", base_url=server.base_url, use_cache=False, max_concurrency=150)

        async def run() -> list[Completion]:
            try:
                return await asyncio.gather(*(llm.chat([{"role": "user", "content": f"q{i}"}])
                                              for i in range(150)))
            finally:
                await llm.aclose()

        replies = asyncio.run(run())
    assert [r.text for r in replies] == [f"echo: q{i}" for i in range(150)]
    assert server.requests == 150 and server.peak_in_flight == 150


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_clients_are_closed_with_their_loop_without_warnings(transport: str) -> None:
    """A provider used in several event loops one after another (no aclose between them) leaves no
    unclosed session, connector or socket behind; aclose in the last loop closes its client."""
    def use(server: OpenAICompatServer) -> None:
        provider = OpenAIProvider("m", base_url=server.base_url, api_key="k-local", timeout_s=5,
                                  label="openai/m", transport=transport)
        request = ChatRequest(model="openai/m", messages=[{"role": "user", "content": "x"}])
        for _ in range(3):
            assert asyncio.run(provider.complete(request)).text == "echo: x"

        async def last() -> None:
            await provider.complete(request)
            provider.client()  # the Files/Batches client of this loop, closed by aclose too
            await provider.aclose()

        asyncio.run(last())

    gc.collect()  # what earlier tests left unclosed is reported now, not below as this test's
    with OpenAICompatServer() as server, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        use(server)
        gc.collect()
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)
             or "Unclosed" in str(w.message)]
    assert leaks == []
