"""One vocabulary shared by every benchmark: papers, references, instances, ideas and judgments.

All models are pydantic v2 and round-trip through JSON (``model_dump(mode="json")`` /
``model_validate``). Later benchmarks extend these models (subclass or the ``extra`` dicts); they
never fork them.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

DATE_FORM = "YYYY-MM-DD"
"""The one written form of every date a user gives: a publication date, a knowledge cutoff."""

_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def read_date(value: Any, *, year_hint: str | None = None) -> dt.date:
    """A calendar day written ``YYYY-MM-DD`` (or already a :class:`datetime.date`).

    The one reader of dates a user gives (``--cutoff``, an instance's ``knowledge_cutoff``, a
    paper's ``publication_date``): a number is never read as a Unix timestamp, a year alone or a
    date with a time of day is refused, so a wrong form cannot turn into a wrong day.

    Args:
        value: the text (surrounding blanks ignored), a date, or anything else (refused).
        year_hint: what to do with a year alone, added to its error (default: the year's last day
            as an example).

    Raises:
        ValueError: one line naming the value and the expected form, e.g.
            ``"2024 is a year, not a date: expected YYYY-MM-DD (e.g. 2024-12-31)"``.
    """
    if isinstance(value, dt.datetime):
        raise ValueError(f"{value.isoformat()!r} has a time of day: expected {DATE_FORM}")
    if isinstance(value, dt.date):
        return value
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else None
    if text is not None and re.fullmatch(r"[0-9]{4}", text):
        hint = year_hint or f"e.g. {text}-12-31 for the end of {text}"
        raise ValueError(f"{value!r} is a year, not a date: expected {DATE_FORM} ({hint})")
    if text is None or not _ISO_DAY.fullmatch(text):
        raise ValueError(f"{value!r} is not a date: expected {DATE_FORM}")
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{value!r} is not a calendar day: expected {DATE_FORM}") from None


def _date_field(value: Any, info: ValidationInfo) -> Any:
    if value is None:
        return None
    try:
        return read_date(value, year_hint="a year alone goes in 'year'"
                         if info.field_name == "publication_date" else None)
    except ValueError as exc:  # a custom error: pydantic would prefix "Value error, "
        raise PydanticCustomError("date_form", str(exc)) from None


IsoDate = Annotated[dt.date, BeforeValidator(_date_field)]
"""A pydantic date field read by :func:`read_date` (``YYYY-MM-DD``; no timestamps, no years alone)."""


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
    publication_date: IsoDate | None = None
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
    knowledge_cutoff: IsoDate | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _cutoff_alias(cls, value: Any) -> Any:
        """``cutoff`` is a second name of ``knowledge_cutoff``; both given must name one day."""
        if not isinstance(value, dict) or "cutoff" not in value:
            return value
        row = dict(value)
        alias = row.pop("cutoff")
        if "knowledge_cutoff" not in row:
            row["knowledge_cutoff"] = alias
        elif not _same_day(alias, row["knowledge_cutoff"]):
            raise PydanticCustomError(
                "cutoff_twice", "'cutoff' and 'knowledge_cutoff' are two names for one field (the "
                f"knowledge cutoff) and this row gives different values ({alias!r}, "
                f"{row['knowledge_cutoff']!r}): give one")
        return row

    @field_validator("id")
    @classmethod
    def _non_blank_id(cls, value: str) -> str:
        if not value.strip():  # an empty id cannot key records, shards or scores
            raise ValueError("empty: every instance needs a non-blank id")
        return value


def _same_day(a: Any, b: Any) -> bool:
    try:
        return read_date(a) == read_date(b) if a is not None and b is not None else a is b
    except ValueError:
        return False


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
