"""Per-instance scores of a run: the :class:`Score` model and ``<run>/scores.jsonl``.

A benchmark's :meth:`~ideaharness.runner.protocol.Benchmark.scores` returns one :class:`Score`
per (metric, group, system, unit): the value that unit contributes to the metric, or None with the
reason it has none. The runner writes them to ``scores.jsonl`` next to ``results.json`` and
computes every headline number from them; ``load_run``, ``export``, ``compare`` and the viewer read
the same file. This module sits below the runner and the analysis layer, so both can use it.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ValidationError, field_validator, model_validator

from ideaharness.errors import UserError
from ideaharness.fileio import atomic_write_text
from ideaharness.metrics.aggregate import IntervalSettings, headline_interval
from ideaharness.metrics.reliability.sampling import original_key

SCORES_FILE = "scores.jsonl"
Record = tuple[str, str, str, dict[str, Any]]
"""``(step, instance_id, key, data)`` of one record line."""


class Score(BaseModel):
    """One unit's value of one metric (after inspect_ai's ``Score``).

    Attributes:
        metric: registered name ``"<benchmark>.<metric>"``
            (a :class:`~ideaharness.runner.protocol.MetricSpec`).
        group: the headline group it belongs to (scenario, indicator, component, round; "" for
            the whole run), as :attr:`~ideaharness.runner.protocol.MetricValue.group`.
        instance_id: the instance (record ``instance_id``) the value comes from.
        pair_key: the unit shared across systems, which ``compare`` pairs on (default: the
            instance id; LigBench: topic and sample of an idea).
        system: the system it scores; None = the run's one system (a run of several systems,
            LigBench, names each).
        value: the unit's contribution, None when unscored (never a 0 for "no value").
        weight: the unit's weight in a pooled :data:`~ideaharness.metrics.aggregate.ratio` (its
            denominator, e.g. parsed judgments); 1 otherwise. > 0 when ``value`` is set.
        reason: why ``value`` is None (e.g. "ranking reply unparsed"); None when scored.
    """

    metric: str
    group: str = ""
    instance_id: str
    pair_key: str = ""
    system: str | None = None
    value: float | None
    weight: float = 1.0
    reason: str | None = None

    @field_validator("value")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError(f"value {value} is not finite; give None with a reason")
        return value

    @model_validator(mode="after")
    def _defaults(self) -> Score:
        if not self.pair_key:
            self.pair_key = self.instance_id
        if self.value is not None and not self.weight > 0:
            raise ValueError(f"weight {self.weight}: a scored unit needs a weight > 0")
        return self

    @classmethod
    def unscored(cls, metric: str, instance_id: str, reason: str, **fields: Any) -> Score:
        """A unit with no value, and why (``Score.unscored("x.y", "i1", "reply unparsed")``)."""
        return cls(metric=metric, instance_id=instance_id, value=None, reason=reason, **fields)


def write_scores(run_dir: Path, scores: Iterable[Score]) -> Path:
    """Write ``<run_dir>/scores.jsonl`` atomically (one JSON object a line, in the given order);
    returns its path.

    Raises:
        OSError: the file cannot be written (the caller reports it).
    """
    text = "".join(json.dumps(s.model_dump(mode="json"), ensure_ascii=False) + "\n" for s in scores)
    return atomic_write_text(run_dir / SCORES_FILE, text)


def read_scores(run_dir: Path) -> list[Score] | None:
    """The scores of a run directory, or None when it has no ``scores.jsonl`` (a run written before
    scores were stored, or one whose results are not written yet).

    Raises:
        UserError: a line that is not a score (naming the file and line).
    """
    path = run_dir / SCORES_FILE
    if not path.exists():
        return None
    out = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not readable ({exc})") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(Score.model_validate(json.loads(line)))
        except (ValueError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            raise UserError(f"{path}, line {number}: not a score ({first}); re-run to rewrite it") from None
    return out


Row = list[float]
UnitKey = tuple[str | None, str]
"""``(system, group)``: one headline value per metric and key."""


class Summary(BaseModel):
    """A metric's value over one (system, group) of scores: ``value`` (None when not defined),
    ``ci``, ``n`` (units with a value), ``why`` (when ``value`` is None) and ``ci_why`` (when a
    value has no interval because the rule withheld it: "n too small for an interval (n < 5)",
    :func:`~ideaharness.metrics.aggregate.headline_interval`)."""

    value: float | None
    ci: tuple[float, float] | None = None
    n: int
    why: str | None = None
    ci_why: str | None = None


def unit_rows(scores: Sequence[Score], metric: str,
              inputs: Sequence[str] = ()) -> dict[UnitKey, dict[str, Row]]:
    """The unit table of ``metric`` per (system, group): pair key -> row.

    Without ``inputs`` a row is ``[value, weight]`` of the metric's own score (NaN value when
    unscored); with ``inputs`` one column per input metric that has scores in ``scores`` (an input
    with none at all, e.g. a dimension another protocol version lacks, is no column), holding its
    value (NaN where the unit lacks it or is unscored).

    Raises:
        ValueError: two scores of one metric for the same (system, group, pair key).
    """
    present = {s.metric for s in scores}
    names = [m for m in inputs if m in present] if inputs else [metric]
    out: dict[UnitKey, dict[str, Row]] = {}
    for s in scores:
        if s.metric not in names:
            continue
        rows = out.setdefault((s.system, s.group), {})
        value = math.nan if s.value is None else s.value
        if inputs:
            row = rows.setdefault(s.pair_key, [math.nan] * len(names))
            col = names.index(s.metric)
            if not math.isnan(row[col]):
                raise ValueError(f"two {s.metric} scores for {s.pair_key} ({s.group or 'no group'})")
            row[col] = value
        else:
            if s.pair_key in rows:
                raise ValueError(f"two {s.metric} scores for {s.pair_key} ({s.group or 'no group'}); a "
                                 "benchmark gives one value per unit and metric")
            rows[s.pair_key] = [value, s.weight]
    return out


def table_of(rows: dict[str, Row], keys: Sequence[str] | None = None) -> np.ndarray:
    """The rows of ``keys`` (default: all, sorted) as an ``(n, k)`` array (NaN rows for missing keys)."""
    keys = sorted(rows) if keys is None else keys
    width = len(next(iter(rows.values()))) if rows else 1
    return np.asarray([rows.get(k, [math.nan] * width) for k in keys], dtype=float).reshape(len(keys), width)


def complete(table: np.ndarray, multi: bool) -> np.ndarray:
    """The units the metric's n counts: with a value (one input), with every input (several)."""
    mask = np.isfinite(table).all(axis=1) if multi else np.isfinite(table[:, 0])
    return table[mask]


def summarise(spec: Any, rows: dict[str, Row], settings: IntervalSettings,
              reasons: Sequence[str] = ()) -> Summary:
    """Value, interval and n of ``spec`` (a :class:`~ideaharness.runner.protocol.MetricSpec`) over
    one unit table; ``reasons``: why units were unscored (the most common one becomes ``why``
    when no unit has a value).

    One input: value, interval and n over the units with a value. Several inputs: the value of
    the whole table (a statistic may use each column's own units), n = the units with every
    input, the interval as the spec's interval forms it (the bootstrap resamples those units).
    The interval follows the one headline rule (:func:`~ideaharness.metrics.aggregate.headline_interval`):
    none below ``MIN_INTERVAL_N`` units (``ci_why`` says so), else the spec's interval with the
    spec's ``range`` as ``settings.bounds``; the run's headline and ``compare`` both come here.
    A unit's value outside the spec's ``range`` is no error: the value stands, the interval is
    withheld and ``ci_why`` names the value and the range
    (:class:`~ideaharness.metrics.aggregate.OutOfRange`).

    Raises:
        ValueError: the spec's interval rejects the table for another reason (named with the metric)."""
    multi = bool(spec.inputs)
    table = table_of(rows)
    used = complete(table, multi)
    n = len(used)
    source = table if multi else used
    value = spec.aggregate(source) if len(source) else None
    try:
        ci, ci_why = (headline_interval(spec.interval, source, spec.aggregate,
                                        replace(settings, bounds=tuple(spec.range)), n)
                      if value is not None else (None, None))
    except ValueError as exc:  # the interval rejects the table (not a range violation: headline_interval)
        raise ValueError(f"{spec.name}: {exc}") from None
    why = None
    if value is None:
        own = spec.aggregate.why_undefined(source, n) if n or multi else None
        if own:
            why = own
        elif reasons:
            top = Counter(reasons).most_common(1)[0]
            why = f"{top[0]} ({top[1]} of {len(reasons)} unscored)"
    return Summary(value=value, ci=ci, n=n, why=why, ci_why=ci_why)


def summarise_scores(scores: Sequence[Score], specs: Iterable[Any], settings: IntervalSettings,
                     skip: Iterable[tuple[str, str, str | None]] = ()) -> list[tuple[str, UnitKey, Summary]]:
    """Every (metric, (system, group), summary) the scores give for ``specs`` (one-input metrics from
    their own scores, metrics with inputs from their inputs' scores), in spec order then
    (system, group) order of first appearance; ``skip``: (metric, group, system) given elsewhere."""
    skipped = set(skip)
    out = []
    for spec in specs:
        reasons: dict[UnitKey, list[str]] = {}
        for s in scores:
            if s.metric == spec.name and s.value is None:
                reasons.setdefault((s.system, s.group), []).append(s.reason or "unscored")
        for key, rows in unit_rows(scores, spec.name, spec.inputs).items():
            if (spec.name, key[1], key[0]) in skipped:
                continue
            out.append((spec.name, key, summarise(spec, rows, settings, reasons.get(key, ()))))
    return out


def selected_records(records: Sequence[Record], results: dict[str, Any]) -> list[Record]:
    """The records of the instances ``results["selection"]["ids"]`` lists (all when it lists none):
    a run resumed with a smaller ``--limit`` or another ``--shard`` keeps the records of instances
    its headline no longer covers, and those must not become scores. For a benchmark whose record
    instance ids are its item ids."""
    ids = (results.get("selection") or {}).get("ids")
    if not isinstance(ids, list):
        return list(records)
    keep = set(map(str, ids))
    return [r for r in records if r[1] in keep]


def scored_records(records: Iterable[Record]) -> list[Record]:
    """The records a benchmark's ``scores()`` reads: consistency re-asks (keys ending in
    ``#reask``) removed, since they are extra calls that measure the judge, never scores."""
    return [r for r in records if not original_key(str(r[2]))[1]]
