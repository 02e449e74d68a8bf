"""IdeaBench run configuration: models, data, seeds, scenarios, quality indicators, metric settings."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ideaharness.metrics.similarity import DEFAULT_BERTSCORE_MODEL

BENCHMARK_VERSION = "2"  # 2: references blinded by default (issue 9, items 13-15)
DEFAULT_MODEL = "local/qwen2.5-coder-1.5b"
Scenario = Literal["low", "high"]


class Indicator(BaseModel):
    """A quality indicator for the Insight Score: a name and an optional definition shown to the judge."""

    name: str
    definition: str | None = None


DEFAULT_INDICATORS = [
    Indicator(
        name="novelty",
        definition="how original the idea is: it proposes something not already known or obvious "
        "from prior work.",
    ),
    Indicator(
        name="feasibility",
        definition="how practical the idea is to carry out with current methods, data and resources.",
    ),
]

TARGET_IDEA_MIN_CHARS = 20


class IdeaBenchConfig(BaseModel):
    """Everything that determines an IdeaBench run's results (recorded in config.json)."""

    benchmark: Literal["ideabench"] = "ideabench"
    benchmark_version: str = BENCHMARK_VERSION
    data: str = "tomato-chem"
    generator: str = DEFAULT_MODEL
    judge: str = DEFAULT_MODEL
    seed: int = 0
    n_ideas: int = Field(default=3, ge=1, le=25)
    scenarios: list[Scenario] = Field(default_factory=lambda: ["low"])
    k_references: int = Field(default=5, ge=1)
    reference_filter: Literal["auto", "relevance", "random", "none"] = "auto"
    min_reference_citations: int = 5
    min_references: int = 3
    indicators: list[Indicator] = Field(default_factory=lambda: list(DEFAULT_INDICATORS))
    parity: bool = False
    bertscore_model: str = DEFAULT_BERTSCORE_MODEL
    bertscore_layers: int | None = None
    generation_temperature: float = 0.7
    judge_temperature: float = 0.0
    generation_max_tokens: int = 0
    max_attempts: int = Field(default=3, ge=1, le=10)
    max_prompt_tokens: int = 6000
    bootstrap_resamples: int = 2000
