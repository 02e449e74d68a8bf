"""Semantic Scholar client against recorded real responses replayed on 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest

from ideaharness.scholarly import BadRequest, Forbidden, NotFound, RateLimited, SemanticScholar, ServerError
from ideaharness.testing.scholarly_replay import ReplayServer, Reply

from .conftest import FAST, S2_REC, need


def s2(server: ReplayServer, tmp_path=None, **kw) -> SemanticScholar:
    return SemanticScholar(base_url=server.base_url, api_key="", cache_dir=tmp_path, **{**FAST, **kw})


async def test_relevance_search_pagination_and_filters():
    with ReplayServer() as server:
        server.add_cassette(need(S2_REC / "test_search_paper_next_page.yaml"))
        server.add_cassette(S2_REC / "test_search_paper_publication_date_or_year.yaml")
        async with s2(server) as client:
            page1 = await client.search("turing", fields="title", limit=100, offset=0)
            page2 = await client.search("turing", fields="title", limit=100, offset=100)
            assert len(page1) == 100 and len(page2) == 100
            assert not {p.id for p in page1} & {p.id for p in page2}
            window = await client.search(
                "turing",
                fields="title",
                limit=100,
                publication_date_window=(dt.date(2024, 1, 1), dt.date(2024, 12, 31)),
            )
            assert len(window) > 0
            open_end = await client.search(
                "turing", fields="title", limit=100, publication_date_window=(dt.date(2024, 1, 1), None)
            )
            assert open_end
        assert server.hits.total() == 4 and max(server.hits.values()) == 1
        with pytest.raises(ValueError, match="1000"):
            await s2(server).search("x", offset=950, limit=100)


async def test_bulk_search_follows_continuation_token():
    # The recording's client sent offset/limit (and no fields on later pages); ours does not.
    with ReplayServer(ignore_params={"offset", "limit", "fields"}) as server:
        keys = server.add_cassette(need(S2_REC / "test_search_paper_bulk_retrieval_traversing_results.yaml"))
        bodies = [json.loads(server.routes[k][0].body) for k in keys]
        expected = sum(len(b["data"]) for b in bodies)
        assert bodies[-1].get("token") is None and expected > 2000
        async with s2(server) as client:
            papers = [p async for p in client.search_bulk("kubernetes", fields="title")]
        assert len(papers) == expected
        assert papers[0].id == bodies[0]["data"][0]["paperId"]
        assert server.requests == 3


async def test_paper_batch_references_and_errors(tmp_path):
    with ReplayServer() as server:
        server.add_cassette(need(S2_REC / "test_get_paper.yaml"))
        server.add_cassette(S2_REC / "test_get_papers.yaml")
        server.add_cassette(S2_REC / "test_get_paper_references.yaml")
        server.add_cassette(S2_REC / "test_not_found.yaml")
        server.add_cassette(S2_REC / "test_bad_query_parameters.yaml")
        server.add_cassette(S2_REC / "test_debug.yaml")
        async with s2(server, tmp_path) as client:
            paper = await client.paper("10.1093/mind/lix.236.433", fields="title")
            assert paper.title == "Computing Machinery and Intelligence"
            batch_ids = [
                "CorpusId:470667",
                "10.2139/ssrn.2250500",
                "0f40b1f08821e22e859c6050916cec3667778613",
            ]
            batch = await client.papers_batch(batch_ids, fields="authors")
            assert len(batch) == 3 and all(p is not None for p in batch)
            refs = await client.references("10.2139/ssrn.2250500", fields="title", page_size=50)
            assert len(refs) == 67  # two recorded pages: 50 + 17, the second without "next"
            assert refs[0].title.startswith("Group lending or individual lending")
            with pytest.raises(NotFound):
                await client.paper("0", fields="t,i,t,l,e")
            hits_before = server.requests
            with pytest.raises(NotFound):  # the 404 is cached: no second request
                await client.paper("0", fields="t,i,t,l,e")
            assert server.requests == hits_before
            with pytest.raises(BadRequest, match="unknown"):
                await client.paper("10.1093/mind/lix.236.433", fields="unknown")
        debug = [k for k in server.routes if k[1].endswith("/paper/batch") and "abstract" in str(k[2])][0]
        body = json.loads(debug[3])
        fields = dict(debug[2])["fields"]
        async with s2(server) as client:
            with pytest.raises(Forbidden):
                await client.papers_batch(body["ids"], fields=fields)


async def test_429_with_retry_after_then_success():
    with ReplayServer() as server:
        recorded = server.add_cassette(need(S2_REC / "test_get_paper.yaml"))[0]
        ok = server.routes[recorded][0]
        server.routes[recorded] = [
            Reply(
                429,
                '{"message": "Too Many Requests"}',
                {"Content-Type": "application/json", "Retry-After": "0.3"},
            ),
            ok,
        ]
        async with s2(server, backoff_base_s=5.0, backoff_max_s=10.0) as client:
            start = time.monotonic()
            paper = await client.paper("10.1093/mind/lix.236.433", fields="title")
            waited = time.monotonic() - start
        assert paper.title == "Computing Machinery and Intelligence"
        assert server.hits[recorded] == 2
        assert 0.3 <= waited < 2.0  # honoured Retry-After (0.3 s), not the 5 s backoff
        assert client.stats.retries == 1 and client.stats.by_status == {429: 1, 200: 1}


async def test_5xx_then_success_and_bounded_retries():
    with ReplayServer() as server:
        recorded = server.add_cassette(need(S2_REC / "test_get_paper.yaml"))[0]
        ok = server.routes[recorded][0]
        server.routes[recorded] = [Reply(500, "{}"), Reply(504, "{}"), ok]
        async with s2(server) as client:
            paper = await client.paper("10.1093/mind/lix.236.433", fields="title")
        assert paper.title and server.hits[recorded] == 3
        server.routes[recorded] = [Reply(503, '{"message": "down"}')]
        async with s2(server, max_retries=2) as client:
            with pytest.raises(ServerError, match="3 attempts"):
                await client.paper("10.1093/mind/lix.236.433", fields="title")
        server.routes[recorded] = [Reply(429, "{}")]
        async with s2(server, max_retries=1) as client:
            with pytest.raises(RateLimited):
                await client.paper("10.1093/mind/lix.236.433", fields="title")


async def test_cache_hit_and_api_key_never_stored(tmp_path):
    with ReplayServer() as server:
        need(S2_REC / "test_get_paper.yaml")
        server.add_cassette(S2_REC / "test_get_paper.yaml")
        async with SemanticScholar(
            base_url=server.base_url, api_key="SECRET-KEY-123", cache_dir=tmp_path, **FAST
        ) as client:
            await client.paper("10.1093/mind/lix.236.433", fields="title")
            await client.paper("10.1093/mind/lix.236.433", fields="title")
            assert client.stats.requests == 1 and client.stats.cache_hits == 1
        assert server.requests == 1
    raw = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert b"SECRET-KEY-123" not in raw and raw  # cache written, key absent


async def test_rate_limiter_spaces_requests():
    with ReplayServer() as server:
        server.add_cassette(need(S2_REC / "test_get_paper.yaml"))
        async with s2(server, min_interval_s=0.2) as client:
            start = time.monotonic()
            for _ in range(3):
                await client.paper("10.1093/mind/lix.236.433", fields="title")
            assert time.monotonic() - start >= 0.4
