"""AI Idea Bench 2025 (Qiu et al., arXiv 2504.14191): ideas as motivation + experiment plan from a
topic and its inspiration papers, scored against the target paper.

Per instance: (0) ground truth by decomposition when the data has none (TOMATO-Chem), optional
inspiration digests; (1) ``n_ideas`` ideas from the generator, or imported external ideas;
(2) IMCQ per component (Eq. 2), I2I per component (1-5, max over ideas, Eq. 3), I2T (1-5, max over
ideas, Eq. 4); (3) novelty NA (Eq. 7) and feasibility FA (Eq. 8-10) against Semantic Scholar, or
skipped with a note; (4) with ``compare`` run directories, a Swiss tournament and a Bradley-Terry
fit between the systems (:mod:`.competition`). Every step is a record; a re-run resumes.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from ideaharness.benchmarks._common import ExecutionOptions, StepRunner, make_models
from ideaharness.benchmarks.aiideabench import judges as J
from ideaharness.benchmarks.aiideabench.blinding import (
    generation_topic,
    judge_topic,
    parse_blind_decomposition,
)
from ideaharness.benchmarks.aiideabench.config import AIIdeaBenchConfig
from ideaharness.benchmarks.aiideabench.imcq import build_question
from ideaharness.benchmarks.aiideabench.literature import (
    ScholarGate,
    feasibility_record,
    novelty_record,
    search_split,
)
from ideaharness.data.aiideabench import (
    DECOMPOSITION_SCHEMA,
    DIGEST_SCHEMA,
    decomposition_messages,
    digest_messages,
    from_tomato,
    inspiration_text,
    load_target_paper_data,
    needs_decomposition,
    parse_decomposition,
    parse_digest,
)
from ideaharness.errors import UserError
from ideaharness.generation.aiideabench import (
    IDEA_SCHEMA,
    generation_messages,
    idea_from_parsed,
    parse_idea,
)
from ideaharness.generation.external import load_external_ideas
from ideaharness.llm.types import ChatModel
from ideaharness.metrics.choice import MCQuestion
from ideaharness.runs.store import RunStore, shard_of
from ideaharness.schema import Idea, Instance

Phase = tuple[str, Callable[[Instance], Awaitable[None]]]


def load_aiideabench_instances(config: AIIdeaBenchConfig) -> list[Instance]:
    """Instances of ``config.data``: a ``.json`` target_paper_data file, else the shared registry
    (``tomato-chem`` or Instance JSONL) mapped with :func:`from_tomato`."""
    if config.data.endswith(".json"):
        return load_target_paper_data(config.data, cutoff=config.cutoff)
    from ideaharness.data.registry import load_instances

    return from_tomato(load_instances(config.data), cutoff=config.cutoff)


class AIIdeaBench:
    """One AI Idea Bench run over a run directory. Use :func:`run_aiideabench` unless embedding it."""

    def __init__(
        self,
        config: AIIdeaBenchConfig,
        options: ExecutionOptions,
        generator: ChatModel | None,
        judge: ChatModel,
        *,
        scholar: Any = None,
        embed_fn: Callable[[Sequence[str]], Any] | None = None,
    ) -> None:
        self.config = config
        self.options = options
        self.generator = generator
        self.judge = judge
        identity = tuple(k for k in AIIdeaBenchConfig.model_fields if k not in ("scholar_base_url",))
        self.store = RunStore(options.out, config.model_dump(mode="json"), identity_keys=identity)
        self.steps = StepRunner(self.store, max_attempts=config.max_attempts, progress=options.progress)
        self.gate = ScholarGate(config.scholar_base_url, client=scholar,
                                cache_dir=str(Path(options.out) / "scholar_cache"))
        self._embed_fn = embed_fn
        self._embeddings: dict[str, Any] = {}
        self.external: dict[str, list[Idea]] | None = None
        if config.ideas_file:
            self.external = load_external_ideas(config.ideas_file, system=config.system_name)

    # -- helpers -------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> Any:
        """L2-normalised embeddings of ``texts`` (rows), memoised per text for this run."""
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._embeddings]
        if missing:
            if self._embed_fn is not None:
                vectors = self._embed_fn(missing)
            else:
                from ideaharness.metrics.embeddings import embed

                vectors = embed(missing, model=self.config.embedding_model)
            self._embeddings.update(zip(missing, np.asarray(vectors), strict=True))
        return np.stack([self._embeddings[t] for t in texts]) if texts else np.zeros((0, 1))

    def _sampling(self, max_tokens: int | None = None) -> dict[str, Any]:
        return {"temperature": self.config.judge_temperature, "seed": self.config.seed,
                "max_tokens": max_tokens or self.config.judge_max_tokens}

    def ground_truth(self, inst: Instance) -> dict[str, str] | None:
        """{"motivation", "experiment_plan"} from the data or the decomposition record; None if missing."""
        if not needs_decomposition(inst):
            return {"motivation": inst.ground_truth.motivation or "",
                    "experiment_plan": inst.ground_truth.experiment_plan or ""}
        rec = self.store.get("decompose", inst.id)
        if rec and rec["judgment"]["parse_ok"]:
            parsed = rec["judgment"]["parsed"]
            return {"motivation": parsed["motivation"], "experiment_plan": parsed["experiment_plan"]}
        return None

    def inspirations(self, inst: Instance) -> list[str]:
        texts = []
        for ref in inst.references:
            rec = self.store.get("digest", inst.id, ref.id)
            if rec and rec["judgment"]["parse_ok"]:
                texts.append(rec["judgment"]["parsed"]["idea"])
            else:
                texts.append(inspiration_text(ref))
        return texts

    def ideas(self, inst: Instance) -> list[Idea] | None:
        rec = self.store.get("ideas", inst.id)
        if rec is None:
            return None
        return [Idea.model_validate(i) for i in rec["ideas"]]

    # -- steps ---------------------------------------------------------------
    async def decompose(self, inst: Instance) -> None:
        if not needs_decomposition(inst):
            return
        parse = parse_decomposition if self.config.parity else parse_blind_decomposition
        await self.steps.judge_step(
            "decompose", inst.id, "", self.judge, decomposition_messages(inst), parse,
            json_schema=DECOMPOSITION_SCHEMA, **self._sampling(self.config.decomposition_max_tokens),
        )

    async def digest(self, inst: Instance) -> None:
        topic, _ = generation_topic(self, inst)
        if not self.config.digest_inspirations or topic is None:
            return
        await asyncio.gather(*(
            self.steps.judge_step(
                "digest", inst.id, ref.id, self.judge, digest_messages(ref, topic), parse_digest,
                json_schema=DIGEST_SCHEMA, **self._sampling(512),
            )
            for ref in inst.references
        ))

    async def generate(self, inst: Instance) -> None:
        if self.store.has("ideas", inst.id):
            return
        if self.external is not None:
            ideas = self.external.get(inst.id, [])
            self.store.put("ideas", inst.id, {"source": "external", "ideas": [i.model_dump(mode="json")
                                                                              for i in ideas]})
            return
        generator = self.generator
        if generator is None:
            raise UserError("no generator model and no --ideas file: nothing produces ideas")
        topic, topic_source = generation_topic(self, inst)
        if topic is None:  # never generate from the published topic (it may name the target's method)
            return
        messages = generation_messages(inst, self.inspirations(inst), topic=topic)

        async def one(k: int) -> None:
            await self.steps.judge_step(
                "generate", inst.id, str(k), generator, messages, parse_idea, json_schema=IDEA_SCHEMA,
                temperature=self.config.generation_temperature, max_tokens=self.config.generation_max_tokens,
                seed=self.config.seed, sample_index=k,
            )

        await asyncio.gather(*(one(k) for k in range(self.config.n_ideas)))
        recs = [self.store.get("generate", inst.id, str(k)) for k in range(self.config.n_ideas)]
        if all(r is not None for r in recs):
            ideas_json = [
                idea_from_parsed(inst, r["judgment"]["parsed"], model=generator.model,
                                 prompt_hash=r["judgment"]["prompt_hash"], seed=self.config.seed,
                                 sample_index=k).model_dump(mode="json")
                for k, r in enumerate(recs) if r and r["judgment"]["parse_ok"]
            ]
            self.store.put("ideas", inst.id, {"source": "generator", "topic_source": topic_source,
                                              "ideas": ideas_json})

    async def imcq(self, inst: Instance) -> None:
        ideas = self.ideas(inst) or []
        jobs = []
        for comp in J.COMPONENTS:
            rec = self.store.get("imcq_question", inst.id, comp)
            if not rec or "question" not in rec:
                continue
            q = MCQuestion.model_validate(rec["question"])
            for k, idea in enumerate(ideas):
                part = getattr(idea, comp) or idea.text
                jobs.append(self.steps.judge_step(
                    "imcq", inst.id, f"{comp}/{k}", self.judge, J.imcq_messages(comp, part, q.options),
                    J.parse_imcq, extra={"answer": q.answer, "idea_id": idea.id}, positions=q.sources,
                    json_schema=J.IMCQ_SCHEMA, **self._sampling(),
                ))
        await asyncio.gather(*jobs)

    async def i2i(self, inst: Instance) -> None:
        gt = self.ground_truth(inst)
        if gt is None:
            return
        jobs = []
        for k, idea in enumerate(self.ideas(inst) or []):
            for comp in J.COMPONENTS:
                part = getattr(idea, comp) or idea.text
                jobs.append(self.steps.judge_step(
                    "i2i", inst.id, f"{comp}/{k}", self.judge, J.i2i_messages(comp, part, gt[comp]),
                    J.parse_i2i, extra={"idea_id": idea.id, "scale": list(J.RATING_SCALE)},
                    json_schema=J.I2I_SCHEMA, **self._sampling(),
                ))
        await asyncio.gather(*jobs)

    async def i2t(self, inst: Instance) -> None:
        jobs = []
        for k, idea in enumerate(self.ideas(inst) or []):
            messages = J.i2t_messages(judge_topic(self, inst), idea.motivation or idea.text,
                                      idea.experiment_plan or idea.text)
            jobs.append(self.steps.judge_step(
                "i2t", inst.id, str(k), self.judge, messages, J.parse_i2t,
                extra={"idea_id": idea.id, "scale": list(J.RATING_SCALE)}, json_schema=J.I2T_SCHEMA,
                **self._sampling(),
            ))
        await asyncio.gather(*jobs)

    def latest_year(self, inst: Instance) -> int:
        if self.config.latest_year == "current":
            return dt.date.today().year
        return (inst.knowledge_cutoff or self.config.cutoff).year

    async def novelty(self, inst: Instance) -> None:
        ideas = self.ideas(inst) or []
        if not ideas or all(self.store.has("novelty", inst.id, str(k)) for k in range(len(ideas))):
            return
        if self.gate.reason is not None:  # Semantic Scholar already failed: spend no LLM calls
            return
        keywords = [k for k in inst.extra.get("keywords") or [] if k]
        if not keywords:
            rec = await self.steps.judge_step(
                "keywords", inst.id, "", self.judge, J.keywords_messages(judge_topic(self, inst)),
                J.parse_keywords, json_schema=J.KEYWORDS_SCHEMA, **self._sampling(200),
            )
            if not rec or not rec["judgment"]["parse_ok"]:
                return
            keywords = rec["judgment"]["parsed"]
        lit = self.store.get("literature", inst.id)
        if lit is None:
            cutoff = inst.knowledge_cutoff or self.config.cutoff
            split = await search_split(self.gate, " ".join(keywords[:3]), cutoff, self.config.search_limit)
            if split is None:
                return
            lit = {"query": " ".join(keywords[:3]), "cutoff": cutoff.isoformat(),
                   "historical": [p.model_dump(mode="json") for p in split[0]],
                   "contemporary": [p.model_dump(mode="json") for p in split[1]]}
            self.store.put("literature", inst.id, lit)
        from ideaharness.schema import Paper

        hist = [Paper.model_validate(p) for p in lit["historical"]]
        cont = [Paper.model_validate(p) for p in lit["contemporary"]]
        for k, idea in enumerate(ideas):
            if self.store.has("novelty", inst.id, str(k)):
                continue
            texts = {"motivation": idea.motivation or idea.text,
                     "experiment_plan": idea.experiment_plan or idea.text}
            rec = novelty_record(texts, hist, cont, self.embed, self.config.influence_lambda)
            self.store.put("novelty", inst.id, {"idea_id": idea.id, **rec}, str(k))

    async def feasibility(self, inst: Instance) -> None:
        for k, idea in enumerate(self.ideas(inst) or []):
            if self.store.has("feasibility", inst.id, str(k)):
                continue
            if self.gate.reason is not None:
                return
            rec = await self.steps.judge_step(
                "concepts", inst.id, str(k), self.judge,
                J.concepts_messages(idea.motivation or idea.text, idea.experiment_plan or idea.text),
                J.parse_concepts, json_schema=J.CONCEPTS_SCHEMA, **self._sampling(300),
            )
            if not rec or not rec["judgment"]["parse_ok"]:
                continue
            concepts = rec["judgment"]["parsed"][: self.config.max_concepts]
            fa = await feasibility_record(
                self.gate, concepts, inst.knowledge_cutoff or self.config.cutoff, self.config.search_limit,
                self.latest_year(inst), self.config.influence_lambda,
            )
            if fa is None:
                return
            self.store.put("feasibility", inst.id, {"idea_id": idea.id, **fa}, str(k))

    # -- orchestration -------------------------------------------------------
    async def execute(self, instances: Sequence[Instance], pool: Sequence[Instance]) -> None:
        metrics = set(self.config.metrics)
        await self.steps.run_phases(instances, [("decompose", self.decompose), ("digest", self.digest),
                                                ("generate", self.generate)])
        if "imcq" in metrics:
            await self.steps.run_phases(instances, [("imcq questions",
                                                     lambda i: build_question(self, i, pool))])
        later: list[Phase] = [(name, fn) for name, fn in
                              (("imcq", self.imcq), ("i2i", self.i2i), ("i2t", self.i2t)) if name in metrics]
        await self.steps.run_phases(instances, later)
        lit: list[Phase] = [(name, fn) for name, fn in
                            (("novelty", self.novelty), ("feasibility", self.feasibility)) if name in metrics]
        await self.steps.run_phases(instances, lit)  # the scholarly client paces its own requests


async def run_aiideabench_async(
    config: AIIdeaBenchConfig,
    options: ExecutionOptions,
    *,
    compare: Sequence[str | Path] = (),
    generator: ChatModel | None = None,
    judge: ChatModel | None = None,
    scholar: Any = None,
    embed_fn: Callable[[Sequence[str]], Any] | None = None,
) -> dict[str, Any]:
    """Run (or resume) AI Idea Bench; returns the results dict also written to ``results.json``.

    Args:
        compare: run directories of other systems on the same data; adds the competition (Table 2).
        generator, judge: chat models (built from the config's model strings when None).
        scholar: a Semantic Scholar client (default one built from ``config.scholar_base_url``).
        embed_fn: texts -> L2-normalised embeddings (default the configured sentence model).
    """
    from ideaharness.benchmarks.aiideabench.competition import run_competition
    from ideaharness.benchmarks.aiideabench.report import aggregate, write_outputs

    pool = load_aiideabench_instances(config)
    instances = pool[: options.limit] if options.limit is not None else pool
    if options.shard is not None:
        index, count = options.shard
        instances = [i for i in instances if shard_of(i.id, count) == index]
    if not instances:
        raise UserError(f"--data {config.data}: no instances to run")
    if judge is None or (generator is None and not config.ideas_file):
        gen_model, judge_model = make_models(config.generator, config.judge, options)
        generator = generator or (None if config.ideas_file else gen_model)
        judge = judge or judge_model
    assert judge is not None
    bench = AIIdeaBench(config, options, generator, judge, scholar=scholar, embed_fn=embed_fn)
    competition: dict[str, Any] | None = None
    try:
        await bench.execute(instances, pool)
        if compare:
            competition = await run_competition(bench, instances, [Path(c) for c in compare])
    finally:
        results = aggregate(bench, instances, competition)
        bench.store.write_results(results)
        await bench.gate.aclose()
    write_outputs(bench, instances, results)
    return results


def run_aiideabench(config: AIIdeaBenchConfig, options: ExecutionOptions, **kwargs: Any) -> dict[str, Any]:
    """Synchronous wrapper of :func:`run_aiideabench_async`."""
    return asyncio.run(run_aiideabench_async(config, options, **kwargs))
