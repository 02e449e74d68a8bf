"""ResearchBench's form-only baselines (``ResearchBench.form_baselines``; issue 32, Build (b)).

Two judged steps have a gold answer:

* **hypothesis ranking** (``researchbench_rank_pair``): the gold hypothesis against a negative,
  both orders (§3.3). A judge that picks candidate 1 or 2 by form alone
  (:data:`~ideaharness.metrics.form_baseline.FORM_RULES` over the ``<candidate_1>`` and
  ``<candidate_2>`` texts of each recorded prompt: the shorter, the one with fewer words, the
  first shown, ...) is replayed on every recorded pair, and its choices are scored by
  :func:`~ideaharness.benchmarks.researchbench.scores.researchbench_scores` (directional accuracy,
  rank score, the paper's per-order rank score). Chance: 0.5 for directional accuracy; the rank
  scores have none given (a pair counts only when both orders agree);
* **inspiration screening** (``researchbench_screen_window``): the gold inspirations among the
  candidates of each window (§3.1, MOOSE-Chem). A screener that keeps the ``keep_size`` candidates
  a rule prefers (the candidate's text as the prompt shows it: title, then abstract) is replayed
  through the same rounds (:func:`simulate_screening`: the run's seeded shuffles and windows;
  later rounds screen what the rule kept), and scored as the run scores its screener (hit ratio
  and top-1 hit ratio per round). Chance of the hit ratio: the nominal retention
  ``(keep/window)^round``.

The matched score (a 0-5 rating of a hypothesis against the gold) has no answer that is right or
wrong: no baseline.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from ideaharness.benchmarks import _form
from ideaharness.benchmarks.researchbench.ranking import STEP_PAIR
from ideaharness.benchmarks.researchbench.scores import researchbench_scores
from ideaharness.benchmarks.researchbench.screening import STEP as STEP_SCREEN
from ideaharness.data.pools import CandidatePool, derive_seed
from ideaharness.metrics.form_baseline import FormRule, form_choice, form_pick, shown_items
from ideaharness.metrics.pairwise_ranking import choice_of
from ideaharness.metrics.retrieval import hit_ratio, hit_ratio_top1
from ideaharness.runs.scores import Record

RANKING_METRICS = ("researchbench.directional_accuracy", "researchbench.rank_score",
                   "researchbench.rank_score_paper")
SCREENING_METRICS = ("researchbench.hit_ratio", "researchbench.hit_ratio_top1")
GOLD_STEPS = {STEP_PAIR: RANKING_METRICS, STEP_SCREEN: SCREENING_METRICS}
NO_GOLD_STEPS = {"researchbench_matched_score": "a 0-5 rating of how well a hypothesis matches the gold "
                                                "one: no answer is right or wrong"}
MAX_ROUNDS = 10
"""The screening rounds' limit (:func:`~ideaharness.benchmarks.researchbench.screening.screen_pool`'s
default, which the run uses)."""


def _candidates(name: str) -> bool:
    return name in ("candidate_1", "candidate_2")


def ranking_results(records: Sequence[Record], results: dict[str, Any], prompts: _form.Prompts,
                    rule: FormRule) -> dict[str, Any]:
    """``results`` whose ranking pairs hold the choices ``rule`` makes on every recorded pair
    prompt (a pair order with no record or no kept prompt has no choice, as in the run)."""
    choices: dict[tuple[str, str], dict[str, str | None]] = {}
    for step, iid, key, data in records:
        if step != STEP_PAIR or "/" not in key:
            continue
        neg, order = key.rsplit("/", 1)
        texts = shown_items(_form.prompt_of(data, prompts), _candidates)
        selected = form_choice(rule, texts) + 1 if len(texts) == 2 else None
        choices.setdefault((iid, neg), {})[order] = choice_of(selected, order)  # type: ignore[arg-type]
    out = dict(results)
    per = copy.deepcopy(results.get("per_instance") or {})
    for iid, block in per.items():
        ranking = (block or {}).get("ranking") or {}
        if "pairs" in ranking:
            ranking["pairs"] = [{"negative_id": neg, "choices": choices.get((iid, neg), {})}
                                for neg in (p["negative_id"] for p in ranking["pairs"])]
        if block:
            block["retrieval"] = block["composition"] = None
    out["per_instance"] = per
    return out


def candidate_text(pool: CandidatePool, index: int) -> str:
    """A candidate as the screening prompt shows it: its title, then its abstract."""
    c = next(c for c in pool.candidates if c.index == index)
    return f"{c.title}\n{c.abstract or '(no abstract)'}"


def simulate_screening(pool: CandidatePool, rule: FormRule, *, window_size: int, keep_size: int, seed: int,
                       max_rounds: int = MAX_ROUNDS) -> list[dict[str, Any]]:
    """The screening rounds of a screener that keeps the ``keep_size`` candidates ``rule`` prefers
    in each window (:func:`~ideaharness.benchmarks.researchbench.screening.screen_pool`'s rounds:
    each shuffled with the run's seed, cut into windows; a window no larger than ``keep_size`` kept
    whole), carried forward to the planned rounds as the run does.

    Returns:
        Per round ``{"round", "hit_ratio", "hit_ratio_top1"}``.
    """
    from ideaharness.benchmarks.researchbench.run import planned_rounds

    texts = {c.index: candidate_text(pool, c.index) for c in pool.candidates}
    gold = [c.index for c in pool.gold()]
    current = [c.index for c in pool.candidates]
    rounds: list[dict[str, Any]] = []
    while len(current) > keep_size and len(rounds) < max_rounds:
        number = len(rounds) + 1
        rng = np.random.default_rng(derive_seed(seed, pool.instance_id, "screen", number))
        order = [current[i] for i in rng.permutation(len(current))]
        kept: list[int] = []
        firsts: list[int] = []
        for start in range(0, len(order), window_size):
            shown = order[start:start + window_size]
            if len(shown) <= keep_size:
                kept += shown
                continue
            chosen = [shown[i] for i in form_pick(rule, [texts[i] for i in shown], keep_size)]
            kept += chosen
            firsts.append(chosen[0])
        rounds.append({"round": number, "hit_ratio": hit_ratio(kept, gold),
                       "hit_ratio_top1": hit_ratio_top1(firsts, gold), "n_kept": len(kept)})
        current = kept
    planned = planned_rounds(len(pool.candidates), window_size, keep_size)
    while rounds and len(rounds) < planned:
        last = rounds[-1]
        rounds.append({**last, "round": last["round"] + 1, "hit_ratio_top1": None})
    return rounds


def screening_results(results: dict[str, Any], pools: dict[str, CandidatePool], rule: FormRule, *,
                      window_size: int, keep_size: int, seed: int) -> dict[str, Any]:
    """``results`` whose retrieval rounds are those of :func:`simulate_screening` under ``rule``, for
    every paper the run screened (a paper without a pool keeps no rounds)."""
    out = dict(results)
    per = copy.deepcopy(results.get("per_instance") or {})
    for iid, block in per.items():
        if not block:
            continue
        screened = (block.get("retrieval") or {}).get("rounds") is not None and iid in pools
        block["retrieval"] = ({"rounds": simulate_screening(pools[iid], rule, window_size=window_size,
                                                            keep_size=keep_size, seed=seed)}
                              if screened else None)
        block["composition"] = block["ranking"] = None
    out["per_instance"] = per
    return out


def form_baselines(records: Sequence[Record], results: dict[str, Any], prompts: _form.Prompts,
                   pools: dict[str, CandidatePool], *, window_size: int, keep_size: int,
                   seed: int) -> list[dict[str, Any]]:
    """The ranking and screening baselines of a run (module docstring); a task the run did not do
    gives none."""
    prompts = _form.cached(prompts)
    out: list[dict[str, Any]] = []
    if results.get("ranking"):
        by_rule = {}
        for rule in _form.rules():
            scores = researchbench_scores(records, ranking_results(records, results, prompts, rule))
            by_rule[rule.name] = [s for s in scores if s.metric in RANKING_METRICS]
        out += _form.entries(STEP_PAIR, by_rule, RANKING_METRICS,
                             lambda metric, group: 0.5 if metric == RANKING_METRICS[0] else None)
    if results.get("retrieval"):
        ratio = keep_size / window_size

        def chance(metric: str, group: str) -> float | None:
            rounds = group.removeprefix("round ")
            return ratio ** int(rounds) if metric == SCREENING_METRICS[0] and rounds.isdigit() else None

        by_rule = {}
        for rule in _form.rules():
            scores = researchbench_scores(records, screening_results(
                results, pools, rule, window_size=window_size, keep_size=keep_size, seed=seed))
            by_rule[rule.name] = [s for s in scores if s.metric in SCREENING_METRICS]
        out += _form.entries(STEP_SCREEN, by_rule, SCREENING_METRICS, chance)
    return out
