"""AI Idea Bench 2025 (Qiu et al., arXiv 2504.14191): ideas as motivation + experiment plan from a
topic and its inspiration papers, scored against the target paper.

Per instance: (0) ground truth by decomposition when the data has none (TOMATO-Chem), optional
inspiration digests; (1) ``n_ideas`` ideas from the generator: a model, or a system
(``--ideas FILE``, ``cmd:``, ``http://``) answering the tasks of :mod:`.contract`;
(2) IMCQ per component (Eq. 2), I2I per component (1-5, max over ideas, Eq. 3), I2T (1-5, max over
ideas, Eq. 4); (3) novelty NA (Eq. 7) and feasibility FA (Eq. 8-10) against Semantic Scholar, or
skipped with a note; (4) with ``compare`` run directories, a Swiss tournament and a Bradley-Terry
fit between the systems (:mod:`.competition`). Every step is a record; a re-run resumes.
Run it with ``ideaharness run aiideabench`` or ``ideaharness.run("aiideabench", ...)``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ideaharness.benchmarks.aiideabench import form as form_baseline
from ideaharness.benchmarks.aiideabench import judges as J
from ideaharness.benchmarks.aiideabench import reliability
from ideaharness.benchmarks.aiideabench.blinding import (
    generation_topic,
    judge_topic,
    parse_blind_decomposition,
)
from ideaharness.benchmarks.aiideabench.config import BENCHMARK_VERSION, AIIdeaBenchConfig
from ideaharness.benchmarks.aiideabench.contract import CONTRACT, generation_task
from ideaharness.benchmarks.aiideabench.decompose import (
    DECOMPOSITION_SCHEMA,
    DIGEST_SCHEMA,
    decomposition_messages,
    digest_messages,
    parse_decomposition,
    parse_digest,
)
from ideaharness.benchmarks.aiideabench.imcq import build_options, place_questions
from ideaharness.benchmarks.aiideabench.literature import (
    CONTEMPORARY_SOURCE,
    FEASIBILITY_SOURCE,
    HISTORICAL_SOURCE,
    ScholarGate,
    ScholarUnavailable,
    feasibility_record,
    novelty_record,
    paper_text,
    search_split,
)
from ideaharness.benchmarks.aiideabench.scores import aiideabench_scores
from ideaharness.benchmarks.aiideabench.tournament import COMPETITION
from ideaharness.cutoff import CUTOFF_STEP, CutoffEntry, LiteratureAccess
from ideaharness.data.aiideabench import (
    DEFAULT_CUTOFF,
    from_tomato,
    inspiration_text,
    load_target_paper_data,
    needs_decomposition,
)
from ideaharness.errors import DataError, UserError
from ideaharness.generation.aiideabench import (
    IDEA_SCHEMA,
    generation_messages,
    idea_from_parsed,
    parse_idea,
)
from ideaharness.metrics.choice import MCQuestion
from ideaharness.metrics.embeddings import EmbeddingMemo
from ideaharness.report.html import Section, Table
from ideaharness.runner import Benchmark, MetricSpec, RunContext
from ideaharness.runner.registry import register_benchmark, register_metric
from ideaharness.runner.steps import Reask, Reorder
from ideaharness.runs.scores import Record, Score
from ideaharness.schema import Idea, Instance
from ideaharness.systems.spec import is_system, split_ideas_spec, system_kind

Phase = tuple[str, Callable[[Instance], Awaitable[None]]]


TARGET_PAPER_FILE = "target_paper_data.json"
DATA_LAYOUT = (f"give 'tomato-chem', a {TARGET_PAPER_FILE} file (the published schema), an Instance JSONL "
               f"file, or a folder holding {TARGET_PAPER_FILE} or instances.jsonl")
"""AI Idea Bench's ``--data`` forms, as its errors name them."""


def data_spec(spec: str) -> str:
    """``--data`` resolved to what the readers take: ``<folder>/target_paper_data.json`` for a
    folder holding one; anything else unchanged.

    Raises:
        UserError: a path that does not exist, or a folder holding none of AI Idea Bench's data
            files (names the path and :data:`DATA_LAYOUT`).
    """
    if spec == "tomato-chem":
        return spec
    from ideaharness.data.registry import folder_instances, ideabench_csv_files

    path = Path(spec)
    if path.is_dir():
        if (path / TARGET_PAPER_FILE).is_file():
            return str(path / TARGET_PAPER_FILE)
        if folder_instances(path) is None and ideabench_csv_files(path) is None:
            raise UserError(f"--data {spec}: a folder with no {TARGET_PAPER_FILE} or instances.jsonl in it; "
                            f"{DATA_LAYOUT}")
    elif not path.exists():
        raise UserError(f"--data {spec}: no such file; {DATA_LAYOUT}")
    return spec


def load_aiideabench_instances(config: AIIdeaBenchConfig) -> list[Instance]:
    """Instances of ``config.data`` (:func:`data_spec`): a ``.json`` target_paper_data file, else
    the shared registry (``tomato-chem`` or Instance JSONL) mapped with :func:`from_tomato`."""
    spec = data_spec(config.data)
    if spec.endswith(".json"):
        return load_target_paper_data(spec, cutoff=config.cutoff or DEFAULT_CUTOFF)
    from ideaharness.data.registry import load_instances

    return from_tomato(load_instances(spec), cutoff=config.cutoff or DEFAULT_CUTOFF)


def input_files(config: AIIdeaBenchConfig) -> dict[str, list[Path]]:
    """The files a run reads, by flag (their sha256 is part of the run's identity)."""
    from ideaharness.data.registry import data_files

    spec = data_spec(config.data)
    files = {"--data": [Path(spec)] if spec.endswith(".json") else data_files(spec)}
    if config.ideas:
        files["--ideas"] = config.ideas_files()
    elif system_kind(config.generator) == "ideas-file":
        files["--ideas"] = [Path(split_ideas_spec(config.generator)[0])]
    return files


register_metric(MetricSpec("aiideabench.imcq", higher_is_better=True, aggregation="share of instances "
                           "where any idea picks the ground truth",
                           range=(0.0, 1.0), source="AI Idea Bench 2025, Qiu et al., Eq. 2",
                           judged_by=("imcq[{group}]",)))
register_metric(MetricSpec("aiideabench.i2i", higher_is_better=True, aggregation="mean over instances of "
                           "the best idea's rating",
                           range=(1.0, 5.0), source="AI Idea Bench 2025, Eq. 3", judged_by=("i2i[{group}]",)))
register_metric(MetricSpec("aiideabench.i2t", higher_is_better=True, aggregation="mean over instances of "
                           "the best idea's rating",
                           range=(1.0, 5.0), source="AI Idea Bench 2025, Eq. 4", judged_by=("i2t[{group}]",)))
register_metric(MetricSpec("aiideabench.novelty", higher_is_better=True,
                           aggregation="mean over instances of the instance's mean idea novelty",
                           ci="percentile bootstrap over instances", range=(0.0, None),
                           source="AI Idea Bench 2025, Eq. 7 (literature novelty NA)",
                           judged_by=()))  # embeddings against the literature: no judge
register_metric(MetricSpec("aiideabench.feasibility", higher_is_better=True,
                           aggregation="mean over instances of the instance's mean idea feasibility",
                           ci="percentile bootstrap over instances", range=(0.0, None),
                           source="AI Idea Bench 2025, Eq. 8-10 (citation feasibility FA)",
                           judged_by=()))  # citation counts: no judge


def imcq_reorder(comp: J.Component, part: str, q: MCQuestion, idea_id: str) -> Reorder:
    """An IMCQ question with its options in another order (``--consistency-sample``): the
    ground-truth option's letter moves with it."""
    def reorder(order: list[int]) -> Reask:
        options = [q.options[i] for i in order]
        answer = J.LETTERS[order.index(J.LETTERS.index(q.answer))] if q.answer else q.answer
        return Reask(J.imcq_messages(comp, part, options), extra={"answer": answer, "idea_id": idea_id})
    return reorder


@register_benchmark("aiideabench")
class AIIdeaBench(Benchmark):
    """AI Idea Bench 2025 (see the module docstring); one instance per run.

    Extras: ``scholar`` (a Semantic Scholar client; default one from ``config.scholar_base_url``) and
    ``embed_fn`` (texts -> L2-normalised embeddings; default the configured sentence model).
    """

    judgment_adapters = reliability.JUDGMENT_ADAPTERS
    gold_steps = form_baseline.GOLD_STEPS
    no_gold_steps = form_baseline.NO_GOLD_STEPS
    cross_run_competition = COMPETITION
    literature = LiteratureAccess(
        sources={"inspirations": "the target's inspiration papers, shown to the generator (and digested "
                                 "by the judge with --digest-inspirations)",
                 HISTORICAL_SOURCE: "NA: Semantic Scholar search before the cutoff (historical papers)",
                 CONTEMPORARY_SOURCE: "NA: Semantic Scholar search on or after the cutoff (contemporary "
                                      "papers, the future window of Eq. 7: embedded, never in a prompt)",
                 FEASIBILITY_SOURCE: "FA: Semantic Scholar search per method concept, up to the cutoff"},
        prompt_steps=("generate", "digest"), future_sources=(CONTEMPORARY_SOURCE,),
        references_source="inspirations",
        note="inspirations dated after the instance's cutoff are neither shown to the generator nor "
             "digested nor offered as IMCQ options; NA's historical and FA's searches end at the cutoff "
             "(sent to the API and filtered again); NA's contemporary search reads after it by design. "
             "An instance without a cutoff of its own takes --cutoff, else the paper's 2023-10-03.")
    free_settings = frozenset({"compare", "scholar_base_url"})

    version = BENCHMARK_VERSION
    title = "AI Idea Bench 2025 results"
    summary = ("Run AI Idea Bench 2025: ideas as motivation + experiment plan, scored by IMCQ, I2I, I2T, "
               "literature novelty and feasibility, and a competition between runs.")
    config_class = AIIdeaBenchConfig
    extras = ("scholar", "embed_fn")

    config: AIIdeaBenchConfig

    def __init__(self, config: AIIdeaBenchConfig, **extras: Any) -> None:
        super().__init__(config, **extras)
        self.embedder = EmbeddingMemo(config.embedding_model, embed_fn=extras.get("embed_fn"))
        """The run's sentence embeddings, memoised per text (its runtime is set in setup)."""
        self.embedding_runtime: Any = None  # the run's device and embedding store (setup)
        self.answered: set[str] | None = None
        """With an ideas file: the instance ids it has rows for (None: any generator)."""
        self.competition: dict[str, Any] | None = None
        self.pool: list[Instance] = []
        self.distractor_tasks: dict[str, asyncio.Future[dict[str, Any] | None]] = {}
        """Distractor paper id -> its decomposition in flight (one request per paper, :mod:`.imcq`)."""

    def model_roles(self) -> dict[str, str]:
        """The generator (a model, or a system: ``--ideas FILE`` is ``ideas:FILE``) and the judge."""
        return {"generator": self.config.generator_role,  # first: a shared client counts there
                "judge": self.config.judge}

    def system_names(self) -> dict[str, str]:
        """Generator spec -> the system's name in ``idea_sources`` (:attr:`AIIdeaBenchConfig.system_label`,
        also for a client given in place of the configured generator)."""
        specs = {self.config.generator_role, str(getattr(getattr(self, "generator", None), "model", ""))}
        return {spec: self.config.system_label for spec in specs if spec}

    def identity_keys(self) -> tuple[str, ...]:
        """Every config key but the Semantic Scholar root and the compared runs."""
        return tuple(k for k in AIIdeaBenchConfig.model_fields if k not in ("scholar_base_url", "compare"))

    def input_files(self) -> Mapping[str, Sequence[Path]]:
        """``--data`` and ``--ideas`` files."""
        return input_files(self.config)

    def load(self) -> list[Instance]:
        """Every instance of the data (``self.pool`` too: the IMCQ distractors are chosen among all
        the data's inspiration papers, and only those a scored instance's questions use are
        decomposed, :mod:`.imcq`).

        With an ideas file (``--ideas``, ``--generator ideas:FILE``) every instance is still asked
        (one without an answer is a failed unit: the run is partial, exit 3), but the instance
        ids the file answers are read first (:attr:`answered`), so an instance the file does not
        answer spends no judge call on its ground truth, topic or digests.

        Raises:
            UserError: a missing ideas file; DataError: bad data or an unreadable ideas file, or
                one with no answer for any instance of the data.
        """
        self.pool = load_aiideabench_instances(self.config)
        spec = self.config.generator_role
        if system_kind(spec) != "ideas-file":
            return self.pool
        path, fmt = split_ideas_spec(spec)
        if not Path(path).exists():
            raise UserError(f"--ideas {path}: no such file")
        from ideaharness.systems.checks import check_answer_rows
        from ideaharness.systems.converters import read_idea_rows

        rows = read_idea_rows(Path(path), fmt)
        check_answer_rows(rows, CONTRACT, path)  # another benchmark's or duplicate answers first (issue 33)
        self.answered = {str(r["instance_id"]) for r in rows}
        if not any(i.id in self.answered for i in self.pool):
            example = f" (the data's ids look like {self.pool[0].id!r})" if self.pool else ""
            raise DataError(path, f"no idea for any of the {len(self.pool)} instance(s) of --data "
                            f"{self.config.data}{example}")
        return self.pool

    def apply_cutoff(self, items: Sequence[Any], run_cutoff: dt.date | None) -> tuple[list[Any],
                                                                                    list[CutoffEntry]]:
        """The runner's cutoff (:meth:`Benchmark.apply_cutoff`: inspirations after it removed), also
        applied to :attr:`pool`, where the IMCQ options come from."""
        kept, entries = super().apply_cutoff(items, run_cutoff)
        self.pool = [i for i in kept if isinstance(i, Instance)]
        return kept, entries

    def cutoff_of(self, inst: Instance) -> dt.date:
        """The instance's knowledge cutoff (the runner set the stricter of its own and --cutoff; the
        loader gave one without either the paper's 2023-10-03)."""
        return inst.knowledge_cutoff or self.config.cutoff or DEFAULT_CUTOFF

    def unanswered(self, inst: Instance) -> bool:
        """Whether the ideas file has no answer for ``inst`` (its ground truth is not needed)."""
        return self.answered is not None and inst.id not in self.answered

    async def setup(self, ctx: RunContext) -> None:
        """Bind the run's store, steps and models; open the Semantic Scholar gate."""
        self.options = ctx.options.model_copy(update={"out": ctx.out})
        self.store = ctx.store
        self.steps = ctx.steps
        self.judge = ctx.model("judge")
        self.generator = ctx.models.get("generator")
        self.embedding_runtime = self.embedder.runtime = ctx.options.embedding_runtime()
        self.gate = ScholarGate(self.config.scholar_base_url, client=self.extra.get("scholar"),
                                timeout_s=ctx.options.timeout, cache_dir=str(ctx.out / "scholar_cache"))

    # -- helpers -------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> Any:
        """L2-normalised embeddings of ``texts`` (rows), memoised per text for this run."""
        return self.embedder(texts)

    def _sampling(self, kind: str = "judge") -> dict[str, Any]:
        """The judge's sampling of prompt ``kind`` (its cap: :meth:`AIIdeaBenchConfig.reply_cap`)."""
        return {"temperature": self.config.judge_temperature, "seed": self.config.seed,
                "max_tokens": self.config.reply_cap(kind)}

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
        if not needs_decomposition(inst) or self.unanswered(inst):
            return
        parse = parse_decomposition if self.config.parity else parse_blind_decomposition
        await self.steps.judge_step(
            "decompose", inst.id, "", self.judge, decomposition_messages(inst), parse,
            json_schema=DECOMPOSITION_SCHEMA, **self._sampling("decompose"),
        )

    async def digest(self, inst: Instance) -> None:
        topic, _ = generation_topic(self, inst)
        if not self.config.digest_inspirations or topic is None or self.unanswered(inst):
            return
        await asyncio.gather(*(
            self.steps.judge_step(
                "digest", inst.id, ref.id, self.judge, digest_messages(ref, topic), parse_digest,
                json_schema=DIGEST_SCHEMA, **self._sampling("digest"),
            )
            for ref in inst.references
        ))

    async def generate(self, inst: Instance) -> None:
        """The instance's ``n_ideas`` ideas (tasks of :mod:`.contract` for a system), then its
        ``ideas`` record."""
        cached = self.store.has("ideas", inst.id)
        if cached and not any(self.steps.reaskable("generate", inst.id, str(k))
                              for k in range(self.config.n_ideas)):
            for k in range(self.config.n_ideas):  # a reply that never parsed stays listed
                self.steps.note_recorded("generate", inst.id, str(k))
            return  # done (a generation that did not parse is re-asked while rounds are left)
        generator = self.generator
        if generator is None:
            raise UserError("no generator model and no --ideas file: nothing produces ideas")
        if self.unanswered(inst):
            self._missing(inst)
            return
        topic, topic_source = generation_topic(self, inst)
        if topic is None:  # never generate from the published topic (it may name the target's method)
            return
        inspirations = self.inspirations(inst)
        messages = generation_messages(inst, inspirations, topic=topic)

        async def one(k: int) -> None:
            await self.steps.generate_step(
                "generate", inst.id, str(k), generator, messages, parse_idea,
                task=generation_task(inst.id, k, topic=topic, inspirations=inspirations,
                                     seed=self.config.seed),
                json_schema=IDEA_SCHEMA, temperature=self.config.generation_temperature,
                max_tokens=self.config.reply_cap("generate"), seed=self.config.seed, sample_index=k,
            )

        await asyncio.gather(*(one(k) for k in range(self.config.n_ideas)))
        if self.steps.exporting:
            return
        recs = [self.store.get("generate", inst.id, str(k)) for k in range(self.config.n_ideas)]
        if all(r is not None for r in recs):
            system = is_system(generator.model)
            ideas_json = [
                self._idea(inst, r, k, generator.model, system).model_dump(mode="json")
                for k, r in enumerate(recs) if r and r["judgment"]["parse_ok"]
            ]
            record: dict[str, Any] = {"source": "system" if system else "generator",
                                      "topic_source": topic_source, "ideas": ideas_json}
            if system:
                record.update(system=self.config.system_label, kind=system_kind(generator.model))
            if cached:  # a re-asked generation: the ideas it now gives replace the cached list
                await self.store.areplace("ideas", inst.id, record)
            else:
                await self.store.aput("ideas", inst.id, record)

    def _idea(self, inst: Instance, rec: dict[str, Any], k: int, model: str, system: bool) -> Idea:
        idea = idea_from_parsed(inst, rec["judgment"]["parsed"], model=None if system else model,
                                prompt_hash=rec["judgment"]["prompt_hash"], seed=self.config.seed,
                                sample_index=k)
        if system:  # the system, not the baseline prompt, wrote it
            idea.provenance.generator = self.config.system_label
        return idea

    def _missing(self, inst: Instance) -> None:
        """An instance the ideas file has no row for: each of its ideas is a failed unit (as the
        ``ideas:`` system reports it), without asking for the ground truth it would be scored on."""
        path, _ = split_ideas_spec(self.config.generator_role)
        spec = str(getattr(self.generator, "model", self.config.generator_role))
        for k in range(self.config.n_ideas):
            if not self.store.has("generate", inst.id, str(k)):
                self.steps.missing_answer("generate", inst.id, str(k), spec,
                                          f"no answer for instance {inst.id} (sample {k}) in {path}")

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
                    json_schema=J.IMCQ_SCHEMA, reorder=imcq_reorder(comp, part, q, idea.id),
                    **self._sampling(),
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
        return self.cutoff_of(inst).year

    def _skip(self, step: str, inst: Instance, keys: Sequence[str], reason: object) -> None:
        """List the literature units that could not be computed (the run is then partial)."""
        for key in keys:
            if not self.store.has(step, inst.id, key):
                self.steps.fail(step, inst.id, key, reason, skipped=True)

    async def novelty(self, inst: Instance) -> None:
        ideas = self.ideas(inst) or []
        keys = [str(k) for k in range(len(ideas))]
        if not ideas or all(self.store.has("novelty", inst.id, k) for k in keys):
            return
        if await self.gate.check() is not None:  # unreachable: spend no LLM calls on keywords
            self._skip("novelty", inst, keys, self.gate.reason)
            return
        keywords = [k for k in inst.extra.get("keywords") or [] if k]
        if not keywords:
            rec = await self.steps.judge_step(
                "keywords", inst.id, "", self.judge, J.keywords_messages(judge_topic(self, inst)),
                J.parse_keywords, json_schema=J.KEYWORDS_SCHEMA, **self._sampling("keywords"),
            )
            if not rec or not rec["judgment"]["parse_ok"]:
                return
            keywords = rec["judgment"]["parsed"]
        lit = self.store.get("literature", inst.id)
        if lit is None:
            cutoff = self.cutoff_of(inst)
            access: list[dict[str, Any]] = []
            try:
                split = await search_split(self.gate, " ".join(keywords[:3]), cutoff,
                                           self.config.search_limit, records=access)
            except ScholarUnavailable as exc:
                self._skip("novelty", inst, keys, exc)
                return
            lit = {"query": " ".join(keywords[:3]), "cutoff": cutoff.isoformat(),
                   "historical": [p.model_dump(mode="json") for p in split[0]],
                   "contemporary": [p.model_dump(mode="json") for p in split[1]]}
            for record in access:  # what each search returned, kept and excluded (leakage check)
                await self.store.aput(CUTOFF_STEP, inst.id, record, record["source"])
            await self.store.aput("literature", inst.id, lit)
        from ideaharness.schema import Paper

        hist = [Paper.model_validate(p) for p in lit["historical"]]
        cont = [Paper.model_validate(p) for p in lit["contemporary"]]
        todo = [(k, idea) for k, idea in enumerate(ideas) if not self.store.has("novelty", inst.id, str(k))]
        await self.embedder.aembed([*(paper_text(p) for p in hist + cont),  # off the event loop
                                    *(t for _, i in todo for t in (i.motivation or i.text,
                                                                    i.experiment_plan or i.text))])
        for k, idea in todo:
            texts = {"motivation": idea.motivation or idea.text,
                     "experiment_plan": idea.experiment_plan or idea.text}
            rec = novelty_record(texts, hist, cont, self.embed, self.config.influence_lambda)
            await self.store.aput("novelty", inst.id, {"idea_id": idea.id, **rec}, str(k))

    async def feasibility(self, inst: Instance) -> None:
        for k, idea in enumerate(self.ideas(inst) or []):
            if self.store.has("feasibility", inst.id, str(k)):
                continue
            if await self.gate.check() is not None:
                self._skip("feasibility", inst, [str(k)], self.gate.reason)
                continue
            rec = await self.steps.judge_step(
                "concepts", inst.id, str(k), self.judge,
                J.concepts_messages(idea.motivation or idea.text, idea.experiment_plan or idea.text),
                J.parse_concepts, json_schema=J.CONCEPTS_SCHEMA, **self._sampling("concepts"),
            )
            if not rec or not rec["judgment"]["parse_ok"]:
                continue
            concepts = rec["judgment"]["parsed"][: self.config.max_concepts]
            access: list[dict[str, Any]] = []
            try:
                fa = await feasibility_record(
                    self.gate, concepts, self.cutoff_of(inst),
                    self.config.search_limit, self.latest_year(inst), self.config.influence_lambda,
                    records=access,
                )
            except ScholarUnavailable as exc:  # only this idea; the others still use the service
                self._skip("feasibility", inst, [str(k)], exc)
                continue
            for j, record in enumerate(access):
                await self.store.aput(CUTOFF_STEP, inst.id, record, f"{FEASIBILITY_SOURCE}/{k}/{j}")
            await self.store.aput("feasibility", inst.id, {"idea_id": idea.id, **fa}, str(k))

    # -- orchestration -------------------------------------------------------
    async def execute(self, ctx: RunContext, instances: Sequence[Instance]) -> None:
        """Ground truth and ideas, IMCQ/I2I/I2T, literature metrics, then the competition."""
        from ideaharness.benchmarks.aiideabench.competition import run_competition

        metrics = set(self.config.metrics)
        await self.steps.run_phases(instances, [("decompose", self.decompose), ("digest", self.digest),
                                                ("generate", self.generate)])
        if self.steps.exporting:  # tasks export: the topics and digests the tasks show, nothing after
            return
        if "imcq" in metrics:
            await self.steps.run_phases(instances, [("imcq questions",
                                                     lambda i: build_options(self, i, self.pool))])
            await place_questions(self, instances)  # the ground truth's letter, balanced (:mod:`.imcq`)
        later: list[Phase] = [(name, fn) for name, fn in
                              (("imcq", self.imcq), ("i2i", self.i2i), ("i2t", self.i2t)) if name in metrics]
        await self.steps.run_phases(instances, later)
        lit: list[Phase] = [(name, fn) for name, fn in
                            (("novelty", self.novelty), ("feasibility", self.feasibility)) if name in metrics]
        await self.steps.run_phases(instances, lit)  # the scholarly client paces its own requests
        if self.config.compare:
            self.competition = await run_competition(self, list(instances),
                                                     [Path(c) for c in self.config.compare])

    def aggregate(self, ctx: RunContext, instances: Sequence[Instance]) -> dict[str, Any]:
        """Table 1 and Table 2 metrics with bootstrap intervals (:func:`.report.aggregate`)."""
        from ideaharness.benchmarks.aiideabench.report import aggregate

        return aggregate(self, list(instances), self.competition)

    async def aclose(self, ctx: RunContext) -> None:
        """Close the Semantic Scholar client."""
        gate = getattr(self, "gate", None)
        if gate is not None:
            await gate.aclose()

    def tables(self, results: dict[str, Any]) -> list[Table]:
        """The paper's Table 1 and Table 2 layouts and a details table."""
        from ideaharness.benchmarks.aiideabench.report import results_tables

        return results_tables(results)

    def sections(self, ctx: RunContext, items: Sequence[Instance], results: dict[str, Any]) -> list[Section]:
        """Topic, ground truth and ideas of the first instances."""
        from ideaharness.benchmarks.aiideabench.report import example_sections

        return example_sections(self, list(items))

    def notes(self, ctx: RunContext, results: dict[str, Any]) -> list[str]:
        """Instances without a ground truth or an anonymised topic, IMCQ questions not asked, and
        surface features that tell the ground-truth option apart."""
        notes = []
        if results.get("instances_not_in_ideas_file"):
            notes.append(f"--ideas covers {results['instances'] - results['instances_not_in_ideas_file']} "
                         f"of the data's {results['instances']} instances: the others are failed units "
                         "(listed), not decomposed and not scored")
        if results["instances_without_ground_truth"]:
            notes.append(f"{results['instances_without_ground_truth']} instance(s) without a ground truth "
                         "(decomposition failed or not done): no IMCQ/I2I for them")
        if results["topic"]["generation_skipped_no_topic"]:
            notes.append(f"{results['topic']['generation_skipped_no_topic']} instance(s) without an "
                         "anonymised topic (decomposition failed): no ideas generated for them")
        for comp in J.COMPONENTS:
            block = results["imcq"].get(comp, {})
            for reason, count in block.get("questions_skipped_reasons", {}).items():
                notes.append(f"IMCQ {comp}: {count} question(s) not asked: {reason}")
            for name in block.get("blinding", {}).get("surface", {}).get("separating", []):
                notes.append(f"IMCQ {comp}: the surface feature {name!r} alone tells the ground truth from "
                             "the distractors (separation >= 0.75): the question can be answered by form")
        return notes

    def form_baselines(self, records: Sequence[Record], results: dict[str, Any],
                       prompts: Callable[[str], list[dict[str, Any]] | None]) -> list[dict[str, Any]]:
        """What a judge choosing by form alone scores on the gold steps (:mod:`.form`)."""
        return form_baseline.form_baselines(records, results, prompts)

    def scores(self, records: Sequence[Record], results: dict[str, Any]) -> list[Score]:
        """IMCQ, I2I and I2T per component; literature novelty (NA) per component and key and
        feasibility (FA) when computed; per instance (:func:`.scores.aiideabench_scores`). The
        competition's Bradley-Terry fit is a block of its own, not a headline metric."""
        return aiideabench_scores(records, results, tuple(self.config.metrics))

    def expected_metrics(self) -> list[str]:
        """The metrics ``--metrics`` asks for (``aiideabench.<metric>``)."""
        return [f"aiideabench.{m}" for m in self.config.metrics]
