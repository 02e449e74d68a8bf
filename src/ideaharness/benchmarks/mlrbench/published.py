"""A bundled slice of MLR-Bench's published stepwise results: the ideas six models wrote for the
first five tasks, and the two published judges' scores of them (data/published/, data/SOURCE.md).

``--ideas published:<model>`` scores one model's published ideas with this run's judges
(``--stage idea``); the results then carry, per published judge, its scores of the same ideas
beside this run's (:func:`published_comparison`): a check of a new judge against the published
ones on the same texts.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from statistics import fmean
from typing import Any

from ideaharness.benchmarks.mlrbench.parsers import DIMENSIONS
from ideaharness.errors import UserError
from ideaharness.jsonl import iter_jsonl

PREFIX = "published:"
PUBLISHED_MODELS = ("claude-3-7-sonnet-20250219", "deepseek-r1", "gemini-2.5-pro-preview-03-25",
                    "ministral-8b", "o4-mini-2025-04-16", "qwen3-235b-a22b")
"""The models whose ideas are bundled (upstream ``agent_results/ideas_and_proposals``)."""
PUBLISHED_JUDGES = ("claude-3-7-sonnet-20250219", "gemini-2.5-pro-preview-03-25")
"""The published judges (upstream ``agent_reviews/idea_proposal_reviews_<judge>``)."""


def published_dir() -> Path:
    return Path(str(resources.files(__package__) / "data" / "published"))


def published_model(value: str | None) -> str | None:
    """The model of an ``--ideas published:<model>`` value, None for a file path."""
    return value[len(PREFIX):] if value and value.startswith(PREFIX) else None


def ideas_path(value: str) -> Path:
    """The file an ``--ideas`` value names: the bundled ideas of ``published:<model>``, else the path.

    Raises:
        UserError: ``published:`` with a model whose ideas are not bundled.
    """
    model = published_model(value)
    if model is None:
        return Path(value)
    if model not in PUBLISHED_MODELS:
        raise UserError(f"--ideas {value}: no published ideas of {model!r} are bundled (one of: "
                        f"{', '.join(PUBLISHED_MODELS)})")
    return published_dir() / "ideas" / f"{model}.jsonl"


def published_task_ids(value: str) -> list[str]:
    """The task ids the published ideas of ``published:<model>`` cover, in file order.

    Raises:
        UserError: no published ideas of that model are bundled.
    """
    return [str(row["task_id"]) for _, row in iter_jsonl(ideas_path(value))]


@lru_cache(maxsize=1)
def _reviews() -> tuple[dict[str, Any], ...]:
    return tuple(row for _, row in iter_jsonl(published_dir() / "idea_reviews.jsonl"))


def published_reviews() -> list[dict[str, Any]]:
    """The published judges' idea scores: ``{"task_id", "model", "judge", "scores": {dim: 1-10},
    "file"}`` per (task, model, judge), 60 rows (5 tasks x 6 models x 2 judges)."""
    return [dict(row) for row in _reviews()]


def published_comparison(model: str, per_task: Mapping[str, Any]) -> dict[str, Any]:
    """Each published judge beside this run on ``model``'s ideas: over the tasks both scored,
    ``{judge: {"tasks": n, "published": {dim: mean}, "run": {dim: mean}, "mean_abs_diff": {dim: mean
    |run - published|}}}`` (this run's task score is its panel mean; an empty dict for n = 0)."""
    out: dict[str, Any] = {}
    dims = DIMENSIONS["idea"]
    for judge in PUBLISHED_JUDGES:
        pairs: list[tuple[dict[str, int], dict[str, float]]] = []
        for row in _reviews():
            if row["model"] == model and row["judge"] == judge and row["task_id"] in per_task:
                ours = (per_task[row["task_id"]].get("idea") or {}).get("scores")
                if ours:
                    pairs.append((row["scores"], ours))
        if not pairs:
            out[judge] = {"tasks": 0}
            continue
        out[judge] = {"tasks": len(pairs),
                      "published": {d: fmean(t[d] for t, _ in pairs) for d in dims},
                      "run": {d: fmean(o[d] for _, o in pairs) for d in dims},
                      "mean_abs_diff": {d: fmean(abs(o[d] - t[d]) for t, o in pairs) for d in dims}}
    return out
