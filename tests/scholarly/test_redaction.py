"""Keys and passwords never leave the scholarly clients: a server that echoes them in an error
gets them redacted from the exception (and from the 404 it caches) -- real local servers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ideaharness.scholarly import Forbidden, NotFound, OpenAlex, OpenReview, ScholarlyError, SemanticScholar
from ideaharness.testing.scholarly_replay import ReplayServer

from .conftest import FAST

REDACTED = "[REDACTED]"
S2_KEY = "s2k-" + "ECHOED-0123456789abcdef"
PASSWORD = "pw-" + "ECHOED-hunter2-longer"


def test_redact_known_values_and_key_like_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    from ideaharness.redaction import redact

    monkeypatch.setenv("S2_API_KEY", S2_KEY)
    text = (f"bad key {S2_KEY}; sk-{'abcdefghijklmnop1234'} Authorization: Bearer abcdefghijklmnop "
            "api_key=zzzz9999yyyy password: 'hunter22' and a max_tokens: 512 that stays")
    out = redact(text)
    assert S2_KEY not in out and "abcdefghijklmnop1234" not in out and "Bearer abcdefghijklmnop" not in out
    assert "zzzz9999yyyy" not in out and "hunter22" not in out
    assert out.count(REDACTED) == 5 and "max_tokens: 512 that stays" in out
    assert redact("nothing secret here") == "nothing secret here"


async def test_semantic_scholar_key_echoed_in_403_and_404_is_redacted(tmp_path: Path) -> None:
    with ReplayServer() as server:
        server.add_json("GET", "/graph/v1/paper/x", {"message": f"Forbidden for key {S2_KEY}"}, status=403,
                        query={"fields": "title"})
        server.add_json("GET", "/graph/v1/paper/y", {"error": f"no paper y (key {S2_KEY})"}, status=404,
                        query={"fields": "title"})
        client = SemanticScholar(base_url=server.base_url, api_key=S2_KEY, cache_dir=tmp_path, **FAST)
        async with client as s2:
            with pytest.raises(Forbidden) as forbidden:
                await s2.paper("x", fields="title")
            with pytest.raises(NotFound) as missing:
                await s2.paper("y", fields="title")
            with pytest.raises(NotFound) as cached:  # the second answer comes from the cache
                await s2.paper("y", fields="title")
    for info in (forbidden, missing, cached):
        assert S2_KEY not in str(info.value) and REDACTED in str(info.value)
    with sqlite3.connect(tmp_path / "responses.sqlite") as db:
        assert S2_KEY not in repr(db.execute("select * from responses").fetchall())


async def test_openalex_key_parameter_echoed_is_redacted() -> None:
    key = "oa-" + "ECHOED-0123456789abcdef"
    with ReplayServer() as server:
        async with OpenAlex(base_url=server.base_url, api_key=key, **FAST) as client:
            with pytest.raises(ScholarlyError) as info:  # the replay server's 418 names the request
                await client.search("x")
    assert key not in str(info.value)


async def test_openreview_password_echoed_at_login_is_redacted() -> None:
    with ReplayServer() as server:
        server.add_json("POST", "/login", {"message": f"Invalid password {PASSWORD} for me"}, status=403,
                        body={"id": "me", "password": PASSWORD})
        async with OpenReview(base_url=server.base_url, username="me", password=PASSWORD, **FAST) as client:
            with pytest.raises(Forbidden) as info:
                await client.login()
    assert PASSWORD not in str(info.value) and "Invalid password" in str(info.value)
