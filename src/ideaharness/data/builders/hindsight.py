"""Build HindSight topics (Jiang 2026, arXiv 2603.15164) from the scholarly APIs.

For each topic (a phrase and a knowledge cutoff T): the topic's literature published up to T (what a
generator may read) and its candidate pool, the papers published in the window (T, T + horizon]
(what ideas are matched against), each found by a relevance search of the topic's query
(Semantic Scholar ``/paper/search``, or OpenAlex ``/works?search=``) with the date window sent AND
applied again to the results (:func:`ideaharness.cutoff.within_window`: a service may ignore or
round its filter; undated works are dropped from both lists and counted). A work in both sources
counts once (same id, DOI or title).

Resume: every search page is one line of ``pages.state.jsonl`` (appended when fetched, with the
works it kept and the counts it excluded), so a re-run asks only the pages it lacks and the
response cache answers the rest; ``topics.jsonl`` and ``manifest.json`` are rewritten from the
state at the end of each run. The citation counts are those of the day of the search
(``impact_as_of`` of every topic; ``--as-of`` for a build from recorded responses).
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from ideaharness.cutoff import CutoffLedger, within_window
from ideaharness.data.builders.common import JsonlLog, Manifest, check_settings, now_iso, write_manifest
from ideaharness.data.builders.ideabench import BuildResult
from ideaharness.errors import UserError
from ideaharness.fileio import atomic_write_text
from ideaharness.jsonl import dumps_line
from ideaharness.schema import IsoDate, Paper

TOPICS_FILE = "topics.jsonl"
STATE_FILE = "pages.state.jsonl"
DEFAULT_HORIZON_MONTHS = 30
"""HindSight's future window: the 30 months after the cutoff."""
Source = Literal["s2", "openalex"]
PAGE = 100
"""Works per search page (S2's relevance search serves at most 100 a page, 1,000 in all)."""


def add_months(day: dt.date, months: int) -> dt.date:
    """``day`` plus ``months`` calendar months, the day of month clamped to the month's length
    (2022-08-31 + 6 months = 2023-02-28).

    Raises:
        ValueError: ``months`` negative.
    """
    if months < 0:
        raise ValueError(f"months must be >= 0, got {months}")
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return dt.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


_HORIZON = re.compile(r"^\s*(\d+)\s*(m|mo|months?|y|yr|years?)?\s*$", re.IGNORECASE)


def parse_horizon(text: str | int) -> int:
    """A horizon as months: ``"30m"``, ``"30"``, ``30``, ``"2y"`` (24), ``"30 months"``.

    Raises:
        ValueError: not a positive whole number of months or years (the message says the form).
    """
    found = _HORIZON.match(str(text))
    if not found or int(found.group(1)) <= 0:
        raise ValueError(f"horizon {text!r}: expected a positive number of months or years, e.g. 30m or 2y")
    unit = (found.group(2) or "m").lower()
    return int(found.group(1)) * (12 if unit.startswith("y") else 1)


def window_end(cutoff: dt.date, horizon_months: int) -> dt.date:
    """The last day of the future window (T, T + horizon]."""
    return add_months(cutoff, horizon_months)


SLUG_CHARS = 60
"""The longest topic slug of a generated id; a longer one is cut and ends in a hash of the whole."""


def topic_id(topic: str, cutoff: dt.date) -> str:
    """A readable, stable id: the topic's words joined by ``-`` and T (``turing-test@2022-11-30``).
    A slug over :data:`SLUG_CHARS` characters is cut and given 8 hex digits of the SHA-256 of the
    whole slug, so two long topics that share their first 60 characters get two ids. Topics whose
    words are the same (``Turing test``, ``Turing-Test``) share an id: :func:`check_distinct` refuses
    them."""
    slug = "-".join(re.findall(r"[a-z0-9]+", topic.lower()))
    if len(slug) > SLUG_CHARS:
        digest = hashlib.sha256(slug.encode()).hexdigest()[:8]
        slug = f"{slug[:SLUG_CHARS - 9].strip('-')}-{digest}"
    return f"{slug or 'topic'}@{cutoff.isoformat()}"


class TopicSpec(BaseModel):
    """One topic to build: its text, cutoff T, and optionally the search query (default: the
    text), the field of study impact falls back on, and an id (default :func:`topic_id`).

    Rows are checked as the run's loader checks a topic (:class:`~ideaharness.benchmarks.hindsight.
    topics.Topic`): unknown keys are refused, ``topic`` and a given ``id``/``query`` must not be
    blank (surrounding spaces are dropped); ``knowledge_cutoff`` is taken for ``cutoff``.
    """

    model_config = ConfigDict(extra="forbid")

    topic: str
    cutoff: IsoDate = Field(validation_alias=AliasChoices("cutoff", "knowledge_cutoff"))
    query: str | None = None
    field: str | None = None
    id: str | None = None

    @field_validator("topic", "id", "query")
    @classmethod
    def _non_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("empty: a topic needs non-blank text (and a non-blank id and query when given)")
        return value.strip() if value is not None else None

    def key(self) -> str:
        return self.id or topic_id(self.topic, self.cutoff)


def check_distinct(specs: Sequence[TopicSpec], origins: Sequence[str] | None = None) -> None:
    """Refuse two topics with one id (given or generated: :meth:`TopicSpec.key`): the second would
    otherwise be written with the first one's papers.

    Args:
        specs: the topics of a build.
        origins: where each came from, as the error names it (``topics.jsonl line 2``,
            ``--topic 'Turing test'``); default ``topic <n>``.

    Raises:
        UserError: one line naming both topics and the id.
    """
    names = list(origins) if origins is not None else [f"topic {i + 1} ({s.topic!r})"
                                                       for i, s in enumerate(specs)]
    seen: dict[str, int] = {}
    for i, spec in enumerate(specs):
        key = spec.key()
        if key in seen:
            raise UserError(f"{names[i]} has the id {key!r} of {names[seen[key]]}: two topics need two ids "
                            "(in a --topics file, give each its own \"id\")")
        seen[key] = i


class HindsightSettings(BaseModel):
    """Settings of a HindSight build (recorded in ``settings.json`` and the manifest).

    ``n_literature``: works of the pre-T literature kept per topic; ``n_future``: works of the
    window kept per topic (the candidate pool); ``as_of``: the day the citation counts are from
    (default: the day of the first run).
    """

    topics: list[TopicSpec]
    horizon_months: int = Field(DEFAULT_HORIZON_MONTHS, ge=1)
    n_literature: int = Field(30, ge=0, le=1000)
    n_future: int = Field(100, ge=1, le=1000)
    sources: list[Source] = Field(default_factory=lambda: list[Source](["s2"]))
    as_of: dt.date | None = None


def paper_keys(paper: Paper) -> list[str]:
    """The keys two copies of one work share: ``id:<id>``, ``doi:<doi, lower case>`` and
    ``title:<the title's words, lower case>`` (those it has)."""
    keys = [f"id:{paper.id}"]
    if paper.external_ids.get("DOI"):
        keys.append(f"doi:{paper.external_ids['DOI'].lower()}")
    title = " ".join(re.findall(r"\w+", paper.title.lower()))
    return [*keys, f"title:{title}"] if title else keys


def _unique(papers: list[Paper]) -> list[Paper]:
    seen: set[str] = set()
    out = []
    for paper in papers:
        keys = paper_keys(paper)
        if seen.intersection(keys):
            continue
        seen.update(keys)
        out.append(paper)
    return out


async def _page(client: Any, source: str, query: str, offset: int, window: Window,
                ledger: CutoffLedger) -> list[Paper]:
    """One search page of ``source``; the client sends the window and filters the results again."""
    after, before = window
    if source == "s2":
        return list(await client.search(query, limit=PAGE, offset=offset, published_after=after,
                                        published_before=before, ledger=ledger))
    return list(await client.search(query, per_page=PAGE, page=offset // PAGE + 1, published_after=after,
                                    published_before=before, ledger=ledger))


PageKey = tuple[str, str, str, str, str, str, int]
Pages = dict[PageKey, dict[str, Any]]
Window = tuple[dt.date | None, dt.date]


def _window_text(window: Window) -> list[str | None]:
    return [window[0].isoformat() if window[0] else None, window[1].isoformat()]


def page_key(line: dict[str, Any]) -> PageKey:
    """What a logged page answers: the topic, the query, the date window, the part, the source and
    the offset (everything that changes the request; a line of an older log without query or
    window matches no request and is asked again, the response cache answering it)."""
    after, before = (list(line.get("window") or []) + [None, None])[:2]
    return (str(line["topic"]), str(line.get("query")), str(after), str(before), str(line["part"]),
            str(line["source"]), int(line["offset"]))


async def _collect(clients: dict[str, Any], spec: TopicSpec, part: str, window: Window, wanted: int,
                   log: JsonlLog, pages: Pages) -> list[Paper]:
    """The works of one part (``literature`` or ``future``) of a topic, page by page per source,
    each page logged when fetched (a logged page is not asked again)."""
    found: list[Paper] = []
    query = spec.query or spec.topic
    for source, client in clients.items():
        offset = 0
        while len(_unique(found)) < wanted and offset + PAGE <= 1000:
            asked: dict[str, Any] = {"topic": spec.key(), "query": query, "window": _window_text(window),
                                     "part": part, "source": source, "offset": offset}
            key = page_key(asked)
            if key not in pages:
                ledger = CutoffLedger()
                papers = await _page(client, source, query, offset, window, ledger)
                line: dict[str, Any] = {**asked, "fetched": dt.date.today().isoformat(),
                                        "papers": [p.model_dump(mode="json") for p in papers],
                                        "counts": ledger.as_dict(),
                                        "full": len(papers) + ledger.excluded() >= PAGE}
                log.append(line)
                pages[key] = line
            found += [Paper.model_validate(p) for p in pages[key]["papers"]]
            if not pages[key]["full"]:
                break
            offset += PAGE
    return found


async def build_hindsight(out_dir: str | Path, settings: HindsightSettings,
                          clients: dict[str, Any]) -> BuildResult:
    """Build (or resume) HindSight topics in ``out_dir``.

    Args:
        out_dir: the output folder (``topics.jsonl``, ``manifest.json``, ``settings.json``, state).
        settings: what to build.
        clients: source -> an open client (``SemanticScholar`` for ``s2``, ``OpenAlex`` for
            ``openalex``), one per ``settings.sources``.

    Raises:
        UserError: two topics with one id (:func:`check_distinct`, before any request); other
            settings in ``out_dir``; ScholarlyError subclasses on API failures (what was fetched is
            kept: the same command resumes).
    """
    check_distinct(settings.topics)
    out = Path(out_dir)
    check_settings(out, "hindsight", settings.model_dump(mode="json"))
    missing = [s for s in settings.sources if s not in clients]
    if missing:
        raise ValueError(f"no client for source(s) {missing}")
    log = JsonlLog(out / STATE_FILE)
    pages = {page_key(line): line for line in log.read()}
    fetched = [dt.date.fromisoformat(str(line["fetched"])) for line in pages.values() if line.get("fetched")]
    first = min(fetched, default=None)
    as_of = settings.as_of or first or dt.date.today()
    rows: list[dict[str, Any]] = []
    counts: dict[str, Any] = {"topics": len(settings.topics), "per_topic": {}}
    ordered: dict[str, Any] = {s: clients[s] for s in settings.sources}
    for spec in settings.topics:
        end = window_end(spec.cutoff, settings.horizon_months)
        literature = await _collect(ordered, spec, "literature", (None, spec.cutoff), settings.n_literature,
                                    log, pages) if settings.n_literature else []
        future = await _collect(ordered, spec, "future", (spec.cutoff, end), settings.n_future, log, pages)
        lit_ledger, fut_ledger = CutoffLedger(), CutoffLedger()
        literature = within_window(_unique(literature), None, spec.cutoff, source="literature",
                                   ledger=lit_ledger, undated="drop")[: settings.n_literature]
        future = within_window(_unique(future), spec.cutoff + dt.timedelta(days=1), end, source="future",
                               ledger=fut_ledger, undated="drop")[: settings.n_future]
        asked = {part: page_key({"topic": spec.key(), "query": spec.query or spec.topic,
                                 "window": _window_text(w), "part": part, "source": "", "offset": 0})[:5]
                 for part, w in (("literature", (None, spec.cutoff)), ("future", (spec.cutoff, end)))}
        excluded = {part: sum(r["excluded"] for key, line in pages.items() if key[:5] == asked[part]
                              for r in line["counts"].values())
                    for part in ("literature", "future")}
        counts["per_topic"][spec.key()] = {
            "literature": len(literature), "future": len(future),
            "excluded_by_services_filter_again": excluded,
            "undated_dropped": {"literature": lit_ledger.as_dict()["literature"]["undated"],
                                "future": fut_ledger.as_dict()["future"]["undated"]},
            "window_open": end > as_of,
        }
        rows.append({"id": spec.key(), "topic": spec.topic, "field": spec.field,
                     "knowledge_cutoff": spec.cutoff.isoformat(), "query": spec.query or spec.topic,
                     "window_end": end.isoformat(), "impact_as_of": as_of.isoformat(),
                     "literature": [p.model_dump(mode="json") for p in literature],
                     "future": [p.model_dump(mode="json") for p in future],
                     "extra": {"horizon_months": settings.horizon_months, "sources": settings.sources}})
    topics_path = out / TOPICS_FILE
    atomic_write_text(topics_path, "".join(dumps_line(r) + "\n" for r in rows))
    stamp = now_iso()
    http = {s: {"base_url": c.base_url, "requests": c.stats.requests, "cache_hits": c.stats.cache_hits,
                "retries": c.stats.retries} for s, c in ordered.items()}
    manifest = write_manifest(out, Manifest(
        builder="hindsight", created=stamp, updated=stamp, settings=settings.model_dump(mode="json"),
        cutoff=min(s.cutoff for s in settings.topics).isoformat() if settings.topics else None,
        counts={**counts, "impact_as_of": as_of.isoformat()}, http=http))
    return BuildResult(out_dir=str(out), instances=len(rows), counts=counts,
                       files=[str(topics_path), str(manifest)])
