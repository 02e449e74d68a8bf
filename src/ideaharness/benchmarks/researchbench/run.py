"""One ResearchBench run: pools, screening, composition and ranking per instance, resumable.

Phases (each over all instances, concurrently, bounded by the model clients):

1. ``pool``: the candidate pool of every instance (given by the release, or built with
   :func:`ideaharness.data.pools.build_pool`); saved as record ``researchbench_pool``.
2. ``retrieval``: screening rounds (:mod:`.screening`).
3. ``composition``: hypotheses by each method (:mod:`.composition`) and their matched scores.
4. ``ranking``: negatives (given or generated) and two-order pairwise judgments (:mod:`.ranking`).

Everything the model returns is recorded before it is used; a re-run with the same directory
skips recorded work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ideaharness.benchmarks._blinding import stretched
from ideaharness.benchmarks.researchbench import contract as _contract  # noqa: F401  (registers it)
from ideaharness.benchmarks.researchbench import form as form_baseline
from ideaharness.benchmarks.researchbench import reliability
from ideaharness.benchmarks.researchbench.aggregate import aggregate, results_tables
from ideaharness.benchmarks.researchbench.composition import Composer, hypothesis_of, score_hypothesis
from ideaharness.benchmarks.researchbench.config import (
    BENCHMARK_VERSION,
    RETRIEVAL_NOT_RUN,
    BenchData,
    ResearchBenchConfig,
    discipline_of,
    identity_keys,
    input_files,
    load_data,
)
from ideaharness.benchmarks.researchbench.cutoff import (
    LITERATURE,
    POOL_SOURCE,
    dated_titles,
    negatives_before,
    pool_before,
)
from ideaharness.benchmarks.researchbench.ranking import generate_negatives, judge_pairs, rewrite_gold
from ideaharness.benchmarks.researchbench.scores import researchbench_scores
from ideaharness.benchmarks.researchbench.screening import screen_pool
from ideaharness.cutoff import CUTOFF_STEP, CutoffLedger
from ideaharness.data.pools import CandidatePool, build_pool, derive_seed, paper_text, similarity_to_queries
from ideaharness.errors import UserError
from ideaharness.llm.types import ChatModel
from ideaharness.metrics.aggregate import ratio
from ideaharness.metrics.pairwise_ranking import ORDERS, PairResult
from ideaharness.metrics.reliability.adapters import Record
from ideaharness.metrics.retrieval import hit_ratio, hit_ratio_top1, negative_selection_ratio
from ideaharness.report.html import Table
from ideaharness.runner import Benchmark, MetricSpec, RunContext
from ideaharness.runner.executors import driver_phase
from ideaharness.runner.registry import register_benchmark, register_metric
from ideaharness.runs.scores import Score
from ideaharness.schema import Instance
from ideaharness.systems import system_kind

STEP_POOL = "researchbench_pool"


_SCREEN, _MATCHED, _RANKED = ("researchbench_screen_window",), ("researchbench_matched_score",), \
    ("researchbench_rank_pair",)
"""The judged steps each metric rests on (``MetricSpec.judged_by``): the screening windows, the
matched-score judgments, the pairwise rankings."""
register_metric(MetricSpec("researchbench.hit_ratio", higher_is_better=True, aggregation="mean over "
                           "papers of the share of gold inspirations kept, per screening round",
                           unit="paper", range=(0.0, 1.0),
                           source="ResearchBench, Liu, Yang et al. 2025, §4.1", judged_by=_SCREEN))
register_metric(MetricSpec("researchbench.matched_score", higher_is_better=True, aggregation="mean over "
                           "papers, zeros included", unit="paper", range=(0.0, 5.0),
                           source="ResearchBench §4.2 (matched score)", judged_by=_MATCHED))
register_metric(MetricSpec("researchbench.rank_score", higher_is_better=True, aggregation="mean over "
                           "papers of Rank/(k+1)", unit="paper", range=(0.0, 1.0),
                           source="ResearchBench §4.3 (hypothesis ranking)", judged_by=_RANKED))
register_metric(MetricSpec("researchbench.rank_score_paper", higher_is_better=True, aggregation="mean over "
                           "papers of Rank/(k+1) per order, averaged over the orders (the paper's reading)",
                           unit="paper", range=(0.0, 1.0),
                           source="ResearchBench §4.3 (hypothesis ranking; fan_1_res swapped order)",
                           judged_by=_RANKED))
register_metric(MetricSpec("researchbench.directional_accuracy", higher_is_better=True, aggregation="share "
                           "of parsed pairwise judgments choosing the gold hypothesis, pooled over papers",
                           aggregate=ratio, unit="paper", range=(0.0, 1.0),
                           source="ResearchBench §4.3 (hypothesis ranking)", judged_by=_RANKED))
register_metric(MetricSpec("researchbench.hit_ratio_top1", higher_is_better=True, aggregation="mean over "
                           "papers of the share of gold inspirations ranked first in a window, per round",
                           unit="paper", range=(0.0, 1.0),
                           source="ResearchBench code, calculate_average_ratio_top1_top2", judged_by=_SCREEN))
register_metric(MetricSpec("researchbench.negative_selection_ratio", higher_is_better=False,
                           aggregation="mean over papers of the share of level-k negatives kept, per round",
                           unit="paper", range=(0.0, 1.0),
                           source="ResearchBench §4.1 (negative levels)", judged_by=_SCREEN))


@register_benchmark("researchbench")
class ResearchBench(Benchmark):
    """ResearchBench (see the module docstring for the phases); one instance per run.

    Extras: ``bench_data``, a preloaded :class:`BenchData` (default :func:`load_data` of the config).
    """

    judgment_adapters = reliability.JUDGMENT_ADAPTERS
    gold_steps = form_baseline.GOLD_STEPS
    no_gold_steps = form_baseline.NO_GOLD_STEPS
    literature = LITERATURE

    @classmethod
    def generator_models(cls, records: Sequence[Record]) -> dict[str, str]:
        """Who generated the judged ideas (:func:`.reliability.generator_models`)."""
        return reliability.generator_models(records)

    version = BENCHMARK_VERSION
    title = "ResearchBench results"
    summary = ("Run ResearchBench: inspiration retrieval (hit ratio, negative selection ratio), hypothesis "
               "composition (matched score) and two-order hypothesis ranking.")
    config_class = ResearchBenchConfig
    extras = ("bench_data",)

    config: ResearchBenchConfig

    def __init__(self, config: ResearchBenchConfig, **extras: Any) -> None:
        super().__init__(config, **extras)
        self.pools: dict[str, CandidatePool] = {}
        self.retrieval: dict[str, dict[str, Any]] = {}
        self.composition: dict[str, dict[str, Any]] = {}
        self.ranking: dict[str, dict[str, Any]] = {}
        self.blinding: dict[str, dict[str, Any]] = {}  # ranking texts: gold published / shown, negatives
        self._embeddings: Any = None
        self._embedded_ids: dict[str, int] = {}
        self._dated: dict[str, Any] | None = None  # normalised title -> a dated paper of the data
        self.embedding_runtime: Any = None  # the run's device and embedding store (setup)

    def model_roles(self) -> dict[str, str]:
        """Only the models the tasks call: the generator (a model or a system,
        :meth:`~ideaharness.systems.SystemFields.generator_spec`) for screening, composition and
        generated ranking negatives; the judge for matched scores and ranking."""
        roles = {}
        if uses_generator(self.config):
            roles["generator"] = self.config.generator_spec(self.config.generator)
        if uses_judge(self.config):
            roles["judge"] = self.config.judge
        return roles

    def identity_keys(self) -> tuple[str, ...]:
        """Every config key except those that only select or report (:data:`NON_IDENTITY_KEYS`)."""
        return identity_keys(self.config)

    def input_files(self) -> Mapping[str, Sequence[Path]]:
        """The files :func:`load_data` reads, by flag."""
        return input_files(self.config)

    def load(self) -> list[Instance]:
        """The instances of the data (``bench_data`` if given)."""
        self.data: BenchData = self.extra.get("bench_data") or load_data(self.config)
        return self.data.instances

    async def setup(self, ctx: RunContext) -> None:
        """Bind the run's store, steps and models (a role the tasks never call stays None)."""
        self.store = ctx.store
        self.steps = ctx.steps
        self.generator = ctx.models.get("generator")
        self.judge = ctx.models.get("judge")
        self.embedding_runtime = ctx.options.embedding_runtime()

    @staticmethod
    def _model(model: ChatModel | None, role: str) -> ChatModel:
        """The bound client of ``role``.

        Raises:
            UserError: the run's settings do not use that role (no client was built).
        """
        if model is None:
            raise UserError(f"no {role} model: this run's settings do not use one")
        return model

    # -- pools ---------------------------------------------------------------
    def _source_embeddings(self, papers: list[Any]) -> Any:
        import numpy as np

        from ideaharness.metrics.embeddings import embed

        if self._embeddings is None:  # embed every source paper once per run
            unique: dict[str, Any] = {}
            for p in self.data.all_source_papers():
                unique.setdefault(f"{p.id}\x1f{p.title}", p)
            self._embedded_ids = {key: row for row, key in enumerate(unique)}
            self._embeddings = embed([paper_text(p) for p in unique.values()], runtime=self.embedding_runtime)
        rows = [self._embedded_ids[f"{p.id}\x1f{p.title}"] for p in papers]
        return np.asarray(self._embeddings)[rows]

    async def pool(self, inst: Instance) -> None:
        record = self.store.get(STEP_POOL, inst.id)
        if record is not None:
            self.pools[inst.id] = CandidatePool.model_validate(record)
            return
        given = self.data.given_pools.get(inst.id)
        drawn = CutoffLedger()  # negatives dated after the cutoff are never drawn (.cutoff)
        if given is not None:
            pool = given
        else:
            same, other = negatives_before(*self.data.negative_sources(inst), inst.knowledge_cutoff, drawn)
            similarity = None
            if same:
                queries = [inst.research_question or inst.target.title]
                queries += [paper_text(g) for g in inst.references]
                similarity = similarity_to_queries(queries, same, self._source_embeddings(same),
                                                   runtime=self.embedding_runtime)
            pool = build_pool(
                inst.id, inst.references, same_discipline=same, other_disciplines=other,
                similarity=similarity if similarity is not None else [], size=self.config.pool_size,
                per_level=self.config.per_level, seed=derive_seed(self.config.seed, inst.id, "pool"),
                level3_fill=self.config.level3_fill, title_threshold=self.config.title_threshold,
            )
        if self._dated is None:
            self._dated = dated_titles(self.data)
        pool, access = pool_before(pool, inst.knowledge_cutoff, self._dated, drawn)
        await self.store.aput(CUTOFF_STEP, inst.id, access, POOL_SOURCE)
        await self.store.aput(STEP_POOL, inst.id, pool.model_dump(mode="json"))
        self.pools[inst.id] = pool

    # -- retrieval -----------------------------------------------------------
    async def retrieve(self, inst: Instance) -> None:
        pool = self.pools[inst.id]
        result = await screen_pool(
            self.steps, self._model(self.generator, "generator"), pool,
            question=inst.research_question or inst.target.title,
            survey=inst.background_survey if self.config.use_background_survey else None,
            discipline=discipline_of(inst), window_size=self.config.window_size,
            keep_size=self.config.keep_size, seed=self.config.seed, threshold=self.config.title_threshold,
            temperature=self.config.judge_temperature, max_tokens=self.config.reply_cap("screening"),
        )
        gold = [c.index for c in pool.gold()]
        labels = {c.index: c.label for c in pool.candidates}
        ratio = self.config.keep_size / self.config.window_size
        rounds: list[dict[str, Any]] = []
        undetermined: set[int] = set()  # shown in a window that never parsed: neither hit nor miss
        for r in result.rounds:
            called = [w for w in r.windows if w.called]
            undetermined |= {i for w in called if not w.parse_ok for i in w.shown}
            rounds.append({
                "round": r.round,
                "nominal_retention": ratio ** r.round,
                "n_input": len(r.input),
                "n_kept": len(r.kept),
                "hit_ratio": hit_ratio(r.kept, gold, undetermined),
                "hit_ratio_top1": hit_ratio_top1(r.window_firsts, gold, undetermined),
                "negative_selection_ratio": negative_selection_ratio(
                    r.kept, labels, undetermined=undetermined),
                "gold_undetermined": len(set(gold) & undetermined),
                "windows_called": len(called),
                "parse_failures": sum(not w.parse_ok and not w.error for w in called),
                "misses": sum(len(w.misses) for w in called),
                "kept": r.kept,
                "carried_forward": False,
            })
        # a paper whose kept set fell to <= keep_size early (windows kept fewer titles) has nothing
        # left to screen: its later rounds keep the same set, so every paper counts at every retention
        planned = planned_rounds(len(pool.candidates), self.config.window_size, self.config.keep_size)
        while result.complete and rounds and len(rounds) < planned:
            last = rounds[-1]
            rounds.append({
                **last, "round": last["round"] + 1, "nominal_retention": ratio ** (last["round"] + 1),
                "n_input": last["n_kept"], "hit_ratio_top1": None, "windows_called": 0, "parse_failures": 0,
                "misses": 0, "carried_forward": True,
            })
        self.retrieval[inst.id] = {
            "pool_size": len(pool.candidates), "n_gold": len(gold), "label_counts": pool.label_counts(),
            "pool_source": pool.source, "rounds": rounds, "complete": result.complete,
        }

    # -- composition ---------------------------------------------------------
    def _composer(self, inst: Instance) -> Composer:
        context = {
            "discipline": discipline_of(inst),
            "question": inst.research_question or inst.target.title,
            "survey": inst.background_survey,
        }
        return Composer(
            self.steps, self._model(self.generator, "generator"), inst.id, context,
            temperature=self.config.generation_temperature,
            max_tokens=self.config.reply_cap("compose"), seed=self.config.seed,
        )

    def methods_run(self) -> list[str]:
        """The composition methods a run performs: the configured ones with a model generator; with
        a system, one task per paper with the one-step inputs (group ``one_step``): the pipeline
        (mutate, refine, recombine) is a model's method, not the system's; exporting tasks, the
        same (what a system would be asked)."""
        if self.config.is_system_generator() or self.steps.exporting:
            return ["one_step"]
        return list(self.config.methods)

    async def compose(self, inst: Instance) -> None:
        gold = inst.ground_truth.hypothesis or inst.ground_truth.idea
        if not gold:
            self.composition[inst.id] = {"skipped": "no ground-truth hypothesis"}
            return
        key_points, kp_source = inst.ground_truth.key_points, "key_points"
        if not key_points:
            key_points, kp_source = inst.ground_truth.fine_grained_hypothesis, "fine_grained_hypothesis"
        if not key_points:
            key_points, kp_source = "(no key points annotated; compare with the hypothesis itself)", "none"
        composer = self._composer(inst)
        insps = [{"title": r.title, "abstract": r.abstract} for r in inst.references]
        out: dict[str, Any] = {"key_points_source": kp_source}
        for method in self.methods_run():
            if method == "one_step":
                record = await composer.one_step(insps)
                done = record is not None
                hypothesis = hypothesis_of(record)
                n_calls = 1
                n_failed = int(record is not None and not record["judgment"]["parse_ok"])
            else:
                res = await composer.pipeline(
                    insps, n_mutations=self.config.n_mutations, n_refine=self.config.n_refine
                )
                done, hypothesis = res["complete"], res["final"]
                n_calls = len(res["steps"])
                n_failed = sum(1 for s in res["steps"] if s is not None and not s["judgment"]["parse_ok"])
            entry: dict[str, Any] = {
                "hypothesis": hypothesis, "done": done, "generation_calls": n_calls,
                "generation_parse_failures": n_failed, "score": None, "score_parse_ok": None,
            }
            if composer.is_system:
                entry["system"] = self.config.system_name(self.config.generator)
            if self.steps.exporting:  # tasks export: the generation tasks only
                continue
            if hypothesis is not None and done:  # an incomplete pipeline is finished by a re-run first
                scored = await score_hypothesis(
                    self.steps, self._model(self.judge, "judge"), inst.id, method, proposed=hypothesis,
                    gold=gold,
                    key_points=key_points, discipline=discipline_of(inst),
                    max_tokens=self.config.reply_cap("score"), seed=self.config.seed,
                )
                if scored is None:
                    entry["done"] = False
                else:
                    entry["score_parse_ok"] = scored["judgment"]["parse_ok"]
                    entry["score"] = scored["judgment"]["parsed"] if scored["judgment"]["parse_ok"] else None
            out[method] = entry
        self.composition[inst.id] = out

    # -- ranking -------------------------------------------------------------
    async def rank(self, inst: Instance) -> None:
        given = self.data.given_ranking.get(inst.id)
        mode = self.config.ranking_negatives
        if mode == "given" and given is None:
            self.ranking[inst.id] = {"skipped": "no ranking.jsonl negatives for this task"}
            return
        use_given = given is not None and mode in ("given", "auto")
        gold = given.gold_hypothesis if use_given and given else (
            inst.ground_truth.hypothesis or inst.ground_truth.idea)
        if not gold:
            self.ranking[inst.id] = {"skipped": "no ground-truth hypothesis"}
            return
        negative_failures = 0
        if self.steps.exporting and use_given:  # tasks export: released negatives generate nothing
            return
        if use_given and given:
            negatives = [(f"given{j}", h) for j, h in enumerate(given.negatives)]
        else:
            generated = await generate_negatives(
                self._composer(inst), self.pools[inst.id], n_negatives=self.config.n_negatives,
                per_negative=self.config.inspirations_per_negative, seed=self.config.seed,
            )
            if self.steps.exporting:  # tasks export: the negatives' generation tasks only
                return
            negatives = [(g["id"], g["hypothesis"]) for g in generated if g["hypothesis"]]
            negative_failures = sum(1 for g in generated if g["hypothesis"] is None)
        shown: str | None = gold
        record: dict[str, Any] | None = None
        blind = not self.config.parity and bool(negatives)
        if blind:  # the gold in the negatives' form, or not judged at all
            shown, record = await rewrite_gold(
                self.steps, self._model(self.judge, "judge"), inst.id, gold, [h for _, h in negatives],
                temperature=self.config.judge_temperature, seed=self.config.seed)
        self.blinding[inst.id] = {"original": gold, "shown": shown, "negatives": [h for _, h in negatives]}
        length = {"length_stretched": stretched(record["form"])} if record and "form" in record else {}
        if shown is None:
            self.ranking[inst.id] = {
                "skipped": "gold rewrite failed (parse failure)" if record else "gold rewrite not done",
                "source": "given" if use_given else "generated",
                "reference_text": "rewrite failed" if record else "rewrite not done",
                "negative_generation_failures": negative_failures,
                **length,
            }
            if record:
                self.ranking[inst.id]["rewrite_error"] = str(
                    (record["judgment"].get("errors") or ["the reply did not parse"])[-1])[:200]
            return
        orders = ORDERS[:1] if self.config.parity else ORDERS
        pairs = await judge_pairs(
            self.steps, self._model(self.judge, "judge"), inst.id,
            question=inst.research_question or inst.target.title,
            gold=shown, negatives=negatives, discipline=discipline_of(inst), orders=orders,
            temperature=self.config.judge_temperature, max_tokens=self.config.reply_cap("rank"),
            seed=self.config.seed,
        )
        self.ranking[inst.id] = {
            "source": "given" if use_given else "generated",
            "orders": list(orders),
            "negative_generation_failures": negative_failures,
            "pairs": [p.model_dump(mode="json") for p in pairs],
            "pair_parse_failures": sum(1 for p in pairs for c in p.choices.values() if c is None),
            "missing_judgments": sum(len(orders) - len(p.choices) for p in pairs),
            "reference_text": "rewritten" if blind else "published",
            **length,
        }

    # -- driver --------------------------------------------------------------
    async def execute(self, ctx: RunContext, instances: Sequence[Instance]) -> None:
        """Pools, then retrieval, composition and ranking (the configured tasks; with a system
        generator no retrieval, :meth:`ResearchBenchConfig.system_tasks`). Exporting tasks
        (``ctx.steps.exporting``): pools, the composition tasks and the ranking negatives' tasks,
        nothing judged."""
        tasks = self.config.system_tasks()
        exporting = ctx.steps.exporting
        phases: list[tuple[str, Any]] = []
        if "retrieval" in tasks or "ranking" in tasks:
            phases.append(("candidate pools", driver_phase(self.pool)))  # embeds every source paper
        if "retrieval" in tasks and not exporting:
            phases.append(("inspiration retrieval", self.retrieve))
        if "composition" in tasks:
            phases.append(("hypothesis composition", self.compose))
        if "ranking" in tasks:
            phases.append(("hypothesis ranking", self.rank))
        await self.steps.run_phases(instances, phases)

    def _generates_negatives(self) -> bool:
        """Whether ranking composes its negatives (no released ones used)."""
        mode = self.config.ranking_negatives
        return mode == "generated" or (mode == "auto" and not self.data.given_ranking)

    def aggregate(self, ctx: RunContext, instances: Sequence[Instance]) -> dict[str, Any]:
        """Per task: overall, per discipline and (``published_after``) strict groups (:mod:`.aggregate`);
        with a system generator, ``composition_generator`` says who composed the hypotheses and
        a note says what was not run."""
        results = aggregate(self, instances)
        results["errors"] = self.steps.error_count
        if self.config.is_system_generator():
            spec = self.config.generator_spec(self.config.generator)
            name = self.config.system_name(self.config.generator)
            results["composition_generator"] = {
                "system": name, "kind": system_kind(spec), "conditions": ["one_step"]
                + (["negative<j>"] if "ranking" in results["tasks"] and self._generates_negatives() else []),
                "methods_not_run": [m for m in self.config.methods if m != "one_step"],
                "tasks_not_run": [t for t in self.config.tasks if t not in results["tasks"]],
            }
            notes = results["notes"]
            if "retrieval" in self.config.tasks:
                notes.append(RETRIEVAL_NOT_RUN.format(spec=name))
            if "composition" in results["tasks"]:
                skipped = [m for m in self.config.methods if m != "one_step"]
                notes.append(f"composition: the system {name} answered one task per paper with the one-step "
                             "inputs (question, survey, inspirations), reported as method one_step"
                             + (f"; the model method(s) {', '.join(skipped)} not run" if skipped else ""))
            if "ranking" in results["tasks"]:
                negatives = (f"negatives the system {name} composed from non-gold inspirations (conditions "
                             "negative<j>)" if self._generates_negatives() else "the released negatives")
                notes.append(f"ranking: the judge {self.config.judge} ranks the gold hypothesis against "
                             f"{negatives}; it measures the judge, not the system's own hypotheses")
        return results

    def tables(self, results: dict[str, Any]) -> list[Table]:
        """One table per task."""
        return results_tables(results)

    def notes(self, ctx: RunContext, results: dict[str, Any]) -> list[str]:
        """Data notes (duplicate DOIs) and aggregation notes (pools, skipped papers)."""
        data = getattr(self, "data", None)
        return (data.notes if data else []) + list(results.get("notes") or [])

    def form_baselines(self, records: Sequence[Record], results: dict[str, Any],
                       prompts: Callable[[str], list[dict[str, Any]] | None]) -> list[dict[str, Any]]:
        """What a judge (ranking) or screener (retrieval) choosing by form alone scores (:mod:`.form`)."""
        return form_baseline.form_baselines(records, results, prompts, getattr(self, "pools", {}),
                                            window_size=self.config.window_size,
                                            keep_size=self.config.keep_size, seed=self.config.seed)

    def scores(self, records: Sequence[Record], results: dict[str, Any]) -> list[Score]:
        """Per paper: hit ratios per round, negative selection ratios, matched score per method,
        rank scores and directional accuracy (:func:`.scores.researchbench_scores`)."""
        return researchbench_scores(records, results)

    def expected_metrics(self) -> list[str]:
        """Per task of ``--task``: retrieval's hit ratios, composition's matched score, ranking's
        rank scores and directional accuracy (the negative selection ratio depends on the data's
        negative levels: not expected)."""
        per_task = {"retrieval": ("hit_ratio", "hit_ratio_top1"), "composition": ("matched_score",),
                    "ranking": ("rank_score", "rank_score_paper", "directional_accuracy")}
        return [f"researchbench.{m}" for task in self.config.system_tasks()  # a system: no retrieval
                for m in per_task.get(str(task), ())]


def planned_rounds(pool_size: int, window_size: int, keep_size: int) -> int:
    """Screening rounds needed when every window keeps ``keep_size`` (75, 15, 3 -> 2)."""
    n, rounds = pool_size, 0
    while n > keep_size:
        full, rest = divmod(n, window_size)
        n = full * keep_size + min(rest, keep_size)
        rounds += 1
    return rounds


def uses_generator(config: ResearchBenchConfig) -> bool:
    """Whether the tasks call the generator: screening, composition, generated ranking negatives."""
    tasks = set(config.system_tasks())
    return bool(tasks & {"retrieval", "composition"}) or (
        "ranking" in tasks and config.ranking_negatives != "given"
    )


def uses_judge(config: ResearchBenchConfig) -> bool:
    """Whether the tasks call the judge: matched scores and pairwise ranking."""
    return bool(set(config.system_tasks()) & {"composition", "ranking"})


__all__ = ["PairResult", "ResearchBench", "planned_rounds", "uses_generator", "uses_judge"]
