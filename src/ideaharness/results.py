"""The typed form of a run's ``results.json``: the blocks every run carries, and the benchmark's own.

``results.json`` stays one flat JSON object (what golden and round-trip tests read): the runner's
common blocks (:data:`COMMON_FIELDS`: benchmark, settings, seeds, selection, status, failed and
unparsed units, truncations, notes, headline metrics, reliability, usage, cost, batch) sit beside
the keys of the benchmark's ``aggregate()``. :class:`RunResults` types the common blocks as fields
and gathers every other key into ``block``, a :class:`BenchmarkResults` — or the benchmark's own
subclass of it, named by its ``results_class`` (``Benchmark.results_class``). The default block
accepts any JSON object; a subclass types the keys it declares (and may forbid others).

:func:`validate_results` is what :meth:`~ideaharness.runs.store.RunStore.write_results` calls
before writing: a block that does not fit its model is one :class:`InvalidResults` naming the
field. :func:`parse_results` reads a loaded ``results.json`` into a :class:`RunResults`;
:meth:`RunResults.to_json` gives back the flat dict.

This module is a bottom layer: it imports nothing of ``ideaharness`` but the errors and the
redaction helpers (an error message never shows a known secret).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ideaharness.errors import UserError
from ideaharness.redaction import redact

__all__ = ["COMMON_FIELDS", "BenchmarkResults", "Coverage", "EvidenceBlock", "EvidenceVerdict",
           "FailedUnitEntry", "HeadlineValue", "InvalidResults", "ReliabilityBlock", "RunResults",
           "Selection", "Settings", "UnparsedUnitEntry", "parse_results", "validate_results"]


class InvalidResults(UserError):
    """A run's results do not fit :class:`RunResults` (or the benchmark's ``results_class``): the
    message names the benchmark, the field and what was wrong."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Settings(_Open):
    """``settings``: the benchmark ``config``, the ``execution`` options, ``models`` (role -> the
    model actually called), ``input_sha256`` (flag -> file -> sha256) and ``template_sha256``
    (prompt template -> sha256 of the templates the benchmark renders, as in ``config.json``)."""

    config: dict[str, Any] = Field(default_factory=dict)
    execution: dict[str, Any] = Field(default_factory=dict)
    models: dict[str, str] = Field(default_factory=dict)
    input_sha256: dict[str, Any] = Field(default_factory=dict)
    template_sha256: dict[str, str] = Field(default_factory=dict)


class Selection(_Open):
    """``selection``: what the headline covers — ``order``, ``shard`` ([index, count] or None),
    ``limit``, ``selected`` and ``available`` counts, and the selected ``ids`` in run order."""

    order: str | None = None
    shard: tuple[int, int] | None = None
    limit: int | None = Field(default=None, ge=0)
    selected: int = Field(ge=0)
    available: int = Field(ge=0)
    ids: list[str] = Field(default_factory=list)


class FailedUnitEntry(_Open):
    """One of ``failed_units``: a unit left undone ("failed", "skipped", or "budget": not started
    because the run's ``--max-cost`` / ``--max-tokens`` would be exceeded) with its last error."""

    step: str
    instance_id: str
    key: str = ""
    status: Literal["failed", "skipped", "budget"] = "failed"
    error: str


class UnparsedUnitEntry(_Open):
    """One of ``unparsed_units``: a judgment (or a generation, ``generation`` True: also a failed
    unit) whose reply never parsed (counted, never scored)."""

    step: str
    instance_id: str
    key: str = ""
    error: str
    attempts: int = Field(ge=1)
    rounds: int = Field(ge=1)
    final: bool


class HeadlineValue(_Open):
    """One of ``metrics`` (a :class:`~ideaharness.runner.protocol.MetricValue`): ``metric``,
    ``group``, ``system``, ``value`` (None: not measured), 95% ``ci``, ``n`` units, ``why``;
    ``ci_why``: why a value has no ``ci`` where the interval rule withheld it ("n too small for
    an interval (n < 5)"; absent otherwise and in runs saved before the rule)."""

    metric: str
    group: str = ""
    system: str | None = None
    value: float | None
    ci: tuple[float, float] | None = None
    n: int | None = Field(default=None, ge=0)
    why: str | None = None
    ci_why: str | None = None


class ReliabilityBlock(_Open):
    """``reliability``: per metric and judge, the judge-reliability statistics
    (:func:`~ideaharness.metrics.reliability.reliability_section`); its other keys as written."""

    metrics: dict[str, Any] = Field(default_factory=dict)


class IdeaSourceAnswers(_Open):
    """What a run asked of one idea source: ``asked`` distinct instances, the ``missing`` ones (no
    answer in its ideas file: failed units), the ``failed`` ones (missing, a generation whose call
    failed or whose reply did not parse: failed units) and the ``extra_instances`` it answered that
    no task asked for."""

    asked: int = Field(default=0, ge=0)
    missing: list[str] = Field(default_factory=list)
    failed: list[str] = Field(default_factory=list)
    extra_instances: list[str] = Field(default_factory=list)


class Coverage(_Open):
    """One of ``coverage`` (:func:`ideaharness.runner.sources.coverage_block`): a generator-like
    ``role`` and its ``system``; ``asked`` distinct task instances; ``answered`` = asked - len(failed);
    ``failed`` the instance ids whose generation failed, did not parse (after the run's re-ask
    rounds) or was missing from an ideas file; ``rate`` = answered / asked in [0, 1] (None when
    asked is 0). The share of the asked instances the system's headline rests on."""

    role: str
    system: str
    asked: int = Field(ge=0)
    answered: int = Field(ge=0)
    failed: list[str] = Field(default_factory=list)
    rate: float | None = Field(default=None, ge=0.0, le=1.0)


class IdeaSource(_Open):
    """One generator-like role of the run (``idea_sources``; :mod:`ideaharness.runner.sources`):
    the system's name, its ``kind`` (model, ideas-file, command, http), its spec (secrets
    redacted) and its answers."""

    role: str
    system: str
    kind: Literal["model", "ideas-file", "command", "http"]
    spec: str
    answers: IdeaSourceAnswers = Field(default_factory=IdeaSourceAnswers)


class EvidenceVerdict(_Open):
    """One of ``evidence.verdicts``: whether the headline value (``metric``, ``group``, ``system``)
    is evidence, with the reasons (short sentences naming their numbers, worst first)
    (:func:`ideaharness.metrics.evidence.headline_verdict`)."""

    metric: str
    group: str = ""
    system: str | None = None
    verdict: Literal["evidence", "weak", "not evidence"]
    reasons: list[str] = Field(default_factory=list)


class EvidenceBlock(_Open):
    """``evidence``: the ``thresholds`` of the evidence checks (coverage, form-only baselines, n and
    interval, judge reliability; docs/evidence.md) and one verdict per headline value
    (:func:`ideaharness.metrics.evidence.evidence_block`)."""

    thresholds: dict[str, Any] = Field(default_factory=dict)
    judged_by: dict[str, list[str]] = Field(default_factory=dict)
    """Headline metric -> the judged steps its value rests on (``MetricSpec.judged_by``; ``[]``: no
    judge), the declarations that placed the reliability flags; a metric missing here (or a run
    written before this key) had its flags placed by the name-matching guess (docs/evidence.md)."""
    verdicts: list[EvidenceVerdict] = Field(default_factory=list)


class BenchmarkResults(_Open):
    """The benchmark's own block: every key of ``results.json`` that is not a common block (what
    its ``aggregate()`` returned). Permissive by default; a benchmark declares a subclass as
    ``results_class`` to type its keys (``model_config = ConfigDict(extra="forbid")`` to refuse
    undeclared ones)."""


class RunResults(BaseModel):
    """A run's ``results.json``, typed. Every common block is optional (a run stopped early, or
    another writer such as the ``compare --judge`` tournament, has only some), but typed when
    present; ``block`` holds the rest.

    Use :func:`parse_results` to build one from the flat dict and :meth:`to_json` to flatten it.
    """

    model_config = ConfigDict(extra="forbid")

    benchmark: str | None = None
    benchmark_version: str | None = None
    settings: Settings | None = None
    seeds: dict[str, int | None] = Field(default_factory=dict)
    selection: Selection | None = None
    status: Literal["complete", "partial"] | None = None
    failed_units: list[FailedUnitEntry] = Field(default_factory=list)
    unparsed_units: list[UnparsedUnitEntry] = Field(default_factory=list)
    truncated_texts: int = Field(default=0, ge=0)
    truncated_prompts: int = Field(default=0, ge=0)
    ended: str | None = None
    notes: list[str] = Field(default_factory=list)
    metrics: list[HeadlineValue] = Field(default_factory=list)
    not_computed: dict[str, Any] | None = None
    reliability: ReliabilityBlock | None = None
    corrupt_record_lines: int = Field(default=0, ge=0)
    llm_stats: dict[str, dict[str, Any] | None] | None = None
    llm_stats_this_process: dict[str, dict[str, Any] | None] | None = None
    llm_stats_processes: int | None = Field(default=None, ge=0)
    cost_usd: float | None = None
    cost: dict[str, Any] | None = None
    """Which tokens were billed at which price, per role (:func:`ideaharness.runs.usage.cost_block`)."""
    budget: dict[str, Any] | None = None
    """The run's budget, what was spent and the units left (:func:`ideaharness.runner.run.budget_block`)."""
    batch: dict[str, Any] | None = None
    rejudged: dict[str, Any] | None = None
    """Units re-judged because their prompt template or reply parser changed (``--rejudge-changed``):
    ``{"units", "steps": {step: n}, "templates", "parsers", "line"}``
    (:meth:`ideaharness.runs.store.RunStore.rejudged_block`)."""
    idea_sources: list[IdeaSource] | None = None
    coverage: list[Coverage] | None = None
    """Per generator-like role: instances asked, answered and failed, and the rate answered / asked
    (``[]`` for a run without generation; None for a run saved before the block)."""
    leakage: dict[str, Any] | None = None
    """The knowledge cutoff: works excluded per source, the leakage check, the models' training
    cutoffs (:func:`ideaharness.runner.leakage.leakage_block`)."""
    form_baselines: list[dict[str, Any]] | None = None
    """Per headline (metric, group, system) of a judged step with a gold answer, the score a
    content-blind judge reaches by choosing by form alone: ``{"metric", "group", "system", "step",
    "n", "chance", "baselines": {rule: value}, "best", "best_value"}`` on the headline's scale
    (``Benchmark.form_baselines``, :mod:`ideaharness.metrics.form_baseline`); ``[]`` where no judged
    step has a gold answer."""
    evidence: EvidenceBlock | None = None
    """Whether each headline value is evidence, weak or not evidence, and why
    (:func:`ideaharness.metrics.evidence.evidence_block`; thresholds in docs/evidence.md)."""
    block: BenchmarkResults = Field(default_factory=BenchmarkResults)

    def to_json(self) -> dict[str, Any]:
        """The flat ``results.json`` object: the common blocks that are set, then the block's keys."""
        common = self.model_dump(mode="json", exclude={"block"}, exclude_unset=True)
        return {**common, **self.block.model_dump(mode="json")}

    def metric(self, name: str, group: str = "", system: str | None = None) -> HeadlineValue | None:
        """The headline value of ``name`` (and ``group``, ``system``), or None when the run has none."""
        return next((m for m in self.metrics if m.metric == name and m.group == group and m.system == system),
                    None)


COMMON_FIELDS: frozenset[str] = frozenset(RunResults.model_fields) - {"block"}
"""The keys of ``results.json`` that are common blocks (typed fields of :class:`RunResults`)."""


def parse_results(results: dict[str, Any],
                  block_class: type[BenchmarkResults] = BenchmarkResults) -> RunResults:
    """``results.json``'s object as a :class:`RunResults` whose ``block`` is a ``block_class``.

    Raises:
        InvalidResults: a common block or the benchmark's block does not fit its model (the
            message names the field, e.g. ``selection.selected``).
    """
    if not isinstance(results, dict):
        raise InvalidResults(f"results: expected a JSON object, got {type(results).__name__}")
    common = {k: v for k, v in results.items() if k in COMMON_FIELDS}
    rest = {k: v for k, v in results.items() if k not in COMMON_FIELDS}
    name = results.get("benchmark") or "the run"
    try:
        block = block_class.model_validate(rest)
    except ValidationError as exc:
        raise InvalidResults(f"results of {name}: the benchmark's block ({block_class.__name__}) is invalid: "
                             f"{_first_error(exc)}; fix what its aggregate() returns") from None
    try:
        return RunResults.model_validate({**common, "block": block})
    except ValidationError as exc:
        raise InvalidResults(f"results of {name}: {_first_error(exc)}") from None


def validate_results(results: dict[str, Any],
                     block_class: type[BenchmarkResults] | None = None) -> RunResults:
    """Check ``results`` (the dict to be written as ``results.json``) and return it typed; the dict
    itself is not changed (the file keeps its layout).

    Args:
        block_class: the benchmark's ``results_class``; None = :class:`BenchmarkResults`.

    Raises:
        InvalidResults: as :func:`parse_results`.
    """
    return parse_results(results, block_class or BenchmarkResults)


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "block") or "(top level)"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    value = repr(first.get("input"))
    shown = value if len(value) <= 60 else value[:57] + "..."
    return redact(f"field {where}: {first.get('msg')} (got {shown}){more}")
