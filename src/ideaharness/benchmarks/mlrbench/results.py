"""The typed MLR-Bench block of ``results.json`` (``MLRBench.results_class``;
:class:`ideaharness.results.BenchmarkResults`): what :func:`~.aggregate.aggregate_run` returns."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ideaharness.results import BenchmarkResults


class StageScores(BaseModel):
    """One task's scores for one stage: ``scores`` {dimension: mean over the judges whose review
    parsed, 1-10} (None when unscored, with ``why``), ``judges`` how many parsed."""

    scores: dict[str, float] | None
    judges: int = Field(ge=0)
    why: str | None = None


class TaskResult(BaseModel):
    """One task: its ``title`` and a :class:`StageScores` per stage run."""

    title: str
    idea: StageScores | None = None
    proposal: StageScores | None = None


class PublishedJudge(BaseModel):
    """A published judge beside this run on the same ideas (``--ideas published:<model>``)."""

    tasks: int = Field(ge=0)
    published: dict[str, float] | None = None
    run: dict[str, float] | None = None
    mean_abs_diff: dict[str, float] | None = None


class MLRBenchResults(BenchmarkResults):
    """The benchmark's block (see :func:`~.aggregate.aggregate_run` for each key)."""

    system: str
    generator: str | None
    system_kind: str = "model"
    judges: list[str]
    stage: Literal["idea", "proposal"]
    stages: list[Literal["idea", "proposal"]]
    given: bool
    per_task: dict[str, TaskResult]
    per_judge: dict[str, dict[str, dict[str, float | int | None]]]
    counts: dict[str, int]
    published_judges: dict[str, PublishedJudge] | None = None
