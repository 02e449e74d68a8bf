"""What the benchmarks' form-only baselines share (``Benchmark.form_baselines``; issue 32, Build (b)).

A benchmark's ``form.py`` replays each recorded judgment of a gold step with the answer a
:data:`~ideaharness.metrics.form_baseline.FORM_RULES` rule gives from the prompt the judge was
shown (:func:`~ideaharness.metrics.form_baseline.shown_items`), scores the replayed records with
the benchmark's own scoring functions, and hands the scores of every rule to :func:`entries`,
which computes each headline (metric, group, system) through its registered
:class:`~ideaharness.runner.protocol.MetricSpec` (the headline's own statistic and scale) and
builds the ``results["form_baselines"]`` entries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ideaharness.metrics.form_baseline import FORM_RULES, FormRule, baseline_entry
from ideaharness.runner.protocol import MetricSpec
from ideaharness.runner.registry import metrics
from ideaharness.runs.scores import Record, Score, complete, table_of, unit_rows

Prompts = Callable[[str], list[dict[str, Any]] | None]
"""Prompt hash -> the messages the judge was shown (None when the run did not keep them)."""
Chance = Callable[[str, str], float | None]
"""(metric, group) -> the expected value of a content-blind deterministic judge, None if unknown."""


def prompt_of(data: Mapping[str, Any], prompts: Prompts) -> list[dict[str, Any]] | None:
    """The messages behind a judged record (its ``judgment.prompt_hash``), None when not kept."""
    judgment = data.get("judgment") if isinstance(data, Mapping) else None
    digest = judgment.get("prompt_hash") if isinstance(judgment, Mapping) else None
    return prompts(str(digest)) if digest else None


def answered(data: Mapping[str, Any], parsed: Any) -> dict[str, Any]:
    """A copy of the judged record ``data`` whose judgment parsed to ``parsed`` (None: unparsed);
    ``data`` itself is not changed (the copy shares its other values)."""
    judgment = {**(data.get("judgment") or {}), "parsed": parsed, "parse_ok": parsed is not None}
    return {**data, "judgment": judgment}


def cached(prompts: Prompts) -> Prompts:
    """``prompts`` reading each kept prompt once (every rule replays the same prompts)."""
    seen: dict[str, list[dict[str, Any]] | None] = {}

    def read(digest: str) -> list[dict[str, Any]] | None:
        if digest not in seen:
            seen[digest] = prompts(digest)
        return seen[digest]
    return read


def replay(records: Sequence[Record], step: Callable[[str], bool], prompts: Prompts,
           answer: Callable[[Record, list[dict[str, Any]]], Any]) -> list[Record]:
    """``records`` with every judged record of a step ``step`` accepts re-answered by
    ``answer(record, messages)`` (the form rule's parsed answer; a record whose prompt was not
    kept, or whose answer is None, reads as unparsed)."""
    out: list[Record] = []
    for rec in records:
        name, _, _, data = rec
        if step(name) and isinstance(data, Mapping) and isinstance(data.get("judgment"), Mapping):
            messages = prompt_of(data, prompts)
            rec = (rec[0], rec[1], rec[2], answered(data, answer(rec, messages) if messages else None))
        out.append(rec)
    return out


def values(scores: Sequence[Score],
           spec: MetricSpec) -> dict[tuple[str | None, str], tuple[float | None, int]]:
    """(system, group) -> (value, n) of ``spec`` over ``scores``, as the headline computes it
    (:func:`ideaharness.runs.scores.summarise`, without the interval)."""
    out: dict[tuple[str | None, str], tuple[float | None, int]] = {}
    for key, rows in unit_rows(scores, spec.name, spec.inputs).items():
        table = table_of(rows)
        used = complete(table, bool(spec.inputs))
        source = table if spec.inputs else used
        out[key] = (spec.aggregate(source) if len(source) else None, len(used))
    return out


def entries(step: str, by_rule: Mapping[str, Sequence[Score]], names: Sequence[str],
            chance: Chance | None = None) -> list[dict[str, Any]]:
    """The ``form_baselines`` entries of ``step``: per metric of ``names`` and (system, group) its
    scores give, each rule's value (``by_rule``: rule name -> the scores of a judge that follows
    it), in :data:`~ideaharness.metrics.form_baseline.FORM_RULES` order; ``n`` the most units
    any rule has a value on.

    Raises:
        KeyError: a metric of ``names`` is not registered.
    """
    registered = metrics()
    out: list[dict[str, Any]] = []
    for name in names:
        spec = registered[name]
        per_rule = {rule: values(scores, spec) for rule, scores in by_rule.items()}
        keys = list(dict.fromkeys(k for v in per_rule.values() for k in v))
        for system, group in keys:
            got = {rule: v.get((system, group), (None, 0)) for rule, v in per_rule.items()}
            entry = baseline_entry(metric=name, group=group, system=system, step=step,
                                   n=max(n for _, n in got.values()),
                                   chance=chance(name, group) if chance else None,
                                   baselines={rule: value for rule, (value, _) in got.items()},
                                   higher_is_better=spec.higher_is_better)
            if entry is not None:
                out.append(entry)
    return out


def rules() -> tuple[FormRule, ...]:
    """Every form rule (:data:`~ideaharness.metrics.form_baseline.FORM_RULES`)."""
    return FORM_RULES
