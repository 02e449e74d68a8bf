"""LigBench runs: generate ideas per topic with each system, score them against the corpus.

``ideaharness run ligbench`` (:class:`LigBench`) writes the usual run directory (config.json,
records/, results.json, report.html) and resumes from its records; several ``--generator`` flags
compare several systems in one run. ``score_idea`` (:mod:`.score_idea`) scores one idea.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ideaharness.benchmarks.ligbench import form as form_baseline
from ideaharness.benchmarks.ligbench import reliability
from ideaharness.benchmarks.ligbench.blinding import blinding_block
from ideaharness.benchmarks.ligbench.config import (
    BENCHMARK_VERSION,
    DEFAULT_MODEL,
    DEFAULT_TOPICS,
    SCHOLARIDEAS_SYSTEM,
    SCORE_KEYS,
    IdeaSpec,
    LigBenchConfig,
    parse_generated_idea,
)
from ideaharness.benchmarks.ligbench.contract import generation_task, topic_id
from ideaharness.benchmarks.ligbench.corpus import ReferenceCorpus, read_corpus
from ideaharness.benchmarks.ligbench.cutoff import LITERATURE, as_date
from ideaharness.benchmarks.ligbench.scores import ligbench_scores
from ideaharness.benchmarks.ligbench.steps import IdeaScore, IdeaScorer, formal_text
from ideaharness.cutoff import CutoffEntry, effective_cutoff
from ideaharness.data.pairiq import PairIQRecord, pairiq_files
from ideaharness.errors import UserError
from ideaharness.metrics.aggregate import IntervalSettings
from ideaharness.metrics.duplicates import DUPLICATE_COLUMNS, duplicate_note, duplicate_report, duplicate_row
from ideaharness.metrics.reliability.adapters import Record
from ideaharness.metrics.stats import bootstrap_settings
from ideaharness.metrics.surface import surface_rows
from ideaharness.prompts import render
from ideaharness.report.html import Section, Table
from ideaharness.runner import Benchmark, MetricSpec, RunContext
from ideaharness.runner.registry import register_benchmark, register_metric
from ideaharness.runs.scores import Score, summarise_scores

__all__ = ["DEFAULT_MODEL", "DEFAULT_TOPICS", "LigBench", "LigBenchConfig", "results_tables"]


def input_files(config: LigBenchConfig) -> dict[str, list[Path]]:
    """The files a run reads, by flag (their sha256 is part of the run's identity)."""
    files = {"--corpus": pairiq_files(config.corpus)}
    if config.ideas_files():
        files["--ideas"] = config.ideas_files()
    if config.scholarideas and config.scholarideas_root:
        from ideaharness.data.scholarideas import scholarideas_files

        files["--scholarideas-root"] = scholarideas_files(config.scholarideas_root)
    return files


SCORE_SPEC = register_metric(MetricSpec(
    "ligbench.score", higher_is_better=True, aggregation="mean over a system's scored ideas, per dimension "
    "(rating, contribution, soundness, novelty)", unit="idea", range=(0.0, 5.0),
    source="LigBench, Wang, Zhu et al., §3 (Elo against scored papers) and App. F",
    judged_by=("ligbench/compare[{group}]", "ligbench/initial_score[{group}]")))


@register_benchmark("ligbench")
class LigBench(Benchmark):
    """LigBench over topics and systems; one instance per run. Items are :class:`IdeaSpec` (one
    idea of one system for one topic, or one ScholarIdeas plan)."""

    judgment_adapters = reliability.JUDGMENT_ADAPTERS
    no_gold_steps = form_baseline.RUN_NO_GOLD_STEPS  # no judged step has a gold answer
    literature = LITERATURE

    @classmethod
    def generator_models(cls, records: Sequence[Record]) -> dict[str, str]:
        """Who generated the judged ideas (:func:`.reliability.generator_models`)."""
        return reliability.generator_models(records)

    version = BENCHMARK_VERSION
    title = "LigBench results"
    summary = "Run LigBench: generate ideas per topic with each generator and score them against the corpus."
    config_class = LigBenchConfig
    item_noun = "ideas"

    config: LigBenchConfig

    def __init__(self, config: LigBenchConfig, **extras: Any) -> None:
        super().__init__(config, **extras)
        self.idea_scores: dict[str, IdeaScore] = {}
        self.corpus_size: int | None = None
        self.corpus_records: list[PairIQRecord] | None = None

    def model_roles(self) -> dict[str, str]:
        """The judge, and one ``generator:<spec>`` role per generator (a model or a system, and the
        ``--ideas`` file's ``ideas:`` spec) when there are topics (a run of ScholarIdeas plans alone
        builds none)."""
        specs = self.config.generator_specs()
        roles = {f"generator:{g}": g for g in specs} if self.config.topics else {}
        return {**roles, "judge": self.config.judge}

    @staticmethod
    def task_instance_id(spec: IdeaSpec) -> str | None:
        """The instance id of ``spec``'s generation task (:mod:`.contract`): its topic's ``t<NN>``;
        None for a ScholarIdeas plan (never generated)."""
        return None if spec.topic_index is None or spec.text is not None else topic_id(spec.topic_index)

    def system_names(self) -> dict[str, str]:
        """Generator spec -> the system's name, the key of ``results["systems"]`` and the first
        part of its ideas' ids (:meth:`LigBenchConfig.system_names`)."""
        return self.config.system_names()

    def input_files(self) -> Mapping[str, Sequence[Path]]:
        """The corpus files, and the ScholarIdeas files when plans are scored."""
        return input_files(self.config)

    def load(self) -> list[IdeaSpec]:
        """One spec per topic, system and sample (topic first, so ``--limit`` keeps whole topics for
        every system), then the ScholarIdeas plans.

        The ``--corpus`` is read and checked here (:func:`.corpus.read_corpus`), before the runner
        makes the run folder: a bad corpus leaves nothing behind. It is embedded in :meth:`setup`.

        Raises:
            UserError: no topics and no plans; ``--scholarideas`` without its root folder.
            DataError: a bad corpus (file and row named; both rows of a repeated paper).
        """
        self.corpus_records = read_corpus(self.config.corpus, debias_means=self.config.debias_means)
        if not self.config.topics and not self.config.scholarideas:
            raise UserError("--topics: no topics given (and no --scholarideas plans)")
        if self.config.topics and not self.config.generator_specs() and not self.config.scholarideas:
            raise UserError("--generator: no generator given (and no --ideas file)")
        names = self.config.system_names()
        out = [IdeaSpec(id=f"{names[spec]}::{topic_id(ti)}::{k}", system=names[spec], topic=topic,
                        sample_index=k, generator=spec, topic_index=ti)
               for ti, topic in enumerate(self.config.topics) for spec in self.config.generator_specs()
               for k in range(self.config.ideas_per_topic)]  # topic first: --limit K asks every system
        if self.config.scholarideas:
            from ideaharness.data.scholarideas import load_scholarideas

            if not self.config.scholarideas_root:
                raise UserError("--scholarideas needs --scholarideas-root: the ScholarIdeas folder of "
                                "the ScholarEval release (skai-research/ScholarEval, MIT)")
            plans = load_scholarideas(self.config.scholarideas_root, limit=self.config.scholarideas)
            out += [IdeaSpec(id=f"scholarideas::{p.id}", system=SCHOLARIDEAS_SYSTEM, topic=p.title,
                             text=p.text, cutoff=p.cutoff.isoformat() if p.cutoff else None) for p in plans]
        return out

    def apply_cutoff(self, items: Sequence[Any], run_cutoff: dt.date | None) -> tuple[list[Any],
                                                                                    list[CutoffEntry]]:
        """Each idea's cutoff: the stricter of its own (a ScholarIdeas plan's ``cutoff.txt``) and
        ``--cutoff``; the corpus and the online search honour it when the idea is scored (.cutoff)."""
        out = []
        for spec in items:
            cutoff = effective_cutoff(as_date(spec.cutoff), run_cutoff)
            out.append(spec.model_copy(update={"cutoff": cutoff.isoformat() if cutoff else None}))
        return out, []

    async def setup(self, ctx: RunContext) -> None:
        """Load the reference corpus; bind the store, steps, generators and the scorer."""
        self.store = ctx.store
        self.steps = ctx.steps
        self.generators = {role.split(":", 1)[1]: m for role,
                           m in ctx.models.items() if role.startswith("generator:")}
        if ctx.steps.exporting:  # tasks export: generation only, no corpus to embed
            return
        records = self.corpus_records
        if records is None:  # set up without load(): read the corpus now
            records = read_corpus(self.config.corpus, debias_means=self.config.debias_means)
        corpus = ReferenceCorpus(records, embedding_model=self.config.embedding_model,
                                 debias_means=self.config.debias_means, source=self.config.corpus,
                                 runtime=ctx.options.embedding_runtime())
        self.corpus_size = len(corpus)
        self.scorer = IdeaScorer(corpus, ctx.model("judge"), self.steps, self.config.scoring,
                                 timeout_s=ctx.options.timeout)

    async def generate(self, spec: IdeaSpec) -> None:
        """Generate one idea (a model: the prompt; a system: the topic's task, :mod:`.contract`)."""
        if spec.text is not None:
            return
        generator = spec.generator or spec.system
        if self.steps.exporting and generator != self.config.generator_specs()[0]:
            return  # tasks export: every system is asked the same tasks; one copy of them
        task = generation_task(spec.topic_index or 0, spec.sample_index, topic=spec.topic,
                               seed=self.config.seed)
        await self.steps.generate_step(
            "ligbench/generate", spec.id, "", self.generators[generator],
            render("ligbench_generate", topic=spec.topic), parse_generated_idea, task=task,
            temperature=self.config.generation_temperature, max_tokens=self.config.generation_max_tokens,
            seed=self.config.seed, sample_index=spec.sample_index, extra={"system": spec.system,
                                                                          "topic": spec.topic})

    def idea_text(self, spec: IdeaSpec) -> str | None:
        if spec.text is not None:
            return spec.text
        record = self.store.get("ligbench/generate", spec.id)
        if record and record["judgment"]["parse_ok"]:
            text: str = record["judgment"]["parsed"]
            return text
        return None

    async def score(self, spec: IdeaSpec) -> None:
        text = self.idea_text(spec)
        if text is not None:
            self.idea_scores[spec.id] = await self.scorer.score(spec.id, text, cutoff=spec.cutoff)

    async def execute(self, ctx: RunContext, specs: Sequence[IdeaSpec]) -> None:
        """Generate the ideas, then score each against the corpus (exporting tasks: generation only)."""
        if ctx.steps.exporting:
            await self.steps.run_phases(specs, [("generate ideas", self.generate)])
            return
        await self.steps.run_phases(specs, [("generate ideas", self.generate), ("score ideas", self.score)])

    async def aclose(self, ctx: RunContext) -> None:
        """Close the scorer's Semantic Scholar client."""
        scorer = getattr(self, "scorer", None)
        if scorer is not None:
            await scorer.aclose()

    def aggregate(self, ctx: RunContext, specs: Sequence[IdeaSpec]) -> dict[str, Any]:
        """results.json: per system means with bootstrap intervals, counts, failures; per idea detail."""
        systems: dict[str, Any] = {}
        for system in dict.fromkeys(s.system for s in specs):
            mine = [s for s in specs if s.system == system]
            scored = [self.idea_scores[s.id] for s in mine if s.id in self.idea_scores]
            ok = [r for r in scored if r.status == "scored" and r.scores]
            gen_failures = sum(1 for s in mine if s.text is None and self._generation_failed(s.id))
            comparisons = [c for r in ok for c in r.comparisons]
            two_orders = [c for c in comparisons if len(c.disagreement) == 3]
            block: dict[str, Any] = {
                "n_ideas": len(mine), "n_scored": len(ok),
                "status": dict(Counter(r.status for r in scored)),
                "not_done": len(mine) - len(scored) - gen_failures,
                "parse_failures": {"generate": gen_failures, **{
                    k: sum(r.parse_failures.get(k, 0) for r in scored)
                    for k in ("formalize", "initial_score", "compare", "rewrite")}},
                "comparisons_per_idea": (len(comparisons) / len(ok)) if ok else None,
                "order_disagreement_rate": {
                    d: (sum(c.disagreement[d] for c in two_orders) / len(two_orders)) if two_orders else None
                    for d in ("rating", "soundness", "contribution")},
                "scores": {},
                "duplicates": self._duplicates(mine),
            }
            systems[system] = block
        # the per-system means come from the same per-idea scores the headline is computed from
        ideas = {k: v.model_dump(mode="json") for k, v in self.idea_scores.items()}
        settings = IntervalSettings(n_resamples=self.config.bootstrap_resamples, seed=self.config.seed)
        summaries = {(system, group): summary for _, (system, group), summary in
                     summarise_scores(ligbench_scores([], {"ideas": ideas}), [SCORE_SPEC], settings)}
        for system, block in systems.items():
            for key in SCORE_KEYS:
                summary = summaries.get((system, key))
                block["scores"][key] = {"mean": summary.value if summary else None,
                                        "n": summary.n if summary else 0,
                                        "ci95": summary.ci if summary else None}
        scored = [r for r in self.idea_scores.values() if r.status == "scored" and r.formalization]
        papers = {c.reference_id: self.scorer.corpus.by_id[c.reference_id] for r in scored
                  for c in r.comparisons if c.reference_id in self.scorer.corpus.by_id}
        blinding = blinding_block(self.steps, list(papers.values()),
                                  [formal_text(r.formalization) for r in scored if r.formalization],
                                  self.config.scoring.blind_references)
        return {
            "benchmark": "ligbench", "benchmark_version": BENCHMARK_VERSION, "judge": self.config.judge,
            "bootstrap": bootstrap_settings(self.config.bootstrap_resamples, self.config.seed),
            "blinding": blinding,
            "corpus": self.config.corpus, "corpus_size": len(self.scorer.corpus),
            "n_topics": len(self.config.topics), "systems": systems,
            "ideas": ideas,
            "llm_errors": ctx.steps.error_count,
        }

    def _duplicates(self, specs: Sequence[IdeaSpec]) -> dict[str, Any]:
        """Duplicates among the ideas one system generated for the same topic (generated ones only)."""
        by_topic: dict[str, list[str]] = {}
        for spec in specs:
            text = None if spec.text is not None else self.idea_text(spec)
            if text is not None:
                by_topic.setdefault(spec.topic, []).append(text)
        return duplicate_report(by_topic.values())

    def _generation_failed(self, idea_id: str) -> bool:
        record = self.store.get("ligbench/generate", idea_id)
        return bool(record) and not record["judgment"]["parse_ok"]  # type: ignore[index]

    def tables(self, results: dict[str, Any]) -> list[Table]:
        """Scores per system with intervals, and the ideas."""
        return [*results_tables(results), idea_table(results)]

    def figures(self, ctx: RunContext, results: dict[str, Any]) -> list[tuple[str, Any]]:
        """Grouped bars of the scores per system."""
        return [("Scores per system", scores_figure(results))]

    def sections(self, ctx: RunContext, items: Sequence[IdeaSpec], results: dict[str, Any]) -> list[Section]:
        """Formalisation and comparisons of the first ideas."""
        return example_sections(results)

    def notes(self, ctx: RunContext, results: dict[str, Any]) -> list[str]:
        """Ideas not done yet, and novelty notes (e.g. Semantic Scholar unreachable)."""
        notes = [f"{s}: {b['not_done']} idea(s) not done yet; re-run to resume"
                 for s, b in results["systems"].items() if b["not_done"]]
        notes += sorted({r["novelty"]["note"] for r in results["ideas"].values()
                         if r.get("novelty") and r["novelty"].get("note")})
        notes += [f"{s}: {b['parse_failures']['rewrite']} reference paper(s) could not be rewritten into the "
                  "ideas' form (parse failure) and were replaced by the next retrieved paper"
                  for s, b in results["systems"].items() if b["parse_failures"].get("rewrite")]
        return notes + [f"the surface feature {name!r} alone tells a reference paper from an idea "
                        "(separation >= 0.75): the comparisons are not blind"
                        for name in results["blinding"]["surface"]["separating"]]

    def scores(self, records: Sequence[Record], results: dict[str, Any]) -> list[Score]:
        """Each idea's final scores, named by its system (:func:`.scores.ligbench_scores`)."""
        return ligbench_scores(records, results)

    def expected_metrics(self) -> list[str]:
        """``ligbench.score`` (``ligbench.judge_accuracy`` is ``ligbench-judge``'s)."""
        return [SCORE_SPEC.name]


def results_tables(results: dict[str, Any]) -> list[Table]:
    """One row per system: the four LigBench scores (0-5) with counts and failure counts."""
    rows = []
    for system, b in results["systems"].items():
        fails = sum(b["parse_failures"].values())
        dis = [v for v in b["order_disagreement_rate"].values() if v is not None]
        rows.append([system, b["n_ideas"], b["n_scored"],
                     *[b["scores"][k]["mean"] for k in SCORE_KEYS],
                     b["comparisons_per_idea"], (sum(dis) / len(dis)) if dis else None, fails])
    detail = [[system, key, s["n"], s["mean"], s["ci95"]]
              for system, b in results["systems"].items() for key, s in b["scores"].items()]
    blind = results.get("blinding")
    tables = []
    if blind:
        before = blind["surface_published"] if blind["reference_text"] == "rewritten" else None
        tables.append(Table(
            title="Blinding check: reference papers vs ideas in the pairwise comparisons",
            columns=["", "surface feature", "reference papers", "ideas", "separation",
                     "separation (published text)"],
            rows=surface_rows("comparisons", blind["surface"], before),
            note=f"{blind['papers']} reference paper(s) compared. Both sides show the same four fields; "
                 "the papers are rewritten into the ideas' form by the judge (--parity: their published "
                 "analyses). Share of texts with the feature (words: mean count) and how well it alone "
                 "tells a paper from an idea (balanced accuracy, 0.5 = not at all, 1 = always)."))
    return [
        Table(title="LigBench scores per system (0-5)",
              columns=["system", "ideas", "scored", *SCORE_KEYS, "comparisons/idea",
                       "order disagreement", "parse failures"], rows=rows,
              note=f"judge {results['judge']}; {results['corpus_size']} reference papers from "
                   f"{results['corpus']}; rating/contribution/soundness by one-sided Elo against "
                   "venue-debiased reference scores; novelty = 0.7·s_sim + 0.3·s_llm."),
        Table(title="Means with bootstrap 95% intervals over ideas",
              columns=["system", "score", "n", "mean", "95% CI"], rows=detail),
        *tables,
        *([Table(title="Duplicate ideas among the samples per topic", columns=["system", *DUPLICATE_COLUMNS],
                 rows=[[system, *duplicate_row(b["duplicates"])] for system, b in results["systems"].items()
                       if b.get("duplicates")],
                 note=duplicate_note())] if any(b.get("duplicates", {}).get("ideas")
                                               for b in results["systems"].values()) else []),
    ]


def scores_figure(results: dict[str, Any]) -> Any:
    """Grouped bars: mean of each LigBench score per system, with bootstrap 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    systems = list(results["systems"])
    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(SCORE_KEYS) * max(1, len(systems)) / 2), 3.2))
    width = 0.8 / max(1, len(systems))
    x = np.arange(len(SCORE_KEYS))
    for i, system in enumerate(systems):
        block = results["systems"][system]["scores"]
        means = [block[k]["mean"] if block[k]["mean"] is not None else np.nan for k in SCORE_KEYS]
        cis = [block[k]["ci95"] for k in SCORE_KEYS]
        lows = [m - ci[0] if ci else 0 for m, ci in zip(means, cis, strict=True)]
        highs = [ci[1] - m if ci else 0 for m, ci in zip(means, cis, strict=True)]
        ax.bar(x + i * width, means, width, yerr=[lows, highs], label=system[:40], capsize=3)
    ax.set_xticks(x + width * (len(systems) - 1) / 2, SCORE_KEYS)
    ax.set_ylim(0, 5)
    ax.set_ylabel("score (0-5)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def idea_table(results: dict[str, Any], limit: int = 50) -> Table:
    rows = []
    for idea_id, r in list(results["ideas"].items())[:limit]:
        s = r.get("scores") or {}
        rows.append([idea_id, r["status"], *[s.get(k) for k in SCORE_KEYS], len(r["comparisons"])])
    return Table(title="Ideas", columns=["idea", "status", *SCORE_KEYS, "comparisons"], rows=rows)


def example_sections(results: dict[str, Any], limit: int = 3) -> list[Section]:
    items = []
    for idea_id, r in list(results["ideas"].items())[:limit]:
        if not r.get("formalization"):
            continue
        body = "\n".join(f"{k}: {v}" for k, v in r["formalization"].items())
        body += f"\n\nInitial scores: {r.get('initial')}\n"
        for c in r["comparisons"]:
            body += f"\nvs {c['title']} (s_ref {c['s_ref']}): outcome {c['outcome']}"
        items.append((idea_id, body))
    return [Section(title="Examples", items=items)] if items else []
