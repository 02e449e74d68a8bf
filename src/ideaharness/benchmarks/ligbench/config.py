"""LigBench run configuration: systems, judge, reference corpus, topics, scoring settings.

Topics: LigBench evaluates generators on 11 research topics, but the topic list is not in our
research notes (seed-benchmarks.md §4). :data:`DEFAULT_TOPICS` is therefore *our* list of 11
topics, one per large PAIR-IQ primary area (LLMs, training, RL, ...); ``--topics FILE`` (one topic a
line, ``#`` comments) uses others.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from ideaharness.benchmarks.ligbench.corpus import DebiasMeans
from ideaharness.benchmarks.ligbench.steps import ScoringSettings
from ideaharness.data.textio import read_text
from ideaharness.errors import ParseError, UserError
from ideaharness.llm.parsing import check_text
from ideaharness.metrics.embeddings import DEFAULT_EMBEDDING_MODEL
from ideaharness.runner.protocol import BenchmarkConfig

BENCHMARK_VERSION = "2"  # 2: references blinded by default (issue 9, items 13-15)
DEFAULT_MODEL = "local/qwen2.5-coder-1.5b"
SCORE_KEYS = ("rating", "contribution", "soundness", "novelty")
SCHOLARIDEAS_SYSTEM = "scholarideas (human-written plans)"

DEFAULT_TOPICS: list[str] = [
    "Reasoning and reliability of large language models",
    "Efficient training and optimisation of deep neural networks",
    "Sample-efficient reinforcement learning",
    "Alignment, safety and interpretability of AI systems",
    "Learning on graphs and graph neural networks",
    "Diffusion and other generative models for images and video",
    "Multimodal learning with vision and language",
    "Datasets and benchmarks for evaluating machine learning models",
    "Machine learning for the natural sciences",
    "Generalisation theory of deep learning",
    "Autonomous agents built on language models",
]


def read_topics(path: str) -> list[str]:
    """Topics of a file, one a line (blank lines and ``#`` comments skipped).

    Raises:
        UserError: no such file, or no topic in it.
    """
    from pathlib import Path

    file = Path(path)
    if not file.is_file():
        raise UserError(f"--topics {file}: no such file (one topic per line)")
    topics = [line.strip() for line in read_text(file).splitlines()
              if line.strip() and not line.lstrip().startswith("#")]
    if not topics:
        raise UserError(f"--topics {file}: no topics (one per line; '#' starts a comment)")
    return topics


class LigBenchConfig(BenchmarkConfig):
    """Everything that determines a LigBench run's results (recorded in config.json).

    ``parity`` applies the paper's scoring choices (one fixed order, the bound C at every Elo
    step); ``online`` takes novelty's related papers from Semantic Scholar.
    """

    benchmark: Literal["ligbench"] = "ligbench"
    benchmark_version: str = BENCHMARK_VERSION
    generators: list[str] = Field(default_factory=lambda: [DEFAULT_MODEL],
                                  json_schema_extra={"cli": "--generator"},
                                  description="Generator model (one system each).")
    judge: str = Field(DEFAULT_MODEL, description="Judge model.")
    corpus: str = Field(description="PAIR-IQ-format reference corpus (.json/.jsonl file or directory).")
    topics: list[str] = Field(default_factory=lambda: list(DEFAULT_TOPICS), json_schema_extra={"cli": False},
                              description="Research topics (default: our 11; the paper's are not public).")
    topics_file: str | None = Field(None, exclude=True, json_schema_extra={"cli": "--topics"},
                                    description="File with one topic per line (default: our 11 topics).")
    ideas_per_topic: int = Field(default=1, ge=1, description="Ideas per topic and generator.")
    scholarideas: int = Field(default=0, ge=0, description="Also score the first N ScholarIdeas plans as a "
                              "human-written system.")
    scholarideas_root: str | None = Field(None, description="The ScholarIdeas folder (ScholarEval release).")
    generation_temperature: float = Field(0.7, description="Sampling temperature of the generator.")
    generation_max_tokens: int = Field(700, ge=16, description="Token limit of a generated idea.")
    scoring: ScoringSettings = Field(default_factory=lambda: ScoringSettings())
    debias_means: DebiasMeans = Field("corpus", description="Venue means for debiasing: corpus, paper "
                                      "(published means) or none.")
    parity: bool = Field(False, description="The paper's settings: fixed order, bound at each Elo step, "
                         "reference papers as published (not rewritten).")
    online: bool = Field(False, description="Novelty from Semantic Scholar search.")
    embedding_model: str = Field(DEFAULT_EMBEDDING_MODEL, description="Sentence-embedding model.")
    bootstrap_resamples: int = Field(2000, ge=10, description="Bootstrap resamples of the 95% intervals.")

    @model_validator(mode="before")
    @classmethod
    def _topics_file(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("topics_file"):
            data = {**data, "topics": read_topics(str(data["topics_file"]))}
        return data

    @model_validator(mode="after")
    def _scoring(self) -> LigBenchConfig:
        self.scoring = scoring_settings(self.scoring, seed=self.seed, parity=self.parity, online=self.online)
        return self


def scoring_settings(scoring: ScoringSettings, *, seed: int, parity: bool, online: bool) -> ScoringSettings:
    """``scoring`` with the run seed, ``parity`` (the paper's choices: one fixed order, the bound C
    at every Elo step, reference papers as published instead of rewritten into the ideas' form) and
    ``online`` (novelty from Semantic Scholar; implied by a Semantic Scholar URL) applied.

    Raises:
        UserError: ``min_comparisons`` exceeds ``max_comparisons``.
    """
    updates: dict[str, Any] = {"seed": seed, "blind_references": not parity}
    elo = scoring.elo
    if parity:
        updates["order"] = "fixed"
        elo = elo.model_copy(update={"clamp": "each-step"})
    if online or scoring.scholar_base_url:
        updates["novelty_source"] = "semantic-scholar"
    if elo.min_comparisons > elo.max_comparisons:
        raise UserError(f"--min-comparisons {elo.min_comparisons} exceeds --max-comparisons "
                        f"{elo.max_comparisons}")
    return scoring.model_copy(update={**updates, "elo": elo})


class ScoreIdeaConfig(BenchmarkConfig):
    """Settings of ``ideaharness score-idea`` (one idea against a corpus)."""

    judge: str = Field(DEFAULT_MODEL, description="Judge model: local/qwen2.5-coder-1.5b, "
                       "local/qwen2.5-coder-0.5b, openai/<model> or another registered provider.")
    corpus: str = Field(description="PAIR-IQ-format reference corpus (.json/.jsonl file or directory).")
    scoring: ScoringSettings = Field(default_factory=lambda: ScoringSettings())
    debias_means: DebiasMeans = Field("corpus", description="Venue means for debiasing: corpus, paper "
                                      "(published means) or none.")
    parity: bool = Field(False, description="The paper's settings: fixed order, bound at each Elo step, "
                         "reference papers as published (not rewritten).")
    online: bool = Field(False, description="Novelty from Semantic Scholar search.")

    @model_validator(mode="after")
    def _scoring(self) -> ScoreIdeaConfig:
        self.scoring = scoring_settings(self.scoring, seed=self.seed, parity=self.parity, online=self.online)
        return self


class IdeaSpec(BaseModel):
    """One idea to score: who made it, for which topic, and (once known) its text."""

    id: str
    system: str
    topic: str
    text: str | None = None
    cutoff: str | None = None
    sample_index: int = 0


GENERATED_IDEA_MIN_WORDS = 20
"""The prompt asks for a Markdown idea with Problem, Method and Experiment Design sections."""
_SECTION = re.compile(
    r"^[ \t]*(?:#{1,4}[ \t]*|\*\*)?[ \t]*(problem|method|experiment(?:al)?[ \t]+design)\b[ \t:*]*$",
    re.IGNORECASE | re.MULTILINE,
)


def parse_generated_idea(text: str) -> str:
    """A generated idea in the form ``ligbench_generate`` demands: Markdown with ``## Problem``,
    ``## Method`` and ``## Experiment Design`` sections (any heading level or bold), each holding
    text, the whole real prose (:func:`~ideaharness.llm.parsing.check_text`) of at least
    :data:`GENERATED_IDEA_MIN_WORDS` words, not a refusal or a hedge.

    Raises:
        ParseError: a section missing or empty; the text empty, degenerate (whitespace,
            zero-width characters, punctuation), too short, a refusal or a hedge.
    """
    cleaned = check_text(text, "generated idea", min_words=GENERATED_IDEA_MIN_WORDS)
    headings = list(_SECTION.finditer(cleaned))
    bodies: dict[str, str] = {}
    for i, m in enumerate(headings):
        name = "experiment design" if m.group(1).lower().startswith("experiment") else m.group(1).lower()
        end = headings[i + 1].start() if i + 1 < len(headings) else len(cleaned)
        bodies.setdefault(name, cleaned[m.end() : end])
    for name in ("problem", "method", "experiment design"):
        if name not in bodies:
            raise ParseError(f"generated idea lacks the '## {name.title()}' section")
        check_text(bodies[name], f"the '## {name.title()}' section", min_words=3)
    return cleaned
