"""Whether each headline value of a run is evidence: one verdict per (metric, group, system).

A headline value is *evidence*, *weak* or *not evidence*; the verdict is the worst that any of four
checks gives, each with a short reason that names its numbers (issue 32; docs/evidence.md):

(a) **coverage** — the share of the units a system was asked for that it answered
    (``results["coverage"]``: ``{"role", "system", "asked", "answered", "failed", "rate"}`` per
    system; for runs written before that block, ``idea_sources`` or ``selection`` with
    ``failed_units``): below :data:`COVERAGE_MIN` not evidence (the mean is over the units the
    system did not fail on, which a system can choose), below :data:`COVERAGE_WEAK` weak;
(b) **blindness** — the best score a form-only baseline (length, word length, position, … computed
    from the items without a model call) reaches on the same items (``results["form_baselines"]``,
    one entry per metric, group, system and judged step, on the headline's scale): a value not
    beyond the best baseline in the metric's direction is not evidence; beyond it with the 95 %
    interval reaching it, weak;
(c) **n and interval** — no value (NOT COMPUTED), fewer than
    :data:`~ideaharness.metrics.aggregate.MIN_INTERVAL_N` units or no interval: not evidence
    ("n too small"); fewer than :data:`WEAK_N` units (the fewest shared instances ``compare``
    tests a difference on): weak;
(d) **judge reliability** — the flags of the run's reliability block (``results["reliability"]``,
    :mod:`ideaharness.metrics.reliability`): a constant judge is not evidence (its scores carry
    nothing about the items); position bias, consistency at chance and a near-constant judge
    ("one answer") are weak. Which judged metric of the block qualifies which headline: the
    metric's declaration (``MetricSpec.judged_by``, :func:`declared_targets`; ``()``: no judge,
    no judge flag); for a metric without one (an unregistered metric, a run written before the
    declarations) the name-matching guess of :func:`reliability_targets`.

Everything here is pure and reads only a results dict (plus the metrics' directions and
declarations, given as data), so the runner, ``compare``, ``export`` and the viewer compute or
read the same verdicts without importing a benchmark. The thresholds are the module constants
below, written into ``results["evidence"]["thresholds"]`` (:func:`evidence_thresholds`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ideaharness.metrics.aggregate import MIN_INTERVAL_N
from ideaharness.tables import Table

__all__ = [
    "COVERAGE_MIN", "COVERAGE_WEAK", "EVIDENCE", "EVIDENCE_COLUMNS", "NOT_EVIDENCE", "RELIABILITY_RULES",
    "VERDICTS", "WEAK", "WEAK_N", "HeadlineVerdict", "ReliabilityFlag", "Verdict", "coverage_check",
    "coverage_entries", "declared_targets", "evidence_block", "evidence_lines", "evidence_of",
    "evidence_rows", "evidence_table", "evidence_thresholds", "form_check", "headline_key",
    "headline_verdict", "interval_check", "judged_entry_matches", "qualifying_notes",
    "reliability_flags", "reliability_targets", "verdict_of",
    "worst",
]

Verdict = Literal["evidence", "weak", "not evidence"]
EVIDENCE: Verdict = "evidence"
WEAK: Verdict = "weak"
NOT_EVIDENCE: Verdict = "not evidence"
VERDICTS: tuple[Verdict, ...] = (EVIDENCE, WEAK, NOT_EVIDENCE)
"""The verdicts from best to worst; :func:`worst` picks the last of several."""

WEAK_N = 10
"""Fewest units for a headline to be evidence rather than weak: the fewest shared instances
``compare`` tests a paired difference on (``analysis.compare.MIN_PAIRED_N``); from
:data:`~ideaharness.metrics.aggregate.MIN_INTERVAL_N` (5) to 9 units a value is weak."""

COVERAGE_MIN = 0.8
"""Below this share of asked units answered (scored) by a system, its headline is not evidence:
the value is a mean over the units the system did not fail on (issue 32, item 1)."""

COVERAGE_WEAK = 0.95
"""Below this share of asked units answered, a system's headline is weak."""

RELIABILITY_RULES: dict[str, Verdict] = {
    "constant_judge": NOT_EVIDENCE,
    "one_answer": WEAK,
    "position_bias": WEAK,
    "consistency_at_chance": WEAK,
}
"""The verdict each rule of the reliability block
(:class:`~ideaharness.metrics.reliability.block.JudgeWarning`) gives a headline its judged metric
qualifies; ``truncated_reasoning`` is not here (its parse failures lower the coverage and n, which
are checked)."""

GENERIC_WORDS = frozenset({"review", "reviews", "critique", "judge", "judgment", "judgments", "compare",
                           "pair", "pairs", "step", "score", "scores"})
"""Words of a judged metric's name that name no headline (a judged step's verb or unit), left out
when :func:`reliability_targets` matches names."""


@dataclass(frozen=True)
class ReliabilityFlag:
    """One reliability warning of a judged metric: the ``rule`` (a key of :data:`RELIABILITY_RULES`),
    the judged ``metric`` of the reliability block (e.g. ``"critique[originality]"``), the
    ``judge`` model and the short ``reason`` naming its numbers."""

    rule: str
    metric: str
    judge: str
    reason: str

    @property
    def verdict(self) -> Verdict:
        """The verdict this flag gives a headline it qualifies."""
        return RELIABILITY_RULES.get(self.rule, EVIDENCE)


@dataclass
class HeadlineVerdict:
    """The verdict of one headline value: ``metric``, ``group``, ``system`` (None: the run's one
    system), ``verdict`` and ``reasons`` (short sentences, worst first; empty for evidence)."""

    metric: str
    group: str
    system: str | None
    verdict: Verdict
    reasons: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The ``results["evidence"]["verdicts"]`` entry."""
        return {"metric": self.metric, "group": self.group, "system": self.system, "verdict": self.verdict,
                "reasons": list(self.reasons)}


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    """The worst of ``verdicts`` (:data:`VERDICTS` order); ``"evidence"`` for none.

    Raises:
        ValueError: a value that is not a verdict.
    """
    rank = -1
    for v in verdicts:
        if v not in VERDICTS:
            raise ValueError(f"verdict {v!r}: expected one of {', '.join(VERDICTS)}")
        rank = max(rank, VERDICTS.index(v))
    return VERDICTS[max(rank, 0)]


def evidence_thresholds() -> dict[str, Any]:
    """The thresholds of the checks, as written to ``results["evidence"]["thresholds"]``."""
    return {"min_interval_n": MIN_INTERVAL_N, "weak_n": WEAK_N, "coverage_min": COVERAGE_MIN,
            "coverage_weak": COVERAGE_WEAK, "reliability_rules": dict(RELIABILITY_RULES),
            "form_baseline": "not evidence when the value is not beyond the best form-only baseline "
                             "in the metric's direction; weak when its 95% interval reaches it"}


def headline_key(headline: Mapping[str, Any]) -> tuple[str, str, str | None]:
    """``(metric, group, system)`` of a headline value, a verdict or a form baseline entry."""
    system = headline.get("system")
    return (str(headline.get("metric")), str(headline.get("group") or ""),
            None if system in (None, "") else str(system))


def _label(key: tuple[str, str, str | None]) -> str:
    metric, group, system = key
    where = "/".join(g for g in (system, group) if g)
    return f"{metric} ({where})" if where else metric


def _num(x: Any) -> str:
    return f"{x:.3g}" if isinstance(x, float) else str(x)


# (c) n and interval -------------------------------------------------------------------------------

def interval_check(headline: Mapping[str, Any]) -> list[tuple[Verdict, str]]:
    """Check (c): no value, n below :data:`MIN_INTERVAL_N` or no interval -> not evidence; n below
    :data:`WEAK_N` -> weak. ``headline`` is a ``results["metrics"]`` entry (``value``, ``ci``, ``n``,
    and ``why`` / ``ci_why`` where the run says why a value or interval is missing)."""
    value, ci, n = headline.get("value"), headline.get("ci"), headline.get("n")
    if value is None or n == 0:
        why = headline.get("why")
        return [(NOT_EVIDENCE, f"not computed (n {n or 0})" + (f": {why}" if why else ""))]
    if n is None:
        return [(WEAK, "n unknown: the run does not say how many units the value rests on")]
    if n < MIN_INTERVAL_N:
        return [(NOT_EVIDENCE, f"n too small: n {n} < {MIN_INTERVAL_N}, no valid 95% interval")]
    out: list[tuple[Verdict, str]] = []
    if not ci:
        why = headline.get("ci_why")
        out.append((NOT_EVIDENCE, f"no 95% interval (n {n})" + (f": {why}" if why else "")))
    if n < WEAK_N:
        out.append((WEAK, f"small n: n {n} < {WEAK_N}"))
    return out


# (a) coverage -------------------------------------------------------------------------------------

def coverage_entries(results: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """Per system, the units asked and answered: ``results["coverage"]`` when the run has it, else
    derived from ``idea_sources`` (asked instances less the missing or failed ones), else from ``selection``
    and ``failed_units`` (selected instances less those with a failed or skipped unit); None when
    the run has none of them (coverage unknown).

    Returns:
        ``[{"role", "system", "asked", "answered", "failed": [ids], "rate"}]``; ``rate`` in [0, 1]
        (None for 0 asked).
    """
    given = results.get("coverage")
    if isinstance(given, list):
        return [dict(e) for e in given if isinstance(e, Mapping)]
    sources = results.get("idea_sources")
    if isinstance(sources, list) and sources:
        out = []
        for s in sources:
            if not isinstance(s, Mapping):
                continue
            answers = s.get("answers") or {}
            asked = int(answers.get("asked") or 0)
            gone = [*(answers.get("missing") or []), *(answers.get("failed") or [])]
            missing = sorted({str(i) for i in gone})
            out.append({"role": s.get("role"), "system": s.get("system"), "asked": asked,
                        "answered": max(asked - len(missing), 0), "failed": missing,
                        "rate": (asked - len(missing)) / asked if asked else None})
        return out
    selection = results.get("selection")
    if isinstance(selection, Mapping) and selection.get("selected"):
        ids = {str(i) for i in selection.get("ids") or []}
        failed = sorted({str(u.get("instance_id")) for u in results.get("failed_units") or []
                         if isinstance(u, Mapping) and (not ids or str(u.get("instance_id")) in ids)})
        asked = int(selection["selected"])
        answered = max(asked - len(failed), 0)
        return [{"role": None, "system": None, "asked": asked, "answered": answered, "failed": failed,
                 "rate": answered / asked}]
    return None


def coverage_check(system: str | None,
                   entries: Sequence[Mapping[str, Any]] | None) -> list[tuple[Verdict, str]]:
    """Check (a) for a headline of ``system`` (None: the run's one system, every entry applies; a
    named system takes the entries whose ``system`` or ``role`` it is, or every entry when none
    is). Rate below :data:`COVERAGE_MIN` -> not evidence, below :data:`COVERAGE_WEAK` -> weak;
    ``entries`` None -> the reason "coverage unknown" with no effect on the verdict."""
    if entries is None:
        return [(EVIDENCE, "coverage unknown: the run records no asked and answered units")]
    chosen = [e for e in entries if system is not None and system in (e.get("system"), e.get("role"))]
    out: list[tuple[Verdict, str]] = []
    for e in chosen or entries:
        asked, answered = e.get("asked") or 0, e.get("answered")
        rate = e.get("rate")
        if rate is None and asked and isinstance(answered, int):
            rate = answered / asked
        if rate is None or rate >= COVERAGE_WEAK:
            continue
        verdict: Verdict = NOT_EVIDENCE if rate < COVERAGE_MIN else WEAK
        who = e.get("system") or e.get("role") or "the system"
        failed = e.get("failed") or []
        out.append((verdict, f"coverage {answered}/{asked} ({rate:.0%}) for {who}: "
                             f"{len(failed) or asked - (answered or 0)} asked unit(s) failed or unparsed, "
                             f"the value is over the rest (evidence needs {COVERAGE_WEAK:.0%})"))
    return out


# (b) blindness ------------------------------------------------------------------------------------

def form_check(headline: Mapping[str, Any], entries: Sequence[Mapping[str, Any]],
               higher_is_better: bool | None) -> list[tuple[Verdict, str]]:
    """Check (b) against the form-only baselines of this headline (``results["form_baselines"]``
    entries of the same metric, group and system; each ``best_value`` on the headline's scale).

    A value not beyond ``best_value`` in the metric's direction -> not evidence; beyond it with the
    interval reaching it (``ci`` low <= best for higher-is-better, ``ci`` high >= best otherwise)
    -> weak. An unknown direction -> weak ("not compared"). A headline without a value is judged by
    check (c) alone.
    """
    value, ci = headline.get("value"), headline.get("ci")
    if value is None:
        return []
    out: list[tuple[Verdict, str]] = []
    key = headline_key(headline)
    for e in entries:
        if headline_key(e) != key or e.get("best_value") is None:
            continue
        best, name = float(e["best_value"]), str(e.get("best") or "form-only")
        where = f" on {e['step']}" if e.get("step") else ""
        n = e.get("n")
        said = f"form-only baseline '{name}'{where} reaches {best:.3g} (n {n})"
        if higher_is_better is None:
            out.append((WEAK, f"{said}; not compared: the metric's direction is unknown"))
            continue
        beyond = value > best if higher_is_better else value < best
        if not beyond:
            out.append((NOT_EVIDENCE, f"not blind: {said}, the value {value:.3g} is not "
                                      f"{'above' if higher_is_better else 'below'} it"))
        elif ci and (ci[0] <= best if higher_is_better else ci[1] >= best):
            out.append((WEAK, f"near form: {said}, inside the value's 95% interval "
                              f"[{ci[0]:.3g}, {ci[1]:.3g}]"))
    return out


# (d) judge reliability ----------------------------------------------------------------------------

def reliability_flags(results: Mapping[str, Any]) -> list[ReliabilityFlag]:
    """The warnings of ``results["reliability"]`` whose rule is in :data:`RELIABILITY_RULES`, one
    :class:`ReliabilityFlag` per (judged metric, judge, rule), with a short reason."""
    section = results.get("reliability")
    blocks = section.get("metrics") if isinstance(section, Mapping) else None
    if not isinstance(blocks, Mapping):
        return []
    flags = []
    for metric, block in blocks.items():
        for judge, jr in ((block or {}).get("judges") or {}).items():
            for w in jr.get("warnings") or []:
                rule = w.get("rule")
                if rule in RELIABILITY_RULES:
                    reason = _flag_reason(rule, metric, judge, jr)
                    flags.append(ReliabilityFlag(rule, str(metric), str(judge), reason))
    return flags


def _flag_reason(rule: str, metric: str, judge: str, jr: Mapping[str, Any]) -> str:
    parsed, modal, share = jr.get("parsed"), jr.get("modal_answer"), jr.get("modal_share")
    if rule == "constant_judge":
        return f"constant judge: {judge} gave {modal} in all {parsed} parsed judgments of {metric}"
    if rule == "one_answer":
        return (f"near-constant judge: {judge} gave {modal} in {share or 0:.0%} of {parsed} parsed "
                f"judgments of {metric}")
    if rule == "consistency_at_chance":
        cons = jr.get("consistency") or {}
        return (f"consistency at chance: {judge} on {metric} agrees with itself "
                f"{_num(cons.get('agreement'))} vs chance {_num(cons.get('chance'))} "
                f"({cons.get('n_pairs')} pairs)")
    pos = jr.get("position") or {}
    return (f"position bias: {judge} on {metric} {pos.get('favours') or 'favours'} "
            f"{pos.get('position') or 'a position'} (adjusted p {_num(pos.get('p_adjusted'))}, "
            f"n {pos.get('n_judgments')})")


def _tokens(text: str) -> set[str]:
    return {t for t in re.split(r"[^a-z0-9]+", text.lower()) if t}


def reliability_targets(judged: Sequence[str], headlines: Sequence[Mapping[str, Any]], *,
                        benchmark: str = "", links: Iterable[tuple[str, str]] = (),
                        inputs: Mapping[str, Sequence[str]] | None = None) -> dict[str, list[int]]:
    """Which headlines each judged metric of the reliability block qualifies, guessed from names:
    the fallback for a headline whose metric declares nothing (``MetricSpec.judged_by`` None: an
    unregistered metric; a run written before the declarations, read without a registry);
    declared metrics use :func:`declared_targets`.

    A judged metric ``R`` (e.g. ``"critique[originality]"``, ``"review/idea[novelty]"``,
    ``"researchbench_rank_pair"``) qualifies headline ``H`` (an entry of ``headlines``) when

    1. ``links`` pairs R's step (its name before ``[``) with H's metric — a form baseline entry
       names the step a headline is judged in; or
    2. every word of R's name, less the benchmark's name and :data:`GENERIC_WORDS`, is a word of
       H's metric name (after ``<benchmark>.``) or group;
    3. H's metric has ``inputs`` (a derived metric, e.g. an average) one of which R qualifies.

    A headline that no judged metric qualifies this way is qualified by every judged metric of the
    run (a flag that cannot be placed is said wherever it may apply, never dropped: LiveIdeaBench's
    flexibility is computed from the critiques without naming them; a metric with no judgment at
    all, such as a BERTScore, is then qualified too, and the reason names the judged metric).

    Args:
        judged: the judged metric names (keys of ``results["reliability"]["metrics"]``).
        headlines: ``results["metrics"]`` entries.
        benchmark: the run's benchmark name (its words are not matched).
        links: ``(step, metric)`` pairs (from ``results["form_baselines"]``).
        inputs: metric -> the metrics it is computed from (``MetricSpec.inputs``).

    Returns:
        judged metric -> indices into ``headlines``.
    """
    ignore = GENERIC_WORDS | _tokens(benchmark)
    linked: dict[str, set[str]] = {}
    for step, metric in links:
        linked.setdefault(str(step), set()).add(str(metric))
    words = []
    for h in headlines:
        metric = str(h.get("metric"))
        words.append(_tokens(metric.split(".", 1)[-1]) | _tokens(str(h.get("group") or "")))
    targets: dict[str, list[int]] = {}
    named_metrics: dict[str, set[str]] = {}
    for r in judged:
        step = r.split("[", 1)[0]
        own = _tokens(r) - ignore
        hits = [i for i, h in enumerate(headlines)
                if str(h.get("metric")) in linked.get(step, set()) or (own and own <= words[i])]
        targets[r] = hits
        named_metrics[r] = {str(headlines[i].get("metric")) for i in hits}
    for r in judged:  # derived metrics take the flags of their inputs
        for i, h in enumerate(headlines):
            if i not in targets[r] and set((inputs or {}).get(str(h.get("metric")), ())) & named_metrics[r]:
                targets[r].append(i)
    placed = {i for hits in targets.values() for i in hits}
    unplaced = [i for i in range(len(headlines)) if i not in placed]
    for r in judged:
        targets[r] = targets[r] + unplaced
    return {r: sorted(hits) for r, hits in targets.items()}


def judged_entry_matches(entry: str, group: str, judged: str) -> bool:
    """Whether the declaration ``entry`` (one of ``MetricSpec.judged_by``) of a headline of group
    ``group`` names the reliability block's judged metric ``judged`` (``<step>`` or
    ``<step>[<dimension>]``).

    ``{group}`` in ``entry`` becomes ``group``; with an empty group ``[{group}]`` is dropped (the
    whole step) and ``/{group}`` becomes ``/`` (a prefix). The entry then names ``judged`` when it
    equals it, equals its step (every dimension), or ends with ``/`` and its step starts with it.
    """
    if "{group}" in entry:
        entry = entry.replace("[{group}]", "") if not group else entry
        entry = entry.replace("{group}", group)
    step = judged.split("[", 1)[0]
    return entry in (judged, step) or (entry.endswith("/") and step.startswith(entry))


def declared_targets(judged: Sequence[str], headlines: Sequence[Mapping[str, Any]],
                     judged_by: Mapping[str, Sequence[str]]) -> dict[str, list[int]]:
    """Which headlines each judged metric qualifies, by the metrics' declarations.

    Args:
        judged: the judged metric names (keys of ``results["reliability"]["metrics"]``).
        headlines: ``results["metrics"]`` entries.
        judged_by: metric name -> its ``MetricSpec.judged_by`` entries (:func:`judged_entry_matches`);
            ``()``: the metric rests on no judgment. Headlines of metrics not in it are left out
            (their flags are placed by :func:`reliability_targets`).

    Returns:
        judged metric -> indices into ``headlines`` (sorted).
    """
    targets: dict[str, list[int]] = {r: [] for r in judged}
    for i, h in enumerate(headlines):
        entries = judged_by.get(str(h.get("metric")))
        if entries is None:
            continue
        group = str(h.get("group") or "")
        for r in judged:
            if any(judged_entry_matches(str(e), group, r) for e in entries):
                targets[r].append(i)
    return targets


# the verdict --------------------------------------------------------------------------------------

def headline_verdict(headline: Mapping[str, Any], *, higher_is_better: bool | None = None,
                     coverage: Sequence[Mapping[str, Any]] | None = None,
                     form_baselines: Sequence[Mapping[str, Any]] = (),
                     flags: Sequence[ReliabilityFlag] = ()) -> HeadlineVerdict:
    """The verdict of one headline value from the four checks; the worst wins.

    Args:
        headline: a ``results["metrics"]`` entry (``metric``, ``group``, ``system``, ``value``,
            ``ci``, ``n``, ``why``, ``ci_why``).
        higher_is_better: the metric's direction (``MetricSpec.higher_is_better``); None: unknown
            (only the form-baseline check needs it).
        coverage: :func:`coverage_entries` of the run (None: unknown).
        form_baselines: ``results["form_baselines"]`` (entries of other headlines are ignored).
        flags: the reliability flags that qualify this headline (:func:`reliability_flags`,
            placed by :func:`reliability_targets`).

    Returns:
        a :class:`HeadlineVerdict`; its reasons are the not-evidence ones first, then the weak
        ones, then remarks that do not change the verdict (coverage unknown).
    """
    found: list[tuple[Verdict, str]] = []
    found += interval_check(headline)
    key = headline_key(headline)
    found += coverage_check(key[2], coverage)
    found += form_check(headline, form_baselines, higher_is_better)
    seen = set()
    for f in flags:
        if f.verdict != EVIDENCE and f.reason not in seen:
            seen.add(f.reason)
            found.append((f.verdict, f.reason))
    verdict = worst(v for v, _ in found)
    ordered = sorted(found, key=lambda vr: -VERDICTS.index(vr[0]))
    return HeadlineVerdict(*key, verdict=verdict, reasons=[r for _, r in ordered])


def evidence_block(results: Mapping[str, Any], directions: Mapping[str, bool] | None = None,
                   inputs: Mapping[str, Sequence[str]] | None = None,
                   judged_by: Mapping[str, Sequence[str] | None] | None = None) -> dict[str, Any]:
    """``results["evidence"]``: the thresholds and one verdict per headline value of the run.

    Args:
        results: the run's results dict (``metrics``, and where present ``coverage``,
            ``idea_sources``, ``selection``, ``failed_units``, ``form_baselines``, ``reliability``,
            ``benchmark``).
        directions: metric name -> higher is better (``MetricSpec.higher_is_better``, e.g.
            ``{n: s.higher_is_better for n, s in runner.registry.metrics().items()}``); a metric
            missing from it has an unknown direction.
        inputs: metric name -> the metrics it is computed from (``MetricSpec.inputs``).
        judged_by: metric name -> the judged steps its value rests on (``MetricSpec.judged_by``;
            ``()``: no judge). A headline's reliability flags are those its metric declares
            (:func:`declared_targets`); a metric missing from it or mapped to None (undeclared)
            falls back to the name-matching guess (:func:`reliability_targets`).

    Returns:
        ``{"thresholds": {...}, "judged_by": {metric: [entries]}, "verdicts": [{"metric", "group",
        "system", "verdict", "reasons"}]}``, the verdicts in the order of ``results["metrics"]``;
        ``judged_by`` holds the declarations used, for the run's headline metrics that have one.
    """
    headlines = [m for m in results.get("metrics") or [] if isinstance(m, Mapping)]
    forms = [e for e in results.get("form_baselines") or [] if isinstance(e, Mapping)]
    coverage = coverage_entries(results)
    flags = reliability_flags(results)
    judged = sorted({f.metric for f in flags})
    own = {str(h.get("metric")) for h in headlines}
    declared = {name: [str(e) for e in entries] for name, entries in (judged_by or {}).items()
                if entries is not None and name in own}
    guessed = reliability_targets(judged, headlines, benchmark=str(results.get("benchmark") or ""),
                                  links=[(str(e.get("step")), str(e.get("metric")))
                                         for e in forms if e.get("step")],
                                  inputs=inputs)
    stated = declared_targets(judged, headlines, declared)
    verdicts = []
    for i, h in enumerate(headlines):
        targets = stated if str(h.get("metric")) in declared else guessed
        mine = [f for f in flags if i in targets.get(f.metric, [])]
        direction = (directions or {}).get(str(h.get("metric")))
        verdicts.append(headline_verdict(h, higher_is_better=direction, coverage=coverage,
                                         form_baselines=forms, flags=mine).to_json())
    return {"thresholds": evidence_thresholds(), "judged_by": dict(sorted(declared.items())),
            "verdicts": verdicts}


def evidence_of(results: Mapping[str, Any], directions: Mapping[str, bool] | None = None,
                inputs: Mapping[str, Sequence[str]] | None = None,
                judged_by: Mapping[str, Sequence[str] | None] | None = None) -> dict[str, Any]:
    """The run's evidence block: ``results["evidence"]`` when it has one, else computed now
    (:func:`evidence_block`; a run written before the block existed), with the declarations
    ``judged_by`` given (``compare`` passes the registered ones) — without them every headline's
    judge flags are placed by the name-matching guess (:func:`reliability_targets`)."""
    given = results.get("evidence")
    if isinstance(given, Mapping) and isinstance(given.get("verdicts"), list):
        return dict(given)
    return evidence_block(results, directions, inputs, judged_by)


def verdict_of(block: Mapping[str, Any], metric: str, group: str = "",
               system: str | None = None) -> dict[str, Any] | None:
    """The verdict entry (``{"metric", "group", "system", "verdict", "reasons"}``) of one headline
    of an evidence block; a headline of the run's one system (``system`` None) also answers for
    a named ``system``. None when the block has no verdict for it."""
    key = (metric, group or "", None if system in (None, "") else system)
    found = {headline_key(v): v for v in block.get("verdicts") or [] if isinstance(v, Mapping)}
    hit = found.get(key) or found.get((key[0], key[1], None))
    return dict(hit) if hit is not None else None


# what the console says ----------------------------------------------------------------------------

def evidence_lines(block: Mapping[str, Any]) -> list[str]:
    """The console lines of an evidence block: one per headline that is not evidence (``"weak:
    <metric> (<group>): reason; reason"``), or one summary line when every headline is evidence;
    nothing for a run without headlines."""
    verdicts = [v for v in block.get("verdicts") or [] if isinstance(v, Mapping)]
    if not verdicts:
        return []
    bad = [v for v in verdicts if v.get("verdict") != EVIDENCE]
    if not bad:
        return [f"evidence: all {len(verdicts)} headline value(s) pass the evidence checks "
                "(coverage, form-only baselines, n and interval, judge reliability)"]
    lines = []
    for v in bad:
        reasons = [r for r in v.get("reasons") or [] if not str(r).startswith("coverage unknown")]
        lines.append(f"{str(v.get('verdict')).upper()}: {_label(headline_key(v))}: " + "; ".join(reasons))
    return lines


def qualifying_notes(results: Mapping[str, Any], already: Iterable[str | None] = ()) -> list[str]:
    """The notes of ``results["notes"]`` to print on the console, one line each (whitespace
    collapsed), less those in ``already`` (lines printed elsewhere) and duplicates."""
    skip = {" ".join(str(a).split()) for a in already if a}
    out = []
    for note in results.get("notes") or []:
        line = " ".join(str(note).split())
        if line and line not in skip:
            skip.add(line)
            out.append(line)
    return out


# what the report, the viewer and export show ---------------------------------------------------------

EVIDENCE_COLUMNS = ["metric", "group", "system", "value", "95% CI", "n", "verdict", "reasons"]
"""Columns of :func:`evidence_rows` (and of the export's ``evidence`` table)."""


def evidence_rows(results: Mapping[str, Any], block: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """One row per headline value: its ``metric``, ``group``, ``system``, ``value``, ``ci``, ``n``
    (from ``results["metrics"]``), ``verdict`` and ``reasons`` (from ``block``, default
    :func:`evidence_of` ``(results)``). A verdict whose headline is not in ``results["metrics"]``
    keeps value, ci and n None."""
    block = block if block is not None else evidence_of(results)
    values = {headline_key(m): m for m in results.get("metrics") or [] if isinstance(m, Mapping)}
    rows = []
    for v in block.get("verdicts") or []:
        key = headline_key(v)
        m = values.get(key, {})
        ci = m.get("ci")
        rows.append({"metric": key[0], "group": key[1], "system": key[2], "value": m.get("value"),
                     "ci": list(ci) if ci else None, "n": m.get("n"), "verdict": v.get("verdict"),
                     "reasons": list(v.get("reasons") or [])})
    return rows


def evidence_table(results: Mapping[str, Any], block: Mapping[str, Any] | None = None) -> Table | None:
    """The "Evidence" table of a run (:data:`EVIDENCE_COLUMNS`, reasons joined by "; "), its note
    the thresholds; None for a run without headline values."""
    rows = evidence_rows(results, block)
    if not rows:
        return None
    t = evidence_thresholds()
    note = (f"evidence: coverage >= {t['coverage_weak']:.0%} of asked units (below {t['coverage_min']:.0%}: "
            f"not evidence), n >= {t['weak_n']} with a 95% interval (below {t['min_interval_n']}: not "
            "evidence), beyond every form-only baseline with the interval clear of it, no constant judge "
            "(position bias, consistency at chance, a near-constant judge: weak); the worst check wins "
            "(docs/evidence.md)")
    return Table(title="Evidence: is each headline value evidence?", columns=EVIDENCE_COLUMNS,
                 rows=[[r["metric"], r["group"], r["system"], r["value"], tuple(r["ci"]) if r["ci"] else None,
                        r["n"], r["verdict"], "; ".join(r["reasons"])] for r in rows], note=note)
