"""Realised impact of a matched future paper, and the HindSight check (judge score vs impact).

Impact of one paper (citations normalised by field and age):

    cpy(p)    = c(p) / max(1, a(p))                         citations per year since publication
    impact(p) = cpy(p) / e_f                               normalised citation score

where c(p) is the paper's citation count as retrieved, a(p) its age in years at the retrieval day
(publication date to ``as_of``, 365.25 days a year; a paper with only a year counts from 1 July;
the first year counts as a whole one, so a months-old paper is not divided by a fraction), and
e_f the *expected* citations per year of papers of field f: the median cpy of the topic's
candidate pool papers of that field that carry a citation count (the pool's median over every
field when fewer than :data:`MIN_FIELD_PAPERS` papers of f have one; the mean when the median is 0,
as it is when most of a young pool is not cited yet). This is the item-oriented
normalised citation score of Waltman, van Eck, van Leeuwen, Visser & van Raan (2011, "Towards a new
crown indicator", J. Informetrics 5(1):37-47; c / e with e the expected citations of the same field
and publication year), with two changes stated here: the reference set is the topic's pool (papers
of one window, so of similar age) and the expectation is the median, not the mean (a single
highly cited paper would move a mean of a small pool). 1.0 = as cited as the median paper of its
field in the pool. A paper without a citation count has no impact (never 0).

Venue tier (reported beside the impact, not part of it): ``top`` when the venue is one of
:data:`TOP_VENUES`, ``other`` for any other venue, ``unknown`` when the paper names none.

The HindSight check (:func:`spearman_check`): Spearman's rank correlation between the judge's score
of each idea and its realised impact (0 for an idea with no match), with a percentile bootstrap
interval over topics (whole topics resampled: ideas of one topic are not independent).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from ideaharness.schema import Paper

DAYS_PER_YEAR = 365.25
MIN_AGE_YEARS = 1.0
MIN_FIELD_PAPERS = 3
"""Papers with a citation count a field needs in the pool for a baseline of its own."""
ALL_FIELDS = "*"
"""The key of the pool-wide baseline in :func:`field_baselines`."""

TOP_VENUES: tuple[str, ...] = (
    # IdeaBench's top venues (Guo et al. 2024; ideaharness.data.builders.ideabench), biomedicine
    "Nature", "Science", "Cell", "The New England journal of medicine", "The Lancet", "JAMA",
    "Proceedings of the National Academy of Sciences of the United States of America", "Nature Medicine",
    "Nature Genetics", "Nature Biotechnology", "Nature Communications", "Science Advances",
    "Nature Neuroscience", "Neuron", "Immunity", "Cancer Cell", "Molecular Cell", "Cell Reports", "eLife",
    "BMJ",
    # computer science: the CORE 2023 A* conferences of AI, ML, NLP and vision, as Semantic
    # Scholar names them, and the flagship journals of the field
    "Neural Information Processing Systems", "International Conference on Machine Learning",
    "International Conference on Learning Representations",
    "Annual Meeting of the Association for Computational Linguistics",
    "Conference on Empirical Methods in Natural Language Processing",
    "North American Chapter of the Association for Computational Linguistics",
    "Computer Vision and Pattern Recognition", "IEEE International Conference on Computer Vision",
    "European Conference on Computer Vision", "AAAI Conference on Artificial Intelligence",
    "International Joint Conference on Artificial Intelligence",
    "Knowledge Discovery and Data Mining", "Nature Machine Intelligence",
    "Journal of machine learning research", "Artificial Intelligence",
)
"""Venues of tier ``top`` (compared case-insensitively, whitespace collapsed)."""

VenueTier = Literal["top", "other", "unknown"]


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


_TOP = frozenset(_norm(v) for v in TOP_VENUES)


def venue_tier(paper: Paper) -> VenueTier:
    """``top`` (venue in :data:`TOP_VENUES`), ``other`` (another venue) or ``unknown`` (none)."""
    if not paper.venue or not paper.venue.strip():
        return "unknown"
    return "top" if _norm(paper.venue) in _TOP else "other"


def paper_field(paper: Paper, default: str | None = None) -> str | None:
    """The paper's first field of study (Semantic Scholar ``fieldsOfStudy``, else
    ``s2FieldsOfStudy`` categories, kept in ``extra``), else ``default``."""
    for key in ("fieldsOfStudy", "s2FieldsOfStudy"):
        value = paper.extra.get(key)
        if isinstance(value, list):
            for item in value:
                name = item.get("category") if isinstance(item, dict) else item
                if isinstance(name, str) and name.strip():
                    return name.strip()
    return default


def age_years(paper: Paper, as_of: dt.date) -> float | None:
    """Years from the paper's publication to ``as_of`` (date, else 1 July of its year), at least
    :data:`MIN_AGE_YEARS`; None when the paper has no date and no year."""
    if paper.publication_date is not None:
        start = paper.publication_date
    elif paper.year is not None:
        start = dt.date(paper.year, 7, 1)
    else:
        return None
    return max(MIN_AGE_YEARS, (as_of - start).days / DAYS_PER_YEAR)


def citations_per_year(paper: Paper, as_of: dt.date) -> float | None:
    """cpy = citations / age in years (module docstring); None without a citation count or a date."""
    age = age_years(paper, as_of)
    if paper.citation_count is None or age is None:
        return None
    return float(paper.citation_count) / age


def field_baselines(pool: Sequence[Paper], as_of: dt.date,
                    default_field: str | None = None) -> dict[str, float]:
    """Expected citations per year per field: the median cpy (the mean when the median is 0) of the
    pool's papers of each field with at least :data:`MIN_FIELD_PAPERS` papers with a citation count,
    and :data:`ALL_FIELDS` over the whole pool (absent when no pool paper has a citation count)."""
    rates: dict[str, list[float]] = {}
    every: list[float] = []
    for paper in pool:
        rate = citations_per_year(paper, as_of)
        if rate is None:
            continue
        every.append(rate)
        name = paper_field(paper, default_field)
        if name:
            rates.setdefault(name, []).append(rate)
    out = {name: _expected(values) for name, values in rates.items() if len(values) >= MIN_FIELD_PAPERS}
    if every:
        out[ALL_FIELDS] = _expected(every)
    return out


def _expected(rates: Sequence[float]) -> float:
    """The median of ``rates``, or their mean when the median is 0."""
    median = float(np.median(rates))
    return median if median > 0 else float(np.mean(rates))


def normalised_impact(paper: Paper, as_of: dt.date, baselines: Mapping[str, float],
                      default_field: str | None = None) -> dict[str, Any]:
    """The impact of one matched paper and how it was formed.

    Returns:
        ``{"impact", "citations", "cites_per_year", "field", "baseline", "baseline_field",
        "venue_tier", "as_of", "why"}``: ``impact`` = cpy / e_f (module docstring), None with
        ``why`` when the paper has no citation count or date, or the baseline is missing or 0.
    """
    name = paper_field(paper, default_field)
    key = name if name is not None and name in baselines else ALL_FIELDS
    baseline = baselines.get(key)
    rate = citations_per_year(paper, as_of)
    why = None
    if paper.citation_count is None:
        why = "the matched paper has no citation count"
    elif rate is None:
        why = "the matched paper has no publication date"
    elif baseline is None:
        why = "no paper of the topic's pool has a citation count (no field baseline)"
    elif baseline <= 0:
        why = f"no paper of the topic's pool ({key}) is cited yet (field baseline 0)"
    impact = None if why is not None else float(rate) / float(baseline)  # type: ignore[arg-type]
    return {"impact": impact, "citations": paper.citation_count, "cites_per_year": rate, "field": name,
            "baseline": baseline, "baseline_field": key, "venue_tier": venue_tier(paper),
            "as_of": as_of.isoformat(), "why": why}


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (ties get average ranks: Pearson's r of the ranks), None for
    fewer than 3 pairs or a constant variable."""
    from scipy.stats import rankdata

    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.size < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    ra, rb = rankdata(a), rankdata(b)
    return float(np.corrcoef(ra, rb)[0, 1])


def spearman_check(rows: Sequence[tuple[str, float, float]], *, n_resamples: int = 2000,
                   confidence: float = 0.95, seed: int = 0) -> dict[str, Any]:
    """Spearman's rho between judge scores and realised impact, with a topic bootstrap interval.

    Args:
        rows: ``(topic id, judge score, impact)`` per idea with both values.
        n_resamples, confidence, seed: the percentile bootstrap (topics resampled with
            replacement, all ideas of a drawn topic kept; resamples where rho is undefined are
            dropped and counted).

    Returns:
        ``{"rho", "ci", "n_ideas", "n_topics", "resamples_undefined", "why"}``; ``rho`` None with
        ``why`` when it is undefined (fewer than 3 ideas, or a constant judge score or impact);
        ``ci`` None for fewer than 2 topics.
    """
    n_ideas = len(rows)
    topics = sorted({t for t, _, _ in rows})
    rho = spearman([r[1] for r in rows], [r[2] for r in rows])
    out: dict[str, Any] = {"rho": rho, "ci": None, "n_ideas": n_ideas, "n_topics": len(topics),
                           "resamples_undefined": 0, "why": None}
    if rho is None:
        judged = {r[1] for r in rows}
        out["why"] = ("fewer than 3 ideas with both a judge score and an impact" if n_ideas < 3
                      else "every idea has the same realised impact" if len({r[2] for r in rows}) == 1
                      else "the judge gave every idea the same score" if len(judged) == 1 else "undefined")
        return out
    if len(topics) < 2:
        return out
    by_topic = {t: [(s, i) for tt, s, i in rows if tt == t] for t in topics}
    rng = np.random.default_rng(seed)
    values: list[float] = []
    for _ in range(n_resamples):
        drawn = [by_topic[topics[j]] for j in rng.integers(len(topics), size=len(topics))]
        pairs = [p for group in drawn for p in group]
        value = spearman([p[0] for p in pairs], [p[1] for p in pairs])
        if value is None:
            out["resamples_undefined"] += 1
        else:
            values.append(value)
    if len(values) >= 2:
        low, high = np.quantile(values, [(1 - confidence) / 2, (1 + confidence) / 2])
        out["ci"] = (float(low), float(high))
    return out
