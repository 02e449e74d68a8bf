"""ResearchBench run configuration and data sources (instances, given pools, negative corpora).

``--data`` forms:

* ``tomato-chem`` (default): the bundled TOMATO-Chem papers; negatives come from the shipped
  MOOSE-Chem inspiration corpus (``corpus_size`` 150/300/1000, or ``--corpus PATH``). The corpus
  is one discipline, so level 3 has no source (see :mod:`ideaharness.data.pools`, ``level3_fill``).
* a directory with the official JSONL release (``papers/retrieve/generation/ranking.jsonl``):
  released pools and ranking negatives are used as given;
* a directory of ResearchBench ``.xlsx`` discipline sheets, or one ``.xlsx`` sheet;
* an Instance ``.jsonl`` file.

Without a corpus, negatives are drawn from the dataset itself: the target papers and
inspirations of the *other* instances, split by discipline (same discipline = levels 1-2,
other disciplines = level 3).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ideaharness.data.matching import DEFAULT_TITLE_THRESHOLD, normalise_title
from ideaharness.data.pools import DEFAULT_PER_LEVEL, DEFAULT_POOL_SIZE, CandidatePool
from ideaharness.data.researchbench_jsonl import RELEASE_FILES, RankingTask, RetrievalTask, load_release_dir
from ideaharness.errors import UserError
from ideaharness.llm.client import DEFAULT_MODEL
from ideaharness.schema import GroundTruth, Instance, Paper, Reference

BENCHMARK_VERSION = "2"  # 2: references blinded by default (issue 9, items 13-15)
Task = Literal["retrieval", "composition", "ranking"]
TASKS: tuple[Task, ...] = ("retrieval", "composition", "ranking")
Method = Literal["one_step", "pipeline"]
METHODS: tuple[Method, ...] = ("one_step", "pipeline")

NON_IDENTITY_KEYS = frozenset({"tasks", "published_after"})
"""Config keys that may change between runs in one directory (they select or report, never alter
recorded work)."""


class ResearchBenchConfig(BaseModel):
    """Everything that determines a ResearchBench run's results (recorded in config.json)."""

    model_config = ConfigDict(extra="forbid")

    benchmark: Literal["researchbench"] = "researchbench"
    benchmark_version: str = BENCHMARK_VERSION
    tasks: list[Task] = Field(default_factory=lambda: list(TASKS))
    data: str = "tomato-chem"
    corpus: str | None = None
    corpus_size: int = 1000
    dedupe: bool = False
    generator: str = DEFAULT_MODEL
    judge: str = DEFAULT_MODEL
    seed: int = 0
    # retrieval
    pool_size: int = Field(DEFAULT_POOL_SIZE, ge=2)
    per_level: int = Field(DEFAULT_PER_LEVEL, ge=1)
    level3_fill: Literal["level2", "empty"] = "level2"
    window_size: int = Field(15, ge=2)
    keep_size: int = Field(3, ge=1)
    title_threshold: float = Field(DEFAULT_TITLE_THRESHOLD, gt=0, le=1)
    use_background_survey: bool = False
    # composition
    methods: list[Method] = Field(default_factory=lambda: list(METHODS))
    n_mutations: int = Field(2, ge=1)
    n_refine: int = Field(1, ge=0)
    # ranking
    ranking_negatives: Literal["auto", "generated", "given"] = "auto"
    n_negatives: int = Field(5, ge=1)
    inspirations_per_negative: int = Field(2, ge=1)
    parity: bool = False  # published ranking: gold as published, shown first only
    # reporting
    published_after: dt.date | None = None
    # sampling
    generation_temperature: float = 0.7
    judge_temperature: float = 0.0
    generation_max_tokens: int = 512
    judge_max_tokens: int = 512
    max_attempts: int = Field(3, ge=1, le=10)
    bootstrap_resamples: int = 2000

    @model_validator(mode="after")
    def _check(self) -> ResearchBenchConfig:
        if self.window_size <= self.keep_size:
            raise UserError(f"--window-size {self.window_size} must exceed --keep-size {self.keep_size}")
        if not self.tasks:
            raise UserError("--task: choose at least one task")
        return self


def identity_keys(config: ResearchBenchConfig) -> tuple[str, ...]:
    """The config keys a resumed run must share with the recorded one."""
    return tuple(k for k in ResearchBenchConfig.model_fields if k not in NON_IDENTITY_KEYS)


class BenchData:
    """Instances plus whatever the source provides for pools and ranking."""

    def __init__(
        self,
        instances: list[Instance],
        *,
        corpus: list[Paper] | None = None,
        given_pools: dict[str, CandidatePool] | None = None,
        given_ranking: dict[str, RankingTask] | None = None,
        notes: list[str] | None = None,
    ) -> None:
        self.instances = instances
        self.corpus = corpus
        self.given_pools = given_pools or {}
        self.given_ranking = given_ranking or {}
        self.notes = notes or []
        self._by_discipline: dict[str, list[Paper]] | None = None

    def negative_sources(self, inst: Instance) -> tuple[list[Paper], list[Paper]]:
        """(same-discipline papers, other-discipline papers) to draw negatives from for ``inst``."""
        if self.corpus is not None:
            return self.corpus, []
        if self._by_discipline is None:
            self._by_discipline = _papers_by_discipline(self.instances)
        own = discipline_of(inst)
        exclude = {normalise_title(inst.target.title)}
        same = [p for p in self._by_discipline.get(own, []) if normalise_title(p.title) not in exclude]
        other = [p for d, ps in self._by_discipline.items() if d != own for p in ps]
        return same, other

    def all_source_papers(self) -> list[Paper]:
        """Every paper negatives may come from (to embed once)."""
        if self.corpus is not None:
            return self.corpus
        if self._by_discipline is None:
            self._by_discipline = _papers_by_discipline(self.instances)
        return [p for ps in self._by_discipline.values() for p in ps]


def discipline_of(inst: Instance) -> str:
    return inst.domain or str(inst.extra.get("discipline") or "unknown")


def _papers_by_discipline(instances: list[Instance]) -> dict[str, list[Paper]]:
    out: dict[str, list[Paper]] = {}
    seen: dict[str, set[str]] = {}
    for inst in instances:
        d = discipline_of(inst)
        keys = seen.setdefault(d, set())
        for paper in [inst.target, *inst.references]:
            key = normalise_title(paper.title)
            if key and key not in keys:
                keys.add(key)
                out.setdefault(d, []).append(Paper(id=paper.id, title=paper.title, abstract=paper.abstract))
    return out


def _instance_from_retrieval(task: RetrievalTask) -> Instance:
    return Instance(
        id=task.sample_id,
        dataset="researchbench",
        target=Paper(id=task.doi or task.sample_id, title=task.sample_id),
        references=[
            Reference(id=f"{task.sample_id}#c{c.index}", title=c.title, abstract=c.abstract)
            for c in task.candidates
            if c.label == "gold"
        ],
        research_question=task.research_question,
        background_survey=task.background_survey,
        ground_truth=GroundTruth(),
        domain=task.discipline,
    )


def load_data(config: ResearchBenchConfig) -> BenchData:
    """Resolve ``config.data`` / ``config.corpus`` (see the module docstring).

    Raises:
        UserError: unknown name or missing path; DataError: a malformed file.
    """
    from ideaharness.data.corpus import load_corpus_file

    corpus = load_corpus_file(config.corpus) if config.corpus else None
    if config.data == "tomato-chem":
        from ideaharness.data.tomato import load_inspiration_corpus, load_tomato_chem

        if corpus is None:
            corpus = load_inspiration_corpus(config.corpus_size)
        return BenchData(load_tomato_chem(), corpus=corpus)
    path = Path(config.data)
    if not path.exists():
        raise UserError(
            f"--data {config.data!r}: no such file or directory; use 'tomato-chem', a ResearchBench "
            "release directory (papers.jsonl ...), a folder of .xlsx sheets, one .xlsx or an Instance JSONL"
        )
    if path.is_dir() and any((path / f).is_file() for f in RELEASE_FILES):
        release = load_release_dir(path)
        instances = release.instances() or [_instance_from_retrieval(t) for t in release.retrieve]
        return BenchData(
            instances,
            corpus=corpus,
            given_pools={t.sample_id: t.to_pool() for t in release.retrieve},
            given_ranking={t.sample_id: t for t in release.ranking},
        )
    if path.is_dir():
        from ideaharness.data.researchbench_xlsx import load_researchbench_dir

        loaded = load_researchbench_dir(path, dedupe=config.dedupe)
        notes = []
        if loaded.duplicate_dois:
            notes.append(
                f"{len(loaded.duplicate_dois)} DOI(s) appear in several disciplines"
                + (" (deduplicated: first occurrence kept)" if config.dedupe else " (kept; use --dedupe)")
            )
        return BenchData(loaded.instances, corpus=corpus, notes=notes)
    if path.suffix.lower() == ".xlsx":
        from ideaharness.data.researchbench_xlsx import load_researchbench_sheet

        return BenchData(load_researchbench_sheet(path, discipline=path.stem, sheet=None), corpus=corpus)
    from ideaharness.data.registry import load_instances_jsonl

    return BenchData(load_instances_jsonl(path), corpus=corpus)
