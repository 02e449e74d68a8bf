"""PAIR-IQ reference records (LigBench): model, loader, score projection and venue debiasing.

PAIR-IQ (Wang et al., "LigBench: A Unified and Human-Aligned Benchmark for LLM-based Research
Idea Generation", Listing 1) stores one JSON object per OpenReview paper::

    {"title", "url", "conference", "year", "label", "abstract", "keywords", "primary area",
     "rating", "contribute", "soundness", "novelty",
     "analysis": {"main_target", "core_breakthrough", "innovative_methods", "experimental_design"},
     "embedding"}

Note the spellings: ``contribute`` (not contribution) and ``primary area`` (with a space);
``novelty`` is the string ``"0"`` in the release (OpenReview has no novelty score), which we read
as "not available" (None). Scores are on 0-5 after projection from the venue's review scale (the
paper does not give the projection; :func:`project_score` is a linear min-max map, documented
below). :func:`debias` applies the paper's venue debiasing ŝ = s − μ_venue + μ_all.

:func:`load_pairiq` reads a ``.json`` file (one record or a list), a ``.jsonl`` file, or a
directory of those (searched recursively, e.g. the release's ``<root>/*/*/*.json``).
:func:`write_pairiq` writes records as JSONL in the paper's key spelling, which the ``pairiq``
builder uses and :func:`load_pairiq` reads back.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ideaharness.errors import DataError
from ideaharness.jsonl import dumps_line, first_error, iter_jsonl, parse_json_document
from ideaharness.textio import read_text

#: The three OpenReview dimensions LigBench scores and debiases, by our (named) keys.
SCORE_DIMENSIONS: tuple[str, ...] = ("rating", "contribution", "soundness")

#: Review scales (low, high) of the OpenReview forms PAIR-IQ draws from, per dimension.
#: ICLR 2024/2025 and NeurIPS 2024: overall rating 1-10, soundness and contribution 1-4.
VENUE_SCALES: dict[str, dict[str, tuple[float, float]]] = {
    "ICLR": {"rating": (1.0, 10.0), "contribution": (1.0, 4.0), "soundness": (1.0, 4.0)},
    "NeurIPS": {"rating": (1.0, 10.0), "contribution": (1.0, 4.0), "soundness": (1.0, 4.0)},
}

#: Venue-year means on 0-5 published by LigBench (projected, before debiasing); "all" is μ_all.
PAPER_VENUE_MEANS: dict[str, dict[str, float]] = {
    "rating": {"ICLR 2024": 2.740, "ICLR 2025": 2.821, "NeurIPS 2024": 2.918, "all": 2.825},
    "contribution": {"ICLR 2024": 2.689, "ICLR 2025": 2.687, "NeurIPS 2024": 2.914, "all": 2.758},
    "soundness": {"ICLR 2024": 2.472, "ICLR 2025": 2.498, "NeurIPS 2024": 2.721, "all": 2.559},
}

SCORE_MAX = 5.0


class PairIQAnalysis(BaseModel):
    """The four-part formalisation of a paper or idea (LigBench Appendix B), by name."""

    model_config = ConfigDict(extra="allow")

    main_target: str = ""
    core_breakthrough: str = ""
    innovative_methods: str = ""
    experimental_design: str = ""

    @field_validator("main_target", "core_breakthrough", "innovative_methods", "experimental_design",
                     mode="before")
    @classmethod
    def _join_lists(cls, value: Any) -> Any:
        if value is None:
            return ""
        if isinstance(value, list):
            return "\n".join(f"{i}. {v}" for i, v in enumerate(value, 1))
        return value

    def text(self) -> str:
        """The formalisation as labelled plain text (what prompts and embeddings see)."""
        return (
            f"Main target: {self.main_target}\n"
            f"Core breakthrough: {self.core_breakthrough}\n"
            f"Innovative methods: {self.innovative_methods}\n"
            f"Experimental design: {self.experimental_design}"
        )


class PairIQRecord(BaseModel):
    """One PAIR-IQ paper with its scores on 0-5.

    ``rating``, ``contribution`` (file key ``contribute``) and ``soundness`` are projected scores in
    [0, 5] (None = unknown); ``novelty`` likewise (None for the release's ``"0"``). ``debiased``
    holds ŝ per dimension once :func:`debias` has run. ``venue`` is ``"<conference> <year>"``,
    the group debiasing averages over. ``id`` defaults to the URL, else ``pairiq-`` + a title hash.
    Unknown file keys are kept in ``extra`` (and written back at top level).
    """

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    id: str = ""
    title: str
    url: str | None = None
    conference: str | None = None
    year: int | None = None
    label: str | None = None
    abstract: str = ""
    keywords: list[str] = Field(default_factory=list)
    primary_area: str | None = Field(default=None, alias="primary area")
    rating: float | None = None
    contribution: float | None = Field(default=None, alias="contribute")
    soundness: float | None = None
    novelty: float | None = None
    analysis: PairIQAnalysis | None = None
    embedding: list[float] | None = None
    debiased: dict[str, float] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("abstract", mode="before")
    @classmethod
    def _abstract(cls, value: Any) -> Any:
        return "" if value is None else value

    @field_validator("keywords", mode="before")
    @classmethod
    def _split_keywords(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            sep = ";" if ";" in value else ","
            return [k.strip() for k in value.split(sep) if k.strip()]
        return value

    @field_validator("rating", "contribution", "soundness", mode="before")
    @classmethod
    def _score(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        number = float(value)
        if not math.isfinite(number) or not 0.0 <= number <= SCORE_MAX:
            raise ValueError(f"score {value!r} outside [0, 5] (project it with project_score first)")
        return number

    @field_validator("novelty", mode="before")
    @classmethod
    def _novelty(cls, value: Any) -> Any:
        # The release writes the string "0": OpenReview has no novelty score (not a real 0).
        if value is None or (isinstance(value, str) and value.strip() in ("", "0")):
            return None
        return cls._score(value)

    @field_validator("year", mode="before")
    @classmethod
    def _year(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip():
            return int(value.strip())
        return value or None

    @model_validator(mode="after")
    def _default_id(self) -> PairIQRecord:
        if not self.id:
            self.id = self.url or "pairiq-" + hashlib.sha256(self.title.encode()).hexdigest()[:12]
        return self

    @property
    def venue(self) -> str:
        """Venue-year group of the record, e.g. ``"ICLR 2024"`` (``"unknown"`` if neither is known)."""
        parts = [p for p in (self.conference, str(self.year) if self.year else None) if p]
        return " ".join(parts) if parts else "unknown"

    def score(self, dimension: str, *, debiased: bool = True) -> float | None:
        """Score of one dimension on 0-5; the debiased ŝ when available and asked for."""
        if dimension not in (*SCORE_DIMENSIONS, "novelty"):
            raise ValueError(f"unknown dimension {dimension!r}; expected one of {SCORE_DIMENSIONS}")
        if debiased and dimension in self.debiased:
            return self.debiased[dimension]
        value: float | None = getattr(self, dimension)
        return value

    def text(self) -> str:
        """Title, abstract and formalisation as one text (for BM25 and embeddings)."""
        parts = [self.title, self.abstract]
        if self.analysis is not None:
            parts.append(self.analysis.text())
        return "\n".join(p for p in parts if p)

    def to_file_dict(self) -> dict[str, Any]:
        """The record in the paper's key spelling (``contribute``, ``primary area``)."""
        data = self.model_dump(by_alias=True, exclude={"extra"}, mode="json")
        data.update(self.extra)
        return data


def project_score(value: float, scale: tuple[float, float] | str) -> float:
    """Project a review score from its venue scale onto LigBench's 0-5 range.

    s = 5 · (v − low) / (high − low)

    LigBench projects OpenReview rating/contribution/soundness to 0-5 but does not publish the
    map; we use this linear min-max map (so 1-10 ratings: 1 → 0, 5.5 → 2.5, 10 → 5; 1-4
    contribution/soundness: 1 → 0, 4 → 5).

    Args:
        value: the score on the venue scale (a mean over reviewers may be fractional).
        scale: ``(low, high)`` or a string ``"low-high"`` such as ``"1-10"``.

    Returns:
        The score in [0, 5].

    Raises:
        ValueError: malformed scale (low >= high) or value outside [low, high].
    """
    low, high = _parse_scale(scale)
    v = float(value)
    if not math.isfinite(v) or not low <= v <= high:
        raise ValueError(f"score {value!r} outside the scale [{low:g}, {high:g}]")
    return SCORE_MAX * (v - low) / (high - low)


def project_venue_scores(raw: dict[str, float | None], conference: str) -> dict[str, float | None]:
    """Project mean review scores of one paper onto 0-5 with the venue's scales (:data:`VENUE_SCALES`).

    Args:
        raw: ``{"rating": mean rating, "contribution": ..., "soundness": ...}`` on the venue's
            scales (None = not reviewed on that dimension; kept as None).
        conference: ``"ICLR"`` or ``"NeurIPS"`` (case-insensitive; a year suffix is ignored).

    Raises:
        ValueError: unknown venue, unknown dimension, or a score outside the venue scale.
    """
    name = next((v for v in VENUE_SCALES if conference.strip().lower().startswith(v.lower())), None)
    if name is None:
        raise ValueError(f"no review scales known for venue {conference!r}; known: {sorted(VENUE_SCALES)}")
    out: dict[str, float | None] = {}
    for dim, value in raw.items():
        if dim not in VENUE_SCALES[name]:
            raise ValueError(f"unknown dimension {dim!r}; expected one of {SCORE_DIMENSIONS}")
        out[dim] = None if value is None else project_score(value, VENUE_SCALES[name][dim])
    return out


def _parse_scale(scale: tuple[float, float] | str) -> tuple[float, float]:
    if isinstance(scale, str):
        pieces = scale.replace("–", "-").split("-")
        if len(pieces) != 2:
            raise ValueError(f"scale {scale!r} must look like '1-10'")
        low, high = float(pieces[0]), float(pieces[1])
    else:
        low, high = float(scale[0]), float(scale[1])
    if not low < high:
        raise ValueError(f"scale low {low:g} must be below high {high:g}")
    return low, high


def venue_means(records: Sequence[PairIQRecord], dimension: str) -> dict[str, float]:
    """Mean projected score of ``dimension`` per venue-year, plus ``"all"`` (μ_all over records).

    Records without that score are skipped; venues with no score are absent.
    """
    sums: dict[str, list[float]] = {}
    for record in records:
        value = getattr(record, dimension)
        if value is not None:
            sums.setdefault(record.venue, []).append(value)
    means = {venue: sum(vals) / len(vals) for venue, vals in sums.items()}
    every = [v for vals in sums.values() for v in vals]
    if every:
        means["all"] = sum(every) / len(every)
    return means


def debias(
    records: Sequence[PairIQRecord],
    *,
    dimensions: Sequence[str] = SCORE_DIMENSIONS,
    means: dict[str, dict[str, float]] | None = None,
) -> list[PairIQRecord]:
    """Venue-debiased scores (LigBench §3): ŝ = s − μ_venue + μ_all, per dimension.

    Args:
        records: projected records (scores on 0-5).
        dimensions: which score fields to debias.
        means: ``{dimension: {venue: μ_venue, "all": μ_all}}``; default computed from ``records``
            (then every venue's mean of ŝ equals μ_all exactly). Pass :data:`PAPER_VENUE_MEANS` to
            use the paper's published means on a small corpus.

    Returns:
        New records with ``debiased[dimension]`` set (not clipped: ŝ may leave [0, 5] slightly).

    Raises:
        ValueError: a record's venue has no mean in the given ``means``.
    """
    out: list[PairIQRecord] = []
    table = {d: (means[d] if means is not None else venue_means(records, d)) for d in dimensions}
    for record in records:
        debiased = dict(record.debiased)
        for dim in dimensions:
            value = getattr(record, dim)
            if value is None:
                continue
            dim_means = table[dim]
            if record.venue not in dim_means or "all" not in dim_means:
                raise ValueError(f"no {dim} mean for venue {record.venue!r} (record {record.id!r})")
            debiased[dim] = value - dim_means[record.venue] + dim_means["all"]
        out.append(record.model_copy(update={"debiased": debiased}))
    return out


_KNOWN_KEYS = set(PairIQRecord.model_fields) | {"primary area", "contribute"}


def record_from_dict(data: dict[str, Any], *, path: object = "<dict>", row: int = 1) -> PairIQRecord:
    """Validate one record in the paper's (or our) key spelling; unknown keys go to ``extra``.

    Raises:
        DataError: naming ``path``, ``row`` and the offending field.
    """
    if not isinstance(data, dict):
        raise DataError(path, f"row {row}: expected a JSON object, got {type(data).__name__}")
    known = {k: v for k, v in data.items() if k in _KNOWN_KEYS and k != "extra"}
    extra = dict(data.get("extra") or {})
    extra.update({k: v for k, v in data.items() if k not in _KNOWN_KEYS})
    if not known.get("title"):
        raise DataError(path, f"row {row}, field 'title': missing or empty")
    try:
        return PairIQRecord.model_validate({**known, "extra": extra})
    except ValidationError as exc:
        field, message = first_error(exc)
        raise DataError(path, f"row {row}, field '{field}': {message}") from None


def load_pairiq(path: str | Path) -> list[PairIQRecord]:
    """Read PAIR-IQ records from a ``.json``/``.jsonl`` file or a directory of them (recursive).

    A directory made by the ``pairiq`` builder is read through its ``pairiq.jsonl`` only; in other
    directories hidden files, ``manifest.json``, ``settings.json`` and ``*.state.jsonl`` are skipped.

    Rows are numbered from 1 within each file (list position for ``.json``, line for ``.jsonl``).
    Record ids default to the URL, else a hash of the title.

    A paper may appear once: two rows with the same id (given, URL or title hash), or with the same
    venue-year, title and abstract (compared case- and whitespace-insensitively, :func:`paper_key`;
    the same submission under two URLs), are refused naming both rows — a repeated reference would
    be drawn twice as often in the comparisons and count twice in the venue means. The same title
    and abstract at two venues is a resubmission, reviewed twice: two records, both kept.

    Raises:
        DataError: missing path, invalid JSON, an invalid record (file, row and field named), a
            repeated paper (both rows named), or no record at all.
    """
    root = Path(path)
    if not root.exists():
        raise DataError(root, "no such file or directory")
    files = record_files(root) if root.is_dir() else [root]
    if not files:
        raise DataError(root, "no .json or .jsonl files found")
    records: list[PairIQRecord] = []
    by_id: dict[str, tuple[Path, int]] = {}
    by_text: dict[str, tuple[Path, int]] = {}
    for file in files:
        for row, data in _rows(file):
            record = record_from_dict(data, path=file, row=row)
            for seen, key, what in ((by_id, record.id, f"id {record.id!r}"),
                                    (by_text, paper_key(record), "venue, title and abstract")):
                if key in seen:
                    first_file, first_row = seen[key]
                    where = f"row {first_row}" if first_file == file else f"{first_file} row {first_row}"
                    raise DataError(file, f"row {row}: repeats the paper of {where} (same {what}: "
                                          f"{record.title[:60]!r}); keep one of the two rows")
                seen[key] = (file, row)
            records.append(record)
    if not records:
        raise DataError(root, "no records (empty file(s))")
    return records


def paper_key(record: PairIQRecord) -> str:
    """What makes two records the same submission besides their id: venue-year, title and
    abstract, lower-cased, runs of whitespace collapsed (so a re-wrapped or re-cased copy still
    matches; a resubmission to another venue does not)."""
    return " ".join(f"{record.venue}\n{record.title}\n{record.abstract}".lower().split())


BUILDER_FILE = "pairiq.jsonl"
_NOT_RECORDS = {"manifest.json", "settings.json"}


def pairiq_files(path: str | Path) -> list[Path]:
    """The files :func:`load_pairiq` reads for ``path`` (the file itself, or those of a directory)."""
    root = Path(path)
    return record_files(root) if root.is_dir() else [root]


def record_files(root: Path) -> list[Path]:
    """Record files under a directory: the builder's ``pairiq.jsonl`` if present, else every
    ``.json``/``.jsonl`` except hidden files, builder state (``*.state.jsonl``) and manifests."""
    if (root / BUILDER_FILE).is_file():
        return [root / BUILDER_FILE]
    return sorted(p for p in root.rglob("*") if p.suffix in (".json", ".jsonl")
                  and not any(part.startswith(".") for part in p.relative_to(root).parts)
                  and p.name not in _NOT_RECORDS and not p.name.endswith(".state.jsonl"))


def _rows(file: Path) -> Iterable[tuple[int, Any]]:
    text = read_text(file)
    if file.suffix == ".jsonl":
        yield from iter_jsonl(file, text=text)
        return
    data = parse_json_document(text, file)
    if isinstance(data, list):
        yield from enumerate(data, 1)
    else:
        yield 1, data


def write_pairiq(records: Iterable[PairIQRecord], path: str | Path) -> Path:
    """Write records as JSONL in the paper's key spelling; returns the path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(dumps_line(record.to_file_dict()) + "\n")
    return out
