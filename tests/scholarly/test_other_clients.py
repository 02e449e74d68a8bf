"""arXiv, OpenAlex and OpenReview clients against a real local HTTP server."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from ideaharness.scholarly import ArXiv, ConfigError, OpenAlex, OpenReview, SemanticScholar
from ideaharness.testing.scholarly_replay import ReplayServer, Reply

from .conftest import ARXIV_REC, FAST, S2_REC, need


async def test_arxiv_recorded_atom_and_date_query():
    xml = need(ARXIV_REC / "id_list=1111.2011v2.xml").read_text(encoding="utf-8")
    with ReplayServer() as server:
        server.add(
            "GET",
            "/api/query",
            Reply(200, xml, {"Content-Type": "application/atom+xml"}),
            query={"id_list": "1111.2011v2", "start": 0, "max_results": 10},
        )
        window_key = server.add(
            "GET",
            "/api/query",
            Reply(200, xml),
            query={
                "search_query": "cat:cond-mat.str-el AND submittedDate:[201111010000 TO 201111302359]",
                "start": 0,
                "max_results": 100,
            },
        )
        async with ArXiv(base_url=server.base_url, **FAST) as client:
            page = await client.query(id_list=["1111.2011v2"], max_results=10)
            by_date = await client.query(
                category="cond-mat.str-el",
                publication_date_window=(dt.date(2011, 11, 1), dt.date(2011, 11, 30)),
            )
        assert server.hits[window_key] == 1 and by_date.total == 1
    assert page.total == 1 and page.start == 0
    paper = page.papers[0]
    assert paper.id == "1111.2011" and paper.extra["version"] == "v2"
    assert paper.title.startswith("Quantum Criticality for Extended Nodes on a Bethe Lattice")
    assert paper.publication_date == dt.date(2011, 11, 8)
    assert paper.external_ids == {"ArXiv": "1111.2011", "DOI": "10.1103/PhysRevB.85.115117"}
    assert paper.extra["authors"] == ["James M. Murray", "Adrian Del Maestro", "Zlatko Tesanovic"]
    assert paper.extra["primary_category"] == "cond-mat.str-el"
    assert paper.extra["categories"] == ["cond-mat.str-el", "cond-mat.stat-mech"]


async def test_openalex_group_by_counts_and_key_stripped(tmp_path):
    # Shape of OpenAlex group_by responses (docs.openalex.org); values are a hand-written example.
    body = {
        "meta": {"count": 9, "groups_count": 4},
        "results": [],
        "group_by": [
            {"key": "2021", "key_display_name": "2021", "count": 2},
            {"key": "2019", "key_display_name": "2019", "count": 4},
            {"key": "unknown", "key_display_name": "unknown", "count": 1},
            {"key": "2020", "key_display_name": "2020", "count": 2},
        ],
    }
    with ReplayServer() as server:
        key = server.add_json(
            "GET",
            "/works",
            body,
            query={"filter": "cites:W2741809807", "group_by": "publication_year", "api_key": "OA-SECRET"},
        )
        async with OpenAlex(
            base_url=server.base_url, api_key="OA-SECRET", cache_dir=tmp_path, **FAST
        ) as client:
            counts = await client.citation_counts_by_year("https://openalex.org/W2741809807")
            again = await client.citation_counts_by_year("W2741809807")
        assert counts == again == {2019: 4, 2020: 2, 2021: 2}
        assert server.hits[key] == 1
    raw = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert b"OA-SECRET" not in raw


async def test_openreview_needs_login_and_maps_review_form(monkeypatch):
    monkeypatch.delenv("OPENREVIEW_USERNAME", raising=False)
    monkeypatch.delenv("OPENREVIEW_PASSWORD", raising=False)
    venue = "ICLR.cc/2024/Conference"
    note = {
        "id": "abc123",
        "number": 7,
        "invitations": [f"{venue}/-/Submission"],
        "content": {
            "title": {"value": "A Paper"},
            "abstract": {"value": "We do X."},
            "keywords": {"value": ["llm", "ideas"]},
            "primary_area": {"value": "generative models"},
            "venue": {"value": "ICLR 2024 poster"},
            "venueid": {"value": venue},
        },
        "details": {
            "replies": [
                {
                    "id": "r1",
                    "invitations": [f"{venue}/Submission7/-/Official_Review"],
                    "content": {
                        "rating": {"value": "6: marginally above the acceptance threshold"},
                        "soundness": {"value": "3 good"},
                        "contribution": {"value": 2},
                        "presentation": {"value": "4 excellent"},
                        "confidence": {"value": "4: confident"},
                    },
                },
                {
                    "id": "d1",
                    "invitations": [f"{venue}/Submission7/-/Decision"],
                    "content": {"decision": {"value": "Accept (poster)"}},
                },
            ]
        },
    }
    with ReplayServer() as server:
        server.add_json("POST", "/login", {"token": "TOKEN"}, body={"id": "me", "password": "pw"})
        server.add_json(
            "GET",
            "/notes",
            {"notes": [note], "count": 1},
            query={"invitation": f"{venue}/-/Submission", "details": "replies", "offset": 0, "limit": 1000},
        )
        async with OpenReview(base_url=server.base_url, **FAST) as anonymous:
            with pytest.raises(ConfigError, match="OPENREVIEW_USERNAME"):
                await anonymous.submissions(venue)
        async with OpenReview(base_url=server.base_url, username="me", password="pw", **FAST) as client:
            with pytest.raises(ConfigError, match="no review form"):
                await client.submissions("ICML.cc/2025/Conference")
            subs = await client.submissions(venue)
    sub = subs[0]
    assert (sub.title, sub.label, sub.keywords, sub.primary_area) == (
        "A Paper",
        "accept-poster",
        ["llm", "ideas"],
        "generative models",
    )
    review = sub.reviews[0]
    assert (review.rating, review.soundness, review.contribution, review.presentation, review.confidence) == (
        6.0,
        3.0,
        2.0,
        4.0,
        4.0,
    )


async def test_s2_citation_counts_by_year_equal_hand_count():
    """Citations endpoint pages built from the recorded nested citations of Paper.json (Turing 1950)."""
    paper = json.loads(need(S2_REC / "Paper.json").read_text(encoding="utf-8"))
    citations = paper["citations"]  # 1,000 recorded citing papers
    with ReplayServer() as server:
        for offset in range(0, len(citations), 100):
            page = {
                "offset": offset,
                "data": [
                    {
                        "citingPaper": {
                            "paperId": c["paperId"],
                            "year": c["year"],
                            "publicationDate": c["publicationDate"],
                        }
                    }
                    for c in citations[offset : offset + 100]
                ],
            }
            if offset + 100 < len(citations):
                page["next"] = offset + 100
            server.add_json(
                "GET",
                f"/graph/v1/paper/{paper['paperId']}/citations",
                page,
                query={"fields": "year,publicationDate", "offset": offset, "limit": 100},
            )
        async with SemanticScholar(base_url=server.base_url, api_key="", **FAST) as client:
            counts = await client.citation_counts_by_year(paper["paperId"], page_size=100)
        assert server.requests == 10  # ten pages of 100
    # Hand count: occurrences of '"year": 2022|2023|2024' between '"citations"' and '"references"'
    # in the raw Paper.json text (353 + 499 + 148 = 1,000 = number of citing paperIds there).
    assert counts == {2022: 353, 2023: 499, 2024: 148}
