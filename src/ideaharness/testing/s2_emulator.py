"""A Semantic Scholar Graph API emulator over recorded real records, for offline builds and tests.

Serves, on a :class:`ReplayServer`, the endpoints the dataset builders use — relevance search
(any query word in title or abstract, most shared words first), bulk search
(filters ``year``, ``venue``, ``minCitationCount``, ``fieldsOfStudy``, ``publicationDateOrYear``;
``sort=citationCount:desc``; continuation tokens), paper details, batch, title match, and
references (``offset`` / ``limit`` / ``next``) — from a pool of real S2 paper records. Response
shapes follow the recorded responses; ``fields`` is not applied (every stored field is
returned). :func:`corpus_from_recordings` builds the pool from ``s2-api-recordings/Paper.json``
(1,000 real citing papers of Turing 1950 with full metadata) and gives every paper a seeded list
of references drawn from the pool, whose ``contexts`` / ``intents`` / ``isInfluential`` come from
the real recorded citation edges (``Citation.json``, ``Reference.json``, s2ag ``citations``
sample). The reference lists are synthetic; the records and edge texts are real.
"""

from __future__ import annotations

import base64
import gzip
import json
import random
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ideaharness.testing.scholarly_replay import ReplayServer, Reply


def _json(data: Any, status: int = 200) -> Reply:
    return Reply(status, json.dumps(data))


def _year_ok(paper: dict[str, Any], spec: str) -> bool:
    year = paper.get("year")
    if year is None:
        return False
    lo, _, hi = spec.partition("-")
    return int(lo or 0) <= year <= int(hi or 9999) if "-" in spec else year == int(spec)


def _date_ok(paper: dict[str, Any], spec: str) -> bool:
    lo, _, hi = spec.partition(":")
    value = paper.get("publicationDate") or (f"{paper['year']}-01-01" if paper.get("year") else None)
    if value is None:
        return False
    return (not lo or value >= lo) and (not hi or value <= hi)


class S2Emulator:
    """Emulated S2 endpoints over ``papers`` (S2 JSON objects with ``paperId``) and
    ``references`` (paperId -> list of reference edges ``{citedPaper, contexts, intents, ...}``).

    ``bulk_page_size`` papers per bulk page (S2 uses 1,000; smaller exercises tokens).
    """

    def __init__(
        self,
        papers: list[dict[str, Any]],
        references: dict[str, list[dict[str, Any]]],
        *,
        bulk_page_size: int = 1000,
    ) -> None:
        self.papers = {p["paperId"]: p for p in papers}
        self.references = references
        self.bulk_page_size = bulk_page_size

    def mount(self, server: ReplayServer) -> None:
        """Register the emulated endpoints on ``server``."""
        server.add_handler("GET", r"/graph/v1/paper/search/bulk", self._bulk)
        server.add_handler("GET", r"/graph/v1/paper/search/match", self._match)
        server.add_handler("GET", r"/graph/v1/paper/search", self._search)
        server.add_handler("POST", r"/graph/v1/paper/batch", self._batch)
        server.add_handler("GET", r"/graph/v1/paper/(?P<id>.+)/references", self._references)
        server.add_handler("GET", r"/graph/v1/paper/(?P<id>.+)", self._paper)

    def _lookup(self, raw_id: str) -> dict[str, Any] | None:
        pid = unquote(raw_id)
        if pid in self.papers:
            return self.papers[pid]
        kind, _, value = pid.partition(":")
        key = {"DOI": "DOI", "ARXIV": "ArXiv", "CORPUSID": "CorpusId"}.get(kind.upper())
        for paper in self.papers.values():
            ext = paper.get("externalIds") or {}
            if key and str(ext.get(key, "")).lower() == value.lower():
                return paper
        return None

    def _filtered(self, q: dict[str, str]) -> list[dict[str, Any]]:
        """The papers passing the request's filters (year, date window, venue, citations, fields)."""
        pool = list(self.papers.values())
        if q.get("year"):
            pool = [p for p in pool if _year_ok(p, q["year"])]
        if q.get("publicationDateOrYear"):
            pool = [p for p in pool if _date_ok(p, q["publicationDateOrYear"])]
        if q.get("venue"):
            venues = set(q["venue"].split(","))
            pool = [p for p in pool if p.get("venue") in venues]
        if q.get("minCitationCount"):
            pool = [p for p in pool if (p.get("citationCount") or 0) >= int(q["minCitationCount"])]
        if q.get("fieldsOfStudy"):
            wanted = set(q["fieldsOfStudy"].split(","))
            pool = [p for p in pool if wanted & set(p.get("fieldsOfStudy") or [])]
        return pool

    def _bulk(self, match: re.Match[str], q: dict[str, str], body: Any) -> Reply:
        pool = self._filtered(q)
        if q.get("query"):
            terms = q["query"].lower().split()
            pool = [p for p in pool if all(t in (p.get("title") or "").lower() for t in terms)]
        sort = q.get("sort", "paperId")
        field, _, order = sort.partition(":")
        pool.sort(
            key=lambda p: (p.get(field) or 0, p["paperId"]) if field != "paperId" else p["paperId"],
            reverse=order == "desc",
        )
        start = int(base64.urlsafe_b64decode(q["token"]).decode()) if q.get("token") else 0
        page = pool[start : start + self.bulk_page_size]
        nxt = start + len(page)
        data: dict[str, Any] = {"total": len(pool), "data": page}
        data["token"] = base64.urlsafe_b64encode(str(nxt).encode()).decode() if nxt < len(pool) else None
        return _json(data)

    def _search(self, match: re.Match[str], q: dict[str, str], body: Any) -> Reply:
        """Relevance search: papers sharing at least one query word with their title and abstract,
        most shared words first (then most cited, then paperId), after the filters; ``offset`` /
        ``limit`` paging with ``next`` (S2's limits: limit <= 100, offset + limit <= 1,000)."""
        offset, limit = int(q.get("offset", 0)), int(q.get("limit", 10))
        if limit > 100 or offset + limit > 1000:
            return _json({"error": "offset + limit must be <= 1000 and limit <= 100"}, 400)
        terms = set(re.findall(r"\w\w+", q.get("query", "").lower()))
        scored = []
        for paper in self._filtered(q):
            text = f"{paper.get('title') or ''} {paper.get('abstract') or ''}"
            words = set(re.findall(r"\w\w+", text.lower()))
            shared = len(terms & words)
            if shared:
                scored.append((-shared, -(paper.get("citationCount") or 0), paper["paperId"], paper))
        scored.sort(key=lambda t: t[:3])
        page = [t[3] for t in scored[offset : offset + limit]]
        data: dict[str, Any] = {"total": len(scored), "offset": offset, "data": page}
        if offset + limit < len(scored):
            data["next"] = offset + limit
        return _json(data)

    def _match(self, match: re.Match[str], q: dict[str, str], body: Any) -> Reply:
        wanted = " ".join(q.get("query", "").lower().split())
        for paper in self.papers.values():
            if " ".join((paper.get("title") or "").lower().split()) == wanted:
                return _json({"data": [{**paper, "matchScore": 100.0}]})
        return _json({"error": "Title match not found"}, 404)

    def _batch(self, match: re.Match[str], q: dict[str, str], body: Any) -> Reply:
        ids = (body or {}).get("ids") or []
        if len(ids) > 500:
            return _json({"error": "Cannot request more than 500 ids"}, 400)
        return _json([self._lookup(i) for i in ids])

    def _paper(self, match: re.Match[str], q: dict[str, str], body: Any) -> Reply:
        paper = self._lookup(match["id"])
        return _json(paper) if paper else _json({"error": "Paper with id not found"}, 404)

    def _references(self, match: re.Match[str], q: dict[str, str], body: Any) -> Reply:
        paper = self._lookup(match["id"])
        if paper is None:
            return _json({"error": "Paper with id not found"}, 404)
        edges = self.references.get(paper["paperId"], [])
        offset, limit = int(q.get("offset", 0)), int(q.get("limit", 100))
        if limit > 1000:
            return _json({"error": "limit must be <= 1000"}, 400)
        page: dict[str, Any] = {"offset": offset, "data": edges[offset : offset + limit]}
        if offset + limit < len(edges):
            page["next"] = offset + limit
        return _json(page)


def _recorded_edge_templates(raw: Path) -> list[dict[str, Any]]:
    templates: list[dict[str, Any]] = []
    for name in ("Citation.json", "Reference.json"):
        edge = json.loads((raw / "s2-api-recordings" / name).read_text(encoding="utf-8"))
        for item in edge.get("contextsWithIntent") or []:
            templates.append(
                {
                    "contexts": [item["context"]],
                    "intents": item["intents"],
                    "isInfluential": edge.get("isInfluential"),
                }
            )
    sample = raw / "s2ag-samples" / "citations" / "citations-sample.jsonl.gz"
    if sample.exists():
        with gzip.open(sample, "rt", encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                if not rec.get("contexts"):
                    continue
                intents = rec.get("intents") or []
                flat = sorted({i for item in intents for i in (item if isinstance(item, list) else [item])})
                templates.append(
                    {"contexts": rec["contexts"], "intents": flat, "isInfluential": rec.get("isinfluential")}
                )
    templates.append({"contexts": [], "intents": [], "isInfluential": False})  # edges without text
    return templates


def corpus_from_recordings(
    raw_dir: str | Path,
    *,
    refs_per_paper: tuple[int, int] = (8, 40),
    seed: int = 0,
    bulk_page_size: int = 200,
) -> S2Emulator:
    """An :class:`S2Emulator` over the recorded papers with seeded synthetic reference lists.

    Args:
        raw_dir: the ``shared/data/raw`` folder (needs ``s2-api-recordings``; the s2ag
            citations sample is used when present).
        refs_per_paper: inclusive range of the number of references per paper.
        seed: seed of every random draw (reference lists and edge texts).
    """
    raw = Path(raw_dir)
    record = json.loads((raw / "s2-api-recordings" / "Paper.json").read_text(encoding="utf-8"))
    pool = [p for p in record["citations"] + record["references"] if p.get("paperId")]
    templates = _recorded_edge_templates(raw)
    references: dict[str, list[dict[str, Any]]] = {}
    for paper in pool:
        rng = random.Random(f"{seed}:{paper['paperId']}")
        count = rng.randint(*refs_per_paper)
        cited = rng.sample([p for p in pool if p["paperId"] != paper["paperId"]], count)
        references[paper["paperId"]] = [{**rng.choice(templates), "citedPaper": c} for c in cited]
    return S2Emulator(pool, references, bulk_page_size=bulk_page_size)
