"""Judge accuracy (LigBench §5): does a pairwise judge agree with venue-debiased paper scores?

Held-out pairs of thematically similar reference papers (nearest neighbours by MiniLM cosine
whose debiased ratings differ by at least ``min_gap``; LigBench used 269 pairs) are compared with
the same prompt as ideas (``ligbench_compare.j2``), in both orders by default. Per dimension the
label is the paper with the higher debiased score; accuracy comes with a 95% Wilson interval
(:mod:`ideaharness.metrics.judge_accuracy`). Parse failures are counted, not scored; a pair counts
only when every order shown parsed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ideaharness.benchmarks._common import (
    DEFAULT_MAX_PROMPT_TOKENS,
    ExecutionOptions,
    StepRunner,
    make_models,
    open_store,
)
from ideaharness.benchmarks.ligbench.corpus import DebiasMeans, ReferenceCorpus
from ideaharness.benchmarks.ligbench.steps import (
    COMPARE_KEYS,
    COMPARE_SCHEMA,
    FREE_TEXT_EXTRA_TOKENS,
    parse_comparison,
    reference_text,
)
from ideaharness.data.pairiq import pairiq_files
from ideaharness.errors import UserError
from ideaharness.llm.types import ChatModel
from ideaharness.metrics.judge_accuracy import judge_accuracy, preference_label, similar_pairs
from ideaharness.prompts import render
from ideaharness.report.html import Table
from ideaharness.runs.store import RunStore


class JudgeAccuracyConfig(BaseModel):
    """Everything that determines a judge-accuracy run (recorded in config.json)."""

    benchmark: Literal["ligbench-judge"] = "ligbench-judge"
    judge: str
    corpus: str
    n_pairs: int = Field(default=269, ge=1)
    min_gap: float = Field(default=0.25, ge=0)
    order: Literal["both", "fixed"] = "both"
    debias_means: DebiasMeans = "corpus"
    seed: int = 0
    judge_temperature: float = 0.0
    structured_output: bool = True
    max_attempts: int = Field(default=3, ge=1, le=10)
    max_prompt_tokens: int = Field(default=DEFAULT_MAX_PROMPT_TOKENS, ge=256)


async def judge_accuracy_async(config: JudgeAccuracyConfig, options: ExecutionOptions, *,
                               judge: ChatModel | None = None) -> dict[str, Any]:
    """Run (or resume) the judge-accuracy evaluation; writes and returns ``results.json``."""
    corpus = ReferenceCorpus.load(config.corpus, debias_means=config.debias_means)
    ratings = [corpus.score(r.id, "rating") for r in corpus.records]
    pairs = similar_pairs(corpus.index.embeddings, ratings, config.n_pairs, min_gap=config.min_gap,
                          seed=config.seed)
    if options.limit is not None:
        pairs = pairs[: options.limit]
    if not pairs:
        raise UserError(f"{config.corpus}: no pairs of similar papers with a rating gap >= {config.min_gap}")
    model = judge or make_models(None, config.judge, options)[1]
    assert model is not None
    with open_store(options, config, inputs={"--corpus": pairiq_files(config.corpus)},
                    models={"judge": model}) as store:
        return await _judge_pairs(config, options, store, model, corpus, pairs)


async def _judge_pairs(config: JudgeAccuracyConfig, options: ExecutionOptions, store: RunStore,
                       model: ChatModel, corpus: ReferenceCorpus,
                       pairs: list[tuple[int, int]]) -> dict[str, Any]:
    steps = StepRunner(store, max_attempts=config.max_attempts, progress=options.progress,
                       max_prompt_tokens=config.max_prompt_tokens)
    orders = ["ab", "ba"] if config.order == "both" else ["ab"]
    outcomes: dict[tuple[int, int], dict[str, float] | None] = {}

    async def one(pair: tuple[int, int]) -> None:
        a, b = (corpus.records[i] for i in pair)
        per_order = []
        for order in orders:
            x, y = (a, b) if order == "ab" else (b, a)
            rec = await steps.judge_step(
                "ligbench/judge_pair", f"{a.id}|{b.id}", order, model,
                render("ligbench_compare", idea_a=reference_text(x), idea_b=reference_text(y)),
                parse_comparison, positions=[x.id, y.id], temperature=config.judge_temperature,
                max_tokens=400 if config.structured_output else 400 + FREE_TEXT_EXTRA_TOKENS,
                seed=config.seed,
                json_schema=COMPARE_SCHEMA if config.structured_output else None)
            if rec and rec["judgment"]["parse_ok"]:
                parsed = rec["judgment"]["parsed"]
                per_order.append(parsed if order == "ab" else {d: 1.0 - v for d, v in parsed.items()})
        # a pair counts only when every order shown parsed: one order alone is position-biased
        outcomes[pair] = ({d: sum(o[d] for o in per_order) / len(per_order) for d in COMPARE_KEYS}
                          if len(per_order) == len(orders) else None)

    try:
        await steps.run_phases(pairs, [("judge pairs", one)])
    finally:
        dims: dict[str, Any] = {}
        failed = {unit["instance_id"] for unit in steps.outcome()["failed_units"]}
        for dim in COMPARE_KEYS:
            preds, labels = [], []
            for pair in pairs:
                a, b = (corpus.records[i] for i in pair)
                label = preference_label(corpus.score(a.id, dim), corpus.score(b.id, dim))
                if label == 0.5 or pair not in outcomes or f"{a.id}|{b.id}" in failed:
                    continue  # a pair not (fully) judged is missing work, not a parse failure
                out = outcomes[pair]
                preds.append(out[dim] if out else None)
                labels.append(label)
            dims[dim] = judge_accuracy(preds, labels).model_dump()
        results = {"benchmark": "ligbench-judge", "judge": config.judge, "corpus": config.corpus,
                   "n_pairs": len(pairs), "dimensions": dims, "llm_errors": steps.error_count,
                   "corrupt_record_lines": store.corrupt_lines, **steps.outcome()}
        store.write_results(results)
    from ideaharness.report.html import write_report

    write_report(Path(options.out) / "report.html", title="LigBench judge accuracy",
                 config=config.model_dump(mode="json"), tables=[accuracy_table(results)],
                 notes=steps.notes())
    return results


def accuracy_table(results: dict[str, Any]) -> Table:
    """Accuracy per dimension with its Wilson interval and counts."""
    rows = [[dim, r["accuracy"], r["interval"], r["n"], r["n_correct"], r["n_ties"], r["n_failed"]]
            for dim, r in results["dimensions"].items()]
    return Table(title=f"Judge accuracy of {results['judge']} on {results['n_pairs']} pairs",
                 columns=["dimension", "accuracy", "95% Wilson CI", "pairs judged", "correct", "ties",
                          "parse failures"], rows=rows,
                 note="label = the paper with the higher venue-debiased score; a tie (0.5) counts as wrong.")


def run_judge_accuracy(config: JudgeAccuracyConfig, options: ExecutionOptions, **kw: Any) -> dict[str, Any]:
    """Synchronous wrapper of :func:`judge_accuracy_async`."""
    return asyncio.run(judge_accuracy_async(config, options, **kw))
