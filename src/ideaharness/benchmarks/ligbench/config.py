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
from ideaharness.errors import ParseError, UserError
from ideaharness.llm.parsing import check_text
from ideaharness.metrics.embeddings import DEFAULT_EMBEDDING_MODEL
from ideaharness.runner.protocol import BenchmarkConfig
from ideaharness.systems import SystemFields, default_system_name, is_system
from ideaharness.textio import read_text

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


class LigBenchConfig(SystemFields, BenchmarkConfig):
    """Everything that determines a LigBench run's results (recorded in config.json).

    ``parity`` applies the paper's scoring choices (one fixed order, the bound C at every Elo
    step); ``online`` takes novelty's related papers from Semantic Scholar.

    Systems (:mod:`.contract`): a ``--generator`` may be a system spec (``ideas:FILE``, ``cmd:...``,
    ``http(s)://...``); ``--ideas FILE`` adds one system after the generators, and alone (no
    ``--generator`` given) it is the run's only system. :meth:`generator_specs` lists them all,
    :meth:`system_names` names them.
    """

    benchmark: Literal["ligbench"] = "ligbench"
    benchmark_version: str = BENCHMARK_VERSION
    generators: list[str] = Field(default_factory=lambda: [DEFAULT_MODEL],
                                  json_schema_extra={"cli": "--generator"},
                                  description="Generator model or system (ideas:FILE, cmd:..., http://...), "
                                  "one system each.")
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
    generation_max_tokens: int = Field(700, ge=16, description="Tokens of a generated idea; the "
                                       "generator's reasoning budget is added (no published code: "
                                       "--parity keeps it).")
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

    @model_validator(mode="after")
    def _systems(self) -> LigBenchConfig:
        if self.ideas is not None and "generators" not in self.model_fields_set:
            self.generators = []  # --ideas alone: the file is the only system (not the default model too)
        self.system_names()  # names: one each, unique
        return self

    def generator_specs(self) -> list[str]:
        """Every system's spec: the generators, then the ``--ideas`` file's ``ideas:`` spec."""
        return [*self.generators, *([self.generator_spec("")] if self.ideas else [])]

    def system_names(self) -> dict[str, str]:
        """Spec -> the system's name (its ideas' ids are ``<name>::t<NN>::<k>``): a model by its
        model string; ``--system`` names the ``--ideas`` file (or the one system spec among the
        generators); any other system spec its default name (the file stem, the script, the URL's
        host, port and path).

        Raises:
            UserError: ``--system`` with several system specs and no ``--ideas``; two systems of
                one name; a name holding ``::``.
        """
        specs = self.generator_specs()
        named = [s for s in specs if is_system(s)]
        target = self.generator_spec("") if self.ideas else (named[0] if len(named) == 1 else None)
        if self.system is not None and target is None:
            raise UserError(f"--system {self.system}: names one system spec (ideas:, cmd:, http://), and "
                            f"--generator gives {len(named)}; give each one its own run, or use --ideas")
        names: dict[str, str] = {}
        for spec in specs:
            name = (self.system if spec == target and self.system else
                    default_system_name(spec) if is_system(spec) else spec)
            if spec in names:
                raise UserError(f"--generator {spec} given twice")
            if "::" in name:
                raise UserError(f"system name {name!r} holds '::' (the separator of LigBench's idea ids)")
            if name in names.values() or name == SCHOLARIDEAS_SYSTEM:
                raise UserError(f"two systems named {name!r} ({spec}); name the file apart or give --system")
            names[spec] = name
        return names


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


def topic_id(index: int) -> str:
    """The instance id of the ``index``-th topic (0-based): ``t00``, ``t01``, ..."""
    return f"t{index:02d}"


class IdeaSpec(BaseModel):
    """One idea to score: who made it, for which topic, and (once known) its text.

    ``id``: ``<system>::t<NN>::<k>`` for a generated idea (``scholarideas::<id>`` for a plan);
    ``generator``: the spec that generates it (the model string or the system spec; None for a
    plan); ``topic_index``: the topic's place in the run's list (the task's instance id ``t<NN>``).
    """

    id: str
    system: str
    topic: str
    text: str | None = None
    cutoff: str | None = None
    sample_index: int = 0
    generator: str | None = None
    topic_index: int | None = None

    @property
    def shard_key(self) -> str:
        """What ``--shard`` hashes: the topic (``t<NN>``) of a generated idea, so every system's
        ideas on a topic, and the task ``tasks export`` writes for it, fall in one shard whoever
        answers; the id of a plan."""
        return topic_id(self.topic_index) if self.topic_index is not None else self.id


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
