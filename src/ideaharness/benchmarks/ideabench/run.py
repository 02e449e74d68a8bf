"""The IdeaBench run: target ideas, generation, BERTScore, overlap ratings and Insight Score
rankings, each recorded in the run directory (see the package docstring for the protocol)."""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ideaharness.benchmarks._blinding import default_rewriter
from ideaharness.benchmarks.ideabench import form as form_baseline
from ideaharness.benchmarks.ideabench import reliability
from ideaharness.benchmarks.ideabench.blinding import (
    blinding_block,
    place_targets,
    recorded_position,
    rewrite_target,
    shown_target,
)
from ideaharness.benchmarks.ideabench.config import (
    BENCHMARK_VERSION,
    IdeaBenchConfig,
    Indicator,
    Scenario,
)
from ideaharness.benchmarks.ideabench.contract import generation_task
from ideaharness.benchmarks.ideabench.parsers import (
    OVERLAP_SCHEMA,
    ideas_schema,
    parse_ideas,
    parse_overlap,
    parse_target_idea,
    ranking_schema,
)
from ideaharness.benchmarks.ideabench.report import example_sections, rank_figure, results_tables, skip_notes
from ideaharness.benchmarks.ideabench.scores import ideabench_scores
from ideaharness.cutoff import CUTOFF_STEP, CutoffEntry, LiteratureAccess
from ideaharness.data.registry import data_files, load_instances
from ideaharness.errors import UserError
from ideaharness.metrics.aggregate import percentile, spec_interval
from ideaharness.metrics.duplicates import duplicate_report
from ideaharness.metrics.ranking import idea_labels, insight_score, parse_ranking, target_rank
from ideaharness.metrics.reliability.adapters import Record
from ideaharness.metrics.reliability.sampling import order_with_target_at
from ideaharness.metrics.similarity import BertScorer
from ideaharness.metrics.stats import bootstrap_settings, summarize
from ideaharness.prompts import CHARS_PER_TOKEN, TRUNCATION_MARK, render
from ideaharness.report.html import Section, Table
from ideaharness.runner import Benchmark, MetricSpec, RunContext
from ideaharness.runner.registry import metrics, register_benchmark, register_metric
from ideaharness.runner.steps import Reask
from ideaharness.runs.scores import Score
from ideaharness.schema import Idea, Instance, Provenance, Reference
from ideaharness.seeding import rng_for
from ideaharness.systems import GenerationTask, is_system, system_kind

SIMILARITY_BATCH = 16
"""Instances scored by BERTScore per batch; each batch is recorded before the next starts."""
SIMILARITY_PREPARE = 16 * SIMILARITY_BATCH
"""Instances whose texts are embedded in one length-sorted pass before their batches are scored
(their ideas' token embeddings are held in memory meanwhile: ~0.2 MiB per idea)."""


# ----------------------------------------------------------------------------- references


def has_citation_metadata(instance: Instance) -> bool:
    """Whether the references carry the citation counts / intents the relevance filter needs."""
    return any(r.citation_count is not None or r.intents for r in instance.references)


NO_ABSTRACT = "no reference has an abstract"
"""The skip reason of an instance whose data gives no reference an abstract."""


def select_references(
    instance: Instance, scenario: Scenario, config: IdeaBenchConfig
) -> tuple[list[Reference], str | None]:
    """The references shown to the generator, and a reason when the instance must be skipped.

    Low resource: the filtered references (relevance filter of the paper, a seeded random
    baseline, or none), of which ``k_references`` are sampled with the run seed. High resource:
    every reference with an abstract.
    """
    usable = [r for r in instance.references if r.abstract and r.abstract.strip()]
    if scenario == "high":
        return usable, None if usable else NO_ABSTRACT
    mode = config.reference_filter
    if mode == "auto":
        mode = "relevance" if has_citation_metadata(instance) else "none"
    if mode == "relevance":
        from ideaharness.data.ideabench_csv import filter_references

        filtered = filter_references(
            instance, min_citations=config.min_reference_citations, min_references=config.min_references
        )
        if filtered is None:
            return [], f"fewer than {config.min_references} references survive the relevance filter"
        usable = [r for r in filtered.references if r.abstract]
    if not usable:
        return [], NO_ABSTRACT
    if len(usable) <= config.k_references:
        return usable, None
    rng = rng_for(config.seed, instance.id, "references", mode)
    picked = sorted(rng.choice(len(usable), size=config.k_references, replace=False).tolist())
    return [usable[i] for i in picked], None


def cutoff_skip(instance: Instance, record: Mapping[str, Any] | None) -> str | None:
    """Why an instance is skipped when the knowledge cutoff left it no reference with an abstract
    (``record``: its ``cutoff`` record of the references, :func:`~ideaharness.cutoff.filter_access`);
    None when it has one, or when the cutoff excluded none (the data has no abstracts)."""
    if any(r.abstract and r.abstract.strip() for r in instance.references):
        return None
    excluded = int((record or {}).get("excluded") or 0)
    if not excluded:
        return None
    total = excluded + len(instance.references)
    return (f"the knowledge cutoff {(record or {}).get('cutoff')} excludes every reference with an abstract "
            f"({excluded} of {total} dated after it; a later --cutoff shows them)")


def truncate_references(
    references: list[Reference], max_tokens: int, share_of: int | None = None
) -> tuple[list[Reference], bool]:
    """Keep leading references while they fit in ~``max_tokens`` (4 characters a token).

    Each reference counts at most its share of the budget (``max_tokens / share_of``, default one
    share per reference): an over-long abstract is cut to fit by the prompt budget
    (:func:`~ideaharness.prompts.fit_prompt`, recorded as ``prompt_truncations``) and never crowds
    out the others. Returns ``(kept, dropped_any)``.
    """
    budget = max_tokens * CHARS_PER_TOKEN
    share = budget // max(1, share_of or len(references))
    kept: list[Reference] = []
    for ref in references:
        cost = min(len(ref.abstract or "") + len(ref.title), share)
        if kept and cost > budget:
            return kept, True
        kept.append(ref)
        budget -= cost
    return kept, False


def shown_references(domain: str, references: list[Reference],
                     truncations: Sequence[Mapping[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The domain and the ``{id, title, abstract}`` of ``references`` as the generation prompt shows
    them: a text the prompt budget cut (``truncations``, one ``{"field", "chars", "kept_chars"}``
    per cut data text in render order, :func:`~ideaharness.prompts.fit_prompt`) ends with the
    prompt's truncation mark after its kept characters. The texts are walked in the order the
    built-in template shows them (field, then each reference's title and abstract); a cut is
    matched by its field name and original length."""
    cuts = list(truncations)

    def shown(name: str, text: str) -> str:
        if cuts and cuts[0].get("field") == name and cuts[0].get("chars") == len(text):
            kept = int(cuts.pop(0)["kept_chars"])
            return text[:kept] + TRUNCATION_MARK
        return text

    field = shown("field", domain)
    refs = []
    for ref in references:
        title = shown("title", ref.title) if ref.title else ref.title
        refs.append({"id": ref.id, "title": title, "abstract": shown("abstract", ref.abstract or "")})
    return field, refs


# ----------------------------------------------------------------------------- the run


def _interval(metric: str, values: Sequence[float], boot: dict[str, Any]) -> dict[str, Any]:
    """``ci95`` and ``ci95_why`` of the mean of ``values`` under the headline's rule and interval
    (the registered spec of ``metric``, :func:`~ideaharness.metrics.aggregate.spec_interval`): the
    same interval the headline reports for the same units; none below 5 units, with the reason."""
    ci, why = spec_interval(metrics()[metric], values, **boot)
    return {"ci95": ci, "ci95_why": why}


def _intervals(metric: str, values: Sequence[float], boot: dict[str, Any]) -> dict[str, Any]:
    """The mean's interval (``ci95_mean``, ``ci95_mean_why``: ``metric``'s spec) and the p80's
    (``ci95p80``, ``ci95p80_why``: ``<metric>_p80``'s), each as its headline forms it."""
    mean_ci, mean_why = spec_interval(metrics()[metric], values, **boot)
    p80_ci, p80_why = spec_interval(metrics()[f"{metric}_p80"], values, **boot)
    return {"ci95_mean": mean_ci, "ci95_mean_why": mean_why, "ci95p80": p80_ci, "ci95p80_why": p80_why}


register_metric(MetricSpec("ideabench.insight_score", higher_is_better=True,
                           aggregation="(1/m) sum (r_i - 1)/n over instances: mean of the summands",
                           range=(0.0, 1.0), source="IdeaBench, Guo et al. 2024, Eq. 1",
                           judged_by=("rank/{group}",)))
register_metric(MetricSpec("ideabench.bertscore_f1", higher_is_better=True, aggregation="mean over "
                           "instances of the best-of-n F1",
                           range=(-1.0, 1.0), source="IdeaBench §4.2 (BERTScore, Zhang et al. 2020)",
                           judged_by=()))  # an embedding similarity: no judge
register_metric(MetricSpec("ideabench.overlap", higher_is_better=True, range=(1.0, 10.0),
                           source="IdeaBench §4.2 (LLM-judged idea overlap)", judged_by=("overlap/{group}",)))
for _base, _range, _judged in (("bertscore_f1", (-1.0, 1.0), ()),  # the paper's statistic
                               ("overlap", (1.0, 10.0), ("overlap/{group}",))):
    register_metric(MetricSpec(f"ideabench.{_base}_p80", higher_is_better=True,
                               aggregate=percentile(80, description="p80 over instances (paper's Table 1)"),
                               inputs=(f"ideabench.{_base}",), range=_range, judged_by=_judged,
                               source=f"IdeaBench §4.2, Table 1 (80th percentile of ideabench.{_base})"))


@register_benchmark("ideabench")
class IdeaBench(Benchmark):
    """IdeaBench (see the package docstring for the protocol); one instance per run."""

    judgment_adapters = reliability.JUDGMENT_ADAPTERS
    gold_steps = form_baseline.GOLD_STEPS
    no_gold_steps = form_baseline.NO_GOLD_STEPS
    literature = LiteratureAccess(
        sources={"references": "reference abstracts shown to the generator (low resource: the k sampled "
                               "after the relevance filter; high resource: every one with an abstract)"},
        prompt_steps=("generate/",), references_source="references",
        note="references dated after the instance's cutoff are removed before the relevance filter and "
             "the sampling, so they are never shown to the generator; the target paper (after the "
             "cutoff by design) is shown only to the judge")

    @classmethod
    def generator_models(cls, records: Sequence[Record]) -> dict[str, str]:
        """Who generated the judged ideas (:func:`.reliability.generator_models`)."""
        return reliability.generator_models(records)

    version = BENCHMARK_VERSION
    title = "IdeaBench results"
    summary = ("Run IdeaBench: generate ideas from reference abstracts; score them by BERTScore, idea "
               "overlap and the Insight Score.")
    config_class = IdeaBenchConfig

    config: IdeaBenchConfig

    @property
    def generator_spec(self) -> str:
        """The generator: the model string, or a system's spec (``--ideas FILE`` gives ``ideas:FILE``)."""
        return self.config.generator_spec(self.config.generator)

    @property
    def system(self) -> str | None:
        """The name of the system that generates (``--system``, else from its spec), None for a model."""
        return self.config.system_name(self.config.generator) if is_system(self.generator_spec) else None

    @property
    def rewriter_model(self) -> str | None:
        """The model string that rewrites target ideas (None under parity: nothing is rewritten);
        the rule is :func:`~ideaharness.benchmarks._blinding.default_rewriter`, with no generator
        model when a system generates (a system never rewrites: the rule then picks a bundled
        local model besides a local judge, else the judge; recorded in results.json ``rewriter``)."""
        if self.config.parity:
            return None
        generator = None if self.system else self.config.generator
        return default_rewriter(self.config.judge, generator, self.config.rewriter)

    def model_roles(self) -> dict[str, str]:
        """``generator`` (a model or a system) and ``judge``; ``rewriter`` too when it is a model of
        its own (a rewriter that is the judge or the generator uses that role's client)."""
        roles = {"generator": self.generator_spec, "judge": self.config.judge}
        if self.rewriter_model is not None and self.rewriter_model not in roles.values():
            roles["rewriter"] = self.rewriter_model
        return roles

    def input_files(self) -> Mapping[str, Sequence[Path]]:
        """``--data`` files (their sha256 is part of the run's identity; the runner adds ``--ideas``)."""
        return {"--data": data_files(self.config.data)}

    def load(self) -> list[Instance]:
        """The instances of ``config.data`` (bundled name, JSONL, or IdeaBench CSVs)."""
        return load_instances(self.config.data)

    def apply_cutoff(self, items: Sequence[Any], run_cutoff: dt.date | None) -> tuple[list[Any],
                                                                                    list[CutoffEntry]]:
        """The references not dated after each instance's cutoff (the runner's default); an
        instance left none with an abstract is skipped with :func:`cutoff_skip`'s reason.

        Raises:
            UserError: the cutoff leaves no instance a reference to show (nothing could run;
                re-running cannot help), with the counts.
        """
        kept, entries = super().apply_cutoff(items, run_cutoff)
        records = {iid: data for iid, key, data in entries if key == "references"}
        reasons = [cutoff_skip(i, records.get(i.id)) for i in kept]
        if kept and all(reasons):
            excluded = sum(int(r.get("excluded") or 0) for r in records.values())
            cutoff = f"--cutoff {run_cutoff}" if run_cutoff else "the instances' knowledge_cutoff"
            raise UserError(f"{self.name}: {cutoff}: every reference with an abstract of each of the "
                            f"{len(kept)} instances is dated after it ({excluded} references excluded): "
                            "no instance has a reference to show; give a later --cutoff")
        return kept, entries

    async def setup(self, ctx: RunContext) -> None:
        """Bind the run's store, steps and models; load the BERTScore scorer lazily."""
        self.store = ctx.store
        self.steps = ctx.steps
        self.generator = ctx.model("generator")
        self.judge = ctx.model("judge")
        rewriter = self.rewriter_model
        self.rewriter = (self.judge if rewriter in (None, self.config.judge) else
                         self.generator if rewriter == self.generator_spec else ctx.model("rewriter"))
        self.scorer = BertScorer(self.config.bertscore_model, self.config.bertscore_layers,
                                 runtime=ctx.options.embedding_runtime())

    # -- steps ---------------------------------------------------------------
    async def target_idea(self, inst: Instance) -> None:
        if inst.ground_truth.idea or not inst.target.abstract:
            return
        messages = render("ideabench_target_idea", abstract=inst.target.abstract)
        await self.steps.judge_step(
            "target_idea",
            inst.id,
            "",
            self.judge,
            messages,
            parse_target_idea,
            temperature=self.config.judge_temperature,
            max_tokens=self.config.reply_cap("target_idea"),
            seed=self.config.seed,
        )

    def target_text(self, inst: Instance) -> tuple[str | None, str]:
        """(target idea, source) — ground truth, extracted, or None when extraction failed."""
        if inst.ground_truth.idea:
            return inst.ground_truth.idea, "ground_truth"
        record = self.store.get("target_idea", inst.id)
        if record and record["judgment"]["parse_ok"]:
            return record["judgment"]["parsed"], "extracted"
        return None, "missing"

    async def generate(self, inst: Instance, scenario: Scenario) -> None:
        step = f"generate/{scenario}"
        exporting = self.steps.exporting  # `tasks export`: every task, asked or recorded before
        if not exporting and self.store.has(step, inst.id) and not self.steps.reaskable(step, inst.id):
            self.steps.note_recorded(step, inst.id)  # a reply that never parsed stays listed
            return  # done (a reply that did not parse is re-asked while rounds are left)
        refs, skip = select_references(inst, scenario, self.config)
        if skip:  # say so when the cutoff took every reference (re-running cannot help)
            skip = cutoff_skip(inst, self.store.get(CUTOFF_STEP, inst.id, "references")) or skip
        if skip:
            if not exporting:
                await self.store.aput(step, inst.id, {"skipped": skip})
            return
        refs, truncated = truncate_references(
            refs, self.config.max_prompt_tokens, min(len(refs), self.config.k_references)
        )
        domain = inst.domain or "scientific"
        messages = render(
            "ideabench_generate",
            domain=domain,
            references=[{"title": r.title, "abstract": r.abstract} for r in refs],
            n_ideas=self.config.n_ideas,
        )
        n = self.config.n_ideas
        max_tokens = self.config.reply_cap("generate")
        await self.steps.generate_step(
            step,
            inst.id,
            "",
            self.generator,
            messages,
            lambda t: parse_ideas(t, n),
            task=self.generation_task(inst, scenario, domain, refs, messages),
            temperature=self.config.generation_temperature,
            max_tokens=max_tokens,
            seed=self.config.seed,
            json_schema=ideas_schema(n),
            extra={"references": [r.id for r in refs], "truncated": truncated},
        )

    def generation_task(self, inst: Instance, scenario: Scenario, domain: str, refs: list[Reference],
                        messages: list[Any]) -> GenerationTask:
        """The generation as a system's task: the inputs the prompt ``messages`` was rendered from,
        with the prompt budget's cuts (:func:`shown_references`)."""
        from ideaharness.llm.errors import ContextLengthError

        try:
            truncations = getattr(self.steps.fit(messages), "truncations", [])
        except ContextLengthError:  # the generation step fails the unit the same way
            truncations = []
        field, shown = shown_references(domain, refs, truncations)
        return generation_task(inst.id, scenario, domain=field, references=shown,
                               n_ideas=self.config.n_ideas, seed=self.config.seed)

    def ideas(self, inst: Instance, scenario: Scenario) -> list[Idea] | None:
        record = self.store.get(f"generate/{scenario}", inst.id)
        if not record or "judgment" not in record or not record["judgment"]["parse_ok"]:
            return None
        if self.system:  # a system's answer, through the idea contract
            provenance = Provenance(generator=self.system, model=system_kind(self.generator_spec),
                                    prompt_hash=record["judgment"]["prompt_hash"], seed=self.config.seed)
        else:
            provenance = Provenance(
                generator="ideabench-baseline",
                model=self.config.generator,
                prompt_hash=record["judgment"]["prompt_hash"],
                seed=self.config.seed,
            )
        return [
            Idea(
                id=f"{inst.id}/{scenario}/{i}",
                instance_id=inst.id,
                title=item["title"] or None,
                text=item["idea"],
                provenance=provenance,
            )
            for i, item in enumerate(record["judgment"]["parsed"])
        ]

    def reference_author(self, inst: Instance, scenario: Scenario) -> str:
        """Who wrote the target text the ranking showed: the rewriter model recorded with its
        rewrite, or ``"published"`` under parity (the paper's own text)."""
        if self.config.parity:
            return "published"
        rec = self.store.get(f"rewrite/{scenario}", inst.id) or {}
        judged_by = (rec.get("judgment") or {}).get("judge_model")
        return str(rec.get("rewriter") or judged_by or self.rewriter_model)

    def comparison_text(self, inst: Instance) -> tuple[str | None, str]:
        """What similarity and overlap compare against: the abstract, else the target idea."""
        if inst.target.abstract and inst.target.abstract.strip():
            return inst.target.abstract, "abstract"
        text, _ = self.target_text(inst)
        return text, "target_idea"

    async def similarity(self, instances: Sequence[Instance], scenario: Scenario) -> None:
        """BERTScore F1 of every idea against its comparison text, recorded per batch of
        :data:`SIMILARITY_BATCH` instances (a kill loses at most one batch). The model runs in a
        worker thread, one batch (or one embedding pass) at a time, so the event loop stays free:
        Ctrl-C or SIGTERM stops the run within the batch in progress, and a re-run resumes after
        the last batch recorded."""
        step = f"similarity/{scenario}"
        todo = []
        for inst in instances:
            ideas = self.ideas(inst, scenario)
            reference, kind = self.comparison_text(inst)
            if ideas and reference and not self.store.has(step, inst.id):
                todo.append((inst, ideas, reference, kind))
        for start in range(0, len(todo), SIMILARITY_BATCH):
            if start % SIMILARITY_PREPARE == 0:  # the next chunk's texts in one pass, batched by length
                chunk = todo[start : start + SIMILARITY_PREPARE]
                await asyncio.to_thread(self.scorer.prepare, [ref for _, _, ref, _ in chunk],
                                        [idea.text for _, ideas, _, _ in chunk for idea in ideas])
            batch = todo[start : start + SIMILARITY_BATCH]
            candidates = [idea.text for _, ideas, _, _ in batch for idea in ideas]
            references = [ref for _, ideas, ref, _ in batch for _ in ideas]
            scores = await asyncio.to_thread(self.scorer.f1, candidates, references)
            offset = 0
            records = []
            for inst, ideas, _, kind in batch:
                f1 = scores[offset : offset + len(ideas)]
                offset += len(ideas)
                best = max(range(len(f1)), key=f1.__getitem__)
                records.append((inst.id, {
                    "f1": f1,
                    "best_index": best,
                    "best_f1": f1[best],
                    "compared_with": kind,
                    "settings": self.scorer.settings,
                    "settings_hash": self.scorer.settings_hash,
                    "device": self.scorer.device,
                }))
            # one group commit per batch; shielded: a batch computed is recorded even when cancelled
            await asyncio.shield(asyncio.gather(*(self.store.aput(step, iid, data) for iid, data in records)))

    async def overlap(self, inst: Instance, scenario: Scenario) -> None:
        sim = self.store.get(f"similarity/{scenario}", inst.id)
        ideas = self.ideas(inst, scenario)
        reference, kind = self.comparison_text(inst)
        if not sim or not ideas or not reference:
            return
        best = ideas[sim["best_index"]]
        messages = render("ideabench_overlap", idea=best.text, target=reference)
        await self.steps.judge_step(
            f"overlap/{scenario}",
            inst.id,
            "",
            self.judge,
            messages,
            parse_overlap,
            temperature=self.config.judge_temperature,
            max_tokens=self.config.reply_cap("overlap"),
            seed=self.config.seed,
            json_schema=OVERLAP_SCHEMA,
            extra={"idea_id": best.id, "compared_with": kind},
        )

    def rank_order(self, inst: Instance, scenario: Scenario, indicator: Indicator, k: int) -> list[int]:
        """Shown order of the k ranked items (index 0 = the target): published order under
        ``--parity``; else the target at its recorded position (:func:`.blinding.place_targets`:
        each of the k positions equally often across the instances that are ranked, seeded) and
        the ideas in seeded random order."""
        if self.config.parity:
            return list(range(k))
        position = recorded_position(self, inst.id, scenario)
        if position is None:  # not placed (not expected: placed before ranking)
            rng = rng_for(self.config.seed, inst.id, scenario, "rank", indicator.name)
            return rng.permutation(k).tolist()
        position = min(position, k - 1)  # placed for n ideas, ranked with fewer (some unparsed)
        return order_with_target_at(k, 0, position, seed=self.config.seed,
                                    unit=f"{inst.id}|{scenario}|{indicator.name}")

    def rank_items(self, inst: Instance, scenario: Scenario) -> list[tuple[str, str]] | None:
        """``(item id, text)`` of the ranked items, target first; None when nothing can be ranked."""
        ideas = self.ideas(inst, scenario)
        target = shown_target(self, inst, scenario)  # rewritten into the ideas' form unless parity
        if not ideas or not target:
            return None
        return [("target", target)] + [(idea.id, idea.text) for idea in ideas]

    async def rank(self, inst: Instance, scenario: Scenario, indicator: Indicator) -> None:
        items = self.rank_items(inst, scenario)
        if items is None:
            return
        order = self.rank_order(inst, scenario, indicator, len(items))
        await self.ask_rank(inst, scenario, indicator, [items[i] for i in order], "")

    def rank_prompt(self, inst: Instance, indicator: Indicator, shown: list[tuple[str, str]]) -> Reask:
        """The ranking prompt of ``shown`` (``(item id, text)`` in the order shown), its parser and
        record fields (labels, the target's label)."""
        labels = idea_labels(len(shown))
        target_label = labels[[item_id for item_id, _ in shown].index("target")]
        messages = render(
            "ideabench_rank",
            domain=inst.domain or "scientific",
            ideas=[(label, text) for label, (_, text) in zip(labels, shown, strict=True)],
            indicator_name=indicator.name,
            indicator_definition=indicator.definition,
            labels=labels,
        )
        return Reask(messages, lambda t: parse_ranking(t, labels),
                     {"labels": labels, "target_label": target_label, "reference_by": self.rewriter_model})

    async def ask_rank(self, inst: Instance, scenario: Scenario, indicator: Indicator,
                       shown: list[tuple[str, str]], key: str) -> None:
        """Rank ``shown``; ``--consistency-sample`` may re-ask it with the items reordered."""
        asked = self.rank_prompt(inst, indicator, shown)
        labels = idea_labels(len(shown))
        await self.steps.judge_step(
            f"rank/{scenario}/{indicator.name}",
            inst.id,
            key,
            self.judge,
            asked.messages,
            lambda t: parse_ranking(t, labels),
            temperature=self.config.judge_temperature,
            max_tokens=self.config.rank_cap(len(shown)),
            seed=self.config.seed,
            json_schema=ranking_schema(labels),
            positions=[item_id for item_id, _ in shown],
            extra=asked.extra,
            reorder=lambda order: self.rank_prompt(inst, indicator, [shown[i] for i in order]),
        )

    # -- orchestration -------------------------------------------------------
    async def execute(self, ctx: RunContext, instances: Sequence[Instance]) -> None:
        """Target ideas and generation, BERTScore in batches, then overlap and rankings."""
        cfg = self.config
        phases: list[tuple[str, Callable[[Instance], Awaitable[None]]]] = [("target ideas", self.target_idea)]
        if self.steps.exporting:  # `tasks export`: only the generation tasks (they need no target idea)
            phases = []
        for scenario in cfg.scenarios:
            phases.append((f"generate ({scenario})", functools.partial(self.generate, scenario=scenario)))
        await self.steps.run_phases(instances, phases)
        if self.steps.exporting:
            return
        if not cfg.parity:
            await self.steps.run_phases(instances, [
                (f"rewrite targets ({s})", functools.partial(rewrite_target, self, scenario=s))
                for s in cfg.scenarios
            ])
        for scenario in cfg.scenarios:
            await self.similarity(instances, scenario)
            await place_targets(self, instances, scenario)  # over the instances that can be ranked
        later: list[tuple[str, Callable[[Instance], Awaitable[None]]]] = []
        for scenario in cfg.scenarios:
            later.append((f"overlap ({scenario})", functools.partial(self.overlap, scenario=scenario)))
            for ind in cfg.indicators:
                later.append(
                    (f"rank {ind.name} ({scenario})",
                     functools.partial(self.rank, scenario=scenario, indicator=ind))
                )
        await self.steps.run_phases(instances, later)

    def aggregate(self, ctx: RunContext, instances: Sequence[Instance]) -> dict[str, Any]:
        """Per scenario: similarity, overlap and Insight Score per indicator with bootstrap 95%
        intervals over instances, n, m and parse-failure counts (the paper's Table 1 columns)."""
        cfg = self.config
        results: dict[str, Any] = {
            "benchmark": "ideabench",
            "benchmark_version": BENCHMARK_VERSION,
            "bootstrap": bootstrap_settings(cfg.bootstrap_resamples, cfg.seed),
            "generator": self.system or cfg.generator,
            "judge": cfg.judge,
            "rewriter": self.rewriter_model,
            "seed": cfg.seed,
            "n": cfg.n_ideas,
            "instances": len(instances),
            "similarity_settings": self.scorer.settings,
            "similarity_settings_hash": self.scorer.settings_hash,
            "similarity_embeddings": self.scorer.embedding_report(),
            "scenarios": {},
        }
        boot: dict[str, Any] = {"n_resamples": cfg.bootstrap_resamples, "seed": cfg.seed}
        target_sources = Counter(self.target_text(i)[1] for i in instances)
        results["target_idea_sources"] = dict(target_sources)
        for scenario in cfg.scenarios:
            gen = [self.store.get(f"generate/{scenario}", i.id) for i in instances]
            skipped = Counter(g["skipped"] for g in gen if g and "skipped" in g)
            gen_fail = sum(1 for g in gen if g and "judgment" in g and not g["judgment"]["parse_ok"])
            sims = [self.store.get(f"similarity/{scenario}", i.id) for i in instances]
            best_f1 = [s["best_f1"] for s in sims if s]
            overlaps = [self.store.get(f"overlap/{scenario}", i.id) for i in instances]
            ratings = [o["judgment"]["parsed"]["rating"] for o in overlaps if o and o["judgment"]["parse_ok"]]
            block: dict[str, Any] = {
                "instances_generated": sum(
                    1 for g in gen if g and "judgment" in g and g["judgment"]["parse_ok"]
                ),
                "generation_parse_failures": gen_fail,
                "skipped": dict(skipped),
                "not_done": sum(1 for g in gen if g is None),
                "references_truncated": sum(1 for g in gen if g and g.get("truncated")),
                "similarity": {**summarize(best_f1), **_intervals("ideabench.bertscore_f1", best_f1, boot)},
                "overlap": {
                    **summarize(ratings), **_intervals("ideabench.overlap", ratings, boot),
                    "parse_failures": sum(1 for o in overlaps if o and not o["judgment"]["parse_ok"]),
                },
                "insight": {},
            }
            for ind in cfg.indicators:
                recs = [self.store.get(f"rank/{scenario}/{ind.name}", i.id) for i in instances]
                ranks = [
                    target_rank(r["judgment"]["parsed"], r["target_label"])
                    for r in recs
                    if r and r["judgment"]["parse_ok"]
                ]
                per_instance = [(r - 1) / cfg.n_ideas for r in ranks]
                by_rewriter: dict[str, list[int]] = {}
                for inst, r in zip(instances, recs, strict=True):
                    if r and r["judgment"]["parse_ok"]:
                        by_rewriter.setdefault(self.reference_author(inst, scenario), []).append(
                            target_rank(r["judgment"]["parsed"], r["target_label"]))
                block["insight"][ind.name] = {
                    "insight_score": insight_score(ranks, cfg.n_ideas) if ranks else None,
                    "m": len(ranks),
                    "instances": len(instances),
                    **_interval("ideabench.insight_score", per_instance, boot),
                    "parse_failures": sum(1 for r in recs if r and not r["judgment"]["parse_ok"]),
                    "rank_counts": {str(k): v for k, v in sorted(Counter(ranks).items())},
                    "by_rewriter": {
                        model: {"m": len(rs), "insight_score": insight_score(rs, cfg.n_ideas),
                                "mean_rank": sum(rs) / len(rs),
                                **_interval("ideabench.insight_score", [(x - 1) / cfg.n_ideas for x in rs],
                                            boot)}
                        for model, rs in sorted(by_rewriter.items())},
                }
            block["blinding"] = blinding_block(self, instances, scenario)
            block["duplicates"] = duplicate_report(
                [idea.text for idea in ideas] for i in instances if (ideas := self.ideas(i, scenario)))
            results["scenarios"][scenario] = block
        results["errors"] = self.steps.error_count
        return results

    # -- presentation ----------------------------------------------------------
    def tables(self, results: dict[str, Any]) -> list[Table]:
        """Table 1 of the paper per scenario, and rank counts."""
        return results_tables(results)

    def figures(self, ctx: RunContext, results: dict[str, Any]) -> list[tuple[str, Any]]:
        """Histogram of the target idea's rank per indicator."""
        return [("Rank of the target idea", rank_figure(results))]

    def notes(self, ctx: RunContext, results: dict[str, Any]) -> list[str]:
        """Why instances were skipped."""
        return skip_notes(results)

    def sections(self, ctx: RunContext, items: Sequence[Instance], results: dict[str, Any]) -> list[Section]:
        """Ideas, target idea and overlap reply of the first instances."""
        return example_sections(self, items)

    def form_baselines(self, records: Sequence[Record], results: dict[str, Any],
                       prompts: Callable[[str], list[dict[str, Any]] | None]) -> list[dict[str, Any]]:
        """What a judge choosing by form alone scores on the gold steps (:mod:`.form`)."""
        return form_baseline.form_baselines(records, results, prompts)

    def scores(self, records: Sequence[Record], results: dict[str, Any]) -> list[Score]:
        """Per instance: best BERTScore F1, overlap rating and Insight Score summands
        (:func:`.scores.ideabench_scores`)."""
        return ideabench_scores(records, results)
