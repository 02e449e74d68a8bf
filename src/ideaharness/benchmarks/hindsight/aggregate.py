"""From a HindSight run's records to its results: each idea's match and impact, the counts, the
leakage block and the HindSight check.

Decision rules (every one counted in ``counts``):

* a candidate pair (idea, future paper) is a **match** when every order it was asked in parsed and
  said "match" (default: both orders); a parsed "no" in any order rejects it (a pair judged
  differently in the two orders is counted as ``order_inconsistent_pairs``); a pair with no parsed
  "no" and an unparsed or missing order is **undecided**: a parse failure is never a match;
* an idea is **matched** when one of its judged candidates is a match (its best match: the
  matched candidate of highest embedding similarity), **unmatched** when every judged candidate
  was rejected or none reached ``min_similarity``, else **undecided** (unscored, counted);
* its **impact-weighted score** is the best match's impact (:mod:`.impact`) when matched, 0 when
  unmatched, and unscored when undecided or when the matched paper has no citation count
  (``matched_without_citations``, counted, never 0).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ideaharness.benchmarks.hindsight.impact import field_baselines, normalised_impact, spearman_check
from ideaharness.benchmarks.hindsight.parsers import REVIEW_DIMENSIONS
from ideaharness.benchmarks.hindsight.reliability import idea_id
from ideaharness.benchmarks.hindsight.search import window_counts
from ideaharness.benchmarks.hindsight.topics import Topic, pool_ends_early, window_place
from ideaharness.cutoff import verdict
from ideaharness.schema import Paper

if TYPE_CHECKING:
    from ideaharness.benchmarks.hindsight.run import Hindsight

STATUSES = ("matched", "unmatched", "undecided", "no idea", "no candidates")
"""An idea's status: ``no idea`` (its generation failed or did not parse), ``no candidates`` (its
candidate search was refused: a skipped unit, the run is partial)."""


def pair_verdict(verdicts: Sequence[bool | None]) -> str:
    """``match`` / ``no`` / ``undecided`` of one pair from its orders' verdicts (None: not parsed
    or not asked), by the rule of the module docstring."""
    if any(v is False for v in verdicts):
        return "no"
    if verdicts and all(v is True for v in verdicts):
        return "match"
    return "undecided"


def idea_result(bench: Hindsight, topic: Topic, k: int, baselines: dict[str, float],
                as_of: dt.date) -> dict[str, Any]:
    """Everything the run found for idea ``k`` of ``topic`` (see :func:`aggregate_run`)."""
    out: dict[str, Any] = {"topic": topic.id, "k": k, "idea_id": idea_id(topic.id, k), "title": None,
                           "idea": None, "status": "no idea", "matched": None, "best_match": None,
                           "impact": None, "impact_weighted": None, "impact_why": None, "review": None,
                           "pairs": {"match": 0, "no": 0, "undecided": 0}, "order_inconsistent": 0,
                           "candidates": 0, "judged": 0, "judged_outside_window": 0}
    idea = bench.idea(topic.id, k)
    review = bench.store.get("review", topic.id, str(k))
    if review is not None and review["judgment"]["parse_ok"]:
        out["review"] = dict(review["judgment"]["parsed"])
    if idea is None:
        return out
    out["title"], out["idea"] = idea.get("title"), idea["idea"]
    record = bench.candidates_record(topic.id, k)
    if record is None:
        out["status"] = "no candidates"
        return out
    out["candidates"] = int(record.get("n_candidates", 0))
    matched: list[dict[str, Any]] = []
    cutoff, end = bench.window(topic)
    for n, cand in enumerate(bench.judged(record)):
        if window_place(Paper.model_validate(cand["paper"]), cutoff, end) != "in":
            out["judged_outside_window"] += 1  # never expected: the leakage block reports it
        verdicts = [bench.match_verdict(topic.id, k, n, order) for order in bench.orders(topic.id, k, n)]
        decision = pair_verdict(verdicts)
        out["pairs"][decision] += 1
        out["judged"] += 1
        if True in verdicts and False in verdicts:
            out["order_inconsistent"] += 1
        if decision == "match":
            matched.append(cand)
    if matched:
        best = max(matched, key=lambda c: (c["similarity"], c["paper"]["id"]))
        paper = Paper.model_validate(best["paper"])
        paper_as_of = dt.date.fromisoformat(best.get("as_of") or as_of.isoformat())
        info = normalised_impact(paper, paper_as_of, baselines, topic.field)
        out.update(status="matched", matched=True, impact=info["impact"], impact_why=info["why"],
                   impact_weighted=info["impact"])
        out["best_match"] = {"id": paper.id, "title": paper.title, "abstract": paper.abstract,
                             "publication_date": paper.publication_date.isoformat() if paper.publication_date
                             else None, "year": paper.year, "venue": paper.venue,
                             "similarity": best["similarity"], "sources": best.get("sources", []),
                             **{k_: info[k_] for k_ in ("citations", "cites_per_year", "field", "baseline",
                                                         "baseline_field", "venue_tier", "as_of")}}
    elif out["pairs"]["undecided"]:
        out.update(status="undecided")
    else:
        out.update(status="unmatched", matched=False, impact_weighted=0.0)
    return out


def aggregate_run(bench: Hindsight, topics: Sequence[Topic]) -> dict[str, Any]:
    """The benchmark's block of ``results.json``.

    Returns:
        ``{"system", "generator", "judge", "grounding", "horizon_months", "per_idea": [idea
        results], "per_topic": {topic: {"cutoff", "window_end", "ideas", "matched", "decided",
        "impact_sum", "impact_n", "review": {dim: [sum, n]}, "baselines"}}, "counts", "window" (works of
        the future-window accesses per source: in, before (on or before T), after, undated; and the
        two leak counts, 0 expected), "check"}``;
        ``check`` is the HindSight check per review dimension (:func:`.impact.spearman_check`).
    """
    cfg = bench.config
    per_idea: list[dict[str, Any]] = []
    per_topic: dict[str, dict[str, Any]] = {}
    window: dict[str, Counter[str]] = {}
    shown_after = empty_pools = open_windows = beyond_pool = 0
    accesses = bench.accesses()  # one pass over the records, not one per topic
    for topic in topics:
        cutoff, end = bench.window(topic)
        as_of = bench.as_of(topic)
        shown_after += sum(1 for p in bench.shown_literature(topic) if verdict(p, cutoff) != "before")
        for source, counts in window_counts(accesses.get(topic.id, []), cutoff, end).items():
            window.setdefault(source, Counter()).update(counts)
        pool = bench.pool(topic)
        baselines = field_baselines(pool, as_of, topic.field)
        empty_pools += not pool
        open_windows += end > as_of
        beyond_pool += pool_ends_early(topic, end)
        row: dict[str, Any] = {"cutoff": cutoff.isoformat(), "window_end": end.isoformat(), "ideas": 0,
                               "matched": 0, "decided": 0, "impact_sum": 0.0, "impact_n": 0,
                               "review": {d: [0.0, 0] for d in REVIEW_DIMENSIONS}, "baselines": baselines}
        for k in range(cfg.ideas_per_topic):
            result = idea_result(bench, topic, k, baselines, as_of)
            per_idea.append(result)
            row["ideas"] += result["status"] != "no idea"
            if result["matched"] is not None:
                row["decided"] += 1
                row["matched"] += int(result["matched"])
            if result["impact_weighted"] is not None:
                row["impact_sum"] += result["impact_weighted"]
                row["impact_n"] += 1
            for dim in REVIEW_DIMENSIONS:
                if result["review"] is not None:
                    row["review"][dim][0] += result["review"][dim]
                    row["review"][dim][1] += 1
        per_topic[topic.id] = row
    statuses = Counter(i["status"] for i in per_idea)
    counts = {
        "topics": len(topics),
        "ideas_asked": len(per_idea),
        **{f"ideas_{s.replace(' ', '_')}": statuses.get(s, 0) for s in STATUSES},
        "matched_without_citations": sum(1 for i in per_idea if i["matched"] and (i["best_match"] or {}).get(
            "citations") is None),
        "matched_impact_unscored": sum(1 for i in per_idea if i["matched"] and i["impact"] is None),
        "pairs_judged": sum(i["judged"] for i in per_idea),
        "pairs_matched": sum(i["pairs"]["match"] for i in per_idea),
        "pairs_undecided": sum(i["pairs"]["undecided"] for i in per_idea),
        "order_inconsistent_pairs": sum(i["order_inconsistent"] for i in per_idea),
        "candidates_in_window": sum(c["in"] for c in window.values()),
        "excluded_before_cutoff": sum(c["before"] for c in window.values()),
        "excluded_after_window": sum(c["after"] for c in window.values()),
        "excluded_undated": sum(c["undated"] for c in window.values()),
        "reviews_parsed": sum(1 for i in per_idea if i["review"] is not None),
        "topics_with_empty_pool": empty_pools,
        "topics_with_open_window": open_windows,
        "topics_window_after_pool": beyond_pool,
    }
    settings = {"n_resamples": cfg.bootstrap_resamples, "seed": cfg.seed}
    both = [i for i in per_idea if i["review"] is not None and i["impact_weighted"] is not None]
    check = {dim: spearman_check([(i["topic"], float(i["review"][dim]), float(i["impact_weighted"]))
                                  for i in both], **settings)
             for dim in REVIEW_DIMENSIONS}
    return {
        "system": bench.system_label(),
        "generator": cfg.generator_role,
        "judge": cfg.judge,
        "grounding": cfg.grounding,
        "horizon_months": cfg.horizon_months,
        "per_idea": per_idea,
        "per_topic": per_topic,
        "counts": counts,
        "window": {"sources": {s: dict(c) for s, c in sorted(window.items())},
                   "literature_not_before_cutoff_shown": shown_after,
                   "candidates_outside_window_judged": sum(i["judged_outside_window"] for i in per_idea)},
        "check": check,
    }
