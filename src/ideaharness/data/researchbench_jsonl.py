"""Loaders for the official ResearchBench JSONL release (``papers``, ``retrieve``, ``generation``,
``ranking`` ``.jsonl``; Liu, Yang et al. 2025, arXiv 2503.21248, current toolkit / HF dataset).

The release is CC BY-NC and is never shipped here: these functions read a copy the user obtained.
Field names follow the release; every row is validated and a bad row raises
:class:`~ideaharness.errors.DataError` naming the file, the 1-based row and the field.

``papers.jsonl`` and ``generation.jsonl`` become :class:`~ideaharness.schema.Instance` (ground-truth
inspirations in ``references``); ``retrieve.jsonl`` becomes :class:`RetrievalTask` whose candidate
pool is used as given (:meth:`RetrievalTask.to_pool`); ``ranking.jsonl`` becomes
:class:`RankingTask`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ideaharness.data.pools import Candidate, CandidatePool
from ideaharness.errors import DataError
from ideaharness.jsonl import iter_jsonl_models
from ideaharness.schema import GroundTruth, Instance, Paper, Reference

DATASET = "researchbench"
RELEASE_FILES = ("papers.jsonl", "retrieve.jsonl", "generation.jsonl", "ranking.jsonl")

CandidateLabel = Literal["gold", "negative_t1", "negative_t2", "negative_t3", "negative_unknown"]


class _Row(BaseModel):
    model_config = ConfigDict(extra="ignore")


class InspirationRow(_Row):
    title: str = Field(min_length=1)
    abstract: str | None = None
    relation: str | None = None
    insp: str | None = None


class PaperRow(_Row):
    """One line of ``papers.jsonl``."""

    sample_id: str = Field(min_length=1)
    discipline: str = Field(min_length=1)
    doi: str | None = None
    title: str = Field(min_length=1)
    abstract: str | None = None
    research_question: str = Field(min_length=1)
    background_survey: str | None = None
    main_hypothesis: str = Field(min_length=1)
    fine_grained_hypothesis: str | None = None
    experiments_details: str | None = None
    inspirations: list[InspirationRow] = Field(min_length=1)
    source_index: int | str | None = None


class CandidateRow(_Row):
    index: int
    title: str = Field(min_length=1)
    abstract: str | None = None
    label: CandidateLabel


class RetrievalTask(_Row):
    """One line of ``retrieve.jsonl``: a question and its released candidate pool (75 per task)."""

    sample_id: str = Field(min_length=1)
    discipline: str = Field(min_length=1)
    doi: str | None = None
    research_question: str = Field(min_length=1)
    background_survey: str | None = None
    candidates: list[CandidateRow] = Field(min_length=1)
    gold_titles: list[str] = Field(min_length=1)
    label_counts: dict[str, int] = Field(default_factory=dict)
    default_params: dict[str, Any] = Field(default_factory=dict)

    def to_instance(self) -> Instance:
        """The task as an Instance (gold candidates as references; no hypothesis), for a release
        that has no ``papers.jsonl`` / ``generation.jsonl`` row of it."""
        return Instance(
            id=self.sample_id,
            dataset=DATASET,
            target=Paper(id=self.doi or self.sample_id, title=self.sample_id,
                         external_ids={"DOI": self.doi} if self.doi else {}),
            references=[
                Reference(id=f"{self.sample_id}#c{c.index}", title=c.title, abstract=c.abstract)
                for c in self.candidates
                if c.label == "gold"
            ],
            research_question=self.research_question,
            background_survey=self.background_survey,
            ground_truth=GroundTruth(),
            domain=self.discipline,
            extra={"source_file": "retrieve.jsonl"},
        )

    def to_pool(self) -> CandidatePool:
        """The released pool as a :class:`CandidatePool`, candidates in the released order."""
        return CandidatePool(
            instance_id=self.sample_id,
            candidates=[
                Candidate(index=c.index, title=c.title, abstract=c.abstract, label=c.label)
                for c in self.candidates
            ],
            source="given",
            seed=None,
            notes=["pool as released in retrieve.jsonl"],
        )


class GenerationRow(_Row):
    """One line of ``generation.jsonl``."""

    sample_id: str = Field(min_length=1)
    discipline: str = Field(min_length=1)
    doi: str | None = None
    research_question: str = Field(min_length=1)
    background_survey: str | None = None
    gold_inspirations: list[InspirationRow] = Field(min_length=1)
    gold_hypothesis: str = Field(min_length=1)
    fine_grained_hypothesis: str | None = None
    experiments_details: str | None = None
    default_params: dict[str, Any] = Field(default_factory=dict)


class RankingTask(_Row):
    """One line of ``ranking.jsonl``: the gold hypothesis and its released negatives (5 + 10)."""

    sample_id: str = Field(min_length=1)
    discipline: str = Field(min_length=1)
    doi: str | None = None
    research_question: str = Field(min_length=1)
    gold_hypothesis: str = Field(min_length=1)
    fake_negative_hypotheses: list[str] = Field(default_factory=list)
    model_negative_hypotheses: list[str] = Field(default_factory=list)
    source_variant: str | None = None

    def to_instance(self) -> Instance:
        """The task as an Instance (the gold hypothesis as ground truth; no inspirations), for a
        release that has no ``papers.jsonl`` / ``generation.jsonl`` row of it."""
        return Instance(
            id=self.sample_id,
            dataset=DATASET,
            target=Paper(id=self.doi or self.sample_id, title=self.sample_id,
                         external_ids={"DOI": self.doi} if self.doi else {}),
            research_question=self.research_question,
            ground_truth=GroundTruth(idea=self.gold_hypothesis, hypothesis=self.gold_hypothesis),
            domain=self.discipline,
            extra={"source_file": "ranking.jsonl"},
        )

    @property
    def negatives(self) -> list[str]:
        """Fake negatives first, then model negatives, empty strings dropped."""
        return [h for h in self.fake_negative_hypotheses + self.model_negative_hypotheses if h.strip()]


RowT = TypeVar("RowT", bound=BaseModel)


def sample_id_doi(doi: str) -> str:
    """The DOI as the release spells it inside ``sample_id``: lowercase alphanumerics only."""
    return re.sub(r"[^a-z0-9]", "", doi.lower())


def _rows(path: Path, model: type[RowT]) -> Iterator[tuple[int, RowT]]:
    if not path.is_file():
        raise DataError(path, "file not found")
    rows = 0
    for line_no, row in iter_jsonl_models(path, model):
        rows += 1
        yield line_no, row
    if not rows:
        raise DataError(path, "no rows (empty file)")


def _references(sample_id: str, inspirations: list[InspirationRow]) -> list[Reference]:
    return [
        Reference(
            id=f"{sample_id}#insp{i}",
            title=insp.title.strip(),
            abstract=insp.abstract,
            relation=insp.relation,
            extra={"insp": insp.insp} if insp.insp else {},
        )
        for i, insp in enumerate(inspirations, start=1)
    ]


def _target(sample_id: str, doi: str | None, title: str, abstract: str | None) -> Paper:
    return Paper(
        id=doi or sample_id,
        title=title,
        abstract=abstract,
        external_ids={"DOI": doi} if doi else {},
    )


def load_papers_jsonl(path: str | Path) -> list[Instance]:
    """Read ``papers.jsonl`` into instances (``domain`` = discipline, ``id`` = ``sample_id``).

    Raises:
        DataError: missing file, bad JSON, or a row lacking a required field (file, row, field).
    """
    path = Path(path)
    return [
        _instance(row, path, row.title, row.abstract, row.inspirations, row.main_hypothesis,
                  {"source_index": row.source_index})
        for _, row in _rows(path, PaperRow)
    ]


def _instance(row: Any, path: Path, title: str, abstract: str | None, inspirations: Any,
              hypothesis: str | None, extra: dict[str, Any]) -> Instance:
    """One release row (papers or generation file) as an Instance."""
    return Instance(
        id=row.sample_id,
        dataset=DATASET,
        target=_target(row.sample_id, row.doi, title, abstract),
        references=_references(row.sample_id, inspirations),
        research_question=row.research_question,
        background_survey=row.background_survey,
        ground_truth=GroundTruth(
            idea=hypothesis,
            hypothesis=hypothesis,
            fine_grained_hypothesis=row.fine_grained_hypothesis,
            experiment_plan=row.experiments_details,
        ),
        domain=row.discipline,
        extra={**extra, "source_file": path.name},
    )


def load_generation_jsonl(path: str | Path) -> list[Instance]:
    """Read ``generation.jsonl`` into instances; ``extra['default_params']`` keeps the release's."""
    path = Path(path)
    return [
        _instance(row, path, row.sample_id, None, row.gold_inspirations, row.gold_hypothesis,
                  {"default_params": row.default_params})
        for _, row in _rows(path, GenerationRow)
    ]


def load_retrieve_jsonl(path: str | Path) -> list[RetrievalTask]:
    """Read ``retrieve.jsonl``; each task's pool is used as given (see :meth:`RetrievalTask.to_pool`).

    Raises:
        DataError: as :func:`load_papers_jsonl`, or a task whose ``gold_titles`` are not all
            labelled ``gold`` among its candidates.
    """
    path = Path(path)
    out: list[RetrievalTask] = []
    for line_no, task in _rows(path, RetrievalTask):
        gold = {c.title for c in task.candidates if c.label == "gold"}
        missing = [t for t in task.gold_titles if t not in gold]
        if missing:
            raise DataError(
                path, f"line {line_no}, field 'gold_titles': {missing[0]!r} is not a gold candidate"
            )
        out.append(task)
    return out


def load_ranking_jsonl(path: str | Path) -> list[RankingTask]:
    """Read ``ranking.jsonl`` (gold hypothesis plus fake and model-generated negatives)."""
    return [task for _, task in _rows(Path(path), RankingTask)]


class ResearchBenchRelease(BaseModel):
    """The files of a release directory that exist, loaded."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    papers: list[Instance] = Field(default_factory=list)
    generation: list[Instance] = Field(default_factory=list)
    retrieve: list[RetrievalTask] = Field(default_factory=list)
    ranking: list[RankingTask] = Field(default_factory=list)

    def instances(self) -> list[Instance]:
        """Every task of the release as an instance: ``papers`` when present, else ``generation``
        (both carry gold inspirations), then each ``retrieve`` and ``ranking`` task that neither
        file has (:meth:`RetrievalTask.to_instance`, :meth:`RankingTask.to_instance`), in file
        order — so a release folder holding only ``ranking.jsonl`` (as the official release's
        ranking part is shipped) runs the ranking task. The list is ``papers`` / ``generation``
        itself when nothing is added.
        """
        primary = self.papers or self.generation
        known = {inst.id for inst in primary}
        extra: list[Instance] = []
        tasks: list[RetrievalTask | RankingTask] = [*self.retrieve, *self.ranking]
        for task in tasks:
            if task.sample_id not in known:
                known.add(task.sample_id)
                extra.append(task.to_instance())
        return [*primary, *extra] if extra else primary


def load_release_dir(directory: str | Path) -> ResearchBenchRelease:
    """Load whichever of the four release files exist in ``directory``.

    Raises:
        DataError: the directory holds none of them.
    """
    directory = Path(directory)
    present = [name for name in RELEASE_FILES if (directory / name).is_file()]
    if not present:
        raise DataError(directory, f"no ResearchBench release file found (expected one of {RELEASE_FILES})")
    release = ResearchBenchRelease()
    if "papers.jsonl" in present:
        release.papers = load_papers_jsonl(directory / "papers.jsonl")
    if "generation.jsonl" in present:
        release.generation = load_generation_jsonl(directory / "generation.jsonl")
    if "retrieve.jsonl" in present:
        release.retrieve = load_retrieve_jsonl(directory / "retrieve.jsonl")
    if "ranking.jsonl" in present:
        release.ranking = load_ranking_jsonl(directory / "ranking.jsonl")
    return release
