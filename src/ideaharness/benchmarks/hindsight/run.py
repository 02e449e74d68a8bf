"""The HindSight run: ideas per topic from literature up to the cutoff, candidate future papers,
match judgments, reviews; each unit recorded in the run directory (see the package docstring)."""

from __future__ import annotations

import datetime as dt
import functools
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ideaharness.benchmarks.hindsight import reliability
from ideaharness.benchmarks.hindsight.aggregate import aggregate_run
from ideaharness.benchmarks.hindsight.config import BENCHMARK_VERSION, HindsightConfig
from ideaharness.benchmarks.hindsight.contract import generation_task
from ideaharness.benchmarks.hindsight.parsers import parse_idea, parse_match, parse_review
from ideaharness.benchmarks.hindsight.report import (
    example_sections,
    result_notes,
    results_tables,
    scatter_figure,
)
from ideaharness.benchmarks.hindsight.results import HindsightResults
from ideaharness.benchmarks.hindsight.scores import hindsight_scores, register_metrics
from ideaharness.benchmarks.hindsight.search import (
    KEEP,
    CandidatePool,
    ScholarUnavailable,
    Searcher,
    key_phrases,
    paper_text,
    rank_candidates,
    text_sha,
)
from ideaharness.benchmarks.hindsight.topics import (
    Topic,
    check_run_cutoff,
    load_topics,
    pool_ends_early,
    window_end,
    window_place,
)
from ideaharness.cutoff import CUTOFF_STEP, CutoffEntry, LiteratureAccess, effective_cutoff, filter_access
from ideaharness.metrics.embeddings import EmbeddingMemo
from ideaharness.metrics.reliability.adapters import Record
from ideaharness.prompts import render
from ideaharness.runner import Benchmark, RunContext
from ideaharness.runner.registry import register_benchmark
from ideaharness.runner.steps import Reask
from ideaharness.runs.scores import Score
from ideaharness.schema import Paper
from ideaharness.seeding import derive_seed, rng_for
from ideaharness.systems.spec import is_system
from ideaharness.tables import Section, Table

register_metrics()

ORDERS = ("idea_first", "paper_first")
FUTURE_SOURCES = ("pool", "corpus", "s2_search", "openalex_search")
LITERATURE = LiteratureAccess(
    sources={"literature": "the topic's papers up to its cutoff T, shown to the generator",
             "pool": "the topic's candidate pool: papers of the window (T, T + horizon]",
             "corpus": "--corpus papers in the window",
             "s2_search": "Semantic Scholar key-phrase searches in the window",
             "openalex_search": "OpenAlex key-phrase searches in the window"},
    prompt_steps=("generate",),
    future_sources=FUTURE_SOURCES,
    note=("the generator sees only the topic's literature up to T (undated works dropped); the window "
          "(T, T + horizon] is read to match ideas, and its papers are shown to the match judge only"))


def _match_reask(order: list[int], *, texts: tuple[str, str], kinds: tuple[str, str]) -> Reask:
    """The match judgment with its two texts shown in ``order`` (indices into the shown order)."""
    return Reask(render("hindsight_match", first=texts[order[0]], second=texts[order[1]],
                        first_kind=kinds[order[0]], second_kind=kinds[order[1]]))


def _citations(paper: Paper) -> str:
    """``"12 citations"``, or ``"citations unknown"`` for a paper without a count."""
    return "citations unknown" if paper.citation_count is None else f"{paper.citation_count} citations"


@register_benchmark("hindsight")
class Hindsight(Benchmark):
    """HindSight (see the package docstring); one instance per run."""

    version = BENCHMARK_VERSION
    title = "HindSight results"
    summary = ("Run HindSight: ideas from a topic's literature up to a cutoff, matched against the papers "
               "of the following 30 months; match rate and realised impact, beside an LLM judge's scores.")
    config_class = HindsightConfig
    item_noun = "topics"
    extras = ("embed_fn", "scholar", "openalex")
    judgment_adapters = reliability.JUDGMENT_ADAPTERS
    no_gold_steps = {  # no form-only baseline applies (issue 32, Build (b))
        "match": "whether a later paper carries out the idea: the judge's call is the measure (what is "
                 "matched is scored by the paper's impact), no gold answer",
        "review": "1-10 ratings of an idea per criterion: no gold answer"}
    literature = LITERATURE
    results_class = HindsightResults
    free_settings = frozenset({"grounding", "max_literature"})
    """What the generator is shown defines the system under test, like the generator itself:
    ``compare`` sets a retrieval-augmented run beside a vanilla one (the HindSight comparison)."""

    config: HindsightConfig

    @classmethod
    def generator_models(cls, records: Sequence[Record]) -> dict[str, str]:
        """Idea id -> its generator (:func:`.reliability.generator_models`)."""
        return reliability.generator_models(records)

    def __init__(self, config: Any, **extras: Any) -> None:
        super().__init__(config, **extras)
        self.embedder = EmbeddingMemo(config.embedding_model, embed_fn=extras.get("embed_fn"))
        """The run's sentence embeddings, memoised per text (its runtime is set in setup)."""
        self._corpus: list[Paper] | None = None
        self._today = dt.date.today()

    # -- inputs ----------------------------------------------------------------------
    def input_files(self) -> Mapping[str, Sequence[Path]]:
        """``--data`` (a topics file; the bundled sample too) and ``--corpus`` files (the runner
        adds ``--ideas``)."""
        from ideaharness.benchmarks.hindsight.topics import topics_path

        data = topics_path(self.config.data)
        return {"--data": [data], **({"--corpus": [Path(c) for c in self.config.corpus]} if self.config.corpus
                                     else {})}

    def load(self) -> list[Topic]:
        """The topics of ``--data`` (:func:`.topics.load_topics`)."""
        return load_topics(self.config.data)

    def apply_cutoff(self, items: Sequence[Any], run_cutoff: dt.date | None) -> tuple[list[Any],
                                                                                    list[CutoffEntry]]:
        """Each topic with its effective cutoff T (the earlier of its own and ``--cutoff``; an earlier
        ``--cutoff`` its pool cannot cover is refused: :func:`.topics.check_run_cutoff`), its
        literature cut to the works up to T (undated ones dropped: they could be later) and its pool
        and the ``--corpus`` cut to the window (T, T + horizon]; one ``cutoff`` record per access
        (sources ``literature``, ``pool``, ``corpus``)."""
        out: list[Any] = []
        entries: list[CutoffEntry] = []
        short: list[str] = []
        for topic in items:
            check_run_cutoff(topic, run_cutoff)  # UserError: a pool that cannot cover the earlier window
            cutoff = effective_cutoff(topic.knowledge_cutoff, run_cutoff) or topic.knowledge_cutoff
            end = window_end(cutoff, self.config.horizon_months)
            if pool_ends_early(topic, end):
                short.append(f"{topic.id} (built to {topic.window_end}, run to {end})")
            start = cutoff + dt.timedelta(days=1)
            shown, lit = filter_access(topic.literature, cutoff, source="literature", undated="drop")
            pool, pooled = filter_access(topic.future, end, source="pool", start=start, undated="drop")
            entries += [(topic.id, "literature", lit), (topic.id, "pool", pooled)]
            if self.config.corpus:
                _, corpus = filter_access(self.corpus(), end, source="corpus", start=start, undated="drop")
                entries.append((topic.id, "corpus", corpus))
            out.append(topic.model_copy(update={"knowledge_cutoff": cutoff, "literature": shown,
                                                "future": pool}))
        if short:
            more = " …" if len(short) > 3 else ""
            print(f"warning: the window of {len(short)} topic(s) ends after the window their pool was built "
                  f"for: {'; '.join(short[:3])}{more}; their last months have no pool paper, so match rates "
                  "are lower bounds (rebuild with a longer --horizon)", file=sys.stderr)
        return out, entries

    async def setup(self, ctx: RunContext) -> None:
        """Bind the run's store, steps and models; open the scholarly searches (``--search``)."""
        self.ctx = ctx
        self.store = ctx.store
        self.steps = ctx.steps
        # --device, the embedding store
        self.embedding_runtime = self.embedder.runtime = ctx.options.embedding_runtime()
        self.searcher = Searcher(
            self.config.search, scholar_base_url=self.config.scholar_base_url,
            openalex_base_url=self.config.openalex_base_url, cache_dir=str(ctx.out / "scholar_cache"),
            timeout_s=ctx.options.timeout, scholar=self.extra.get("scholar"),
            openalex=self.extra.get("openalex"))

    async def aclose(self, ctx: RunContext) -> None:
        """Close the scholarly clients."""
        searcher = getattr(self, "searcher", None)
        if searcher is not None:
            await searcher.aclose()

    # -- what a topic allows ---------------------------------------------------------
    def system_label(self) -> str:
        """Who generates, as results.json names it: the model string, or the system's name."""
        role = self.config.generator_role
        return self.config.system_name(self.config.generator) if is_system(role) else role

    def window(self, topic: Topic) -> tuple[dt.date, dt.date]:
        """``(T, T + horizon)`` of a topic (T its effective cutoff, :meth:`apply_cutoff`)."""
        return topic.knowledge_cutoff, window_end(topic.knowledge_cutoff, self.config.horizon_months)

    def as_of(self, topic: Topic) -> dt.date:
        """The day a topic's citation counts count up to: the topic's, the run's ``--impact-as-of``,
        else today."""
        return topic.impact_as_of or self.config.impact_as_of or self._today

    def shown_literature(self, topic: Topic) -> list[Paper]:
        """The papers a generator sees for ``topic``: none under ``--grounding none``, else its
        literature up to T (:meth:`apply_cutoff`), most cited first, at most ``max_literature``."""
        if self.config.grounding == "none" or self.config.max_literature == 0:
            return []
        kept = sorted(topic.literature, key=lambda p: (-(p.citation_count or 0), p.id))
        return kept[: self.config.max_literature]

    def corpus(self) -> list[Paper]:
        """The ``--corpus`` papers (read once)."""
        if self._corpus is None:
            from ideaharness.data.corpus import load_corpus_file

            self._corpus = [p for path in self.config.corpus for p in load_corpus_file(path)]
        return self._corpus

    def pool(self, topic: Topic) -> list[Paper]:
        """The topic's pool papers in the window (the reference set of its impact baselines)."""
        cutoff, end = self.window(topic)
        return [p for p in topic.future if window_place(p, cutoff, end) == "in"]

    def accesses(self) -> dict[str, list[dict[str, Any]]]:
        """Topic id -> its ``cutoff`` access records of the future window (pool, corpus, searches),
        read in one pass over the run's records."""
        out: dict[str, list[dict[str, Any]]] = {}
        for iid, _, data in self.store.records(CUTOFF_STEP):
            if data.get("source") in FUTURE_SOURCES:
                out.setdefault(iid, []).append(data)
        return out

    def embed(self, texts: Sequence[str]) -> Any:
        """L2-normalised embeddings of ``texts`` (rows), memoised per text for this run."""
        return self.embedder(texts)

    # -- recorded units --------------------------------------------------------------
    def idea(self, topic_id: str, k: int) -> dict[str, Any] | None:
        """``{"title", "idea", "key_phrases"}`` of idea ``k``, None when it failed or did not parse."""
        rec = self.store.get("generate", topic_id, str(k))
        return dict(rec["judgment"]["parsed"]) if rec and rec["judgment"]["parse_ok"] else None

    def candidates_record(self, topic_id: str, k: int) -> dict[str, Any] | None:
        """The candidates record of idea ``k``, None when there is none or it was found for another
        text of the idea (re-judged since)."""
        idea = self.idea(topic_id, k)
        rec = self.store.get("candidates", topic_id, str(k))
        if rec is None or idea is None or rec.get("idea_sha256") != text_sha(idea["idea"]):
            return None
        return rec

    def judged(self, record: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The candidates of a record the judge is asked about: the first ``match_candidates`` with
        a similarity of at least ``min_similarity``."""
        return [c for c in record.get("candidates") or []
                if c["similarity"] >= self.config.min_similarity][: self.config.match_candidates]

    def orders(self, topic_id: str, k: int, n: int) -> list[str]:
        """The orders pair ``n`` of idea ``k`` is asked in: both, or one seeded order."""
        if self.config.match_orders == "both":
            return list(ORDERS)
        return [ORDERS[int(rng_for(self.config.seed, topic_id, k, n, "order").integers(2))]]

    def match_verdict(self, topic_id: str, k: int, n: int, order: str) -> bool | None:
        """The parsed verdict of one match judgment, None when missing or unparsed."""
        rec = self.store.get("match", topic_id, f"{k}/{n}/{order}")
        if rec is None or not rec["judgment"]["parse_ok"]:
            return None
        return bool(rec["judgment"]["parsed"])

    # -- phases ----------------------------------------------------------------------
    async def generate(self, topic: Topic) -> None:
        """``ideas_per_topic`` ideas, each grounded in the literature up to T (``--grounding``)."""
        cfg = self.config
        cutoff, _ = self.window(topic)
        shown = self.shown_literature(topic)
        texts = [paper_text(p) + (f" ({p.publication_date or p.year})" if p.publication_date or p.year
                                  else "") for p in shown]
        inputs = {"topic": topic.topic, "cutoff": cutoff.isoformat(),
                  "literature": [{"title": p.title, "abstract": p.abstract, "year": p.year,
                                  "publication_date": p.publication_date.isoformat() if p.publication_date
                                  else None} for p in shown]}
        generator = self.ctx.model("generator")
        for k in range(cfg.ideas_per_topic):
            seed = derive_seed(cfg.seed, topic.id, k) % 2**31
            await self.steps.generate_step(
                "generate", topic.id, str(k), generator,
                render("hindsight_generate", topic=topic.topic, cutoff=cutoff.isoformat(), literature=texts,
                       number=k + 1),
                parse_idea, task=generation_task(topic.id, k, inputs=inputs, seed=seed),
                temperature=cfg.generation_temperature, max_tokens=cfg.generation_max_tokens, seed=seed,
            )

    async def candidates(self, topic: Topic) -> None:
        """Each idea's candidate future papers (:mod:`.search`), recorded; a search refused for good
        skips that idea's unit (counted: the run is partial; a re-run searches again)."""
        cfg = self.config
        cutoff, end = self.window(topic)
        for k in range(cfg.ideas_per_topic):
            idea = self.idea(topic.id, k)
            if idea is None or self.candidates_record(topic.id, k) is not None:
                continue
            pool = CandidatePool(cutoff, end)
            pool.add("pool", topic.future)
            if cfg.corpus:
                pool.add("corpus", self.corpus())
            queries = key_phrases(idea)
            accesses: list[tuple[str, dict[str, Any]]] = []
            try:
                for source in cfg.search:
                    for q, query in enumerate(queries):
                        found, access = await self.searcher.search(source, query, cutoff, end,
                                                                   cfg.search_limit)
                        pool.add(f"{source}_search", found)
                        accesses.append((f"{source}_search/{k}/{q}", access))
            except ScholarUnavailable as exc:
                self.steps.fail("candidates", topic.id, str(k), exc, skipped=True)
                continue
            for key, access in accesses:  # written once every search of the idea succeeded
                await self._record(CUTOFF_STEP, topic.id, access, key)
            as_of = self.as_of(topic).isoformat()
            searched = self._today.isoformat()
            await self.embedder.aembed([idea["idea"], *(paper_text(p) for p in pool.papers)])  # off the loop
            ranked = rank_candidates(idea["idea"], pool.papers, self.embed)[:KEEP]
            record = {
                "idea_sha256": text_sha(idea["idea"]), "queries": queries, "window": [cutoff.isoformat(),
                                                                                       end.isoformat()],
                "guard_excluded": pool.guard, "n_candidates": len(pool.papers),
                "candidates": [{"paper": p.model_dump(mode="json"), "similarity": sim,
                                "sources": pool.sources[p.id],
                                "as_of": as_of if {"pool", "corpus"} & set(pool.sources[p.id]) else searched}
                               for p, sim in ranked],
            }
            await self._record("candidates", topic.id, record, str(k))

    async def _record(self, step: str, topic_id: str, data: dict[str, Any], key: str) -> None:
        """Record ``data`` as the unit's record (in place of an older one: an idea re-judged since),
        group-committed off the event loop (no fsync in the loop's thread)."""
        if self.store.has(step, topic_id, key):
            await self.store.areplace(step, topic_id, data, key)
        else:
            await self.store.aput(step, topic_id, data, key)

    async def match(self, topic: Topic) -> None:
        """The judge's verdict on each judged (idea, candidate) pair, in each order."""
        cfg = self.config
        judge = self.ctx.model("judge")
        for k in range(cfg.ideas_per_topic):
            idea = self.idea(topic.id, k)
            record = self.candidates_record(topic.id, k)
            if idea is None or record is None:
                continue
            for n, cand in enumerate(self.judged(record)):
                paper = Paper.model_validate(cand["paper"])
                shown = {reliability.idea_id(topic.id, k): idea["idea"],
                         paper.id: f"{paper_text(paper)} ({paper.publication_date or paper.year}; "
                                   f"{_citations(paper)}; {paper.venue or 'venue unknown'})"}
                for order in self.orders(topic.id, k, n):
                    ids = [reliability.idea_id(topic.id, k), paper.id]
                    texts = (idea["idea"] if not idea.get("title") else f"{idea['title']}. {idea['idea']}",
                             paper_text(paper))
                    kinds = ("research idea", "published paper")
                    if order == "paper_first":
                        ids, texts, kinds = ids[::-1], texts[::-1], kinds[::-1]
                    await self.steps.judge_step(
                        "match", topic.id, f"{k}/{n}/{order}", judge,
                        render("hindsight_match", first=texts[0], second=texts[1], first_kind=kinds[0],
                               second_kind=kinds[1]),
                        parse_match, positions=ids,
                        extra={"idea": k, "candidate": n, "paper_id": paper.id, "order": order,
                               "similarity": cand["similarity"], "labels": list(kinds),
                               "shown_texts": shown},  # the viewer shows the paper beside the idea
                        reorder=functools.partial(_match_reask, texts=texts, kinds=kinds),
                        temperature=cfg.judge_temperature, max_tokens=cfg.judge_max_tokens, seed=cfg.seed,
                    )

    async def review(self, topic: Topic) -> None:
        """The LLM judge's novelty and quality scores of each idea (what HindSight compares with)."""
        cfg = self.config
        judge = self.ctx.model("judge")
        for k in range(cfg.ideas_per_topic):
            idea = self.idea(topic.id, k)
            if idea is None:
                continue
            text = idea["idea"] if not idea.get("title") else f"{idea['title']}. {idea['idea']}"
            await self.steps.judge_step(
                "review", topic.id, str(k), judge, render("hindsight_review", topic=topic.topic, idea=text),
                parse_review, extra={"idea": k}, temperature=cfg.judge_temperature,
                max_tokens=cfg.judge_max_tokens, seed=cfg.seed,
            )

    async def execute(self, ctx: RunContext, items: Sequence[Topic]) -> None:
        """Generation; then candidates, match judgments and reviews (``tasks export``: generation only)."""
        await self.steps.run_phases(items, [("ideas", self.generate)])
        if self.steps.exporting:
            return
        await self.steps.run_phases(items, [("candidates", self.candidates), ("match judgments", self.match),
                                            ("reviews", self.review)])

    def aggregate(self, ctx: RunContext, items: Sequence[Topic]) -> dict[str, Any]:
        """See :func:`.aggregate.aggregate_run`."""
        return aggregate_run(self, items)

    # -- presentation ------------------------------------------------------------------
    def tables(self, results: dict[str, Any]) -> list[Table]:
        """Match rate and impact with their n and intervals, the HindSight check, counts, ideas."""
        return results_tables(results)

    def figures(self, ctx: RunContext, results: dict[str, Any]) -> list[tuple[str, Any]]:
        """Judge score vs realised impact, one point per idea."""
        return [("Judge novelty vs realised impact (one point per idea)", scatter_figure(results))]

    def notes(self, ctx: RunContext, results: dict[str, Any]) -> list[str]:
        """Exclusions, undecided ideas, matches without citation counts, pools shorter than the window."""
        return result_notes(results)

    def sections(self, ctx: RunContext, items: Sequence[Topic], results: dict[str, Any]) -> list[Section]:
        """Each idea beside its matched future paper (the first ideas)."""
        return example_sections(results)

    def scores(self, records: Sequence[Record], results: dict[str, Any]) -> list[Score]:
        """Per topic: match rate, impact-weighted score, judge scores (:func:`.scores.hindsight_scores`)."""
        return hindsight_scores(results)
