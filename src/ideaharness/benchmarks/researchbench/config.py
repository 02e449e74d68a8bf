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
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from ideaharness.benchmarks._caps import PublishedCap, parity_cap
from ideaharness.data.matching import DEFAULT_TITLE_THRESHOLD, normalise_title
from ideaharness.data.pools import DEFAULT_PER_LEVEL, DEFAULT_POOL_SIZE, CandidatePool
from ideaharness.data.researchbench_jsonl import RELEASE_FILES, RankingTask, load_release_dir
from ideaharness.errors import UserError
from ideaharness.llm.client import DEFAULT_MODEL
from ideaharness.runner.protocol import BenchmarkConfig
from ideaharness.schema import Instance, Paper
from ideaharness.systems import SystemFields, is_system

BENCHMARK_VERSION = "3"
# 2: references blinded by default (issue 9, items 13-15); 3: the gold rewrite at the negatives' length
# (issue 32, item 3: a resumed run would keep gold rewrites recorded within the gold's own bounds)
Task = Literal["retrieval", "composition", "ranking"]
TASKS: tuple[Task, ...] = ("retrieval", "composition", "ranking")
Method = Literal["one_step", "pipeline"]
METHODS: tuple[Method, ...] = ("one_step", "pipeline")

NON_IDENTITY_KEYS = frozenset({"tasks", "published_after", "bootstrap_resamples", "system"})
"""Config keys that may change between runs in one directory (they select or report, never alter
recorded work; ``system`` names the generator in the report)."""
SYSTEM_TASKS: tuple[Task, ...] = ("composition", "ranking")
"""The tasks a system generator takes part in: composition (its hypotheses) and ranking (the
negatives it composes from non-gold inspirations; the judge ranks). Retrieval screens candidates
with a model's choices, which no system answer gives: it is not run (said in a note)."""
RETRIEVAL_NOT_RUN = ("retrieval not run: screening measures a model choosing inspiration papers in "
                     "windows of candidates, and the generator is a system ({spec}), whose answers are "
                     "hypotheses; run a model generator to measure retrieval")


_RESEARCHBENCH = "ankitala/ResearchBench@2501e51"
_LLM_GENERATION = PublishedCap(None, f"{_RESEARCHBENCH}:src/utils.py:337-343 (llm_generation: "
                               "client.chat.completions.create(model, temperature, messages), no max_tokens; "
                               "screening, composition and the matched score go through it. MOOSE-Chem, "
                               "the engine's later release, sends 8,192: ZonglinY/MOOSE-Chem@8de57aa:"
                               "Method/utils.py:481-495)")
PUBLISHED_CAPS: dict[str, PublishedCap] = {
    "screening": _LLM_GENERATION,
    "compose": _LLM_GENERATION,
    "score": _LLM_GENERATION,
    "rank": PublishedCap(None, f"{_RESEARCHBENCH}:code/hypothesis_ranking/ranking.py:41-44 (temperature "
                         "0.7, top_p 0.95, no max_tokens)"),
}
"""Prompt kind -> the published code's reply cap (``--parity``): no cap for any prompt. (The gold
rewrite of the blind ranking has no published counterpart and is not done under parity.)"""


class ResearchBenchConfig(SystemFields, BenchmarkConfig):
    """Everything that determines a ResearchBench run's results (recorded in config.json).

    ``--ideas FILE`` (or ``--generator ideas:FILE``, ``cmd:...``, ``http(s)://...``) makes the
    generator a system (:mod:`.contract`): it composes the hypotheses (one task per paper and
    condition) and the generated ranking negatives; retrieval is not run.
    """

    model_config = ConfigDict(extra="forbid")

    benchmark: Literal["researchbench"] = "researchbench"
    benchmark_version: str = BENCHMARK_VERSION
    tasks: list[Task] = Field(default_factory=lambda: list(TASKS), json_schema_extra={"cli": "--task"},
                              description="retrieval, composition, ranking, or all.")
    data: str = Field("tomato-chem", description="'tomato-chem' (bundled), a ResearchBench JSONL release "
                      "directory, a folder of .xlsx sheets, one .xlsx, or an Instance JSONL.")
    corpus: str | None = Field(None, description="Negatives corpus: MOOSE-Chem [title, abstract] JSON or "
                               "Paper JSONL.")
    corpus_size: int = Field(1000, description="Bundled MOOSE-Chem corpus size (150, 300, 1000).")
    dedupe: bool = Field(False, description="Keep one row per DOI across discipline sheets.")
    generator: str = Field(DEFAULT_MODEL, description="Generator (screening, composition, negatives): "
                           "local/qwen2.5-coder-1.5b, local/qwen2.5-coder-0.5b, openai/<model>, or a system "
                           "(ideas:FILE, cmd:..., http://...: composition and negatives only).")
    judge: str = Field(DEFAULT_MODEL, description="Judge (matched score, ranking), same forms.")
    # retrieval
    pool_size: int = Field(DEFAULT_POOL_SIZE, ge=2, description="Candidates per pool, gold included.")
    per_level: int = Field(DEFAULT_PER_LEVEL, ge=1, description="Most negatives per distance level.")
    level3_fill: Literal["level2", "empty"] = Field(
        "level2", description="No other-discipline source: level2 fills level-3 slots with level-2 papers.")
    window_size: int = Field(15, ge=2, description="Candidates per screening window.")
    keep_size: int = Field(3, ge=1, description="Candidates kept per window.")
    title_threshold: float = Field(DEFAULT_TITLE_THRESHOLD, gt=0, le=1,
                                   description="Fuzzy title-match threshold (0-1].")
    use_background_survey: bool = Field(False, description="Show the survey when screening.")
    # composition
    methods: list[Method] = Field(default_factory=lambda: list(METHODS),
                                  json_schema_extra={"cli": "--method"},
                                  description="Composition methods.")
    n_mutations: int = Field(2, ge=1, description="Pipeline: mutations per inspiration.")
    n_refine: int = Field(1, ge=0, description="Pipeline: refinements per mutation.")
    # ranking
    ranking_negatives: Literal["auto", "generated", "given"] = Field(
        "auto", description="Ranking negatives: given (ranking.jsonl), generated, or auto.")
    n_negatives: int = Field(5, ge=1, description="Generated negatives per paper.")
    inspirations_per_negative: int = Field(2, ge=1,
                                           description="Non-gold inspirations per generated negative.")
    parity: bool = Field(False, description="Published ranking: the gold's published text, always "
                         "candidate 1 (default: rewritten, both orders).")
    # reporting
    published_after: dt.date | None = Field(None, description="Also report the 'strict' subset of papers "
                                            "published after DATE (YYYY-MM-DD).")
    # sampling
    generation_temperature: float = Field(0.7, description="Sampling temperature of the generator.")
    judge_temperature: float = Field(0.0, description="Sampling temperature of the judge.")
    generation_max_tokens: int = Field(512, ge=16, description="Tokens of a composed hypothesis (and of "
                                       "each mutation, refinement and negative); the generator's reasoning "
                                       "budget is added; --parity: no cap, as published.")
    judge_max_tokens: int = Field(512, ge=16, description="Tokens of a screening window's titles and "
                                  "reasons, a matched score with its reason, or a pairwise choice with "
                                  "its analysis; the model's reasoning budget is added; --parity: no cap, "
                                  "as published.")
    bootstrap_resamples: int = Field(2000, ge=10, description="Bootstrap resamples of the 95% intervals.")

    def reply_cap(self, kind: str) -> int | None:
        """The answer cap of prompt ``kind`` (``"screening"``, ``"compose"``, ``"score"``,
        ``"rank"``), tokens: ``generation_max_tokens`` for compose, else ``judge_max_tokens``; under
        ``parity`` the published one (:data:`PUBLISHED_CAPS`: None, no cap sent).

        Raises:
            KeyError: an unknown kind.
        """
        ours = self.generation_max_tokens if kind == "compose" else self.judge_max_tokens
        return parity_cap(kind, ours, PUBLISHED_CAPS, parity=self.parity)

    @field_validator("tasks", mode="before")
    @classmethod
    def _all_tasks(cls, value: Any) -> Any:
        if value == "all" or (isinstance(value, list | tuple) and "all" in value):
            return list(TASKS)
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _check(self) -> ResearchBenchConfig:
        if self.window_size <= self.keep_size:
            raise UserError(f"--window-size {self.window_size} must exceed --keep-size {self.keep_size}")
        if not self.tasks:
            raise UserError("--task: choose at least one task")
        if self.is_system_generator() and not self.system_tasks():
            raise UserError(f"--task {','.join(self.tasks)}: the generator is a system "
                            f"({self.generator_spec(self.generator)}), which answers composition and ranking "
                            "tasks only (retrieval screens with a model)")
        return self

    def is_system_generator(self) -> bool:
        """Whether the generator is a system (``--ideas``, ``ideas:``, ``cmd:``, ``http(s)://``)."""
        return is_system(self.generator_spec(self.generator))

    def system_tasks(self) -> list[Task]:
        """The configured tasks a run performs: all of them with a model generator, those of
        :data:`SYSTEM_TASKS` with a system."""
        if not self.is_system_generator():
            return list(self.tasks)
        return [t for t in self.tasks if t in SYSTEM_TASKS]


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
                out.setdefault(d, []).append(Paper(id=paper.id, title=paper.title, abstract=paper.abstract,
                                                   publication_date=paper.publication_date, year=paper.year))
    return out


def _instances_folder(path: Path) -> bool:
    """A folder holding ``instances.jsonl`` and no ``.xlsx`` sheet."""
    return path.is_dir() and (path / "instances.jsonl").is_file() and not any(path.glob("*.xlsx"))


def input_files(config: ResearchBenchConfig) -> dict[str, list[Path]]:
    """The files :func:`load_data` reads, by flag (their sha256 is part of the run's identity)."""
    from ideaharness.data.tomato import BUNDLED_FILE, bundled_path, corpus_file_name

    files: dict[str, list[Path]] = {}
    path = Path(config.data)
    if config.data == "tomato-chem":
        files["--data"] = [bundled_path(BUNDLED_FILE)]
        if not config.corpus:
            files["--corpus-size"] = [bundled_path(corpus_file_name(config.corpus_size))]
    elif path.is_dir() and any((path / f).is_file() for f in RELEASE_FILES):
        files["--data"] = [path / f for f in RELEASE_FILES if (path / f).is_file()]
    elif _instances_folder(path):
        files["--data"] = [path / "instances.jsonl"]
    elif path.is_dir():
        files["--data"] = sorted(p for p in path.glob("*.xlsx") if not p.name.startswith("~$"))
    else:
        files["--data"] = [path]
    if config.corpus:
        files["--corpus"] = [Path(config.corpus)]
    if config.ideas_files():
        files["--ideas"] = config.ideas_files()
    return files


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
        instances = release.instances()  # retrieve/ranking tasks without a papers row included
        return BenchData(
            instances,
            corpus=corpus,
            given_pools={t.sample_id: t.to_pool() for t in release.retrieve},
            given_ranking={t.sample_id: t for t in release.ranking},
        )
    if _instances_folder(path):  # a builder's output folder, as `data validate` reads it
        path = path / "instances.jsonl"
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
