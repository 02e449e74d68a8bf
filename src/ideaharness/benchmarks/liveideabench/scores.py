"""LiveIdeaBench per-keyword scores (the primary output of a run) and the metric specs built on them.

The headline score of each dimension (originality, feasibility, clarity (v2), fluency) is the mean
over keywords of the keyword means (:func:`~ideaharness.benchmarks.liveideabench.aggregate.aggregate_run`),
so one score per keyword and dimension re-aggregates to it. Flexibility is the 30th percentile
over keywords of each keyword's mean of the dimensions (``stats_flexibility.ipynb``): its score is
that keyword mean (unscored when a dimension is missing) and its aggregation
:data:`FLEXIBILITY`. The leaderboard average has no scores of its own: it is a metric over several
inputs per keyword (:data:`AVERAGE_INPUTS`, :func:`average_statistic`).

Under ``--parity`` the published ``stats.ipynb`` pools (idea x judge) rows: the dimension values
and the average are then not aggregates of keyword scores and come from
:meth:`~ideaharness.benchmarks.liveideabench.run.LiveIdeaBench.headline`; the keyword scores are
still written (export, compare), and their means differ from those pooled figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ideaharness.benchmarks.liveideabench.metrics import (
    FLEXIBILITY_MIN_KEYWORDS,
    FLEXIBILITY_PERCENTILE,
    leaderboard_average,
)
from ideaharness.benchmarks.liveideabench.parsers import DIMENSIONS
from ideaharness.metrics.aggregate import Statistic, percentile
from ideaharness.runs.scores import Record, Score

PER_KEYWORD = ("originality", "feasibility", "clarity", "fluency")

FLEXIBILITY = percentile(FLEXIBILITY_PERCENTILE, min_units=FLEXIBILITY_MIN_KEYWORDS,
                         description="30th percentile over keywords of the keyword's mean of the dimensions",
                         undefined=f"needs at least {FLEXIBILITY_MIN_KEYWORDS} keywords with every dimension "
                                   "scored, has {n}")
"""Flexibility (:func:`~ideaharness.benchmarks.liveideabench.metrics.flexibility`) as a statistic
of the keywords' flexibility scores."""


def dimensions(protocol: str) -> list[str]:
    """The per-keyword dimensions of ``protocol`` and fluency (v2: originality, feasibility,
    clarity, fluency)."""
    return [*DIMENSIONS[protocol], "fluency"]


def average_inputs(protocol: str) -> tuple[str, ...]:
    """The inputs of ``liveideabench.average``: the dimensions and flexibility (registered names)."""
    return tuple(f"liveideabench.{d}" for d in [*dimensions(protocol), "flexibility"])


def _average(table: np.ndarray) -> float | None:
    dims, flex = table[:, :-1], table[:, -1]
    means = [float(np.mean(c[np.isfinite(c)])) if np.isfinite(c).any() else None for c in dims.T]
    complete = np.isfinite(table).all(axis=1)
    flexibility = FLEXIBILITY(flex[complete]) if complete.any() else None
    return leaderboard_average([*means, flexibility])


def _average_gaps(table: np.ndarray) -> str:
    dims, flex = table[:, :-1], table[:, -1]
    names = [c for c, col in zip(dimensions("v2" if dims.shape[1] == 4 else "v1"), dims.T, strict=True)
             if not np.isfinite(col).any()]
    complete = np.isfinite(table).all(axis=1)
    if (FLEXIBILITY(flex[complete]) if complete.any() else None) is None:
        names.append("flexibility")
    return f"the mean of every leaderboard column; missing: {', '.join(names)}"


def average_statistic(protocol: str) -> Statistic:
    """The leaderboard Average over a (keywords x inputs) table: the mean of each dimension's mean
    over keywords and flexibility (over the keywords with every input), None when any is missing."""
    names = ", ".join(dimensions(protocol))
    return Statistic(f"unweighted mean of {names} and flexibility (the published leaderboard's Average)",
                     _average, undefined=_average_gaps)


AVERAGE = average_statistic("v2")
AVERAGE_INPUTS = average_inputs("v2")


def liveideabench_scores(records: Sequence[Record], results: dict[str, Any]) -> list[Score]:
    """One score per keyword and dimension (``per_keyword``; a keyword whose judgments all failed
    to parse is unscored), and per keyword its flexibility score (the keyword's mean of the
    dimensions, unscored when one is missing)."""
    dims = dimensions(results.get("protocol", "v2"))
    out: list[Score] = []
    for keyword, block in sorted((results.get("per_keyword") or {}).items()):
        for d in dims:
            value = block.get(d)
            out.append(Score(metric=f"liveideabench.{d}", instance_id=keyword, value=value,
                             reason=None if value is not None else f"no {d} judgment parsed"))
        mean = block.get("mean")
        out.append(Score(metric="liveideabench.flexibility", instance_id=keyword, value=mean,
                         reason=None if mean is not None else "a dimension unscored"))
    return out
