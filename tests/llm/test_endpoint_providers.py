"""What every endpoint provider (``openai/``, ``anthropic/``) does alike, each through its real
client against its loopback server on 127.0.0.1: a reply later than the timeout and a closed port
both fail for good after ``1 + max_retries`` attempts."""

from __future__ import annotations

from pathlib import Path

import pytest

from ideaharness.llm import LLMError, get_llm
from ideaharness.testing.anthropic_server import AnthropicServer
from ideaharness.testing.openai_server import OpenAICompatServer

MSG = [{"role": "system", "content": "You grade ideas."}, {"role": "user", "content": "Grade: one two three"}]
ENDPOINTS = [pytest.param("openai/m", OpenAICompatServer, id="openai"),
             pytest.param("anthropic/m", AnthropicServer, id="anthropic")]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
                 "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(("model", "server_type"), ENDPOINTS)
async def test_timeouts_and_refused_connections_are_bounded(
    model: str, server_type: type[OpenAICompatServer | AnthropicServer], tmp_path: Path
) -> None:
    with server_type(latency_s=1.0) as srv:
        llm = get_llm(model, base_url=srv.base_url, cache_path=tmp_path / "c.sqlite", timeout_s=0.2,
                      max_retries=1, backoff_base_s=0.01)
        with pytest.raises(LLMError, match="timed out"):
            await llm.chat(MSG)
        assert llm.stats.calls == 2
        url = srv.base_url
    dead = get_llm(model, base_url=url, use_cache=False, max_retries=1, backoff_base_s=0.01)
    with pytest.raises(LLMError, match="cannot connect"):
        await dead.chat(MSG)
    assert dead.stats.calls == 2
