"""The ``Benchmark`` protocol: what a benchmark declares, and what the runner gives it back.

A benchmark is one folder under ``ideaharness/benchmarks/`` (or any package registered through the
``ideaharness.benchmarks`` entry-point group) holding a subclass of :class:`Benchmark` decorated
with :func:`~ideaharness.runner.registry.register_benchmark`. It declares:

* ``name``, ``version``, ``title``, ``summary`` (the CLI help) and ``config_class``, a pydantic
  model whose fields (with their ``description``) become the ``ideaharness run <name>`` flags;
* :meth:`model_roles`: the models the run uses given its config (only those are built);
* :meth:`input_files`: the files it reads (their sha256 is part of the run's identity);
* :meth:`load`: the items to run (anything with an ``id``), before selection;
* :meth:`execute`: its phases, each a recorded, resumable unit of model work per item
  (``await ctx.steps.run_phases(items, [(name, coroutine), ...])``);
* :meth:`aggregate`: records -> the benchmark's results dict;
* :meth:`tables`, :meth:`figures`, :meth:`sections`, :meth:`notes`: console and report;
* :meth:`scores`: each instance's value of each registered metric (:class:`Score`, None with a
  reason when unscored), the primary output: the runner writes them to ``scores.jsonl`` and
  computes every headline number from them through the metric's :class:`MetricSpec`;
* :meth:`headline`: only the metrics that are not aggregates of per-instance scores (a
  Bradley-Terry fit, a value pooled over judgment rows under a parity option);
* ``free_settings``: config keys that never change a score (``compare`` ignores them);
* ``judgment_adapters`` and :meth:`generator_models`: which recorded steps are judgments and how
  the reliability block reads them (:mod:`ideaharness.metrics.reliability.adapters`);
* ``consistency_sample``: whether ``--consistency-sample`` applies (it has position-ordered
  judgments to re-ask, :meth:`~ideaharness.runner.steps.StepRunner.judge_step` ``reorder``).
* ``gold_steps`` / ``no_gold_steps`` and :meth:`form_baselines`: which judged steps have a gold
  answer, and what a judge choosing by form alone scores on them (``results["form_baselines"]``,
  read by the evidence verdict's blindness check).

The runner (:mod:`ideaharness.runner.run`) owns everything else: selection, models, the run
directory, progress, resume, exit statuses, the common blocks of ``results.json`` and the report.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from ideaharness.cutoff import NO_LITERATURE, CutoffEntry, LiteratureAccess, apply_to_instances
from ideaharness.errors import UserError
from ideaharness.llm.types import ChatModel
from ideaharness.metrics.aggregate import (
    Interval,
    IntervalSettings,
    Statistic,
    interval_description,
    mean,
    standard_interval,
)
from ideaharness.metrics.reliability.adapters import Adapters, Record, idea_generators
from ideaharness.results import BenchmarkResults
from ideaharness.runner.options import ExecutionOptions
from ideaharness.runner.steps import DEFAULT_MAX_PROMPT_TOKENS, StepRunner
from ideaharness.runs.scores import Score as Score  # re-exported: the contract names runner.protocol.Score
from ideaharness.runs.store import RunStore
from ideaharness.schema import Instance, IsoDate
from ideaharness.tables import Section, Table


class BenchmarkConfig(BaseModel):
    """Fields every benchmark config has; a benchmark's config subclasses it.

    Field descriptions are the CLI help. A field marked ``json_schema_extra={"cli": False}`` gets
    no flag; ``{"cli": "--name"}`` renames its flag (``"--yes/--no"`` for a boolean pair).
    """

    seed: int = Field(0, description="Run seed: every random choice (orders, samples) derives from it.")
    max_prompt_tokens: int = Field(DEFAULT_MAX_PROMPT_TOKENS, ge=256, description="Prompt budget "
                                   "(4 characters a token): longer paper or model texts are cut to fit, "
                                   "with a note.")
    cutoff: IsoDate | None = Field(None, description="Knowledge cutoff YYYY-MM-DD for every instance: no "
                                   "work dated after it reaches a prompt, a retrieval or a search (an "
                                   "instance's own cutoff, when earlier, wins).")


MODEL_FORMS = ("local/qwen2.5-coder-1.5b, local/qwen2.5-coder-0.5b, openai/<model>, any registered provider, "
               "or a system: ideas:FILE, cmd:COMMAND, http(s)://URL")


class GeneratorJudgeConfig(BenchmarkConfig):
    """A benchmark config with one generator and one judge model (``provider/model`` strings)."""

    generator: str = Field("local/qwen2.5-coder-1.5b", description=f"Generator model: {MODEL_FORMS}.")
    judge: str = Field("local/qwen2.5-coder-1.5b", description="Judge model (same forms).")


@dataclass(frozen=True)
class MetricSpec:
    """A registered metric: how its per-instance scores (:class:`Score`) become the reported value
    and interval, and how to compare it.

    Attributes:
        name: ``"<benchmark>.<metric>"``, e.g. ``"ideabench.insight_score"``.
        higher_is_better: direction of improvement.
        aggregation: what ``aggregate`` computes, shown in tables; "" (default): the statistic's
            own description.
        ci: what ``interval`` computes, shown in tables; "": derived from the interval.
        range: (low, high) of the value, None where unbounded.
        source: paper and equation of the formula.
        aggregate: the statistic of the units' table
            (:class:`~ideaharness.metrics.aggregate.Statistic`): :data:`~ideaharness.metrics.aggregate.mean`
            (default), :data:`~ideaharness.metrics.aggregate.ratio`,
            :func:`~ideaharness.metrics.aggregate.percentile` (p80, flexibility's p30) or any other.
        interval: ``(table, statistic, settings) -> (low, high) | None``
            (:data:`~ideaharness.metrics.aggregate.Interval`):
            :func:`~ideaharness.metrics.aggregate.standard_interval` (default: the bounded-mean
            score interval for a mean or ratio with a two-ended ``range``, else the seeded
            :func:`~ideaharness.metrics.aggregate.percentile_bootstrap`; none below
            ``MIN_INTERVAL_N`` units, docs/statistics.md),
            :func:`~ideaharness.metrics.aggregate.percentile_bootstrap`,
            :func:`~ideaharness.metrics.aggregate.wilson`, :func:`~ideaharness.metrics.aggregate.no_interval`.
        inputs: for a metric over several metrics' scores of one unit (multi-column units, e.g. a
            leaderboard average): their names; the table then has one column per input, NaN where
            a unit lacks it, and the metric has no scores of its own. Empty: the metric's own
            scores, columns ``(value, weight)``.
        unit: what one row of the table is ("instance", "keyword", "idea", "pair"), for tables.
        judged_by: the judged steps the metric's value rests on: which metrics of the run's
            reliability block (``results["reliability"]["metrics"]``, named ``<step>`` or
            ``<step>[<dimension>]`` after the benchmark's ``judgment_adapters``) qualify its
            headline in the evidence verdict (:mod:`ideaharness.metrics.evidence`, docs/evidence.md).
            Each entry is a recorded step (``"fluency"``: every dimension of that step), one
            dimension of it (``"critique[originality]"``), or a step prefix ending in ``/``
            (``"review/"``); ``{group}`` stands for the headline's group (``"imcq[{group}]"``,
            ``"rank/{group}"``; an empty group drops ``[{group}]`` and leaves ``rank/`` a prefix).
            ``()``: no judge (an embedding similarity, a citation count): judge flags never apply.
            None (default): not declared; the verdict falls back to matching names, and the
            registry test (tests/runner/test_judged_by.py) fails for a registered metric.
    """

    name: str
    higher_is_better: bool
    aggregation: str = ""
    ci: str = ""
    range: tuple[float | None, float | None] = (None, None)
    source: str = ""
    aggregate: Statistic = mean
    interval: Interval = standard_interval
    inputs: tuple[str, ...] = ()
    unit: str = "instance"
    judged_by: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for entry in self.judged_by or ():
            if not isinstance(entry, str) or not entry.strip() or entry.replace("{group}", "").count("{"):
                raise ValueError(f"metric {self.name}: judged_by entry {entry!r}: expected a step, "
                                 "'step[dimension]' or 'prefix/', with {group} as the only placeholder")
        units = f"{self.unit}s"
        if not self.aggregation:
            object.__setattr__(self, "aggregation", self.aggregate.description.replace("units", units))
        if not self.ci:
            object.__setattr__(self, "ci", interval_description(self.interval, self.aggregate, self.range)
                               .replace("units", units))

    def value(self, table: Any) -> float | None:
        """The metric's value of a unit table (see ``inputs``), None where not defined."""
        return self.aggregate(table)

    def confidence_interval(self, table: Any, settings: IntervalSettings) -> tuple[float, float] | None:
        """The metric's interval of a unit table under ``settings`` with the metric's ``range`` as
        its bounds (None where none is formed; the n rule is :func:`~ideaharness.runs.scores.summarise`'s)."""
        return self.interval(table, self.aggregate, replace(settings, bounds=self.range))


class MetricValue(BaseModel):
    """One headline value of a run: ``metric`` (a registered name), the ``group`` it belongs to
    (system, scenario, indicator; "" for the whole run), ``value`` (None when nothing was
    measured), its 95% ``ci``, the number ``n`` of units behind it and, when ``value`` is None
    and the benchmark knows the reason, ``why`` (e.g. "needs at least 5 keywords, has 2");
    ``ci_why``: why a value has no interval where the interval rule withheld it ("n too small
    for an interval (n < 5)", :func:`~ideaharness.metrics.aggregate.headline_interval`).
    ``system``: the system it scores where a run holds several (LigBench), else None."""

    metric: str
    group: str = ""
    system: str | None = None
    value: float | None
    ci: tuple[float, float] | None = None
    n: int | None = None
    why: str | None = None
    ci_why: str | None = None


@dataclass
class RunContext:
    """What the runner hands a benchmark during a run.

    Attributes:
        config: the validated benchmark config.
        options: the execution options.
        store: the locked run directory (records, results).
        steps: recorded, resumable LLM steps and phase execution.
        models: role -> client, only the roles of :meth:`Benchmark.model_roles`.
        extras: runtime-only objects given to :func:`ideaharness.arun` (``Benchmark.extras``).
        out: the run directory.
    """

    config: Any
    options: ExecutionOptions
    store: RunStore
    steps: StepRunner
    models: dict[str, ChatModel]
    extras: dict[str, Any] = field(default_factory=dict)
    out: Path = Path(".")

    def model(self, role: str) -> ChatModel:
        """The client of ``role``.

        Raises:
            UserError: the run does not use ``role`` (the benchmark's :meth:`model_roles` left
                it out).
        """
        try:
            return self.models[role]
        except KeyError:
            raise UserError(f"no {role} model: this run's settings do not use one") from None


@dataclass(frozen=True)
class Competition:
    """A benchmark's judged competition between the systems of saved runs (``compare --judge``).

    ``ideaharness compare RUN_DIR... --judge MODEL`` calls the hook of the runs' benchmark
    (:attr:`Benchmark.cross_run_competition`); the generic compare never imports a benchmark's code.

    Attributes:
        play: ``play(run_dirs, *, judge, tournament_dir, options, allow_mismatch, n_resamples)
            -> dict``: judges the competition (incrementally where it can) and returns its
            results, which carry at least ``status`` (``"complete"`` or ``"partial"``),
            ``failed_units`` (list) and ``tournament_dir`` (where its records are kept).
            Raises :class:`~ideaharness.errors.UserError` for runs it cannot compare.
        table: the console :class:`~ideaharness.tables.Table` of those results.
        summary: one line naming the competition (shown in ``compare --help`` errors).
    """

    play: Callable[..., dict[str, Any]]
    table: Callable[[dict[str, Any]], Table]
    summary: str = ""


Enricher = Callable[[RunContext, dict[str, Any]], None]
"""Called with the results dict after a benchmark's aggregate, before results.json is written;
adds blocks in place (e.g. reliability statistics)."""


class Benchmark:
    """Base class of a benchmark (see the module docstring); one instance per run.

    Args:
        config: an instance of :attr:`config_class`.
        extras: runtime-only objects named in :attr:`extras` (e.g. a preloaded dataset).
    """

    name: ClassVar[str] = ""
    version: ClassVar[str] = "1"
    title: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    config_class: ClassVar[type[BaseModel]] = BenchmarkConfig
    extras: ClassVar[tuple[str, ...]] = ()
    """Names of runtime-only arguments ``ideaharness.arun`` passes through (never recorded)."""
    item_noun: ClassVar[str] = "instances"
    enrichers: ClassVar[tuple[Enricher, ...]] = ()
    """Benchmark-specific result enrichers, run after the global ones."""
    free_settings: ClassVar[frozenset[str]] = frozenset()
    """``config.json`` keys that never change a per-instance score (e.g. the runs a run was
    compared with, the judge of a judge-accuracy run whose judge is the system): ``compare``
    ignores them when checking that runs match."""

    judgment_adapters: ClassVar[Adapters] = {}
    """Recorded step (or step prefix ending in ``/``) -> how its records read as judgment views
    for the reliability block (:data:`~ideaharness.metrics.reliability.adapters.Adapter`), or None
    for a step recorded through the judge call that is not a judgment (a generation). Every step
    whose records carry a ``judgment`` must be covered: a registry test fails otherwise."""
    consistency_sample: ClassVar[bool] = True
    """Whether ``--consistency-sample`` applies: the benchmark passes ``reorder`` to some
    :meth:`~ideaharness.runner.steps.StepRunner.judge_step` (a judgment that shows items in an
    order). False: the flag is reported as not applicable and a non-zero value is refused."""
    cross_run_competition: ClassVar[Competition | None] = None
    """The competition ``compare --judge MODEL`` plays between saved runs of this benchmark
    (:class:`Competition`), or None: ``compare --judge`` is then refused with one line."""
    literature: ClassVar[LiteratureAccess] = NO_LITERATURE
    """How the benchmark reaches the literature (:class:`~ideaharness.cutoff.LiteratureAccess`):
    the sources its accesses count under, the steps whose prompts show literature, and how the
    knowledge cutoff applies; empty ``sources``: no literature access (the leakage block says so).
    The registry-wide cutoff test fails for a benchmark that reaches literature without a test."""
    results_class: ClassVar[type[BenchmarkResults]] = BenchmarkResults
    """The model of this benchmark's own block of ``results.json`` (the keys its :meth:`aggregate`
    returns; :class:`ideaharness.results.BenchmarkResults` or a subclass): the run store validates
    it before writing (one :class:`~ideaharness.results.InvalidResults` naming the field)."""
    gold_steps: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    """Judged steps whose judgment has a gold answer (a :attr:`judgment_adapters` key: the target
    among ranked ideas, the ground-truth option, the gold hypothesis, a human label) -> the
    registered metrics that score the judge's answer against it. :meth:`form_baselines` gives an
    entry for each of these metrics (a registry test runs every benchmark and fails otherwise)."""
    no_gold_steps: ClassVar[Mapping[str, str]] = {}
    """Judged steps without a gold answer (a rating, a comparison of systems) -> why: no form-only
    baseline applies. Every judged step of :attr:`judgment_adapters` is in exactly one of
    :attr:`gold_steps` and this (a registry test checks it)."""

    @classmethod
    def generator_models(cls, records: Sequence[Record]) -> dict[str, str]:
        """Who generated the judged ideas: key the adapters pass as ``gen_key`` -> model
        (default: idea id -> model from ``ideas`` records,
        :func:`~ideaharness.metrics.reliability.adapters.idea_generators`)."""
        return idea_generators(records)

    def __init__(self, config: Any, **extras: Any) -> None:
        self.config = config
        self.extra = extras
        self.run_options: ExecutionOptions | None = None
        """The run's execution options, set by the runner before :meth:`load` (a ``load`` that
        embeds its data honours ``--device``/``--no-embedding-cache`` through them); None outside
        a run."""

    # -- what the run needs ----------------------------------------------------
    def model_roles(self) -> dict[str, str]:
        """Role -> model string of every model this run calls (default: ``generator`` and
        ``judge`` from the config fields of those names; a config with
        :class:`~ideaharness.systems.SystemFields` gives ``generator_spec(generator)``, so
        ``--ideas FILE`` makes the file the generator)."""
        from ideaharness.systems.config import SystemFields

        roles = {role: getattr(self.config, role) for role in ("generator", "judge")
                 if isinstance(getattr(self.config, role, None), str)}
        if "generator" in roles and isinstance(self.config, SystemFields):
            roles["generator"] = self.config.generator_spec(roles["generator"])
        return roles

    def input_files(self) -> Mapping[str, Sequence[Path]]:
        """Flag -> the files the run reads (their sha256 is part of the run's identity)."""
        return {}

    def identity_keys(self) -> tuple[str, ...] | None:
        """Config keys a resumed run must share with the recorded one (None: all)."""
        return None

    def load(self) -> Sequence[Any]:
        """Every item of the run, in a stable order, each with a string ``id``.

        Raises:
            UserError: the data cannot be loaded (naming file, line and field).
        """
        raise NotImplementedError

    def apply_cutoff(self, items: Sequence[Any], run_cutoff: dt.date | None) -> tuple[list[Any],
                                                                                    list[CutoffEntry]]:
        """The loaded items under the knowledge cutoff, before selection, and what was filtered.

        Default: every :class:`~ideaharness.schema.Instance` gets its effective cutoff (the earlier of
        its own ``knowledge_cutoff`` and ``run_cutoff``) and, when :attr:`literature` names a
        ``references_source``, only the references not dated after it
        (:func:`~ideaharness.cutoff.apply_to_instances`); other items pass unchanged. A benchmark
        whose items carry dated text of another kind overrides it (items it drops are left out of
        the returned list and listed in the entries).

        Returns:
            ``(items, entries)``: the entries (``(item id, key, record)``) are written as ``cutoff``
            records of the selected items.
        """
        if not any(isinstance(i, Instance) for i in items):
            return list(items), []
        instances = [i for i in items if isinstance(i, Instance)]
        done, entries = apply_to_instances(instances, run_cutoff, self.literature.references_source)
        by_id = {id(old): new for old, new in zip(instances, done, strict=True)}
        return [by_id.get(id(i), i) for i in items], entries

    async def setup(self, ctx: RunContext) -> None:
        """Prepare per-run state once the run directory is open (default: nothing)."""

    async def execute(self, ctx: RunContext, items: Sequence[Any]) -> None:
        """Run the phases over the selected items (each unit recorded in ``ctx.store``)."""
        raise NotImplementedError

    def aggregate(self, ctx: RunContext, items: Sequence[Any]) -> dict[str, Any]:
        """The benchmark's results from the records of ``items`` (also after an abort)."""
        raise NotImplementedError

    async def aclose(self, ctx: RunContext) -> None:
        """Release per-run resources (clients, services); called once, also after an abort."""

    # -- presentation ------------------------------------------------------------
    def tables(self, results: dict[str, Any]) -> list[Table]:
        """Results tables for the console and the report."""
        return []

    def figures(self, ctx: RunContext, results: dict[str, Any]) -> list[tuple[str, Any]]:
        """``(caption, matplotlib Figure)`` pairs for the report."""
        return []

    def sections(self, ctx: RunContext, items: Sequence[Any], results: dict[str, Any]) -> list[Section]:
        """Example texts for the report."""
        return []

    def notes(self, ctx: RunContext, results: dict[str, Any]) -> list[str]:
        """Benchmark-specific remarks for the report (failed units are noted by the runner)."""
        return []

    def scores(self, records: Sequence[Record], results: dict[str, Any]) -> list[Score]:
        """Each unit's value of each registered metric: the primary output of a run.

        Args:
            records: ``(step, instance_id, key, data)`` of the run's selected instances
                (``RunStore.all_records()``, consistency re-asks already removed: they are extra
                calls, never scores).
            results: what :meth:`aggregate` returned (a benchmark may read per-instance blocks it
                derived there).

        Returns:
            One :class:`Score` per (metric, group, system, unit): the value the unit contributes
            to the headline (``None`` with a ``reason`` when unscored: a parse failure is never a
            0). The runner writes them to ``scores.jsonl`` and computes each metric's value, n and
            interval from them through its :class:`MetricSpec`, so every surface shows the same
            number. Default: none.
        """
        return []

    def form_baselines(self, records: Sequence[Record], results: dict[str, Any],
                       prompts: Callable[[str], list[dict[str, Any]] | None]) -> list[dict[str, Any]]:
        """The form-only baselines of the :attr:`gold_steps` (``results["form_baselines"]``): per
        headline (metric, group, system), the score the benchmark's own scoring gives a judge that
        answers every recorded prompt of the step by form alone (shortest, longest, fewest words,
        word length, lines, first or last position; :mod:`ideaharness.metrics.form_baseline`),
        computed from the recorded prompts and records without model calls.

        Args:
            records: as :meth:`scores` (consistency re-asks removed).
            results: the results dict (after :meth:`aggregate` and the common blocks).
            prompts: prompt hash -> the messages the judge was shown (``prompts.jsonl``), None
                when the run did not keep it.

        Returns:
            Entries ``{"metric", "group", "system", "step", "n", "chance", "baselines": {rule:
            value}, "best", "best_value"}`` (values on the headline's scale, best in the metric's
            direction; :func:`~ideaharness.metrics.form_baseline.baseline_entry`). Default: none
            (a benchmark without gold steps).
        """
        return []

    def headline(self, results: dict[str, Any]) -> list[MetricValue]:
        """Values of registered metrics that are NOT aggregates of per-instance scores (a
        Bradley-Terry fit, a figure pooled over judgment rows): every other metric comes from
        :meth:`scores`. A metric given here is not also computed from scores. Default: none."""
        return []

    def expected_metrics(self) -> Sequence[str] | None:
        """The registered headline metrics a run of this benchmark under its config must produce
        (a value, or at least a row with n = 0 and its reason): one with no row at all is NOT
        COMPUTED, and the run partial (:func:`ideaharness.runner.run.uncomputed_metrics`), so a
        run whose every unit failed never ends "complete" with an empty headline. A benchmark
        whose settings switch metrics on or off (stages, tasks, optional metrics, versions)
        returns those its config asks for. None (default): every registered metric named
        ``<name>.<metric>`` that is not computed from other metrics' scores (no ``inputs``)."""
        return None


Selection = Literal["shard, then limit"]
SELECTION_ORDER: Selection = "shard, then limit"
"""``--shard i/N`` keeps the items whose ``sha256(id) mod N == i``; ``--limit K`` then keeps the
first K of those, in data order. So shard i of a limited run is a subset of the unlimited shard i,
and the shards of a run never overlap whatever the limit."""
