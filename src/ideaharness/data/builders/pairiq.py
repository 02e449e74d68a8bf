"""Build PAIR-IQ style records from OpenReview venues (LigBench, Wang et al., §3 / Listing 1).

Per submission with at least one official review: title, abstract, keywords, primary area,
decision label (``accept-poster`` ... ``reject``), and rating / contribution / soundness as the
mean over reviewers on the venue's scale, projected to 0-5 with
:func:`ideaharness.data.pairiq.project_score` (linear min-max: ICLR / NeurIPS rating 1-10 ->
(s-1)*5/9, sub-scores 1-4 -> (s-1)*5/3; the scale of each venue comes from its review form in
:data:`ideaharness.scholarly.openreview.REVIEW_FORMS`), then debiased per venue by mean shift
ŝ = s - μ_venue + μ_all (:func:`ideaharness.data.pairiq.debias`, means from the built records).
Withdrawn and desk-rejected submissions are left out unless asked for (PAIR-IQ has neither).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ideaharness.data.builders.common import JsonlLog, Manifest, check_settings, now_iso, write_manifest
from ideaharness.data.builders.ideabench import BuildResult
from ideaharness.data.pairiq import PairIQRecord, debias, project_score, write_pairiq
from ideaharness.scholarly.openreview import OpenReview, Submission

PAIRIQ_FILE = "pairiq.jsonl"
DIMENSIONS = ("rating", "contribution", "soundness")


class PairIQSettings(BaseModel):
    """Venues (OpenReview venue ids) and what to keep."""

    venues: list[str] = Field(default_factory=lambda: ["ICLR.cc/2024/Conference"])
    include_withdrawn: bool = False
    min_reviews: int = 1


def venue_name(venue_id: str) -> tuple[str, int | None]:
    """``("ICLR", 2024)`` from ``"ICLR.cc/2024/Conference"``."""
    parts = venue_id.split("/")
    conference = parts[0].split(".")[0]
    year = next((int(p) for p in parts if re.fullmatch(r"\d{4}", p)), None)
    return conference, year


def _mean(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return sum(got) / len(got) if got else None


def record_from_submission(sub: Submission, scales: dict[str, tuple[float, float]]) -> PairIQRecord:
    """A projected (not yet debiased) PAIR-IQ record; raw means are kept in ``extra``."""
    conference, year = venue_name(sub.venue_id)
    raw = {dim: _mean([getattr(r, dim) for r in sub.reviews]) for dim in DIMENSIONS}
    projected = {dim: (project_score(v, scales[dim]) if v is not None else None) for dim, v in raw.items()}
    url = f"https://openreview.net/forum?id={sub.id}"
    return PairIQRecord.model_validate(
        {
            "id": url,
            "title": sub.title,
            "url": url,
            "conference": conference,
            "year": year,
            "label": sub.label,
            "abstract": sub.abstract or "",
            "keywords": sub.keywords,
            "primary area": sub.primary_area,
            "rating": projected["rating"],
            "contribute": projected["contribution"],
            "soundness": projected["soundness"],
            "extra": {
                "raw_means": raw,
                "n_reviews": len(sub.reviews),
                "decision": sub.decision,
                "scales": {d: list(scales[d]) for d in DIMENSIONS},
            },
        }
    )


async def build_pairiq(out_dir: str | Path, settings: PairIQSettings, client: OpenReview) -> BuildResult:
    """Build (or resume) PAIR-IQ records in ``out_dir`` (``pairiq.jsonl`` + manifest).

    Raises:
        ConfigError: missing OpenReview credentials or an unknown review form (checked for
            every venue before any request).
    """
    out = Path(out_dir)
    check_settings(out, "pairiq", settings.model_dump(mode="json"))
    forms = {v: client.form(v) for v in settings.venues}
    log = JsonlLog(out / "submissions.state.jsonl")
    lines = list(log.read())
    done = {line["venue"] for line in lines if line.get("kind") == "venue_done"}
    subs: dict[str, list[Submission]] = {}
    for line in lines:
        if line.get("kind") == "submission":
            subs.setdefault(line["venue"], []).append(Submission.model_validate(line["submission"]))
    for venue in settings.venues:
        if venue in done:
            continue
        fetched = await client.submissions(venue)
        have = {s.id for s in subs.get(venue, [])}
        for sub in fetched:
            if sub.id not in have:
                log.append({"kind": "submission", "venue": venue, "submission": sub.model_dump(mode="json")})
                subs.setdefault(venue, []).append(sub)
        log.append({"kind": "venue_done", "venue": venue})
    counts: dict[str, Any] = {"submissions": {v: len(subs.get(v, [])) for v in settings.venues}}
    skipped = {"withdrawn_or_desk_rejected": 0, "too_few_reviews": 0}
    records = []
    for venue in settings.venues:
        for sub in subs.get(venue, []):
            if not settings.include_withdrawn and sub.label in ("withdrawn", "desk-rejected"):
                skipped["withdrawn_or_desk_rejected"] += 1
                continue
            if len(sub.reviews) < settings.min_reviews:
                skipped["too_few_reviews"] += 1
                continue
            records.append(record_from_submission(sub, forms[venue].scales))
    records = debias(records)
    path = write_pairiq(records, out / PAIRIQ_FILE)
    counts |= {
        "records": len(records),
        "skipped": skipped,
        "labels": {
            lab: sum(1 for r in records if r.label == lab) for lab in sorted({str(r.label) for r in records})
        },
    }
    stamp = now_iso()
    manifest = write_manifest(
        out,
        Manifest(
            builder="pairiq",
            created=stamp,
            updated=stamp,
            settings=settings.model_dump(mode="json"),
            counts=counts,
            http={
                "base_url": client.base_url,
                "requests": client.stats.requests,
                "cache_hits": client.stats.cache_hits,
                "retries": client.stats.retries,
            },
        ),
    )
    return BuildResult(
        out_dir=str(out), instances=len(records), counts=counts, files=[str(path), str(manifest)]
    )
