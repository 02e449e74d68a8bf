"""IdeaBench run configuration: models, data, seeds, scenarios, quality indicators, metric settings."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from ideaharness.benchmarks._caps import PublishedCap, parity_cap
from ideaharness.errors import UserError
from ideaharness.metrics.similarity import DEFAULT_BERTSCORE_MODEL
from ideaharness.runner.protocol import GeneratorJudgeConfig
from ideaharness.systems.config import SystemFields

BENCHMARK_VERSION = "3"  # 2: references blinded by default (issue 9); 3: rewriter role, faithful bounds
DEFAULT_MODEL = "local/qwen2.5-coder-1.5b"
Scenario = Literal["low", "high"]


_IDEABENCH = "amir-hassan25/IdeaBench@9dbd125"
PUBLISHED_CAPS: dict[str, PublishedCap] = {
    "target_idea": PublishedCap(None, f"{_IDEABENCH}:src/generation/generate_summaries.py:25 "
                                "(ChatOpenAI(model='gpt-4o'), no max_tokens)"),
    "generate": PublishedCap(None, f"{_IDEABENCH}:src/generation/generate_hypotheses.py:70 "
                             "(ChatOpenAI(model=model_name), no max_tokens; DeepInfra and Gemini models "
                             "at their defaults too, :57-72)"),
    "overlap": PublishedCap(None, f"{_IDEABENCH}:src/evaluation/evaluate_hypotheses.py:66 "
                            "(ChatOpenAI(model='gpt-4o'), no max_tokens)"),
    "rank": PublishedCap(None, f"{_IDEABENCH}:src/evaluation/llm_ranking_eval.py:93 "
                         "(ChatOpenAI(model='gpt-4o'), no max_tokens)"),
}
"""Prompt kind -> the published code's reply cap (``--parity``): langchain-openai 0.1.17's
``ChatOpenAI`` sends ``max_tokens`` only when one is given, and IdeaBench gives none. (The
target rewrite of the blind ranking has no published counterpart and is not done under parity.)"""


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


def parse_indicator(value: Any) -> Any:
    """``"NAME"`` or ``"NAME=DEFINITION"`` (the CLI form) -> an :class:`Indicator`; a bare default
    name keeps its default definition, so the prompt matches a default run. Other values pass.

    Raises:
        UserError: an empty name.
    """
    if not isinstance(value, str):
        return value
    name, _, definition = value.partition("=")
    if not name.strip():
        raise UserError(f"--indicator {value!r}: expected NAME or NAME=DEFINITION")
    name = name.strip()
    default = next((d.definition for d in DEFAULT_INDICATORS if d.name == name), None)
    return Indicator(name=name, definition=definition.strip() or default)


class IdeaBenchConfig(SystemFields, GeneratorJudgeConfig):
    """Everything that determines an IdeaBench run's results (recorded in config.json); the
    generator may be a system (``--ideas FILE``, ``--generator cmd:...``/``http://...``)."""

    benchmark: Literal["ideabench"] = "ideabench"
    benchmark_version: str = BENCHMARK_VERSION
    data: str = Field("tomato-chem", description="'tomato-chem' (bundled), an Instance JSONL file, or a "
                      "directory with the IdeaBench CSVs.")
    n_ideas: int = Field(default=3, ge=1, le=25, description="Ideas per instance (n).")
    scenarios: list[Scenario] = Field(default_factory=lambda: list[Scenario](["low"]),
                                      description="low and/or high resource.",
                                      json_schema_extra={"cli": "--scenario"})
    k_references: int = Field(default=5, ge=1, description="References in the low-resource scenario.")
    reference_filter: Literal["auto", "relevance", "random", "none"] = Field(
        "auto", description="Reference filter of the low-resource scenario.")
    min_reference_citations: int = Field(5, description="Relevance filter: least citations of a reference.")
    min_references: int = Field(3, description="Relevance filter: least references of a target.")
    indicators: list[Indicator] = Field(
        default_factory=lambda: list(DEFAULT_INDICATORS), json_schema_extra={"cli": "--indicator"},
        description="Insight Score indicator NAME or NAME=DEFINITION.")
    parity: bool = Field(False, description="Published ranking: the target idea's published text, always "
                         "shown first (default: rewritten, shuffled).")
    rewriter: str | None = Field(None, description="Model that rewrites the target idea for the blind "
                                 "ranking (default: a bundled local model that is neither judge nor "
                                 "generator when the run uses one, else the generator if it is not the "
                                 "judge, else the judge; a system generator never rewrites).")
    bertscore_model: str = Field(DEFAULT_BERTSCORE_MODEL, description="BERTScore model name or directory.")
    bertscore_layers: int | None = Field(None, description="BERTScore layer (default: the model's).")
    generation_temperature: float = Field(0.7, description="Sampling temperature of the generator.")
    judge_temperature: float = Field(0.0, description="Sampling temperature of the judge.")
    generation_max_tokens: int = Field(0, ge=0, description="Tokens of the generation reply (n ideas of a "
                                       "brief paragraph each, as JSON; 0: 80 + 220 per idea); the "
                                       "generator's reasoning budget is added; --parity: no cap, as "
                                       "published.")
    target_idea_max_tokens: int = Field(400, ge=16, description="Tokens of the target idea extracted from "
                                        "an abstract (one paragraph); the judge's reasoning budget is "
                                        "added; --parity: no cap, as published.")
    overlap_max_tokens: int = Field(300, ge=16, description="Tokens of an idea-overlap rating (JSON: a "
                                    "rating and one sentence); the judge's reasoning budget is added; "
                                    "--parity: no cap, as published.")
    rank_max_tokens: int = Field(0, ge=0, description="Tokens of a ranking (JSON: the labels and a "
                                 "rationale; 0: 120 + 40 per ranked item); the judge's reasoning budget is "
                                 "added; --parity: no cap, as published.")
    bootstrap_resamples: int = Field(2000, ge=10, description="Bootstrap resamples of the 95% intervals.")

    def reply_cap(self, kind: str) -> int | None:
        """The answer cap of prompt ``kind`` (``"target_idea"``, ``"generate"``, ``"overlap"``),
        tokens: its config field (``generate``: 80 + 220 per idea when 0); under ``parity`` the
        published one (:data:`PUBLISHED_CAPS`: None, no cap sent). Rankings: :meth:`rank_cap`.

        Raises:
            KeyError: another kind.
        """
        ours = {"target_idea": self.target_idea_max_tokens, "overlap": self.overlap_max_tokens,
                "generate": self.generation_max_tokens or 80 + 220 * self.n_ideas}[kind]
        return parity_cap(kind, ours, PUBLISHED_CAPS, parity=self.parity)

    def rank_cap(self, items: int) -> int | None:
        """The answer cap of a ranking of ``items`` ideas: ``rank_max_tokens``, else
        120 + 40 per item; None (no cap) under ``parity``."""
        return parity_cap("rank", self.rank_max_tokens or 120 + 40 * items, PUBLISHED_CAPS,
                          parity=self.parity)

    @field_validator("indicators", mode="before")
    @classmethod
    def _indicators(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return [parse_indicator(v) for v in value] or list(DEFAULT_INDICATORS)
        return value
