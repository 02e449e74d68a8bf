"""HindSight tables, figure, notes and examples for the console and the report."""

from __future__ import annotations

from typing import Any

from ideaharness.benchmarks.hindsight.parsers import REVIEW_DIMENSIONS
from ideaharness.tables import Section, Table

IDEA_ROWS = 50
"""Ideas listed in the per-idea table (the run's results.json holds them all)."""
_LABELS = {"hindsight.match_rate": "match rate", "hindsight.impact_score": "impact-weighted score",
           "hindsight.judge_novelty": "LLM judge: novelty (1-10)",
           "hindsight.judge_quality": "LLM judge: quality (1-10)"}


def _metric_rows(results: dict[str, Any]) -> list[list[Any]]:
    metrics = {m["metric"]: m for m in results.get("metrics") or [] if not m.get("group")}
    rows = []
    for name, label in _LABELS.items():
        m = metrics.get(name) or {}
        value = m.get("value")
        ci = m.get("ci")
        rows.append([label, None if value is None else float(value), tuple(ci) if ci else m.get("ci_why"),
                     m.get("n"), m.get("why")])
    return rows


def results_tables(results: dict[str, Any]) -> list[Table]:
    """The scores (value, 95% interval, n topics), the HindSight check, counts, leakage and ideas."""
    c = results.get("counts") or {}
    tables = [Table(
        title=f"HindSight scores of {results.get('system')} ({results.get('grounding')} grounding, "
              f"{results.get('horizon_months')}-month window)",
        columns=["metric", "value", "95% CI", "n topics", "why not computed"], rows=_metric_rows(results),
        note=f"{c.get('ideas_asked', 0)} ideas on {c.get('topics', 0)} topics; each value pooled over ideas, "
             "the percentile bootstrap interval over topics; impact: citations per year / the field's median "
             "in the topic's pool (1.0 = a typical paper), 0 for an unmatched idea")]
    check_rows = []
    for dim in REVIEW_DIMENSIONS:
        block = (results.get("check") or {}).get(dim) or {}
        ci = block.get("ci")
        check_rows.append([f"judge {dim} vs impact", block.get("rho"), tuple(ci) if ci else None,
                           block.get("n_ideas"), block.get("n_topics"), block.get("why")])
    tables.append(Table(title="The HindSight check: LLM judge score vs realised impact",
                        columns=["Spearman rho of", "rho", "95% CI", "n ideas", "n topics",
                                 "why not computed"],
                        rows=check_rows,
                        note="one point per idea with a review and an impact (0 when unmatched); interval: "
                             "percentile bootstrap over topics. Reference: Jiang 2026 found rho = -0.29 "
                             "between realised impact and judged novelty"))
    tables.append(Table(title="Ideas, candidates and match judgments", columns=["quantity", "count"],
                        rows=[[k.replace("_", " "), v] for k, v in c.items()]))
    win = results.get("window") or {}
    rows = [[src, row.get("in"), row.get("before"), row.get("after"), row.get("undated")]
            for src, row in (win.get("sources") or {}).items()]
    tables.append(Table(title="The future window (T, T + horizon]: works each source returned",
                        columns=["source", "in the window", "on or before T (excluded)", "after the window "
                                 "(excluded)", "undated (excluded)"], rows=rows,
                        note=f"literature not before T that reached a prompt: "
                             f"{win.get('literature_not_before_cutoff_shown')}; judged candidates outside "
                             f"the window: {win.get('candidates_outside_window_judged')} (0 expected); the "
                             "run's leakage block checks the recorded prompts"))
    idea_rows = []
    for i in (results.get("per_idea") or [])[:IDEA_ROWS]:
        best = i.get("best_match") or {}
        review = i.get("review") or {}
        idea_rows.append([i["idea_id"], (i.get("title") or (i.get("idea") or "")[:60]) or None, i["status"],
                          best.get("title"), best.get("publication_date") or best.get("year"),
                          best.get("similarity"), best.get("citations"), i.get("impact"),
                          best.get("venue_tier"), review.get("novelty"), review.get("quality")])
    tables.append(Table(title="Ideas and the future paper that matched", columns=[
        "idea", "title", "status", "matched paper", "published", "similarity", "citations", "impact",
        "venue tier", "judge novelty", "judge quality"], rows=idea_rows,
        note=f"the first {IDEA_ROWS} ideas; results.json per_idea holds every one"))
    return tables


def scatter_figure(results: dict[str, Any]) -> Any:
    """Judge novelty (x, jittered by at most 0.15) vs realised impact-weighted score (y), one point
    per idea with both; matched ideas filled, unmatched ones hollow; rho and its interval in the title."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    points = [(i["review"]["novelty"], i["impact_weighted"], bool(i["matched"]))
              for i in results.get("per_idea") or []
              if i.get("review") and i.get("impact_weighted") is not None]
    fig, ax = plt.subplots(figsize=(5, 3.4))
    rng = np.random.default_rng(0)  # jitter only: the figure, not a result
    for matched, face, edge, name in ((True, "tab:blue", "tab:blue", "matched"),
                                      (False, "none", "tab:gray", "unmatched")):
        xs = [x for x, _, m in points if m is matched]
        ys = [y for _, y, m in points if m is matched]
        if xs:
            ax.scatter(np.asarray(xs, dtype=float) + rng.uniform(-0.15, 0.15, len(xs)), ys, s=18,
                       facecolors=face, edgecolors=edge, label=name)
    block = (results.get("check") or {}).get("novelty") or {}
    rho, ci = block.get("rho"), block.get("ci")
    if rho is not None:
        title = (f"Spearman rho = {rho:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
                 + f", n = {block.get('n_ideas')} ideas")
    else:
        title = f"rho not computed ({block.get('why')})"
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("LLM judge novelty (1-10)")
    ax.set_ylabel("realised impact (normalised)")
    ax.set_xlim(0.5, 10.5)
    if points:
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def result_notes(results: dict[str, Any]) -> list[str]:
    """Exclusions, undecided ideas, matched papers without citation counts, skipped searches."""
    c = results.get("counts") or {}
    notes = []
    if c.get("excluded_before_cutoff"):
        notes.append(f"{c['excluded_before_cutoff']} candidate paper(s) dated on or before the cutoff were "
                     "excluded (never judged, never a match)")
    if c.get("excluded_after_window") or c.get("excluded_undated"):
        notes.append(f"{c.get('excluded_after_window', 0)} candidate(s) published after the window and "
                     f"{c.get('excluded_undated', 0)} undated candidate(s) were excluded")
    if c.get("ideas_undecided"):
        notes.append(f"{c['ideas_undecided']} idea(s) undecided: a match judgment did not parse (never a "
                     "match); the same command re-asks it")
    if c.get("matched_without_citations"):
        notes.append(f"{c['matched_without_citations']} matched idea(s) whose paper has no citation count: "
                     "matched, impact unscored (not 0)")
    others = int(c.get("matched_impact_unscored") or 0) - int(c.get("matched_without_citations") or 0)
    if others > 0:
        notes.append(f"{others} matched idea(s) without an impact for another reason (no date, or no cited "
                     "paper in the topic's pool): matched, impact unscored (not 0)")
    if c.get("ideas_no_candidates"):
        notes.append(f"{c['ideas_no_candidates']} idea(s) without candidates: a scholarly search was refused "
                     "(the run is partial; the same command searches again)")
    if c.get("topics_with_empty_pool"):
        notes.append(f"{c['topics_with_empty_pool']} topic(s) have no pool paper in the window: their ideas "
                     "can only be matched through --corpus or --search")
    if c.get("topics_with_open_window"):
        notes.append(f"the window of {c['topics_with_open_window']} topic(s) ends after the day their "
                     "citation counts are from (impact_as_of): papers of its last months are missing, so "
                     "match rates are lower bounds")
    if c.get("topics_window_after_pool"):
        notes.append(f"the window of {c['topics_window_after_pool']} topic(s) ends after the window their "
                     "pool was built for (window_end): their last months have no pool paper, so match rates "
                     "are lower bounds; rebuild the topics with a longer --horizon")
    if c.get("order_inconsistent_pairs"):
        notes.append(f"{c['order_inconsistent_pairs']} pair(s) judged a match in one order and not in the "
                     "other: not a match")
    return notes


def example_sections(results: dict[str, Any], limit: int = 6) -> list[Section]:
    """Each of the first matched ideas beside its matched future paper, then unmatched ones."""
    ideas = results.get("per_idea") or []
    chosen = [i for i in ideas if i["status"] == "matched"][:limit]
    chosen += [i for i in ideas if i["status"] != "matched" and i.get("idea")][: max(0, limit - len(chosen))]
    out = []
    for i in chosen:
        items = [("idea", (f"{i['title']}. " if i.get("title") else "") + i["idea"])]
        best = i.get("best_match")
        if best:
            cites = "citations unknown" if best.get("citations") is None else f"{best['citations']} citations"
            items.append(("matched future paper",
                          f"{best['title']} ({best.get('publication_date') or best.get('year')}, "
                          f"{best.get('venue') or 'venue unknown'}; {cites}, "
                          f"impact {'–' if i.get('impact') is None else format(i['impact'], '.2f')}; "
                          f"similarity {best['similarity']:.2f})\n{best.get('abstract') or ''}".strip()))
        else:
            items.append(("no match", i["status"]))
        if i.get("review"):
            items.append(("LLM judge", ", ".join(f"{d} {i['review'][d]}" for d in REVIEW_DIMENSIONS)))
        out.append(Section(title=f"{i['idea_id']}: {i['status']}", items=items))
    return out
