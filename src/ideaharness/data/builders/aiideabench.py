"""Build AI Idea Bench 2025 style instances from a list of target papers (Qiu et al. 2025,
arXiv 2504.14191, §3.1).

For each target (a title, resolved by S2 title match, or an S2 id / ``DOI:`` / ``ARXIV:`` /
``CorpusId:``): keep it only when it was published after the cutoff (contamination control;
default 2023-10-03), then take as inspirations the 5 references cited most often in the
target's text — from full text with in-text citations when supplied (S2ORC / unarXive records),
else by the number of S2 citation ``contexts`` of each reference edge. Ties keep the earlier
reference. References never cited in the text (0 contexts) are not inspirations.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ideaharness.data.builders.common import (
    INSTANCES_FILE,
    JsonlLog,
    Manifest,
    check_settings,
    now_iso,
    write_instances,
    write_manifest,
)
from ideaharness.data.builders.ideabench import BuildResult
from ideaharness.data.sections import SectionedPaper, load_fulltext, match_bib_entry
from ideaharness.schema import Instance, Paper, Reference
from ideaharness.scholarly.errors import NotFound
from ideaharness.scholarly.s2 import EDGE_FIELDS, PAPER_FIELDS, SemanticScholar

DEFAULT_CUTOFF = dt.date(2023, 10, 3)
N_INSPIRATIONS = 5
_ID = re.compile(r"^([0-9a-f]{40}|(DOI|ARXIV|CorpusId|MAG|ACL|PMID|PMCID|URL):.+|10\.\d{4,}/\S+)$", re.I)


class AIIdeaBenchSettings(BaseModel):
    """Settings of an AI Idea Bench build: the targets, the cutoff, how many inspirations."""

    targets: list[str]
    cutoff: dt.date = DEFAULT_CUTOFF
    n_inspirations: int = N_INSPIRATIONS
    fulltext: str | None = None


def published_after(paper: Paper, cutoff: dt.date) -> bool | None:
    """True/False when the paper's date decides it, None when unknown (only a year equal to the
    cutoff's, or nothing)."""
    if paper.publication_date is not None:
        return paper.publication_date > cutoff
    if paper.year is not None and paper.year != cutoff.year:
        return paper.year > cutoff.year
    return None


def top_cited(references: list[Reference], n: int) -> list[Reference]:
    """The ``n`` references with the most S2 citation contexts (> 0), stable on ties."""
    ranked = sorted(
        ((len(r.contexts), -i, r) for i, r in enumerate(references) if r.contexts),
        key=lambda t: (t[0], t[1]),
        reverse=True,
    )
    return [r.model_copy(update={"extra": {**r.extra, "mention_count": c}}) for c, _, r in ranked[:n]]


def top_cited_in_text(paper: SectionedPaper, references: list[Reference], n: int) -> list[Reference]:
    """The ``n`` bibliography entries cited most often in the full text, as references.

    An entry matched to an S2 reference (:func:`match_bib_entry`) takes its metadata; an
    unmatched one becomes a reference with the bib entry's title (or raw text) and ids.
    """
    counts = paper.mention_counts()
    order = {m.bib_id: i for i, m in reversed(list(enumerate(paper.mentions)))}
    ranked = sorted(counts, key=lambda b: (-counts[b], order[b]))[:n]
    out = []
    for bib_id in ranked:
        entry = paper.bib[bib_id]
        index = match_bib_entry(entry, references)
        if index is not None:
            ref = references[index]
        else:
            ref = Reference(
                id=f"bib:{paper.id}:{bib_id}",
                title=entry.title or entry.raw[:300],
                external_ids=dict(entry.ids),
            )
        sections = [s for m in paper.mentions if m.bib_id == bib_id for s in (m.section,) if s]
        out.append(
            ref.model_copy(
                update={
                    "extra": {**ref.extra, "mention_count": counts[bib_id], "bib_id": bib_id},
                    "sections": list(dict.fromkeys(sections)),
                }
            )
        )
    return out


async def _resolve(client: SemanticScholar, query: str) -> Paper | None:
    if _ID.match(query.strip()):
        try:
            return await client.paper(query.strip(), fields=PAPER_FIELDS)
        except NotFound:
            return None
    return await client.match_title(query, fields=PAPER_FIELDS)


async def build_aiideabench(
    out_dir: str | Path, settings: AIIdeaBenchSettings, client: SemanticScholar
) -> BuildResult:
    """Build (or resume) AI Idea Bench instances in ``out_dir``.

    Writes ``instances.jsonl`` (references = inspirations, ``knowledge_cutoff`` = the target's
    publication date, else the cutoff), ``manifest.json`` and state files.

    Raises:
        UserError: other settings in ``out_dir``; ScholarlyError subclasses on API failures.
    """
    out = Path(out_dir)
    check_settings(out, "aiideabench", settings.model_dump(mode="json"))
    counts: dict[str, Any] = {"targets_requested": len(settings.targets)}
    target_log = JsonlLog(out / "targets.state.jsonl")
    resolved = {line["query"]: line for line in target_log.read()}
    for query in settings.targets:
        if query in resolved:
            continue
        paper = await _resolve(client, query)
        line: dict[str, Any] = {"query": query, "paper": paper.model_dump(mode="json") if paper else None}
        target_log.append(line)
        resolved[query] = line
    fulltext: dict[tuple[str, str], SectionedPaper] = {}
    if settings.fulltext:
        for sp in load_fulltext(settings.fulltext):
            for k, v in sp.external_ids.items():
                fulltext[(k, v.lower())] = sp
    ref_log = JsonlLog(out / "references.state.jsonl")
    fetched = {line["target_id"]: line for line in ref_log.read()}
    dropped = {"not_found": 0, "before_cutoff": 0, "unknown_date": 0, "duplicate": 0}
    instances: list[Instance] = []
    seen: set[str] = set()
    for query in settings.targets:
        data = resolved[query]["paper"]
        if data is None:
            dropped["not_found"] += 1
            continue
        paper = Paper.model_validate(data)
        after = published_after(paper, settings.cutoff)
        if after is not True:
            dropped["before_cutoff" if after is False else "unknown_date"] += 1
            continue
        if paper.id in seen:
            dropped["duplicate"] += 1
            continue
        seen.add(paper.id)
        if paper.id not in fetched:
            try:
                refs = await client.references(paper.id, fields=EDGE_FIELDS)
                line = {"target_id": paper.id, "references": [r.model_dump(mode="json") for r in refs]}
            except NotFound:
                line = {"target_id": paper.id, "references": [], "error": "not_found"}
            ref_log.append(line)
            fetched[paper.id] = line
        refs = [Reference.model_validate(r) for r in fetched[paper.id]["references"]]
        sectioned = next(
            (fulltext[(k, v.lower())] for k, v in paper.external_ids.items() if (k, v.lower()) in fulltext),
            None,
        )
        if sectioned is not None:
            inspirations, method = top_cited_in_text(sectioned, refs, settings.n_inspirations), "fulltext"
        else:
            inspirations, method = top_cited(refs, settings.n_inspirations), "s2_contexts"
        instances.append(
            Instance(
                id=f"aiideabench/{paper.id}",
                dataset="aiideabench",
                target=paper,
                references=inspirations,
                knowledge_cutoff=paper.publication_date or settings.cutoff,
                extra={"inspiration_method": method, "query": query, "cutoff": settings.cutoff.isoformat()},
            )
        )
    files = [write_instances(out / INSTANCES_FILE, instances)]
    counts |= {
        "dropped": dropped,
        "instances": len(instances),
        "instances_with_fewer_inspirations": sum(
            1 for i in instances if len(i.references) < settings.n_inspirations
        ),
        "inspiration_methods": {
            m: sum(1 for i in instances if i.extra["inspiration_method"] == m)
            for m in ("fulltext", "s2_contexts")
        },
    }
    stamp = now_iso()
    files.append(
        write_manifest(
            out,
            Manifest(
                builder="aiideabench",
                created=stamp,
                updated=stamp,
                settings=settings.model_dump(mode="json"),
                cutoff=settings.cutoff.isoformat(),
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
    return BuildResult(
        out_dir=str(out), instances=len(instances), counts=counts, files=[str(f) for f in files]
    )
