"""Configuration of a HindSight run (recorded in the run directory's config.json)."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field, field_validator

from ideaharness.benchmarks.hindsight.topics import DEFAULT_HORIZON_MONTHS, SAMPLE, parse_horizon
from ideaharness.metrics.embeddings import DEFAULT_EMBEDDING_MODEL
from ideaharness.runner.protocol import MODEL_FORMS, GeneratorJudgeConfig
from ideaharness.systems.config import SystemFields

BENCHMARK_VERSION = "1"
Source = Literal["s2", "openalex"]


class HindsightConfig(SystemFields, GeneratorJudgeConfig):
    """Everything that determines a HindSight run's results (no secrets).

    The generator may be a system (``--ideas FILE``, ``--generator cmd:...``/``http://...``).
    Candidates for a match come from the topics' pools (``future``), the ``--corpus`` files and,
    with ``--search s2``/``openalex``, from searching the idea's key phrases in the window; the
    embedding similarity ranks them and the judge confirms the best ``match_candidates``.
    """

    benchmark: Literal["hindsight"] = "hindsight"
    benchmark_version: str = BENCHMARK_VERSION
    generator: str = Field("local/qwen2.5-coder-1.5b", description=f"Idea generator: {MODEL_FORMS}.")
    judge: str = Field("local/qwen2.5-coder-1.5b", description="Judge of matches and of novelty/quality "
                       "(same forms).")
    data: str = Field(SAMPLE, description="'sample' (bundled topics from recorded Semantic Scholar "
                      "responses) or a topics JSONL file ('ideaharness data build hindsight').")
    horizon: str = Field(f"{DEFAULT_HORIZON_MONTHS}m", description="Future window after each topic's "
                         "cutoff T: papers published in (T, T + horizon] are candidates (e.g. 30m, 2y).")
    ideas_per_topic: int = Field(3, ge=1, le=20, description="Ideas generated per topic.")
    grounding: Literal["literature", "none"] = Field(
        "literature", description="What the generator sees: the topic and its literature up to the cutoff "
        "(retrieval-augmented), or the topic alone (vanilla).")
    max_literature: int = Field(10, ge=0, le=100, description="Papers of the topic's pre-cutoff literature "
                                "shown to the generator (most cited first).")
    corpus: list[str] = Field(default_factory=list, description="Extra candidate papers: a corpus file "
                              "(JSONL of papers); only those in a topic's window are candidates.")
    search: list[Source] = Field(default_factory=list, description="Search the idea's key phrases in the "
                                 "window with these scholarly APIs: s2, openalex (default: none, offline).")
    scholar_base_url: str | None = Field(None, description="Semantic Scholar API root (e.g. a local replay "
                                         "server).")
    openalex_base_url: str | None = Field(None, description="OpenAlex API root (e.g. a local replay server).")
    search_limit: int = Field(20, ge=1, le=100, description="Papers per key-phrase search.")
    match_candidates: int = Field(3, ge=1, le=20, description="Candidates per idea the judge is asked about "
                                  "(highest embedding similarity first).")
    min_similarity: float = Field(0.3, ge=-1.0, le=1.0, description="Cosine similarity a candidate needs "
                                  "to be judged (all-MiniLM-L6-v2 embeddings of idea and title+abstract).")
    match_orders: Literal["both", "one"] = Field(
        "both", description="Ask each match judgment with the idea shown first and second (both), or in "
        "one seeded order.")
    impact_as_of: dt.date | None = Field(None, description="Day the citation counts count up to when a "
                                         "topic does not say (YYYY-MM-DD; default the run's day).")
    embedding_model: str = Field(DEFAULT_EMBEDDING_MODEL, description="Sentence-embedding model of the "
                                 "candidate similarity.")
    generation_temperature: float = Field(0.7, description="Generator sampling temperature.")
    judge_temperature: float = Field(0.0, description="Judge sampling temperature.")
    generation_max_tokens: int = Field(600, ge=16, description="Tokens of a generated idea (JSON: title, "
                                       "idea, key phrases); the generator's reasoning budget is added.")
    judge_max_tokens: int = Field(300, ge=16, description="Tokens of a match verdict or a review (a small "
                                  "JSON object); the judge's reasoning budget is added.")
    bootstrap_resamples: int = Field(2000, ge=10, description="Bootstrap resamples of the 95% intervals.")

    @field_validator("horizon")
    @classmethod
    def _horizon(cls, value: str) -> str:
        parse_horizon(value)  # a ValueError names the form
        return value

    @property
    def horizon_months(self) -> int:
        """:attr:`horizon` in months."""
        return parse_horizon(self.horizon)

    @property
    def generator_role(self) -> str:
        """The ``generator`` role's spec: ``ideas:<file>`` with ``--ideas``, else ``generator``."""
        return self.generator_spec(self.generator)
