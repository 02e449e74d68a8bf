"""ResearchBench results: per-instance outcomes aggregated overall, per discipline and on the
"strict" subset (papers published after ``published_after``, for contamination analysis).

Every mean comes with its count, the 95% interval over papers its headline metric reports (the
registered spec's interval under the headline rule, :func:`ideaharness.metrics.aggregate.spec_interval`:
the bounded-mean score interval, none below 5 papers, ``<key>_ci_why`` saying so) and the parse
failures behind it; a parse failure is never averaged in as a score.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from ideaharness.benchmarks.researchbench.config import discipline_of
from ideaharness.metrics.aggregate import ci_cell, spec_interval
from ideaharness.metrics.matched_score import mean_excluding_zeros, mean_including_zeros
from ideaharness.metrics.pairwise_ranking import (
    PairResult,
    consistency_counts,
    directional_accuracy,
    rank_score,
    rank_score_per_order_mean,
    two_order_outcome,
)
from ideaharness.metrics.retrieval import LEVELS
from ideaharness.metrics.stats import bootstrap_settings
from ideaharness.metrics.surface import surface_report, surface_rows
from ideaharness.report.html import Table
from ideaharness.schema import Instance


def _ci(metric: str, key: str, values: Any, seed: int, n_boot: int) -> dict[str, Any]:
    """``{key: ci, key_why: reason}``: the interval of ``metric``'s registered spec over ``values``
    (one per paper; for a pooled ratio an ``(n, 2)`` table of value and weight) under the headline
    rule, the same interval the run's headline gives the same papers."""
    from ideaharness.runner.registry import metrics

    ci, why = spec_interval(metrics()[metric], values, n_resamples=n_boot, seed=seed)
    return {key: ci, f"{key}_why": why}


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def groups(instances: Sequence[Instance], published_after: Any) -> tuple[dict[str, list[str]], list[str]]:
    """Group name -> instance ids: ``overall``, ``discipline: X`` and (if set) ``strict``."""
    out: dict[str, list[str]] = {"overall": [i.id for i in instances]}
    for inst in instances:
        out.setdefault(f"discipline: {discipline_of(inst)}", []).append(inst.id)
    notes = []
    if published_after is not None:
        dated = [i for i in instances if i.target.publication_date is not None]
        out[f"strict (published after {published_after})"] = [
            i.id for i in dated if i.target.publication_date and i.target.publication_date > published_after
        ]
        if len(dated) < len(instances):
            notes.append(
                f"strict subset: {len(instances) - len(dated)} paper(s) without a publication date excluded"
            )
    return out, notes


def _retrieval_group(per: dict[str, dict[str, Any]], ids: list[str], seed: int, n_boot: int) -> list[dict]:
    rows = []
    done = [per[i] for i in ids if i in per]
    max_round = max((len(r["rounds"]) for r in done), default=0)
    for rnd in range(1, max_round + 1):
        entries = [r["rounds"][rnd - 1] for r in done if len(r["rounds"]) >= rnd]
        hits = [e["hit_ratio"] for e in entries if e["hit_ratio"] is not None]
        top1 = [e["hit_ratio_top1"] for e in entries if e["hit_ratio_top1"] is not None]
        nsr = {lvl: [e["negative_selection_ratio"][lvl] for e in entries
                     if e["negative_selection_ratio"][lvl] is not None] for lvl in LEVELS}
        rows.append({
            "round": rnd,
            "nominal_retention": entries[0]["nominal_retention"],
            "n": len(hits),
            "hit_ratio": _mean(hits),
            **_ci("researchbench.hit_ratio", "hit_ratio_ci", hits, seed, n_boot),
            "hit_ratio_top1": _mean(top1),
            **_ci("researchbench.hit_ratio_top1", "hit_ratio_top1_ci", top1, seed, n_boot),
            "negative_selection_ratio": {lvl: _mean(values) for lvl, values in nsr.items()},
            "negative_selection_ratio_ci": {
                lvl: _ci("researchbench.negative_selection_ratio", "ci", values, seed, n_boot)["ci"]
                for lvl, values in nsr.items()
            },
            "negative_selection_ratio_ci_why": {
                lvl: _ci("researchbench.negative_selection_ratio", "ci", values, seed, n_boot)["ci_why"]
                for lvl, values in nsr.items()
            },
            "gold_undetermined": sum(e.get("gold_undetermined", 0) for e in entries),
            "windows_called": sum(e["windows_called"] for e in entries),
            "parse_failures": sum(e["parse_failures"] for e in entries),
            "misses": sum(e["misses"] for e in entries),
        })
    return rows


def _composition_group(per: dict[str, dict[str, Any]], ids: list[str], methods: list[str], seed: int,
                       n_boot: int) -> dict[str, Any]:
    out = {}
    for method in methods:
        entries = {i: per[i][method] for i in ids if i in per and method in per[i]}
        scores = [e["score"] for e in entries.values()]
        parsed = [s for s in scores if s is not None]
        out[method] = {
            "n_papers": len(entries),
            "hypotheses": sum(e["hypothesis"] is not None for e in entries.values()),
            "scored": len(parsed),
            "mean_matched_score": mean_including_zeros(scores),
            **_ci("researchbench.matched_score", "mean_matched_score_ci", parsed, seed, n_boot),
            "mean_excluding_zeros_parity": mean_excluding_zeros(
                {i: [e["score"]] for i, e in entries.items()}
            ),
            "generation_failures": sum(e["hypothesis"] is None and e["done"] for e in entries.values()),
            "generation_parse_failures": sum(e["generation_parse_failures"] for e in entries.values()),
            "score_parse_failures": sum(e["score_parse_ok"] is False for e in entries.values()),
            "not_done": sum(not e["done"] for e in entries.values()),
        }
    return out


def _ranking_group(per: dict[str, dict[str, Any]], ids: list[str], seed: int, n_boot: int) -> dict[str, Any]:
    tasks = [per[i] for i in ids if i in per and "pairs" in per[i]]
    all_pairs: list[PairResult] = []
    scores: list[float] = []
    paper_scores: list[float] = []
    gold_chosen: list[int] = []  # per task, for the interval of the pooled directional accuracy
    parsed: list[int] = []
    outcomes = {"neither": 0, "one": 0, "both": 0, "undetermined": 0}
    for task in tasks:
        pairs = [PairResult.model_validate(p) for p in task["pairs"]]
        all_pairs.extend(pairs)
        rs = rank_score(pairs, task["orders"])
        if rs is not None:
            scores.append(rs[2])
        paper = rank_score_per_order_mean(pairs, task["orders"])
        if paper is not None:
            paper_scores.append(paper)
        choices = [c for p in pairs for c in p.choices.values() if c is not None]
        gold_chosen.append(sum(c == "gold" for c in choices))
        parsed.append(len(choices))
        if len(task["orders"]) == 2 and pairs:
            outcomes[two_order_outcome(pairs)] += 1
    return {
        "n_tasks": len(tasks),
        "n_pairs": len(all_pairs),
        "directional_accuracy": directional_accuracy(all_pairs),
        **_ci("researchbench.directional_accuracy", "directional_accuracy_ci",
              np.asarray([[g / p if p else np.nan, float(p or 1)]
                          for g, p in zip(gold_chosen, parsed, strict=True)], dtype=float).reshape(-1, 2),
              seed, n_boot),
        "accuracy_gold_first": directional_accuracy(all_pairs, "gold_first"),
        "accuracy_gold_second": directional_accuracy(all_pairs, "gold_second"),
        "pair_consistency": consistency_counts(all_pairs),
        "task_outcomes": outcomes,
        "rank_score": _mean(scores),
        **_ci("researchbench.rank_score", "rank_score_ci", scores, seed, n_boot),
        "rank_score_n": len(scores),
        "rank_score_paper": _mean(paper_scores),
        **_ci("researchbench.rank_score_paper", "rank_score_paper_ci", paper_scores, seed, n_boot),
        "pair_parse_failures": sum(t["pair_parse_failures"] for t in tasks),
        "negative_generation_failures": sum(t["negative_generation_failures"] for t in tasks),
        "gold_rewrite_failures": sum(1 for i in ids
                                     if per.get(i, {}).get("reference_text") == "rewrite failed"),
    }


def ranking_blinding(bench: Any, instances: Sequence[Instance]) -> dict[str, Any]:
    """What the ranking judge saw of the gold hypotheses, and the surface-feature check of the shown
    gold texts (``surface``) and of the published ones (``surface_published``) against the
    negatives; ``rewrite``: gold rewrites that parsed / failed."""
    texts = [bench.blinding[i.id] for i in instances if i.id in bench.blinding]
    negatives = [h for t in texts for h in t["negatives"]]
    modes = Counter(bench.ranking[i.id].get("reference_text") for i in instances
                    if i.id in bench.ranking and bench.ranking[i.id].get("reference_text"))
    return {
        "reference_text": "published" if bench.config.parity else "rewritten",
        "papers": dict(modes),
        "surface": surface_report([t["shown"] for t in texts if t["shown"] is not None], negatives),
        "surface_published": surface_report([t["original"] for t in texts], negatives),
    }


def length_notes(ranking: dict[str, dict[str, Any]]) -> list[str]:
    """What the length-matched gold rewrite (:func:`~ideaharness.benchmarks._blinding.matched_form`)
    could not do: golds asked beyond a faithful rewrite's length, and failed rewrites (final; the
    paper is not ranked) with the first reason."""
    out = []
    stretched = Counter(v["length_stretched"] for v in ranking.values() if v.get("length_stretched"))
    for way, count in sorted(stretched.items()):
        out.append(f"ranking: the gold hypothesis of {count} paper(s) was asked {way} than a faithful "
                   "rewrite of it spans (0.5-1.5 times its words), to match the negatives' length; one "
                   "that misses the negatives' length band is dropped, never shown at its own length")
    failed = [(i, v) for i, v in ranking.items() if v.get("reference_text") == "rewrite failed"]
    if failed:
        first = "; ".join(f"{i}: {v.get('rewrite_error') or 'the reply did not parse'}"
                          for i, v in failed[:3])
        out.append(f"ranking: the gold rewrite of {len(failed)} paper(s) failed its check (final, not "
                   f"re-asked by a later run; a new --out asks again): those papers are not ranked ({first})")
    return out


def aggregate(bench: Any, instances: Sequence[Instance]) -> dict[str, Any]:
    """Results of a :class:`~ideaharness.benchmarks.researchbench.run.ResearchBench` run."""
    config = bench.config
    grouped, notes = groups(instances, config.published_after)
    seed, n_boot = config.seed, config.bootstrap_resamples
    results: dict[str, Any] = {
        "benchmark": "researchbench",
        "benchmark_version": config.benchmark_version,
        "bootstrap": bootstrap_settings(n_boot, seed),
        "tasks": config.system_tasks(),
        "n_instances": len(instances),
        "groups": {name: len(ids) for name, ids in grouped.items()},
        "notes": notes,
    }
    tasks = config.system_tasks()  # with a system generator, no retrieval
    if "retrieval" in tasks:
        results["retrieval"] = {
            name: _retrieval_group(bench.retrieval, ids, seed, n_boot) for name, ids in grouped.items()
        }
        by_kind: dict[str, list[str]] = {}
        for pool in bench.pools.values():
            for n in pool.notes:
                if not n.startswith("level 1"):
                    by_kind.setdefault(re.sub(r"\d+", "N", n), []).append(n)
        for _, found in sorted(by_kind.items()):
            variants = len(set(found))
            example = found[0] if variants == 1 else f"{found[0]} (first of {variants} variants)"
            notes.append(f"pools ({len(found)} of {len(bench.pools)}): {example}")
        incomplete = [i for i, r in bench.retrieval.items() if not r["complete"]]
        if incomplete:
            notes.append(f"retrieval: {len(incomplete)} paper(s) incomplete (a model call failed); re-run")
    if "composition" in tasks:
        results["composition"] = {
            name: _composition_group(bench.composition, ids, bench.methods_run(), seed, n_boot)
            for name, ids in grouped.items()
        }
        skipped = sum("skipped" in v for v in bench.composition.values())
        if skipped:
            notes.append(f"composition: {skipped} paper(s) skipped (no ground-truth hypothesis)")
    if "ranking" in tasks:
        results["ranking"] = {
            name: _ranking_group(bench.ranking, ids, seed, n_boot) for name, ids in grouped.items()
        }
        reasons = Counter(v["skipped"] for v in bench.ranking.values()  # failed rewrites: length_notes
                          if "skipped" in v and v.get("reference_text") != "rewrite failed")
        for reason, count in sorted(reasons.items()):
            notes.append(f"ranking: {count} paper(s) skipped ({reason})")
        results["ranking_blinding"] = ranking_blinding(bench, instances)
        notes += length_notes(bench.ranking)
        for name in results["ranking_blinding"]["surface"]["separating"]:
            notes.append(f"ranking: the surface feature {name!r} alone tells the gold hypothesis from the "
                         "negatives (separation >= 0.75): the comparison is not blind")
    results["per_instance"] = {
        inst.id: {
            "discipline": discipline_of(inst),
            "retrieval": bench.retrieval.get(inst.id),
            "composition": bench.composition.get(inst.id),
            "ranking": bench.ranking.get(inst.id),
        }
        for inst in instances
    }
    return results


def results_tables(results: dict[str, Any]) -> list[Table]:
    """Tables for the console and the HTML report, one per task."""
    tables = []
    if "retrieval" in results:
        rows = []
        for name, rounds in results["retrieval"].items():
            for r in rounds:
                nsr = r["negative_selection_ratio"]
                rows.append([
                    name, r["round"], f"{100 * r['nominal_retention']:.0f}%", r["n"], r["hit_ratio"],
                    ci_cell(r["hit_ratio_ci"], r.get("hit_ratio_ci_why")), r["hit_ratio_top1"],
                    nsr["negative_t1"], nsr["negative_t2"],
                    nsr["negative_t3"], f"{r['parse_failures']}/{r['windows_called']}", r["misses"],
                ])
        tables.append(Table(
            title="Inspiration retrieval",
            columns=["group", "round", "retained", "papers", "hit ratio", "95% CI", "top-1 hit (parity)",
                     "NSR L1", "NSR L2", "NSR L3", "parse fail./windows", "misses"],
            rows=rows,
            note="Hit ratio = share of gold inspirations kept after the round (retained = nominal share of "
                 "the pool kept); NSR Lk = share of the level-k negatives kept (lower is better); misses = "
                 "reply titles matching no candidate shown. A window whose reply matched no candidate "
                 "(parse failure) keeps nothing, and its candidates are left out of the ratios (neither hits "
                 "nor misses); a paper whose gold inspirations are all undetermined has no hit ratio.",
        ))
        tables.append(Table(
            title="Inspiration retrieval: 95% intervals",
            columns=["group", "round", "hit ratio", "top-1 hit (parity)", "NSR L1", "NSR L2", "NSR L3"],
            rows=[[name, r["round"], ci_cell(r["hit_ratio_ci"], r.get("hit_ratio_ci_why")),
                   ci_cell(r.get("hit_ratio_top1_ci"), r.get("hit_ratio_top1_ci_why")),
                   *[ci_cell((r.get("negative_selection_ratio_ci") or {}).get(lvl),
                             (r.get("negative_selection_ratio_ci_why") or {}).get(lvl)) for lvl in LEVELS]]
                  for name, rounds in results["retrieval"].items() for r in rounds],
            note="The headline's intervals over papers (bounded-mean score interval; none below 5 papers, "
                 "the reason in its cell; docs/statistics.md).",
        ))
    if "composition" in results:
        rows = []
        for name, methods in results["composition"].items():
            for method, m in methods.items():
                rows.append([
                    name, method, m["n_papers"], m["hypotheses"], m["scored"], m["mean_matched_score"],
                    ci_cell(m["mean_matched_score_ci"], m.get("mean_matched_score_ci_why")),
                    m["mean_excluding_zeros_parity"], m["generation_failures"],
                    m["score_parse_failures"], m["not_done"],
                ])
        tables.append(Table(
            title="Hypothesis composition (matched score 0-5)",
            columns=["group", "method", "papers", "hyps", "scored", "mean", "95% CI", "mean excl. 0 (parity)",
                     "gen. fail.", "score parse fail.", "not done"],
            rows=rows,
            note="Mean matched score includes zeros; parse failures are excluded and counted. The "
                 "published figure (parity) drops zero scores. gen. fail. = no hypothesis parsed.",
        ))
    if "ranking" in results:
        rows = []
        for name, g in results["ranking"].items():
            pc, to = g["pair_consistency"], g["task_outcomes"]
            rows.append([
                name, g["n_tasks"], g["n_pairs"], g["directional_accuracy"],
                ci_cell(g.get("directional_accuracy_ci"), g.get("directional_accuracy_ci_why")),
                g["accuracy_gold_first"], g["accuracy_gold_second"],
                f"{pc['both_gold']}/{pc['both_negative']}/{pc['disagree']}",
                pc["incomplete"], f"{to['neither']}/{to['one']}/{to['both']}/{to['undetermined']}",
                g["rank_score"], ci_cell(g["rank_score_ci"], g.get("rank_score_ci_why")),
                g.get("rank_score_paper"),
                ci_cell(g.get("rank_score_paper_ci"), g.get("rank_score_paper_ci_why")),
                g["pair_parse_failures"] + g["gold_rewrite_failures"],
            ])
        tables.append(Table(
            title="Hypothesis ranking (gold vs negatives, both orders)",
            columns=["group", "tasks", "pairs", "accuracy", "95% CI", "acc. gold 1st", "acc. gold 2nd",
                     "pairs G/N/disagree", "pairs incompl.", "tasks 0/1/2/? orders", "rank score", "95% CI",
                     "rank score (paper)", "95% CI", "parse fail."],
            rows=rows,
            note="Accuracy = share of parsed judgments choosing gold (all orders / gold shown first / "
                 "second). Pairs G/N/disagree: both orders chose gold / the negative / they disagree. "
                 "Tasks 0/1/2/?: in how many orders gold beat every negative (? = undetermined by a "
                 "parse failure). Rank score = Rank/(k+1), Rank = 1 + pairs gold wins in both orders; "
                 "rank score (paper) = Rank/(k+1) per order, averaged over the orders, as the paper "
                 "reports it (a self-contradicting pair counts as a win in one order). Intervals: "
                 "the headline's over papers (none below 5 papers, the reason in its cell). "
                 "Unparsable replies are never wins; parse fail. counts them and the gold rewrites that "
                 "failed (those papers are not ranked).",
        ))
    if "ranking_blinding" in results:
        blind = results["ranking_blinding"]
        before = blind["surface_published"] if blind["reference_text"] == "rewritten" else None
        tables.append(Table(
            title="Blinding check: gold hypothesis vs negatives in the ranking",
            columns=["", "surface feature", "gold", "negatives", "separation", "separation (published text)"],
            rows=surface_rows("ranking", blind["surface"], before),
            note="Share of texts with the feature (words: mean count) and how well the feature alone tells "
                 "the gold hypothesis from the negatives (balanced accuracy, 0.5 = not at all, 1 = always). "
                 "The judge sees the gold rewritten into the negatives' form (parity: the published text); "
                 "a paper whose gold could not be rewritten is not ranked.",
        ))
    return tables
