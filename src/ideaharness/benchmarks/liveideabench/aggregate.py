"""LiveIdeaBench aggregation: records -> per-keyword and model-level scores with bootstrap CIs.

Default (the notes' §5.11 recommendation): a judge score is averaged per idea, then per keyword,
then over keywords, so an idea that lost a judge to a parse failure is not down-weighted and the
interval resamples keywords, the independent unit. ``--parity``: the published means over
judgment rows (ideas x judges pooled, ``stats.ipynb``), after the published idea-length filter
(kept: 100 < characters < 2500 and words < 200) and the published fluency pool
(:func:`parity_fluency_pairs`).
Fluency: every judgment of a pair is worth :func:`~.metrics.fluency_value` of its grade; a pair's
value is the mean over its parsed judgments and is carried by both of its ideas.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ideaharness.benchmarks.liveideabench.config import BENCHMARK_VERSION
from ideaharness.benchmarks.liveideabench.metrics import (
    FLEXIBILITY_MIN_KEYWORDS,
    FLEXIBILITY_PERCENTILE,
    flexibility,
    fluency_value,
    leaderboard_average,
)
from ideaharness.benchmarks.liveideabench.parsers import DIMENSIONS
from ideaharness.metrics.stats import bootstrap_ci, bootstrap_settings
from ideaharness.runner import MetricValue

if TYPE_CHECKING:
    from ideaharness.benchmarks.liveideabench.keywords import Keyword
    from ideaharness.benchmarks.liveideabench.run import LiveIdeaBench

OVER_WORDS = 100


def kept_for_scores(idea: str) -> bool:
    """The published score-row filter (``stats.ipynb``): 100 < characters < 2500, words < 200."""
    return 100 < len(idea) < 2500 and len(idea.split()) < 200


def parity_fluency_pairs(pairs: Sequence[tuple[int, int]], ideas: Mapping[int, str | None],
                         parsed_critiques: Mapping[int, int]) -> list[bool]:
    """Which fluency pairs of one keyword the published code would judge (``--parity``).

    The published pool (``hash.py`` reads ``data/data.parquet``, which ``stats.ipynb`` wrote after
    its score filters) holds the ideas that pass :func:`kept_for_scores` (so an idea of exactly 100
    characters is out: ``> 100``; the ``>= 100`` of ``hash.py`` is moot after it) **and** kept at
    least one parsed critique row (rows whose scores did not parse were dropped). ``hash.py`` then
    judges one pair per (keyword, model): two of the keyword's distinct pool ideas, so a keyword
    whose two ideas are identical is skipped (``unique()`` leaves one: "Only one or no ideas"),
    as is a pair with an idea already judged (its ``existing_hashes``). Here: the first pair, in
    pair order, whose ideas are both in the pool, distinct and not judged before; no other pair.
    (``hash.py`` draws its two ideas by a seeded shuffle of the pool and also skips an idea
    judged under another keyword; with the published 2 ideas per keyword the pair is the same.)

    Args:
        pairs: the keyword's pairs of idea indices (:meth:`LiveIdeaBench.pairs`).
        ideas: idea index -> cleaned idea text, None when the idea never parsed.
        parsed_critiques: idea index -> number of its critiques that parsed.

    Returns:
        One flag per pair: True when the pair is judged.
    """
    def pooled(k: int) -> bool:
        text = ideas.get(k)
        return text is not None and kept_for_scores(text) and parsed_critiques.get(k, 0) > 0

    judged: set[str] = set()
    out: list[bool] = []
    for a, b in pairs:
        first, second = ideas.get(a), ideas.get(b)
        keep = (not any(out) and pooled(a) and pooled(b) and first != second
                and first not in judged and second not in judged)
        if keep and first is not None and second is not None:
            judged.update((first, second))
        out.append(keep)
    return out


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def keyword_data(bench: LiveIdeaBench, kw: Keyword) -> dict[str, Any]:
    """Everything recorded for one keyword: ideas (text, words, fallback, parsed critiques,
    critique parse failures), fluency pairs (values of the parsed judgments, failures, grades)."""
    cfg = bench.config
    ideas = []
    for k in range(cfg.ideas_per_keyword):
        idea = bench.idea(kw.id, k)
        first = bench.store.get("idea", kw.id, str(k))
        entry: dict[str, Any] = {"k": k, "idea": idea, "attempted": first is not None, "scores": [],
                                 "critique_failures": 0, "judges": []}
        if idea is not None:
            for judge in bench.critique_judges(kw.id, k):
                rec = bench.store.get("critique", kw.id, f"{k}/{judge}")
                if rec is None:
                    continue
                entry["judges"].append((judge, rec["judgment"]["parse_ok"], rec["judgment"]["parsed"]))
                if rec["judgment"]["parse_ok"]:
                    entry["scores"].append(rec["judgment"]["parsed"])
                else:
                    entry["critique_failures"] += 1
        ideas.append(entry)
    pairs = []
    for p, (a, b) in enumerate(bench.pairs()):
        values: list[float] = []
        grades: list[str] = []
        failures = 0
        by_judge: dict[str, dict[str, str]] = {}
        for judge, order in bench.fluency_design(kw.id, p):
            rec = bench.store.get("fluency", kw.id, f"{p}/{judge}/{order}")
            if rec is None:
                continue
            if rec["judgment"]["parse_ok"]:
                grade = rec["judgment"]["parsed"]
                grades.append(grade)
                values.append(fluency_value(grade, cfg.protocol))
                by_judge.setdefault(judge, {})[order] = grade
            else:
                failures += 1
        pairs.append({"ideas": (a, b), "values": values, "grades": grades, "failures": failures,
                      "order_disagreements": sum(1 for g in by_judge.values() if len(set(g.values())) > 1)})
    return {"ideas": ideas, "pairs": pairs}


def keyword_scores(data: dict[str, Any], protocol: str, parity: bool) -> tuple[dict[str, float | None],
                                                                              list[dict[str, float]]]:
    """Per-keyword dimension means and the judgment rows behind them.

    Returns:
        ``({dimension or "fluency": mean or None}, rows)``: rows are ``{dimension: score,
        "fluency": pair value (absent when the idea has none)}``, one per parsed critique.
    """
    dims = DIMENSIONS[protocol]
    texts = {e["k"]: e["idea"]["idea"] if e["idea"] else None for e in data["ideas"]}
    pooled = parity_fluency_pairs([p["ideas"] for p in data["pairs"]], texts,
                                  {e["k"]: len(e["scores"]) for e in data["ideas"]}) if parity else None
    pair_of: dict[int, float] = {}
    pair_values: list[float] = []
    for p, pair in enumerate(data["pairs"]):
        a, b = pair["ideas"]
        if pooled is not None and not pooled[p]:
            continue
        value = _mean(pair["values"])
        if value is not None:
            pair_of[a] = pair_of[b] = value
            pair_values.append(value)
    rows, per_idea = [], []
    for entry in data["ideas"]:
        if entry["idea"] is None or (parity and not kept_for_scores(entry["idea"]["idea"])):
            continue
        for s in entry["scores"]:
            rows.append({**s, **({"fluency": pair_of[entry["k"]]} if entry["k"] in pair_of else {})})
        if entry["scores"]:
            per_idea.append({d: _mean([s[d] for s in entry["scores"]]) for d in dims})
    means: dict[str, float | None]
    if parity:
        means = {d: _mean([r[d] for r in rows]) for d in dims}
        means["fluency"] = _mean([r["fluency"] for r in rows if "fluency" in r])
    else:
        means = {d: _mean([v for i in per_idea if (v := i[d]) is not None]) for d in dims}
        means["fluency"] = _mean(pair_values)
    return means, rows


def aggregate_run(bench: LiveIdeaBench, items: Sequence[Keyword]) -> dict[str, Any]:
    """Results of a run: counts, parse failures, per-judge means, per-keyword means, model-level
    scores (originality, feasibility, clarity (v2), fluency, flexibility, average) with percentile
    bootstrap 95% intervals over keywords (``--parity``: the values over rows, intervals over
    keywords), per-category means."""
    cfg = bench.config
    dims = [*DIMENSIONS[cfg.protocol], "fluency"]
    boot: dict[str, Any] = {"n_resamples": cfg.bootstrap_resamples, "seed": cfg.seed}
    per_keyword: dict[str, Any] = {}
    all_rows: list[dict[str, float]] = []
    counts: Counter[str] = Counter()
    grades: Counter[str] = Counter()
    per_judge: dict[str, dict[str, Any]] = {}
    for kw in items:
        data = keyword_data(bench, kw)
        means, rows = keyword_scores(data, cfg.protocol, cfg.parity)
        all_rows.extend(rows)
        flex_dims = [v for d in dims if (v := means[d]) is not None]
        per_keyword[kw.id] = {"category": kw.category, **means,
                              "mean": _mean(flex_dims) if len(flex_dims) == len(dims) else None}
        for e in data["ideas"]:
            counts["ideas_attempted"] += e["attempted"]
            counts["ideas"] += e["idea"] is not None
            counts["idea_parse_failures"] += e["attempted"] and e["idea"] is None
            counts["fallback_used"] += bool(e["idea"] and e["idea"]["fallback"])
            counts["over_100_words"] += bool(e["idea"] and e["idea"]["words"] > OVER_WORDS)
            counts["excluded_by_length"] += bool(cfg.parity and e["idea"]
                                                 and not kept_for_scores(e["idea"]["idea"]))
            counts["critiques"] += len(e["judges"])
            counts["critique_parse_failures"] += e["critique_failures"]
            for judge, ok, parsed in e["judges"]:
                j = per_judge.setdefault(judge, {"judgments": 0, "parse_failures": 0, "scores": []})
                j["judgments"] += 1
                j["parse_failures"] += not ok
                if ok:
                    j["scores"].append(parsed)
        if cfg.parity:
            present = {e["k"] for e in data["ideas"] if e["idea"] is not None}
            counts["fluency_pairs_outside_pool"] += sum(
                1 for keep, (a, b) in zip(bench.fluency_pairs(kw.id), bench.pairs(), strict=True)
                if not keep and a in present and b in present)
        for p in data["pairs"]:
            counts["fluency_judgments"] += len(p["values"]) + p["failures"]
            counts["fluency_parse_failures"] += p["failures"]
            counts["fluency_order_disagreements"] += p["order_disagreements"]
            grades.update(p["grades"])
    scores: dict[str, Any] = {}
    for d in dims:
        values = [b[d] for b in per_keyword.values() if b[d] is not None]
        if cfg.parity:
            pooled = [r[d] for r in all_rows if d in r]
            value, n = _mean(pooled), len(pooled)
        else:
            value, n = _mean(values), len(values)
        scores[d] = {"value": value, "ci95": bootstrap_ci(values, **boot), "n": n}
    complete = np.array([[b[d] for d in dims] for b in per_keyword.values() if b["mean"] is not None])
    keyword_means = complete.mean(axis=1) if complete.size else np.array([])
    flex = flexibility(keyword_means.tolist())

    def flexibility_of(sample: np.ndarray, axis: int = -1) -> Any:  # vectorised for the bootstrap
        return np.percentile(sample, FLEXIBILITY_PERCENTILE, axis=axis)

    scores["flexibility"] = {"value": flex, "n": int(keyword_means.size), "ci95": bootstrap_ci(
        keyword_means.tolist(), flexibility_of, **boot) if flex is not None else None}
    if flex is None:  # the percentile needs enough keywords (metrics.flexibility)
        scores["flexibility"]["why"] = (f"needs at least {FLEXIBILITY_MIN_KEYWORDS} keywords with every "
                                        f"dimension scored, has {keyword_means.size}")
    average = leaderboard_average([scores[d]["value"] for d in dims] + [scores["flexibility"]["value"]])

    def average_of(index: np.ndarray) -> float:
        sample = complete[index.astype(int)]
        flex = np.percentile(sample.mean(axis=1), FLEXIBILITY_PERCENTILE)
        return float(np.mean([*sample.mean(axis=0), flex]))

    scores["average"] = {"value": average, "n": int(keyword_means.size), "ci95": bootstrap_ci(
        list(range(len(complete))), average_of, **boot) if average is not None else None}
    if average is None:
        gaps = [d for d in [*dims, "flexibility"] if scores[d]["value"] is None]
        scores["average"]["why"] = f"the mean of every leaderboard column; missing: {', '.join(gaps)}"
    categories: dict[str, list[float]] = {}
    for b in per_keyword.values():
        if b["mean"] is not None:
            categories.setdefault(b["category"] or "(custom keyword)", []).append(b["mean"])
    return {
        "benchmark": "liveideabench", "benchmark_version": BENCHMARK_VERSION,
        "generator": cfg.generator_label(), "judges": cfg.eligible_judges(),
        "fluency_judges": cfg.fluency_panel(),
        "judge_exclusion": cfg.judge_exclusion(),
        "protocol": cfg.protocol, "parity": cfg.parity, "seed": cfg.seed,
        "bootstrap": {**bootstrap_settings(cfg.bootstrap_resamples, cfg.seed), "resampled_unit": "keyword"},
        "keywords": len(items), "counts": dict(counts), "fluency_grades": dict(sorted(grades.items())),
        "scores": scores,
        "per_judge": {j: {"judgments": v["judgments"], "parse_failures": v["parse_failures"],
                          **{d: _mean([s[d] for s in v["scores"]]) for d in DIMENSIONS[cfg.protocol]}}
                      for j, v in per_judge.items()},
        "per_category": {c: {"keywords": len(v), "mean": _mean(v)} for c, v in sorted(categories.items())},
        "per_keyword": per_keyword,
    }


def parity_headline(results: dict[str, Any]) -> list[MetricValue]:
    """``--parity``: the dimensions and the average as pooled over (idea x judge) rows (the
    published ``stats.ipynb``), not aggregates of keyword scores; flexibility still comes from
    the keyword scores."""
    out = []
    for name in [*DIMENSIONS[results["protocol"]], "fluency", "average"]:
        s = results["scores"][name]
        out.append(MetricValue(metric=f"liveideabench.{name}", value=s["value"], ci=s["ci95"], n=s["n"],
                               why=s.get("why")))
    return out
