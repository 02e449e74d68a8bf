"""The typed HindSight block of ``results.json`` (``Hindsight.results_class``): what
:func:`~.aggregate.aggregate_run` returns."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ideaharness.results import BenchmarkResults


class Check(BaseModel):
    """The HindSight check of one judge dimension (:func:`~.impact.spearman_check`)."""

    rho: float | None
    ci: tuple[float, float] | None = None
    n_ideas: int = Field(ge=0)
    n_topics: int = Field(ge=0)
    resamples_undefined: int = Field(ge=0)
    why: str | None = None


class Window(BaseModel):
    """Works of the future-window accesses per source (in, before, after, undated) and the two
    leak counts (0 expected)."""

    sources: dict[str, dict[str, int]]
    literature_not_before_cutoff_shown: int = Field(ge=0)
    candidates_outside_window_judged: int = Field(ge=0)


class HindsightResults(BenchmarkResults):
    """The benchmark's block (see :func:`~.aggregate.aggregate_run` for each key)."""

    system: str
    generator: str
    judge: str
    grounding: Literal["literature", "none"]
    horizon_months: int = Field(ge=1)
    per_idea: list[dict[str, Any]]
    per_topic: dict[str, dict[str, Any]]
    counts: dict[str, int]
    window: Window
    check: dict[str, Check]
