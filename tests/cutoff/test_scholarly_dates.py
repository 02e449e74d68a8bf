"""The scholarly clients send a search's date bound AND filter the results again by their own dates
(a service may ignore or round the filter): Semantic Scholar (the emulator over recorded real
records, whose relevance search ignores dates), arXiv (a recorded real Atom response), OpenAlex (a
response in its documented shape). Real HTTP servers on loopback."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from ideaharness.cutoff import CutoffLedger, verdict
from ideaharness.scholarly import ArXiv, OpenAlex, SemanticScholar
from ideaharness.scholarly.base import date_window
from ideaharness.testing.s2_emulator import corpus_from_recordings
from ideaharness.testing.scholarly_replay import ReplayServer, Reply
from tests.scholarly.conftest import ARXIV_REC, FAST, need
from tests.shared_data import RAW

CUT = dt.date(2015, 12, 31)


def test_date_window_forms() -> None:
    assert date_window(published_before=CUT) == (None, CUT)
    assert date_window(published_after=CUT) == (dt.date(2016, 1, 1), None)
    assert date_window((None, CUT)) == (None, CUT) and date_window() is None
    with pytest.raises(ValueError, match="not both"):
        date_window((None, CUT), published_before=CUT)
    with pytest.raises(ValueError, match="after end"):
        date_window(published_after=CUT, published_before=dt.date(2015, 1, 1))


async def test_semantic_scholar_search_sends_the_cutoff_and_filters_again() -> None:
    """A search endpoint that ignores ``publicationDateOrYear`` and answers with 100 recorded real
    S2 records (citing papers of Turing 1950, dated 1950s-2020s): the client drops those after the
    cutoff and counts them."""
    every = list(corpus_from_recordings(RAW, seed=0).papers.values())
    records = ([p for p in every if (p.get("year") or 9999) <= 2015][:50]
               + [p for p in every if (p.get("year") or 0) >= 2016][:50])
    sent: list[dict[str, str]] = []

    def search(match: Any, query: dict[str, str], body: Any) -> Reply:
        sent.append(query)
        return Reply(200, json.dumps({"total": len(records), "offset": 0, "data": records}))

    with ReplayServer() as server:
        server.add_handler("GET", r"/graph/v1/paper/search", search)
        async with SemanticScholar(base_url=server.base_url, **FAST) as client:
            unfiltered = await client.search("machine intelligence", limit=100)
            ledger = CutoffLedger()
            kept = await client.search("machine intelligence", limit=100, published_before=CUT, ledger=ledger)
    later = [p for p in unfiltered if verdict(p, CUT) == "after"]
    assert later and len(later) < len(unfiltered), "the records straddle the cutoff (else nothing is checked)"
    assert sent[-1]["publicationDateOrYear"] == ":2015-12-31" and "publicationDateOrYear" not in sent[0]
    assert [p.id for p in kept] == [p.id for p in unfiltered if verdict(p, CUT) != "after"]
    row = ledger.as_dict()["s2_search"]
    assert row["excluded"] == len(later) and row["kept"] == len(kept)
    assert {w["id"] for w in ledger.excluded_works["s2_search"]} == {p.id for p in later}


async def test_arxiv_query_drops_an_entry_submitted_after_the_bound() -> None:
    xml = need(ARXIV_REC / "id_list=1111.2011v2.xml").read_text(encoding="utf-8")  # v1 of 2011-11-08
    with ReplayServer() as server:
        key = server.add("GET", "/api/query", Reply(200, xml), query={
            "search_query": "cat:cond-mat.str-el AND submittedDate:[199101010000 TO 201111072359]",
            "start": 0, "max_results": 100})
        ledger = CutoffLedger()
        async with ArXiv(base_url=server.base_url, **FAST) as client:
            page = await client.query(category="cond-mat.str-el", published_before=dt.date(2011, 11, 7),
                                      ledger=ledger)
        assert server.hits[key] == 1
    assert page.total == 1 and page.papers == []  # the service's count; the entry is past the bound
    assert ledger.as_dict()["arxiv_search"] == {"kept": 0, "excluded": 1, "undated": 0}


async def test_openalex_search_sends_both_bounds_and_filters_again() -> None:
    # The shape of OpenAlex /works results (docs.openalex.org); the values are a hand-written example.
    works = [{"id": "https://openalex.org/W1", "title": "Inside the window", "publication_date": "2021-03-01",
              "publication_year": 2021},
             {"id": "https://openalex.org/W2", "title": "Dated after the window",
              "publication_date": "2023-02-01", "publication_year": 2023},
             {"id": "https://openalex.org/W3", "title": "On the first day excluded", "publication_date":
              "2020-12-31", "publication_year": 2020}]
    filters: list[str] = []

    def search(match: Any, query: dict[str, str], body: Any) -> Reply:
        filters.append(query.get("filter", ""))
        return Reply(200, json.dumps({"meta": {"count": 3}, "results": works}))

    with ReplayServer() as server:
        server.add_handler("GET", r"/works", search)
        ledger = CutoffLedger()
        async with OpenAlex(base_url=server.base_url, **FAST) as client:
            kept = await client.search("window", published_after=dt.date(2020, 12, 31),
                                       published_before=dt.date(2022, 12, 31), ledger=ledger)
    assert filters == ["from_publication_date:2021-01-01,to_publication_date:2022-12-31"]
    assert [p.id for p in kept] == ["W1"]
    assert ledger.as_dict()["openalex_search"] == {"kept": 1, "excluded": 2, "undated": 0}
