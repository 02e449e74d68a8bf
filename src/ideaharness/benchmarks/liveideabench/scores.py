"""Per-keyword scores of a LiveIdeaBench run for ``load_run``/``export``/``compare``.

The default headline score of each dimension is the mean over keywords of the keyword means
(:func:`~ideaharness.benchmarks.liveideabench.aggregate.aggregate_run`), so one row per keyword and
dimension re-aggregates to it. Under ``--parity`` the headline pools (idea × judge) rows, as the
published ``stats.ipynb`` does, and is not a mean of keyword rows: the rows are given, the
reported value is None. Flexibility (a percentile) and the average are model-level figures with no
per-keyword contribution: ``compare`` computes them from the keyword rows (``derived_metrics``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ideaharness.analysis.scores import DerivedMetric, ScoreReader, ScoreRow
from ideaharness.benchmarks.liveideabench.metrics import flexibility, leaderboard_average
from ideaharness.benchmarks.liveideabench.parsers import DIMENSIONS

PER_KEYWORD = ("originality", "feasibility", "clarity", "fluency")


class LiveIdeaBenchScores(ScoreReader):
    """Rows ``{"system", "instance_id", "pair_key", "metric", "value"}``: one per keyword and
    dimension with a value (a keyword whose judgments all failed to parse gives no row)."""

    def scores(self, records: list[Any], results: dict[str, Any], config: dict[str, Any],
               system: str) -> list[ScoreRow]:
        dims = [d for d in PER_KEYWORD if d in DIMENSIONS[results.get("protocol", "v2")] or d == "fluency"]
        rows: list[ScoreRow] = []
        for keyword, block in sorted(results.get("per_keyword", {}).items()):
            for d in dims:
                if block.get(d) is not None:
                    rows.append({"system": system, "instance_id": keyword, "pair_key": keyword,
                                 "metric": d, "value": float(block[d])})
        return rows

    def derived_metrics(self, results: dict[str, Any]) -> dict[str, DerivedMetric]:
        """Flexibility and the leaderboard average from the keyword rows (as ``aggregate_run``):
        columns are the protocol's dimensions and fluency, one row per keyword."""
        dims = (*DIMENSIONS[results.get("protocol", "v2")], "fluency")

        def flex(table: np.ndarray) -> float | None:
            complete = table[np.isfinite(table).all(axis=1)]
            return flexibility(complete.mean(axis=1).tolist()) if len(complete) else None

        def average(table: np.ndarray) -> float | None:
            means = [float(np.mean(c[np.isfinite(c)])) if np.isfinite(c).any() else None for c in table.T]
            return leaderboard_average([*means, flex(table)])

        return {
            "flexibility": DerivedMetric(dims, flex, "30th percentile over keywords of the keyword's mean "
                                         "of " + ", ".join(dims) + " (stats_flexibility.ipynb)"),
            "average": DerivedMetric(dims, average, "mean of " + ", ".join(dims) + " and flexibility "
                                     "(the published leaderboard's Average)"),
        }

    def reported(self, results: dict[str, Any], metric: str, system: str) -> float | None:
        if metric not in (*PER_KEYWORD, "flexibility", "average"):
            raise KeyError(f"no reported value known for metric {metric!r}")
        if results.get("parity"):
            return None
        score = results.get("scores", {}).get(metric)
        return None if score is None else score["value"]

    def reported_n(self, results: dict[str, Any], metric: str, system: str) -> int | None:
        self.reported(results, metric, system)  # KeyError for an unknown metric
        score = results.get("scores", {}).get(metric)
        return None if score is None or results.get("parity") else int(score["n"])
