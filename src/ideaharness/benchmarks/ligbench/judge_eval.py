"""Judge accuracy (LigBench §5): does a pairwise judge agree with venue-debiased paper scores?

Held-out pairs of thematically similar reference papers (nearest neighbours by MiniLM cosine
whose debiased ratings differ by at least ``min_gap``; LigBench used 269 pairs) are compared with
the same prompt as ideas (``ligbench_compare.j2``), in both orders by default. Per dimension the
label is the paper with the higher debiased score; accuracy comes with the headline's 95 %
interval (the bounded-mean score interval over pairs, none below 5 pairs: docs/statistics.md).
Parse failures are counted, not scored; a pair counts only when every order shown parsed. The
reliability block's agreement with the human labels counts the same pairs the same way (both
orders combined into the pair's one verdict, re-asks left out), so it equals the headline.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from ideaharness.benchmarks.ligbench import form as form_baseline
from ideaharness.benchmarks.ligbench import reliability
from ideaharness.benchmarks.ligbench.corpus import DebiasMeans, ReferenceCorpus
from ideaharness.benchmarks.ligbench.steps import (
    COMPARE_KEYS,
    COMPARE_SCHEMA,
    FREE_TEXT_EXTRA_TOKENS,
    parse_comparison,
    reference_text,
)
from ideaharness.cutoff import LiteratureAccess
from ideaharness.data.pairiq import PairIQRecord, pairiq_files
from ideaharness.errors import UserError
from ideaharness.metrics.aggregate import IntervalSettings, headline_interval
from ideaharness.metrics.judge_accuracy import judge_accuracy, preference_label, similar_pairs
from ideaharness.metrics.reliability.adapters import Record
from ideaharness.prompts import render
from ideaharness.report.html import Table
from ideaharness.runner import Benchmark, MetricSpec, RunContext
from ideaharness.runner.protocol import BenchmarkConfig
from ideaharness.runner.registry import register_benchmark, register_metric
from ideaharness.runner.steps import Reask
from ideaharness.runs.scores import Score

DEFAULT_MODEL = "local/qwen2.5-coder-1.5b"

ACCURACY_SPEC = register_metric(MetricSpec(
    "ligbench.judge_accuracy", higher_is_better=True, aggregation="share of pairs where the judge "
    "prefers the paper with the higher debiased score (a tie is wrong)", unit="pair", range=(0.0, 1.0),
    source="LigBench §5 (judge accuracy)", judged_by=("ligbench/judge_pair[{group}]",)))
"""Per pair and dimension 1 (right) or 0; its interval is the default bounded-mean score interval
(a Wilson-type interval for 0/1 values), as the reliability block's human agreement, which counts
the same pairs (:func:`~ideaharness.metrics.reliability.panel.human_agreement`)."""


class JudgeAccuracyConfig(BenchmarkConfig):
    """Everything that determines a judge-accuracy run (recorded in config.json)."""

    benchmark: Literal["ligbench-judge"] = "ligbench-judge"
    judge: str = Field(DEFAULT_MODEL, description="Judge model to evaluate.")
    corpus: str = Field(description="PAIR-IQ-format reference corpus (file or directory).")
    n_pairs: int = Field(default=269, ge=1, json_schema_extra={"cli": "--pairs"},
                         description="Held-out pairs (LigBench used 269).")
    min_gap: float = Field(default=0.25, ge=0, description="Least debiased-rating gap in a pair.")
    order: Literal["both", "fixed"] = Field("both", description="both (averaged) or fixed order.")
    debias_means: DebiasMeans = Field("corpus", description="Venue means for debiasing.")
    judge_temperature: float = Field(0.0, description="Sampling temperature of the judge.")
    structured_output: bool = Field(True, json_schema_extra={"cli": "--structured/--free-text"},
                                    description="Ask the backend for JSON matching the reply schema, or "
                                    "let the judge reason.")
    compare_max_tokens: int = Field(400, ge=16, description="Tokens of a pairwise comparison (JSON: three "
                                    "outcomes); the judge's reasoning budget is added (no published code: "
                                    "--parity keeps it).")
    free_text_extra_tokens: int = Field(FREE_TEXT_EXTRA_TOKENS, ge=0, description="Tokens added to the cap "
                                        "with --free-text, for the reasoning the prompt asks to write "
                                        "before the JSON.")


class PairItem(BaseModel):
    """One held-out pair: indices into the corpus records and its id ``"<id a>|<id b>"``."""

    id: str
    a: int
    b: int


def swapped_pair(x: PairIQRecord, y: PairIQRecord, corpus: ReferenceCorpus, order: list[int]) -> Reask:
    """A judge_pair question with the two papers in ``order`` (a --consistency-sample re-ask): its
    human labels follow the paper shown first."""
    first, second = ((x, y)[i] for i in order)
    human = {d: preference_label(corpus.score(first.id, d), corpus.score(second.id, d)) for d in COMPARE_KEYS}
    return Reask(render("ligbench_compare", idea_a=reference_text(first), idea_b=reference_text(second)),
                 extra={"human_preference": human})


@register_benchmark("ligbench-judge")
class JudgeAccuracy(Benchmark):
    """Judge accuracy on similar-paper pairs (see the module docstring); items are :class:`PairItem`."""

    judgment_adapters = reliability.JUDGMENT_ADAPTERS
    gold_steps = form_baseline.JUDGE_GOLD_STEPS
    no_gold_steps = form_baseline.JUDGE_NO_GOLD_STEPS
    literature = LiteratureAccess(note="no literature access: the judge compares pairs of published papers "
                                       "(the items themselves, whose accept/reject outcome is the label); "
                                       "nothing is retrieved, searched or shown besides them")
    free_settings = frozenset({"judge"})  # the judge is the system under test: runs of judges compare

    @classmethod
    def generator_models(cls, records: Sequence[Record]) -> dict[str, str]:
        """Who generated the judged ideas (:func:`.reliability.generator_models`)."""
        return reliability.generator_models(records)

    title = "LigBench judge accuracy"
    summary = "Judge accuracy: agreement of a pairwise judge with debiased scores on similar-paper pairs."
    config_class = JudgeAccuracyConfig
    item_noun = "pairs"

    config: JudgeAccuracyConfig

    def model_roles(self) -> dict[str, str]:
        """The judge only."""
        return {"judge": self.config.judge}

    def input_files(self) -> Mapping[str, Sequence[Path]]:
        """The corpus files."""
        return {"--corpus": pairiq_files(self.config.corpus)}

    def load(self) -> list[PairItem]:
        """Nearest-neighbour pairs whose debiased ratings differ by at least ``min_gap``.

        The corpus is read, checked and embedded here, before the runner makes the run folder; its
        embeddings are kept in the run's embedding store under the cache folder (``--device``,
        ``--no-embedding-cache``: :attr:`run_options`), never beside the corpus.

        Raises:
            UserError: no such pair in the corpus.
            DataError: a bad corpus (file and row named; both rows of a repeated paper).
        """
        options = self.run_options
        self.corpus = ReferenceCorpus.load(self.config.corpus, debias_means=self.config.debias_means,
                                           runtime=options.embedding_runtime() if options else None)
        ratings = [self.corpus.score(r.id, "rating") for r in self.corpus.records]
        pairs = similar_pairs(self.corpus.index.embeddings, ratings, self.config.n_pairs,
                              min_gap=self.config.min_gap, seed=self.config.seed)
        if not pairs:
            raise UserError(f"{self.config.corpus}: no pairs of similar papers with a rating gap >= "
                            f"{self.config.min_gap}")
        records = self.corpus.records
        return [PairItem(id=f"{records[a].id}|{records[b].id}", a=a, b=b) for a, b in pairs]

    async def execute(self, ctx: RunContext, pairs: Sequence[PairItem]) -> None:
        """Judge every pair in the configured orders."""
        config, corpus, model = self.config, self.corpus, ctx.model("judge")
        orders = ["ab", "ba"] if config.order == "both" else ["ab"]
        self.outcomes: dict[str, dict[str, float] | None] = {}

        async def one(pair: PairItem) -> None:
            a, b = corpus.records[pair.a], corpus.records[pair.b]
            per_order = []
            for order in orders:
                x, y = (a, b) if order == "ab" else (b, a)
                # the reliability block's human labels: the paper with the higher reviewer score
                human = {d: preference_label(corpus.score(x.id, d), corpus.score(y.id, d))
                         for d in COMPARE_KEYS}
                rec = await ctx.steps.judge_step(
                    "ligbench/judge_pair", pair.id, order, model,
                    render("ligbench_compare", idea_a=reference_text(x), idea_b=reference_text(y)),
                    parse_comparison, positions=[x.id, y.id], temperature=config.judge_temperature,
                    extra={"human_preference": human},
                    max_tokens=config.compare_max_tokens + (
                        0 if config.structured_output else config.free_text_extra_tokens),
                    seed=config.seed, json_schema=COMPARE_SCHEMA if config.structured_output else None,
                    reorder=functools.partial(swapped_pair, x, y, corpus))
                if rec and rec["judgment"]["parse_ok"]:
                    parsed = rec["judgment"]["parsed"]
                    per_order.append(parsed if order == "ab" else {d: 1.0 - v for d, v in parsed.items()})
            # a pair counts only when every order shown parsed: one order alone is position-biased
            self.outcomes[pair.id] = ({d: sum(o[d] for o in per_order) / len(per_order) for d in COMPARE_KEYS}
                                      if len(per_order) == len(orders) else None)

        await ctx.steps.run_phases(pairs, [("judge pairs", one)])

    def aggregate(self, ctx: RunContext, pairs: Sequence[PairItem]) -> dict[str, Any]:
        """Accuracy per dimension with its Wilson interval; pairs not (fully) judged are left out."""
        outcomes = getattr(self, "outcomes", {})
        failed = {unit["instance_id"] for unit in ctx.steps.outcome()["failed_units"]}
        dims: dict[str, Any] = {}
        per_pair: dict[str, dict[str, float]] = {}  # pair -> dim -> 1 correct / 0 wrong (tie = wrong)
        unparsed: dict[str, list[str]] = {}  # pair -> the dimensions its unparsed judgment leaves open
        for dim in COMPARE_KEYS:
            preds, labels = [], []
            for pair in pairs:
                a, b = self.corpus.records[pair.a], self.corpus.records[pair.b]
                label = preference_label(self.corpus.score(a.id, dim), self.corpus.score(b.id, dim))
                if label == 0.5 or pair.id not in outcomes or pair.id in failed:
                    continue  # a pair not (fully) judged is missing work, not a parse failure
                out = outcomes[pair.id]
                preds.append(out[dim] if out else None)
                labels.append(label)
                if out:  # as judge_accuracy counts it
                    correct = out[dim] != 0.5 and (out[dim] > 0.5) == (label == 1.0)
                    per_pair.setdefault(pair.id, {})[dim] = float(correct)
                else:
                    unparsed.setdefault(pair.id, []).append(dim)
            dims[dim] = judge_accuracy(preds, labels).model_dump()
            values = np.asarray([per_pair[p][dim] for p in sorted(per_pair) if dim in per_pair[p]])
            ci, why = headline_interval(ACCURACY_SPEC.interval, values, ACCURACY_SPEC.aggregate,
                                        IntervalSettings(bounds=ACCURACY_SPEC.range), len(values))
            dims[dim].update(interval=ci, interval_why=why)  # the headline's interval, not Wilson's
        return {"judge": self.config.judge, "corpus": self.config.corpus, "n_pairs": len(pairs),
                "dimensions": dims, "per_pair": per_pair, "unparsed_pairs": unparsed,
                "llm_errors": ctx.steps.error_count}

    def tables(self, results: dict[str, Any]) -> list[Table]:
        """Accuracy per dimension."""
        return [accuracy_table(results)]

    def expected_metrics(self) -> list[str]:
        """``ligbench.judge_accuracy`` (the benchmark's name is not its metrics' prefix)."""
        return ["ligbench.judge_accuracy"]

    def form_baselines(self, records: Sequence[Record], results: dict[str, Any],
                       prompts: Callable[[str], list[dict[str, Any]] | None]) -> list[dict[str, Any]]:
        """The accuracy of a judge that prefers a paper by form alone (:mod:`.form`)."""
        orders = ["ab", "ba"] if self.config.order == "both" else ["ab"]
        return form_baseline.judge_form_baselines(records, results, prompts, orders)

    def scores(self, records: Sequence[Record], results: dict[str, Any]) -> list[Score]:
        """Per held-out pair and dimension: 1 when the judge preferred the paper with the higher
        debiased score, else 0 (a tie is wrong; LigBench §5), from the ``per_pair`` block; the
        judge under evaluation is the system. A pair whose judgment did not parse is unscored."""
        out = [Score(metric="ligbench.judge_accuracy", group=dim, instance_id=pair_id, value=value)
               for pair_id, dims in sorted((results.get("per_pair") or {}).items())
               for dim, value in sorted(dims.items())]
        for pair_id, dims_open in sorted((results.get("unparsed_pairs") or {}).items()):
            out += [Score.unscored("ligbench.judge_accuracy", pair_id, "judgment unparsed", group=dim)
                    for dim in dims_open]
        return out


def accuracy_table(results: dict[str, Any]) -> Table:
    """Accuracy per dimension with its interval (the headline's; "n too small" below 5 pairs) and counts."""
    rows = [[dim, r["accuracy"], r["interval"] or r.get("interval_why"), r["n"], r["n_correct"], r["n_ties"],
             r["n_failed"]] for dim, r in results["dimensions"].items()]
    return Table(title=f"Judge accuracy of {results['judge']} on {results['n_pairs']} pairs",
                 columns=["dimension", "accuracy", "95% CI", "pairs judged", "correct", "ties",
                          "parse failures"], rows=rows,
                 note="label = the paper with the higher venue-debiased score; a tie (0.5) counts as wrong.")
