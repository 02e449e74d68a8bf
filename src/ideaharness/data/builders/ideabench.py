"""Build an IdeaBench dataset from Semantic Scholar (Guo et al. 2024, arXiv 2411.02429, §3.1).

Target papers come from S2 bulk search sorted by citation count, with the paper's two
strategies: (1) papers in a list of top venues with >= 1 citation; (2) papers of the chosen
fields of study in other venues with >= 20 citations. Targets are deduplicated on paperId and
those without an abstract or with a non-primary publication type are dropped. References come
from ``/paper/{id}/references`` with contexts / intents / isInfluential (all pages by default;
``max_references=300`` reproduces the original single page). References are filtered as the
IdeaBench loader does (:func:`ideaharness.data.ideabench_csv.filter_references`), or — when full
text with sections is supplied — by the section-aware filter
(:func:`ideaharness.data.sections.background_references`) plus the same abstract / citation /
type checks.

Output folder: ``target_papers.csv`` + ``filtered_references.csv`` (kept targets, original
format), ``raw_target_papers.csv`` + ``raw_references.csv`` (everything fetched),
``instances.jsonl`` (our :class:`Instance` per kept target), ``manifest.json``, the append-only
state files and the response cache. Re-running resumes.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ideaharness.data.builders.common import (
    CACHE_DIR,
    INSTANCES_FILE,
    JsonlLog,
    Manifest,
    check_settings,
    now_iso,
    write_instances,
    write_manifest,
)
from ideaharness.data.ideabench_csv import (
    EXCLUDED_PUBLICATION_TYPES,
    drop_reason,
    filter_references,
    write_ideabench_csvs,
)
from ideaharness.data.sections import SectionedPaper, background_references, load_fulltext
from ideaharness.schema import Instance, Paper, Reference
from ideaharness.scholarly.errors import NotFound
from ideaharness.scholarly.s2 import EDGE_FIELDS, PAPER_FIELDS, SemanticScholar

#: Top venues of strategy 1. The published list (~30 biomedical and general journals) is not
#: in the paper; this is a reconstruction of its best-known members — pass your own list.
IDEABENCH_TOP_VENUES: tuple[str, ...] = (
    "Nature",
    "Science",
    "Cell",
    "The New England journal of medicine",
    "The Lancet",
    "JAMA",
    "Proceedings of the National Academy of Sciences of the United States of America",
    "Nature Medicine",
    "Nature Genetics",
    "Nature Biotechnology",
    "Nature Communications",
    "Science Advances",
    "Nature Neuroscience",
    "Neuron",
    "Immunity",
    "Cancer Cell",
    "Molecular Cell",
    "Cell Reports",
    "eLife",
    "BMJ",
)


class IdeaBenchSettings(BaseModel):
    """Settings of an IdeaBench build (all recorded in ``settings.json`` and the manifest).

    ``max_targets`` bounds the kept-before-filtering targets per strategy; ``max_references``
    None = every page of references (300 = the original's single page); ``fulltext``: a
    ``.jsonl(.gz)`` of S2ORC / unarXive records enabling the section-aware filter.
    """

    year: int | str | None = 2024
    query: str | None = None
    top_venues: list[str] = Field(default_factory=lambda: list(IDEABENCH_TOP_VENUES))
    fields_of_study: list[str] = Field(default_factory=lambda: ["Medicine", "Biology"])
    min_citations_top: int = 1
    min_citations_other: int = 20
    max_targets: int = 100
    max_references: int | None = None
    min_reference_citations: int = 5
    min_references: int = 3
    publication_date_window: tuple[dt.date | None, dt.date | None] | None = None
    fulltext: str | None = None


class BuildResult(BaseModel):
    """Paths written and the counts of a build."""

    out_dir: str
    instances: int
    counts: dict[str, Any]
    files: list[str]


def _target_ok(paper: Paper) -> str | None:
    if not paper.abstract or not paper.abstract.strip():
        return "no_abstract"
    if paper.publication_types and EXCLUDED_PUBLICATION_TYPES.intersection(paper.publication_types):
        return "non_primary_type"
    return None


async def _collect_targets(
    client: SemanticScholar, settings: IdeaBenchSettings, log: JsonlLog, counts: dict[str, Any]
) -> list[Paper]:
    lines = list(log.read())
    done = {line["strategy"] for line in lines if line.get("kind") == "strategy_done"}
    targets = {
        line["paper"]["id"]: Paper.model_validate(line["paper"])
        for line in lines
        if line.get("kind") == "target"
    }
    strategies: list[tuple[int, dict[str, Any]]] = [
        (1, {"venue": settings.top_venues, "min_citation_count": settings.min_citations_top}),
        (
            2,
            {"fields_of_study": settings.fields_of_study, "min_citation_count": settings.min_citations_other},
        ),
    ]
    top = set(settings.top_venues)
    for strategy, filters in strategies:
        if strategy in done:
            continue
        kept = sum(1 for p in targets.values() if p.extra.get("strategy") == strategy)
        async for paper in client.search_bulk(
            settings.query,
            fields=PAPER_FIELDS,
            sort="citationCount:desc",
            year=settings.year,
            publication_date_window=settings.publication_date_window,
            **filters,
        ):
            if kept >= settings.max_targets:
                break
            if strategy == 2 and paper.venue in top:
                continue
            if paper.id in targets or _target_ok(paper):
                continue
            paper = paper.model_copy(update={"extra": {**paper.extra, "strategy": strategy}})
            targets[paper.id] = paper
            log.append({"kind": "target", "strategy": strategy, "paper": paper.model_dump(mode="json")})
            kept += 1
        log.append({"kind": "strategy_done", "strategy": strategy})
    counts["targets"] = len(targets)
    counts["targets_by_strategy"] = {
        str(s): sum(1 for p in targets.values() if p.extra.get("strategy") == s) for s in (1, 2)
    }
    return list(targets.values())


def _fulltext_index(path: str | None) -> dict[tuple[str, str], SectionedPaper]:
    index: dict[tuple[str, str], SectionedPaper] = {}
    if path:
        for paper in load_fulltext(path):
            for key, value in paper.external_ids.items():
                index[(key, value.lower())] = paper
    return index


def _filter(
    instance: Instance, settings: IdeaBenchSettings, fulltext: dict[tuple[str, str], SectionedPaper]
) -> Instance | None:
    sectioned = next(
        (
            fulltext[(k, v.lower())]
            for k, v in instance.target.external_ids.items()
            if (k, v.lower()) in fulltext
        ),
        None,
    )
    if sectioned is None:
        return filter_references(instance, settings.min_reference_citations, settings.min_references)
    result = background_references(instance.references, sectioned)
    kept = [
        r for r in result.kept if drop_reason(r, settings.min_reference_citations) in (None, "not_background")
    ]
    if len(kept) < settings.min_references:
        return None
    out = instance.model_copy(update={"references": kept, "extra": dict(instance.extra)})
    out.extra["reference_filter"] = {
        "kind": "sections",
        "fulltext_id": sectioned.id,
        "min_citations": settings.min_reference_citations,
        "min_references": settings.min_references,
        "n_before": len(instance.references),
        "n_after": len(kept),
        "unmatched_bib_entries": len(result.unmatched_bib_ids),
    }
    return out


async def build_ideabench(
    out_dir: str | Path, settings: IdeaBenchSettings, client: SemanticScholar
) -> BuildResult:
    """Build (or resume) an IdeaBench dataset in ``out_dir`` with ``client``.

    Raises:
        UserError: ``out_dir`` holds a build with other settings; ScholarlyError subclasses on
            API failures (finished work stays on disk; re-run to resume).
    """
    out = Path(out_dir)
    check_settings(out, "ideabench", settings.model_dump(mode="json"))
    counts: dict[str, Any] = {}
    targets = await _collect_targets(client, settings, JsonlLog(out / "targets.state.jsonl"), counts)
    ref_log = JsonlLog(out / "references.state.jsonl")
    fetched = {line["target_id"]: line for line in ref_log.read()}
    for paper in targets:
        if paper.id in fetched:
            continue
        try:
            refs = await client.references(
                paper.id,
                fields=EDGE_FIELDS,
                page_size=min(1000, settings.max_references or 1000),
                max_items=settings.max_references,
            )
            line: dict[str, Any] = {
                "target_id": paper.id,
                "references": [r.model_dump(mode="json") for r in refs],
            }
        except NotFound:
            line = {"target_id": paper.id, "references": [], "error": "not_found"}
        ref_log.append(line)
        fetched[paper.id] = line
    instances = []
    for paper in targets:
        refs = [Reference.model_validate(r) for r in fetched[paper.id]["references"]]
        cutoff = paper.publication_date or (dt.date(paper.year, 1, 1) if paper.year else None)
        instances.append(
            Instance(
                id=f"ideabench/{paper.id}",
                dataset="ideabench",
                target=paper,
                references=refs,
                knowledge_cutoff=cutoff,
            )
        )
    fulltext = _fulltext_index(settings.fulltext)
    kept = [k for k in (_filter(i, settings, fulltext) for i in instances) if k is not None]
    files = [
        *write_ideabench_csvs(instances, out, "raw_target_papers.csv", "raw_references.csv"),
        *write_ideabench_csvs(kept, out, "target_papers.csv", "filtered_references.csv"),
        write_instances(out / INSTANCES_FILE, kept),
    ]
    counts |= {
        "references_not_found": sum(1 for line in fetched.values() if line.get("error")),
        "references_raw": sum(len(i.references) for i in instances),
        "instances": len(kept),
        "references_kept": sum(len(i.references) for i in kept),
        "filter_kinds": {
            k: sum(1 for i in kept if i.extra["reference_filter"]["kind"] == k)
            for k in ("relevance", "sections")
        },
    }
    stamp = now_iso()
    files.append(
        write_manifest(
            out,
            Manifest(
                builder="ideabench",
                created=stamp,
                updated=stamp,
                settings=settings.model_dump(mode="json"),
                cutoff=str(settings.publication_date_window) if settings.publication_date_window else None,
                counts=counts,
                http={
                    "base_url": client.base_url,
                    "requests": client.stats.requests,
                    "cache_hits": client.stats.cache_hits,
                    "retries": client.stats.retries,
                },
            ),
        )
    )
    return BuildResult(out_dir=str(out), instances=len(kept), counts=counts, files=[str(f) for f in files])


def default_cache_dir(out_dir: str | Path) -> Path:
    """Where builders keep the response cache by default (``<out>/cache``)."""
    return Path(out_dir) / CACHE_DIR
