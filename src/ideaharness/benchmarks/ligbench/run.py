"""LigBench runs: generate ideas per topic with each system, score them against the corpus.

``run_ligbench`` writes the usual run directory (config.json, records/, results.json,
report.html) and resumes from its records. ``score_idea`` scores one idea (the
``ideaharness score-idea`` command).

Topics: LigBench evaluates generators on 11 research topics, but the topic list is not in our
research notes (seed-benchmarks.md §4). :data:`DEFAULT_TOPICS` is therefore *our* list of 11
topics, one per large PAIR-IQ primary area (LLMs, training, RL, ...); pass ``topics`` to use
others.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ideaharness.benchmarks._common import ExecutionOptions, StepRunner, make_models
from ideaharness.benchmarks.ligbench.blinding import blinding_block
from ideaharness.benchmarks.ligbench.corpus import DebiasMeans, ReferenceCorpus
from ideaharness.benchmarks.ligbench.steps import IdeaScore, IdeaScorer, ScoringSettings, formal_text
from ideaharness.errors import ParseError, UserError
from ideaharness.llm.types import ChatModel
from ideaharness.metrics.embeddings import DEFAULT_EMBEDDING_MODEL
from ideaharness.metrics.stats import bootstrap_ci
from ideaharness.metrics.surface import surface_rows
from ideaharness.prompts import render
from ideaharness.report.html import Section, Table
from ideaharness.runs.store import RunStore

BENCHMARK_VERSION = "2"  # 2: references blinded by default (issue 9, items 13-15)
DEFAULT_MODEL = "local/qwen2.5-coder-1.5b"
SCORE_KEYS = ("rating", "contribution", "soundness", "novelty")
SCHOLARIDEAS_SYSTEM = "scholarideas (human-written plans)"

DEFAULT_TOPICS: list[str] = [
    "Reasoning and reliability of large language models",
    "Efficient training and optimisation of deep neural networks",
    "Sample-efficient reinforcement learning",
    "Alignment, safety and interpretability of AI systems",
    "Learning on graphs and graph neural networks",
    "Diffusion and other generative models for images and video",
    "Multimodal learning with vision and language",
    "Datasets and benchmarks for evaluating machine learning models",
    "Machine learning for the natural sciences",
    "Generalisation theory of deep learning",
    "Autonomous agents built on language models",
]


class LigBenchConfig(BaseModel):
    """Everything that determines a LigBench run's results (recorded in config.json)."""

    benchmark: Literal["ligbench"] = "ligbench"
    benchmark_version: str = BENCHMARK_VERSION
    generators: list[str] = Field(default_factory=lambda: [DEFAULT_MODEL])
    judge: str = DEFAULT_MODEL
    corpus: str
    topics: list[str] = Field(default_factory=lambda: list(DEFAULT_TOPICS))
    ideas_per_topic: int = Field(default=1, ge=1)
    scholarideas: int = Field(default=0, ge=0)
    scholarideas_root: str | None = None
    seed: int = 0
    generation_temperature: float = 0.7
    generation_max_tokens: int = 700
    scoring: ScoringSettings = Field(default_factory=lambda: ScoringSettings())
    debias_means: DebiasMeans = "corpus"
    embedding_model: str = DEFAULT_EMBEDDING_MODEL
    max_attempts: int = Field(default=3, ge=1, le=10)
    bootstrap_resamples: int = 2000


class IdeaSpec(BaseModel):
    """One idea to score: who made it, for which topic, and (once known) its text."""

    id: str
    system: str
    topic: str
    text: str | None = None
    cutoff: str | None = None
    sample_index: int = 0


def parse_generated_idea(text: str) -> str:
    """A generated idea must be substantive text (≥ 40 characters after stripping)."""
    stripped = text.strip()
    if len(stripped) < 40:
        raise ParseError(f"generated idea too short ({len(stripped)} characters)")
    return stripped


class LigBench:
    """One LigBench run over a run directory. Use :func:`run_ligbench` unless embedding it."""

    def __init__(self, config: LigBenchConfig, options: ExecutionOptions, generators: dict[str, ChatModel],
                 judge_model: ChatModel, corpus: ReferenceCorpus) -> None:
        self.config = config
        self.options = options
        self.generators = generators
        self.store = RunStore(options.out, config.model_dump(mode="json"))
        self.steps = StepRunner(self.store, max_attempts=config.max_attempts, progress=options.progress)
        self.scorer = IdeaScorer(corpus, judge_model, self.steps, config.scoring)
        self.scores: dict[str, IdeaScore] = {}

    def specs(self) -> list[IdeaSpec]:
        out = [IdeaSpec(id=f"{system}::t{ti:02d}::{k}", system=system, topic=topic, sample_index=k)
               for system in self.config.generators for ti, topic in enumerate(self.config.topics)
               for k in range(self.config.ideas_per_topic)]
        if self.config.scholarideas:
            from ideaharness.data.scholarideas import load_scholarideas

            if not self.config.scholarideas_root:
                raise UserError("--scholarideas needs --scholarideas-root: the ScholarIdeas folder of "
                                "the ScholarEval release (skai-research/ScholarEval, MIT)")
            plans = load_scholarideas(self.config.scholarideas_root, limit=self.config.scholarideas)
            out += [IdeaSpec(id=f"scholarideas::{p.id}", system=SCHOLARIDEAS_SYSTEM, topic=p.title,
                             text=p.text, cutoff=p.cutoff.isoformat() if p.cutoff else None) for p in plans]
        if self.options.limit is not None:
            out = out[: self.options.limit]
        return out

    async def generate(self, spec: IdeaSpec) -> None:
        if spec.text is not None:
            return
        await self.steps.judge_step(
            "ligbench/generate", spec.id, "", self.generators[spec.system],
            render("ligbench_generate", topic=spec.topic), parse_generated_idea,
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
            self.scores[spec.id] = await self.scorer.score(spec.id, text, cutoff=spec.cutoff)

    async def execute(self, specs: Sequence[IdeaSpec]) -> None:
        await self.steps.run_phases(specs, [("generate ideas", self.generate), ("score ideas", self.score)])

    def aggregate(self, specs: Sequence[IdeaSpec]) -> dict[str, Any]:
        """results.json: per system means with bootstrap intervals, counts, failures; per idea detail."""
        systems: dict[str, Any] = {}
        for system in dict.fromkeys(s.system for s in specs):
            mine = [s for s in specs if s.system == system]
            scored = [self.scores[s.id] for s in mine if s.id in self.scores]
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
            }
            for key in SCORE_KEYS:
                values = [r.scores[key] for r in ok if r.scores]
                block["scores"][key] = {
                    "mean": sum(values) / len(values) if values else None, "n": len(values),
                    "ci95": bootstrap_ci(values, n_resamples=self.config.bootstrap_resamples,
                                         seed=self.config.seed)}
            systems[system] = block
        scored = [r for r in self.scores.values() if r.status == "scored" and r.formalization]
        papers = {c.reference_id: self.scorer.corpus.by_id[c.reference_id] for r in scored
                  for c in r.comparisons if c.reference_id in self.scorer.corpus.by_id}
        blinding = blinding_block(self.steps, list(papers.values()),
                                  [formal_text(r.formalization) for r in scored if r.formalization],
                                  self.config.scoring.blind_references)
        return {
            "benchmark": "ligbench", "benchmark_version": BENCHMARK_VERSION, "judge": self.config.judge,
            "blinding": blinding,
            "corpus": self.config.corpus, "corpus_size": len(self.scorer.corpus),
            "n_topics": len(self.config.topics), "systems": systems,
            "ideas": {k: v.model_dump(mode="json") for k, v in self.scores.items()},
            "llm_errors": self.steps.error_count,
        }

    def _generation_failed(self, idea_id: str) -> bool:
        record = self.store.get("ligbench/generate", idea_id)
        return bool(record) and not record["judgment"]["parse_ok"]  # type: ignore[index]


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


async def run_ligbench_async(config: LigBenchConfig, options: ExecutionOptions, *,
                             generators: dict[str, ChatModel] | None = None,
                             judge: ChatModel | None = None) -> dict[str, Any]:
    """Run (or resume) LigBench; returns the results also written to ``results.json``."""
    corpus = ReferenceCorpus.load(config.corpus, embedding_model=config.embedding_model,
                                  debias_means=config.debias_means)
    if not config.topics and not config.scholarideas:
        raise UserError("--topics: no topics given (and no --scholarideas plans)")
    if judge is None:
        judge = make_models(config.judge, config.judge, options)[1]  # honours judge_base_url
    if generators is None:
        same_endpoint = (options.judge_base_url or options.base_url) == options.base_url
        generators = {name: judge if (name == config.judge and same_endpoint)
                      else make_models(name, name, options.model_copy(update={"judge_base_url": None}))[0]
                      for name in config.generators}
    bench = LigBench(config, options, generators, judge, corpus)
    specs = bench.specs()
    try:
        await bench.execute(specs)
    finally:
        results = bench.aggregate(specs)
        bench.store.write_results(results)
    from ideaharness.report.html import write_report

    notes = bench.steps.notes() + [f"{s}: {b['not_done']} idea(s) not done yet; re-run to resume"
                                   for s, b in results["systems"].items() if b["not_done"]]
    notes += sorted({r["novelty"]["note"] for r in results["ideas"].values()
                     if r.get("novelty") and r["novelty"].get("note")})
    notes += [f"{s}: {b['parse_failures']['rewrite']} reference paper(s) could not be rewritten into the "
              "ideas' form (parse failure) and were replaced by the next retrieved paper"
              for s, b in results["systems"].items() if b["parse_failures"].get("rewrite")]
    notes += [f"the surface feature {name!r} alone tells a reference paper from an idea (separation >= "
              "0.75): the comparisons are not blind" for name in results["blinding"]["surface"]["separating"]]
    write_report(Path(options.out) / "report.html", title="LigBench results",
                 config=config.model_dump(mode="json"),
                 tables=[*results_tables(results), idea_table(results)],
                 figures=[("Scores per system", scores_figure(results))], notes=notes,
                 sections=example_sections(results))
    return results


def run_ligbench(config: LigBenchConfig, options: ExecutionOptions, **models: Any) -> dict[str, Any]:
    """Synchronous wrapper of :func:`run_ligbench_async`."""
    return asyncio.run(run_ligbench_async(config, options, **models))


async def score_idea_async(
    text: str,
    corpus: str | Path | ReferenceCorpus,
    judge: str | ChatModel = DEFAULT_MODEL,
    *,
    settings: ScoringSettings | None = None,
    options: ExecutionOptions | None = None,
    out: str | Path | None = None,
    idea_id: str = "idea",
    cutoff: str | None = None,
    debias_means: DebiasMeans = "corpus",
) -> IdeaScore:
    """Score one idea (free text or a structured plan) against a reference corpus.

    Args:
        judge: a model string (built with ``options``: base URL, cache, concurrency) or a model.
        out: directory recording every judgment (re-running resumes); default a temporary
            directory (the LLM response cache still makes a repeat cheap).
    """
    cfg = settings or ScoringSettings()
    ref = corpus if isinstance(corpus, ReferenceCorpus) else ReferenceCorpus.load(corpus,
                                                                                  debias_means=debias_means)
    opts = options or ExecutionOptions(progress=False)
    model = judge if not isinstance(judge, str) else make_models(judge, judge, opts)[1]
    record_config = {"command": "score-idea", "judge": model.model, "corpus": ref.source,
                     "scoring": cfg.model_dump(mode="json"), "debias_means": ref.debias_means}
    with tempfile.TemporaryDirectory(prefix="ligbench-") as tmp:
        store = RunStore(out if out is not None else Path(tmp), record_config)
        scorer = IdeaScorer(ref, model, StepRunner(store, progress=False), cfg)
        return await scorer.score(idea_id, text, cutoff=cutoff)


def score_idea(text: str, corpus: str | Path | ReferenceCorpus, judge: str | ChatModel = DEFAULT_MODEL,
               **kwargs: Any) -> IdeaScore:
    """Synchronous wrapper of :func:`score_idea_async`."""
    return asyncio.run(score_idea_async(text, corpus, judge, **kwargs))
