"""HindSight topics: a research topic with a knowledge cutoff T, the literature a generator may see
(published up to T) and the pool of papers published in the future window (T, T + horizon] that
ideas are matched against.

A topics file is JSON Lines (optionally ``.gz``), one :class:`Topic` a line, as
``ideaharness data build hindsight`` writes it (:mod:`ideaharness.data.builders.hindsight`); the
bundled sample (``data/sample/topics.jsonl.gz``) is one such file built from recorded real
Semantic Scholar responses (``data/sample/SOURCE.md``).

Dates follow :mod:`ideaharness.cutoff`: a work published on T is before the cutoff (visible to the
generator, never a future match); the window's last day T + horizon is inside the window.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ideaharness.cutoff import Dated, verdict
from ideaharness.data.builders.hindsight import DEFAULT_HORIZON_MONTHS, add_months, parse_horizon, window_end
from ideaharness.errors import DataError, UserError
from ideaharness.jsonl import iter_jsonl_models
from ideaharness.schema import IsoDate, Paper

SAMPLE = "sample"
"""``--data sample``: the bundled topics (:func:`sample_path`)."""

__all__ = ["DEFAULT_HORIZON_MONTHS", "SAMPLE", "Topic", "WindowPlace", "add_months", "check_run_cutoff",
           "load_topics", "parse_horizon", "pool_ends_early", "sample_path", "window_end", "window_place"]

WindowPlace = Literal["in", "before", "after", "undated"]
"""Where a paper lies relative to a window (T, end]: ``before`` (published on or before T),
``after`` (after the end), ``undated`` (no date that decides it), else ``in``."""


class Topic(BaseModel):
    """One HindSight item (a line of a topics file).

    Attributes:
        id: unique, non-blank (keys records, shards and scores).
        topic: the research topic a generator is asked about (one sentence or phrase).
        field: the field of study used when a paper names none (impact normalisation).
        knowledge_cutoff: T, the last day whose literature the generator may use (input alias
            ``cutoff``).
        literature: papers shown to a generator that grounds its ideas (only those not after T
            reach a prompt: :func:`ideaharness.cutoff.before_cutoff`).
        future: the candidate pool: papers published in (T, T + horizon] found for the topic
            (only those in the run's window are candidates; never shown to a generator).
        impact_as_of: the day the citation counts of ``future`` were retrieved (the age of a
            paper is counted up to it); None: the run's ``--impact-as-of`` or the day of the run.
        query: the search query the builder used (default: ``topic``).
        window_end: the last day of the window the builder searched, after the cutoff (a run whose
            window ends later is warned that its pool may be short: :func:`pool_ends_early`).
        extra: anything else (kept, not read).
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str
    topic: str
    field: str | None = None
    knowledge_cutoff: IsoDate = Field(alias="cutoff")
    literature: list[Paper] = Field(default_factory=list)
    future: list[Paper] = Field(default_factory=list)
    impact_as_of: IsoDate | None = None
    query: str | None = None
    window_end: IsoDate | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", "topic")
    @classmethod
    def _non_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("empty: every topic needs a non-blank id and topic text")
        return value.strip()


def window_place(paper: Dated, cutoff: dt.date, end: dt.date) -> WindowPlace:
    """Where ``paper`` lies relative to the window (cutoff, end], by :func:`ideaharness.cutoff.verdict`
    at both ends: ``before`` when it is not provably after the cutoff and is dated (on or before T),
    ``after`` when it is provably after ``end``, ``undated`` when either end cannot place it, else
    ``in``."""
    start = verdict(paper, cutoff)
    if start == "before":
        return "before"
    if start == "undated":
        return "undated"
    stop = verdict(paper, end)
    if stop == "after":
        return "after"
    return "undated" if stop == "undated" else "in"


def check_run_cutoff(topic: Topic, run_cutoff: dt.date | None) -> None:
    """Refuse a run cutoff earlier than the topic's own T unless its pool reaches back to it.

    The builder searches the pool in (T, T + horizon] only, so under ``--cutoff`` T' < T the window
    (T', T' + horizon] would have no candidate in (T', T]: match rate and impact would come out low
    with nothing to say why. The pool covers that stretch demonstrably only when it holds a paper
    dated in (T', T] (a pool searched from an earlier day); then the run goes on.

    Raises:
        UserError: one line naming the topic, its cutoff and the asked one, and how to rebuild.
    """
    if run_cutoff is None or run_cutoff >= topic.knowledge_cutoff:
        return
    if any(window_place(p, run_cutoff, topic.knowledge_cutoff) == "in" for p in topic.future):
        return
    built = topic.knowledge_cutoff
    raise UserError(f"topic {topic.id!r} was built with cutoff {built}: its pool holds no paper of "
                    f"({run_cutoff}, {built}], so under --cutoff {run_cutoff} match rate and impact would be "
                    f"biased low; rebuild the topics with --cutoff {run_cutoff} (ideaharness data build "
                    "hindsight), or run without --cutoff")


def pool_ends_early(topic: Topic, end: dt.date) -> bool:
    """Whether the run's window, ending on ``end``, ends after the window the builder searched
    (``window_end``): its last months have no pool paper, so match rates are lower bounds."""
    return topic.window_end is not None and end > topic.window_end


def sample_path() -> Path:
    """The bundled sample's topics file."""
    return Path(__file__).parent / "data" / "sample" / "topics.jsonl.gz"


def topics_path(spec: str) -> Path:
    """The file ``--data`` names: the bundled sample for ``sample``, ``<folder>/topics.jsonl`` for a
    folder holding one, else the path as given (which may not exist)."""
    path = sample_path() if spec == SAMPLE else Path(spec)
    if path.is_dir() and (path / "topics.jsonl").is_file():
        return path / "topics.jsonl"
    return path


def load_topics(spec: str) -> list[Topic]:
    """The topics of ``--data``: ``sample`` (bundled) or a topics JSONL(.gz) file.

    Raises:
        UserError: no such file, or a folder without ``topics.jsonl``; DataError: a line that is
            not a topic (naming file, line and
            field), a ``window_end`` on or before the topic's cutoff, two topics with one id, or no
            topic at all.
    """
    path = topics_path(spec)
    if path.is_dir():
        raise UserError(f"--data {spec}: is a folder with no topics.jsonl in it (give 'sample', a topics "
                        "JSONL file, or a folder holding topics.jsonl, as 'ideaharness data build hindsight' "
                        "writes)")
    if not path.is_file():
        raise UserError(f"--data {spec}: no such file (give 'sample' or a topics JSONL file, as "
                        "'ideaharness data build hindsight' writes)")
    topics: list[Topic] = []
    seen: dict[str, int] = {}
    for lineno, topic in iter_jsonl_models(path, Topic, noun="a topic"):
        if topic.window_end is not None and topic.window_end <= topic.knowledge_cutoff:
            raise DataError(path, f"line {lineno}, field 'window_end': {topic.window_end} is not after the "
                            f"topic's cutoff {topic.knowledge_cutoff} (the window is (cutoff, window_end])")
        if topic.id in seen:
            raise DataError(path, f"line {lineno}, field 'id': {topic.id!r} repeats line {seen[topic.id]}")
        seen[topic.id] = lineno
        topics.append(topic)
    if not topics:
        raise DataError(path, "no topic in the file")
    return topics
