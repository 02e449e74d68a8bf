"""Configuration of an AI Idea Bench 2025 run (recorded in the run directory's config.json)."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field

from ideaharness.data.aiideabench import DEFAULT_CUTOFF

BENCHMARK_VERSION = "2"  # 2: references blinded by default (issue 9, items 13-15)
DEFAULT_MODEL = "local/qwen2.5-coder-1.5b"
Metric = Literal["imcq", "i2i", "i2t", "novelty", "feasibility"]
ALL_METRICS: tuple[Metric, ...] = ("imcq", "i2i", "i2t", "novelty", "feasibility")


class AIIdeaBenchConfig(BaseModel):
    """Everything that determines an AI Idea Bench run's results (no secrets).

    ``data``: ``tomato-chem`` (bundled), a ``target_paper_data.json`` file (published schema) or an
    Instance JSONL file. ``ideas_file``: external ideas (see :mod:`ideaharness.generation.external`)
    used instead of the generator; ``system`` names the system in competitions (default: the
    generator model or the ideas file's stem). ``parity``: the published code's choices where we
    differ (competition judged once in the ranked order, 1 point per loss; generators see the
    dataset's topic instead of the anonymised one; IMCQ distractors are the papers' own texts, not
    decomposed like the ground truth; no blinding check on decompositions). ``inconsistent``: how a
    pair judged differently in the two orders counts in the competition (a tie, or excluded).
    ``scholar_base_url``: Semantic Scholar root (a local replay server in tests); NA/FA are skipped,
    with a note, when it cannot be reached. ``latest_year``: y_l of FA: the instance cutoff's year
    ("cutoff") or the current year ("current").
    """

    benchmark: Literal["aiideabench"] = "aiideabench"
    benchmark_version: str = BENCHMARK_VERSION
    data: str = "tomato-chem"
    generator: str = DEFAULT_MODEL
    judge: str = DEFAULT_MODEL
    ideas_file: str | None = None
    system: str | None = None
    seed: int = 0
    n_ideas: int = Field(default=2, ge=1, le=10)
    metrics: list[Metric] = Field(default_factory=lambda: list(ALL_METRICS))
    digest_inspirations: bool = False
    generation_temperature: float = 0.7
    judge_temperature: float = 0.0
    generation_max_tokens: int = Field(default=768, ge=16)
    judge_max_tokens: int = Field(default=384, ge=16)
    decomposition_max_tokens: int = Field(default=768, ge=16)
    max_attempts: int = Field(default=3, ge=1, le=10)
    cutoff: dt.date = DEFAULT_CUTOFF
    parity: bool = False
    tournament_rounds: int = Field(default=7, ge=1)
    inconsistent: Literal["tie", "exclude"] = "tie"
    scholar_base_url: str | None = None
    search_limit: int = Field(default=5, ge=1, le=100)
    max_concepts: int = Field(default=5, ge=1)
    influence_lambda: float = Field(default=50.0, gt=0)
    latest_year: Literal["cutoff", "current"] = "cutoff"
    embedding_model: str = "all-MiniLM-L6-v2"
    bootstrap_resamples: int = Field(default=2000, ge=10)

    @property
    def system_name(self) -> str:
        if self.system:
            return self.system
        if self.ideas_file:
            from pathlib import Path

            return Path(self.ideas_file).stem
        return self.generator

    @property
    def loss_points(self) -> float:
        return 1.0 if self.parity else 0.0
