"""The LiveIdeaBench run: ideas from one keyword, critiques by a judge panel, fluency pairs; each
unit recorded in the run directory (see the package docstring for the protocol)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from ideaharness.benchmarks.liveideabench import reliability
from ideaharness.benchmarks.liveideabench.aggregate import (
    aggregate_run,
    kept_for_scores,
    parity_fluency_pairs,
    parity_headline,
)
from ideaharness.benchmarks.liveideabench.config import BENCHMARK_VERSION, LiveIdeaBenchConfig
from ideaharness.benchmarks.liveideabench.contract import generation_task
from ideaharness.benchmarks.liveideabench.keywords import Keyword, select_keywords
from ideaharness.benchmarks.liveideabench.parsers import parse_critique, parse_fluency, parse_idea
from ideaharness.benchmarks.liveideabench.report import example_sections, result_notes, results_tables
from ideaharness.benchmarks.liveideabench.scores import (
    AVERAGE,
    AVERAGE_INPUTS,
    FLEXIBILITY,
    liveideabench_scores,
)
from ideaharness.cutoff import LiteratureAccess
from ideaharness.metrics.reliability.adapters import Record
from ideaharness.prompts import render
from ideaharness.report.html import Section, Table
from ideaharness.runner import Benchmark, MetricSpec, MetricValue, RunContext
from ideaharness.runner.registry import register_benchmark, register_metric
from ideaharness.runner.steps import Reask
from ideaharness.runs.scores import Score
from ideaharness.seeding import derive_seed, rng_for

_SOURCE = "LiveIdeaBench, Ruan et al. 2024 (arXiv 2412.17596); published code x66ccff/liveideabench"
for _name, _what in (("originality", "judge score 1-10"), ("feasibility", "judge score 1-10"),
                     ("clarity", "judge score 1-10 (v2)"), ("fluency", "pair grade A-D as 10/7/4/1 (v2)")):
    register_metric(MetricSpec(f"liveideabench.{_name}", higher_is_better=True,
                               aggregation=f"{_what}; mean per idea, per keyword, over keywords "
                               "(--parity: over judgment rows)", unit="keyword",
                               range=(0.0, 10.0), source=f"{_SOURCE}, stats.ipynb / stats_flexibility.ipynb",
                               judged_by=("fluency",) if _name == "fluency" else (f"critique[{_name}]",)))
register_metric(MetricSpec("liveideabench.flexibility", higher_is_better=True, aggregate=FLEXIBILITY,
                           unit="keyword", range=(0.0, 10.0),
                           source=f"{_SOURCE}, stats_flexibility.ipynb get_model_flexibility_with_ci",
                           judged_by=("critique", "fluency")))  # a keyword's mean of the dimensions
register_metric(MetricSpec("liveideabench.average", higher_is_better=True, aggregate=AVERAGE,
                           inputs=AVERAGE_INPUTS, unit="keyword", range=(0.0, 10.0),
                           source=f"{_SOURCE}, leaderboard Average", judged_by=("critique", "fluency")))


def idea_key(k: int) -> str:
    return str(k)


def _fluency_reask(order: list[int], *, keyword: str, shown: tuple[dict[str, Any], dict[str, Any]],
                   protocol: str) -> Reask:
    """The fluency judgment of ``shown`` re-rendered with its two ideas in ``order``."""
    return Reask(render("liveideabench_fluency", keyword=keyword, first=shown[order[0]]["idea"],
                        second=shown[order[1]]["idea"], protocol=protocol))


@register_benchmark("liveideabench")
class LiveIdeaBench(Benchmark):
    """LiveIdeaBench (see the package docstring); one instance per run."""

    judgment_adapters = reliability.JUDGMENT_ADAPTERS
    no_gold_steps = {  # no form-only baseline applies (issue 32, Build (b))
        "critique": "1-10 ratings of an idea's originality, feasibility and clarity: no gold answer",
        "fluency": "whether two ideas of a keyword are the same idea: the judge's call is the measure, "
                   "no gold answer"}
    literature = LiteratureAccess(note="no literature access: the generator sees one keyword, the judges the "
                                       "idea; nothing is retrieved or searched, and keywords carry no date, "
                                       "so there is nothing to filter")

    @classmethod
    def generator_models(cls, records: Sequence[Record]) -> dict[str, str]:
        """Who generated the judged ideas (:func:`.reliability.generator_models`)."""
        return reliability.generator_models(records)

    version = BENCHMARK_VERSION
    title = "LiveIdeaBench results"
    summary = ("Run LiveIdeaBench: ideas from single keywords, scored by a judge panel on originality, "
               "feasibility, clarity, fluency and flexibility.")
    config_class = LiveIdeaBenchConfig
    item_noun = "keywords"

    config: LiveIdeaBenchConfig

    def model_roles(self) -> dict[str, str]:
        """``generator`` (a model or a system) plus one ``judge:<model>`` role per judge that may be asked."""
        judges = dict.fromkeys([*self.config.eligible_judges(), *self.config.fluency_panel()])
        return {"generator": self.config.generator_model(), **{f"judge:{j}": j for j in judges}}

    def load(self) -> list[Keyword]:
        """The keywords of the run (``--keyword``, else the bundled list; ``--category``)."""
        return select_keywords(self.config.keywords, self.config.categories)

    async def setup(self, ctx: RunContext) -> None:
        """Bind the run's store, steps and models."""
        self.store = ctx.store
        self.steps = ctx.steps
        self.ctx = ctx

    # -- design ------------------------------------------------------------------
    def critique_judges(self, keyword: str, k: int) -> list[str]:
        """The judges of idea ``k`` of ``keyword``: a seeded sample without replacement of
        ``judges_per_idea`` eligible judges (published: ``random.sample`` of 3, unseeded)."""
        panel = self.config.eligible_judges()
        order = rng_for(self.config.seed, keyword, k, "critics").permutation(len(panel)).tolist()
        return [panel[i] for i in order[: min(self.config.judges_per_idea, len(panel))]]

    def pairs(self) -> list[tuple[int, int]]:
        """Fluency pairs of idea indices: (0, 1), (2, 3), ... (published: one pair of the two ideas)."""
        n = self.config.ideas_per_keyword
        return [(i, i + 1) for i in range(0, n - 1, 2)]

    def fluency_design(self, keyword: str, pair: int) -> list[tuple[str, str]]:
        """``(judge, order)`` of each fluency judgment of a pair; order "AB" shows the pair's first
        idea first. Default: ``fluency_judges`` seeded eligible judges, each in both orders;
        parity: one seeded judge from the whole panel, order AB (published ``hash.py``)."""
        panel = self.config.fluency_panel()
        rng = rng_for(self.config.seed, keyword, pair, "fluency")
        if self.config.parity:
            return [(panel[int(rng.integers(len(panel)))], "AB")]
        order = rng.permutation(len(panel)).tolist()[: min(self.config.fluency_judges, len(panel))]
        return [(panel[i], o) for i in order for o in ("AB", "BA")]

    # -- steps -------------------------------------------------------------------
    async def generate(self, kw: Keyword) -> None:
        """Each idea of ``kw``; v2 asks a model's idea that never parsed again with the fallback
        prompt (never a system's: its task is the first prompt's, and an answer that is no idea
        is a parse failure)."""
        cfg = self.config
        generator = self.ctx.model("generator")
        for k in range(cfg.ideas_per_keyword):
            seed = derive_seed(cfg.seed, kw.id, k) % 2**31
            await self.steps.generate_step(
                "idea", kw.id, idea_key(k), generator,
                render("liveideabench_idea", keyword=kw.id, protocol=cfg.protocol, fallback=False,
                       parity=cfg.parity),
                parse_idea, task=generation_task(kw.id, k, protocol=cfg.protocol, seed=seed),
                temperature=cfg.generation_temperature, max_tokens=cfg.reply_cap("idea"),
                seed=seed, extra={"fallback": False},
            )
            if (cfg.protocol != "v2" or cfg.generator_is_system() or self.steps.exporting
                    or self.idea(kw.id, k, first_only=True) is not None
                    or not self.store.has("idea", kw.id, idea_key(k))):
                continue
            await self.steps.judge_step(
                "idea_fallback", kw.id, idea_key(k), generator,
                render("liveideabench_idea", keyword=kw.id, protocol=cfg.protocol, fallback=True,
                       parity=cfg.parity),
                parse_idea, temperature=cfg.generation_temperature, max_tokens=cfg.reply_cap("idea"),
                seed=seed, extra={"fallback": True},
            )

    def idea(self, keyword: str, k: int, *, first_only: bool = False) -> dict[str, Any] | None:
        """``{"idea", "words", "fallback"}`` of idea ``k`` (the fallback prompt's when the first
        reply never parsed, v2), or None when there is none."""
        for step in ("idea",) if first_only else ("idea", "idea_fallback"):
            rec = self.store.get(step, keyword, idea_key(k))
            if rec and rec["judgment"]["parse_ok"]:
                return {**rec["judgment"]["parsed"], "fallback": step == "idea_fallback"}
        return None

    async def critique(self, kw: Keyword) -> None:
        cfg = self.config
        for k in range(cfg.ideas_per_keyword):
            idea = self.idea(kw.id, k)
            if idea is None or (cfg.parity and not kept_for_scores(idea["idea"])):
                continue  # --parity: an idea the published length filter drops is not paid for
            for judge in self.critique_judges(kw.id, k):
                await self.steps.judge_step(
                    "critique", kw.id, f"{k}/{judge}", self.ctx.model(f"judge:{judge}"),
                    render("liveideabench_critique", idea=idea["idea"], protocol=cfg.protocol),
                    lambda t: parse_critique(t, cfg.protocol), temperature=cfg.judge_temperature,
                    max_tokens=cfg.reply_cap("critique"), seed=cfg.seed,
                    extra={"idea": k, "judge": judge, "protocol": cfg.protocol},
                )

    def parsed_critiques(self, keyword: str, k: int) -> int:
        """How many of idea ``k``'s critiques parsed."""
        recs = (self.store.get("critique", keyword, f"{k}/{judge}")
                for judge in self.critique_judges(keyword, k))
        return sum(1 for rec in recs if rec and rec["judgment"]["parse_ok"])

    def fluency_pairs(self, keyword: str) -> list[bool]:
        """Which fluency pairs of ``keyword`` are judged (one flag per :meth:`pairs` entry).

        Default: every pair whose two ideas exist. ``--parity``: only pairs in the published pool
        (:func:`~.aggregate.parity_fluency_pairs`), so no judgment is paid for that the published
        fluency would not use. Call after the critiques are recorded (the phases run in order).
        """
        ideas = {k: self.idea(keyword, k) for k in range(self.config.ideas_per_keyword)}
        texts = {k: (v["idea"] if v else None) for k, v in ideas.items()}
        if not self.config.parity:
            return [texts[a] is not None and texts[b] is not None for a, b in self.pairs()]
        parsed = {k: self.parsed_critiques(keyword, k) for k, v in texts.items() if v is not None}
        return parity_fluency_pairs(self.pairs(), texts, parsed)

    async def fluency(self, kw: Keyword) -> None:
        cfg = self.config
        judged = self.fluency_pairs(kw.id)
        for p, (a, b) in enumerate(self.pairs()):
            first, second = self.idea(kw.id, a), self.idea(kw.id, b)
            if first is None or second is None or not judged[p]:
                continue
            for judge, order in self.fluency_design(kw.id, p):
                shown = (first, second) if order == "AB" else (second, first)
                await self.steps.judge_step(
                    "fluency", kw.id, f"{p}/{judge}/{order}", self.ctx.model(f"judge:{judge}"),
                    render("liveideabench_fluency", keyword=kw.id, first=shown[0]["idea"],
                           second=shown[1]["idea"], protocol=cfg.protocol),
                    parse_fluency, temperature=cfg.judge_temperature, max_tokens=cfg.reply_cap("fluency"),
                    seed=cfg.seed,
                    positions=[f"{kw.id}/{a}", f"{kw.id}/{b}"][:: 1 if order == "AB" else -1],
                    extra={"pair": [a, b], "judge": judge, "order": order, "protocol": cfg.protocol},
                    reorder=functools.partial(  # --consistency-sample
                        _fluency_reask, keyword=kw.id, shown=shown, protocol=cfg.protocol),
                )

    async def execute(self, ctx: RunContext, items: Sequence[Keyword]) -> None:
        """Generation, then critiques and fluency pairs (`tasks export`: generation only)."""
        await self.steps.run_phases(items, [("ideas", self.generate)])
        if self.steps.exporting:
            return
        await self.steps.run_phases(items, [("critiques", self.critique), ("fluency pairs", self.fluency)])

    def aggregate(self, ctx: RunContext, items: Sequence[Keyword]) -> dict[str, Any]:
        """See :func:`~ideaharness.benchmarks.liveideabench.aggregate.aggregate_run`."""
        return aggregate_run(self, items)

    # -- presentation --------------------------------------------------------------
    def tables(self, results: dict[str, Any]) -> list[Table]:
        """The leaderboard row, judging counts, per-judge and per-category tables."""
        return results_tables(results)

    def notes(self, ctx: RunContext, results: dict[str, Any]) -> list[str]:
        """Parse failures, fallbacks, long ideas, missing flexibility."""
        return result_notes(results)

    def sections(self, ctx: RunContext, items: Sequence[Keyword], results: dict[str, Any]) -> list[Section]:
        """Ideas, critiques and fluency replies of the first keywords."""
        return example_sections(self, items)

    def scores(self, records: Sequence[Record], results: dict[str, Any]) -> list[Score]:
        """Per keyword: each dimension's keyword mean and the flexibility score
        (:func:`.scores.liveideabench_scores`)."""
        return liveideabench_scores(records, results)

    def expected_metrics(self) -> list[str]:
        """The protocol's dimensions, fluency and flexibility (the average's inputs)."""
        from ideaharness.benchmarks.liveideabench.scores import average_inputs

        return list(average_inputs(self.config.protocol))

    def headline(self, results: dict[str, Any]) -> list[MetricValue]:
        """Under ``--parity`` only: the dimensions and the average pooled over (idea x judge) rows
        as the published notebook computes them, which are not aggregates of keyword scores
        (:func:`.aggregate.parity_headline`). Otherwise every metric comes from :meth:`scores`."""
        return parity_headline(results) if results.get("parity") else []
