"""Candidate future papers for one idea: the local pool and key-phrase searches, kept to the window.

Sources, in order: the topic's pool (``Topic.future``, built by ``data build hindsight``), the
``--corpus`` files, and with ``--search`` the scholarly APIs (Semantic Scholar relevance search,
OpenAlex work search) queried with each of the idea's key phrases and the window as their date
filter. Every paper of every source is placed by :func:`~.topics.window_place` (an API may ignore
or round its date filter, a corpus holds papers of any date): only papers *in* the window
(T, T + horizon] are candidates; those dated on or before T, after the window and undated are
counted per source and never judged. Duplicates across sources (same id, DOI or title) count
once, the first source's copy kept. Candidates are ranked by the cosine similarity of the idea's
embedding with each paper's title and abstract.

Each access (the pool, a corpus, one search) is recorded as a ``cutoff`` record
(:func:`ideaharness.cutoff.access_record`: the works kept and excluded, and the window), which the
run's leakage block and :func:`window_counts` read.

A search refused for good (HTTP 429/5xx after the client's retries, an unreachable host) raises
:class:`~ideaharness.scholarly.gate.ScholarUnavailable`: the caller skips that idea's candidates
unit (counted; the run is partial, and a re-run searches again, the pages that succeeded served
from the response cache).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ideaharness.benchmarks.hindsight.topics import WindowPlace, window_place
from ideaharness.cutoff import CutoffLedger, DatedWork, access_record
from ideaharness.data.builders.hindsight import paper_keys
from ideaharness.metrics.embedding_store import text_key
from ideaharness.schema import Paper
from ideaharness.scholarly.gate import ScholarGate, ScholarUnavailable

MAX_QUERIES = 3
"""Key-phrase searches per idea and API."""
KEEP = 20
"""Candidates kept in an idea's record (highest similarity first); the judge sees the first
``match_candidates`` of them above ``min_similarity``."""
PLACES: tuple[WindowPlace, ...] = ("in", "before", "after", "undated")
STOPWORDS = frozenset("""a an the and or but nor of in on at by for with from to into onto over under
    about as is are was were be been being it its this that these those which who whom whose what when
    where why how we our us you your they their them he she his her i me my not no can could should
    would will shall may might must than then so such very more most less also only just both each
    other some any all many much own same too via per using use used based new study work paper
    propose proposed approach method methods results show idea research we'll whether between
    while across within without through their there here how""".split())
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]+")

Embed = Callable[[Sequence[str]], Any]


def paper_text(paper: Paper) -> str:
    """What a paper is compared by: its title and abstract."""
    return f"{paper.title}. {paper.abstract}" if paper.abstract else paper.title


def text_sha(text: str) -> str:
    """sha256 of a text (a candidates record names the idea text it was found for): the embedding
    store's :func:`~ideaharness.metrics.embedding_store.text_key` (a lone surrogate, which a model's
    JSON reply can hold, hashes too)."""
    return text_key(text)


def key_phrases(idea: dict[str, Any], limit: int = MAX_QUERIES) -> list[str]:
    """The queries searched for an idea: its own key phrases when it gave some, else its title and
    its four most frequent content words (words of at least 4 letters, not stopwords; ties in
    order of first use)."""
    if idea.get("key_phrases"):
        return list(idea["key_phrases"])[:limit]
    out = [idea["title"]] if idea.get("title") else []
    words = [w.lower() for w in _WORD.findall(idea["idea"]) if len(w) >= 4 and w.lower() not in STOPWORDS]
    first = {w: i for i, w in reversed(list(enumerate(words)))}
    ranked = sorted(Counter(words).items(), key=lambda kv: (-kv[1], first[kv[0]]))
    if ranked:
        out.append(" ".join(w for w, _ in ranked[:4]))
    return out[:limit]


class CandidatePool:
    """The unique in-window papers of several sources, in first-seen order.

    Every source's papers are placed again by :func:`~.topics.window_place` (the sources filter
    already; this is the guard a candidate must pass): a paper not in the window is never a
    candidate and is counted in ``guard`` (0 expected). Duplicates (same id, DOI or title) count
    once, the first source's copy kept, every source that found it listed in ``sources``.
    """

    def __init__(self, cutoff: dt.date, end: dt.date) -> None:
        self.cutoff, self.end = cutoff, end
        self.papers: list[Paper] = []
        self.sources: dict[str, list[str]] = {}
        self.guard: dict[str, int] = {}
        self._seen: dict[str, str] = {}

    def add(self, source: str, papers: Sequence[Paper]) -> None:
        """Keep the new in-window papers of ``source``."""
        for paper in papers:
            if window_place(paper, self.cutoff, self.end) != "in":
                self.guard[source] = self.guard.get(source, 0) + 1
                continue
            keys = paper_keys(paper)
            known = next((self._seen[k] for k in keys if k in self._seen), None)
            if known is not None:
                if source not in self.sources[known]:
                    self.sources[known].append(source)
                continue
            for key in keys:
                self._seen[key] = paper.id
            self.sources[paper.id] = [source]
            self.papers.append(paper)


def window_counts(records: Sequence[dict[str, Any]], cutoff: dt.date,
                  end: dt.date) -> dict[str, dict[str, int]]:
    """Source -> how many works its ``cutoff`` access records (:func:`ideaharness.cutoff.access_record`)
    hold ``in`` the window, ``before`` it (on or before T), ``after`` it and ``undated``, each work
    placed by :func:`~.topics.window_place` (kept and excluded works alike)."""
    out: dict[str, dict[str, int]] = {}
    for record in records:
        row = out.setdefault(str(record.get("source")), dict.fromkeys(PLACES, 0))
        for work in [*(record.get("kept_works") or []), *(record.get("excluded_works") or [])]:
            row[window_place(DatedWork.of(work), cutoff, end)] += 1
    return out


class Searcher:
    """The run's scholarly searches (``--search``): one Semantic Scholar gate and one OpenAlex
    client, opened on first use.

    Args:
        sources: ``s2`` and/or ``openalex``.
        scholar_base_url, openalex_base_url: API roots (None: the services).
        cache_dir: response cache folder.
        timeout_s: bound of one request.
        scholar, openalex: already built clients (tests, ``ideaharness.arun`` extras).
    """

    def __init__(self, sources: Sequence[str], *, scholar_base_url: str | None = None,
                 openalex_base_url: str | None = None, cache_dir: str | None = None,
                 timeout_s: float = 30.0, scholar: Any = None, openalex: Any = None) -> None:
        self.sources = list(sources)
        self.gate = ScholarGate(scholar_base_url, cache_dir=cache_dir, client=scholar, timeout_s=timeout_s) \
            if "s2" in self.sources else None
        self._openalex = openalex
        self._openalex_url = openalex_base_url
        self._cache_dir = cache_dir
        self._timeout_s = min(timeout_s, 30.0)

    def _openalex_client(self) -> Any:
        if self._openalex is None:
            from ideaharness.scholarly import OpenAlex

            url = self._openalex_url or "https://api.openalex.org"
            local = url.startswith(("http://127.0.0.1", "http://localhost"))
            self._openalex = OpenAlex(base_url=url, cache_dir=self._cache_dir, max_retries=1 if local else 3,
                                      backoff_base_s=0.2, min_interval_s=0.0 if local else 0.1,
                                      timeout_s=self._timeout_s)
        return self._openalex

    async def search(self, source: str, query: str, cutoff: dt.date, end: dt.date, limit: int
                     ) -> tuple[list[Paper], dict[str, Any]]:
        """One key-phrase search of ``source`` in the window (cutoff, end]: the papers the client
        kept (it sends the window and filters the results again by their own dates) and the
        ``cutoff`` access record of the search (:func:`ideaharness.cutoff.access_record`, source
        ``<source>_search``, with the ``query``).

        Raises:
            ScholarUnavailable: the service is unreachable or refused the request for good.
        """
        ledger = CutoffLedger()
        window = {"published_after": cutoff, "published_before": end, "ledger": ledger}
        name = f"{source}_search"
        if source == "s2":
            assert self.gate is not None
            found = list(await self.gate.call("search", query, limit=limit, **window))
        else:
            import httpx

            from ideaharness.redaction import redact
            from ideaharness.scholarly.errors import ScholarlyError

            try:
                found = list(await self._openalex_client().search(query, per_page=limit, **window))
            except (ScholarlyError, httpx.HTTPError, OSError, ValueError) as exc:
                why = redact(f"OpenAlex search failed: {type(exc).__name__}: {exc}")
                raise ScholarUnavailable(why) from None
        record = access_record(ledger, name, found, cutoff=end, start=cutoff + dt.timedelta(days=1))
        return found, {**record, "query": query}

    async def aclose(self) -> None:
        if self.gate is not None:
            await self.gate.aclose()
        if self._openalex is not None and hasattr(self._openalex, "aclose"):
            await self._openalex.aclose()


def rank_candidates(idea_text: str, papers: Sequence[Paper], embed: Embed) -> list[tuple[Paper, float]]:
    """``(paper, cosine similarity)`` of each paper with the idea, highest first (ties by id).

    ``embed`` maps texts to L2-normalised row vectors (:func:`ideaharness.metrics.embeddings.embed`)."""
    if not papers:
        return []
    vectors = np.asarray(embed([idea_text, *(paper_text(p) for p in papers)]), dtype=float)
    sims = vectors[1:] @ vectors[0]
    order = sorted(range(len(papers)), key=lambda i: (-float(sims[i]), papers[i].id))
    return [(papers[i], round(float(sims[i]), 6)) for i in order]


__all__ = ["KEEP", "CandidatePool", "ScholarUnavailable", "Searcher", "key_phrases", "paper_text",
           "rank_candidates", "text_sha", "window_counts"]
