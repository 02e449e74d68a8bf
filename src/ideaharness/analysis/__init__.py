"""Analysis of saved runs: load them as DataFrames, export them, compare systems across runs.

``load_run(path)`` -> :class:`RunData` (``scores``, read from the run's ``scores.jsonl``, and
``judgments`` DataFrames);
``export_run`` writes them as Parquet, CSV or JSON Lines; ``compare_runs`` builds a leaderboard
with paired bootstrap differences; ``analysis.tournament.run_tournament`` plays the AI Idea Bench
competition between saved runs incrementally (``compare --judge``).
"""

from __future__ import annotations

from ideaharness.analysis.load import JUDGMENT_COLUMNS, SCORE_COLUMNS, RunData, load_run, metric_key

__all__ = ["JUDGMENT_COLUMNS", "SCORE_COLUMNS", "RunData", "load_run", "metric_key"]
