"""One vocabulary shared by every benchmark: papers, references, instances, ideas and judgments.

All models are pydantic v2 and round-trip through JSON (``model_dump(mode="json")`` /
``model_validate``). Later benchmarks extend these models (subclass or the ``extra`` dicts); they
never fork them.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Paper(_Model):
    """A scholarly paper as the benchmarks see it.

    ``id`` is whatever identifies the paper in its source (Semantic Scholar paperId, DOI,
    a corpus index); ``external_ids`` keeps the others (e.g. ``{"DOI": "10.1/x", "ArXiv": "2401.1"}``).
    ``citation_count`` is the total count in the source at retrieval time (None = unknown).
    """

    id: str
    title: str
    abstract: str | None = None
    year: int | None = None
    publication_date: dt.date | None = None
    venue: str | None = None
    citation_count: int | None = None
    publication_types: list[str] | None = None
    external_ids: dict[str, str] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)


class Reference(Paper):
    """A paper cited by a target paper, with the citation edge's metadata.

    ``contexts``: the citing sentences; ``intents``: Semantic Scholar / SciCite intent labels
    (subset of ``background``, ``methodology``, ``result``); ``is_influential``: S2's flag;
    ``sections``: section headings where the target cites it, when full text is known.
    ``relation``: free text on how it inspired the target (ResearchBench / TOMATO-Chem).
    """

    contexts: list[str] = Field(default_factory=list)
    intents: list[str] = Field(default_factory=list)
    is_influential: bool | None = None
    sections: list[str] = Field(default_factory=list)
    relation: str | None = None


class GroundTruth(_Model):
    """The target paper's own idea, in whichever fields the benchmark defines.

    ``idea`` is the free-text idea (IdeaBench's target summary, ResearchBench's main hypothesis);
    ``key_points`` are annotated points a matched-score judge checks (TOMATO-Chem ``Note``).
    """

    idea: str | None = None
    hypothesis: str | None = None
    fine_grained_hypothesis: str | None = None
    motivation: str | None = None
    experiment_plan: str | None = None
    key_points: str | None = None
    main_target: str | None = None
    core_breakthrough: str | None = None
    innovative_methods: str | None = None
    experimental_design: str | None = None


class Instance(_Model):
    """One benchmark item: a target paper and what a generator may see.

    ``references`` holds the references (IdeaBench) or inspirations (AI Idea Bench,
    ResearchBench); ``knowledge_cutoff`` is the instance's knowledge cutoff: the last day whose
    literature a generator, a retrieval or a search may use (:mod:`ideaharness.cutoff`; AI Idea
    Bench's novelty reads the papers after it as contemporary); input files may name it ``cutoff``.
    ``id`` must not be blank (it keys records, shards and per-instance scores).
    """

    id: str
    dataset: str
    target: Paper
    references: list[Reference] = Field(default_factory=list)
    research_question: str | None = None
    topic: str | None = None
    background_survey: str | None = None
    ground_truth: GroundTruth = Field(default_factory=GroundTruth)
    domain: str | None = None
    knowledge_cutoff: dt.date | None = Field(None, validation_alias=AliasChoices("knowledge_cutoff",
                                                                                 "cutoff"))
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _non_blank_id(cls, value: str) -> str:
        if not value.strip():  # an empty id cannot key records, shards or scores
            raise ValueError("empty: every instance needs a non-blank id")
        return value


class Provenance(_Model):
    """Where an idea came from: generator name, model string, prompt hash and seed."""

    generator: str
    model: str | None = None
    prompt_hash: str | None = None
    seed: int | None = None
    sample_index: int = 0


class Idea(_Model):
    """A research idea, free text plus optional structured fields.

    ``text`` always holds a complete free-text rendering (what similarity metrics compare);
    the structured fields are filled by generators or decomposition steps that produce them.
    """

    id: str
    instance_id: str
    title: str | None = None
    text: str
    motivation: str | None = None
    experiment_plan: str | None = None
    hypothesis: str | None = None
    main_target: str | None = None
    core_breakthrough: str | None = None
    innovative_methods: str | None = None
    experimental_design: str | None = None
    provenance: Provenance


class Judgment(_Model):
    """One LLM judgment: what was asked, what came back, what we made of it.

    ``parsed`` is None whenever ``parse_ok`` is False; a failed parse is never replaced by a
    default. ``positions`` records the order in which items were shown (e.g. idea ids), so
    position bias can be analysed; ``attempts`` counts the calls made (1 = first try parsed);
    ``stderr``: the last reply's stderr for a ``cmd:`` system.
    """

    judge_model: str
    prompt_hash: str
    raw_text: str
    parsed: Any = None
    parse_ok: bool
    attempts: int = 1
    errors: list[str] = Field(default_factory=list)
    positions: list[str] | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    stderr: str | None = None
    """The last reply's stderr when the judged model is a ``cmd:`` system (redacted), else None."""
    answer: str | None = None
    """The text the parser read (the last reply's answer, its reasoning removed) when it differs
    from ``raw_text``; None when the parser read ``raw_text`` itself."""
    reasoning: str | None = None
    """The last reply's reasoning (:mod:`ideaharness.llm.reasoning`), or None."""
    truncated_reasoning: bool = False
    """True when the last reply ran out of tokens while reasoning (no answer): a parse failure
    with that reason, counted apart in the reliability block."""
