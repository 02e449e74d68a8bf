"""IdeaBench CSV files (Guo et al. 2024, arXiv 2411.02429) -> :class:`Instance`, and back.

Published format (``data/dataset/`` of amir-hassan25/IdeaBench, built from Semantic Scholar):

* target papers (``target_papers.csv``): :data:`TARGET_COLUMNS`, optionally ``abstract_summary``
  (the extracted target idea) and a leading unnamed index column (``Unnamed: 0``);
* references (``raw_references.csv`` / ``filtered_references.csv``): :data:`REFERENCE_COLUMNS`.

``publicationTypes``, ``externalIds``, ``contexts`` and ``intents`` hold Python literals written
by pandas (``['JournalArticle']``, ``{'DOI': '10.1/x', 'CorpusId': 12}``) and are parsed with
:func:`ast.literal_eval`; an empty cell or ``nan``/``None`` means unknown (None). Row numbers in
errors count the header as row 1 (as a spreadsheet shows the file). Files are UTF-8 with or
without a byte-order mark (Excel's "CSV UTF-8"); fields may be up to :data:`CSV_FIELD_LIMIT`
characters long. Non-empty cells of columns the format does not define are kept in
``extra["other_columns"]``.

Reference filtering follows the paper's section "Relevance and Significance Based Reference
Filtering" (see :func:`filter_references`); :func:`random_filter` is the seeded random baseline.
"""

from __future__ import annotations

import ast
import csv
import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ideaharness.errors import DataError
from ideaharness.schema import GroundTruth, Instance, Paper, Reference
from ideaharness.textio import iter_utf8_lines

TARGET_COLUMNS: tuple[str, ...] = (
    "paperId",
    "title",
    "abstract",
    "year",
    "venue",
    "citationCount",
    "publicationTypes",
    "externalIds",
    "strategy",
)
REFERENCE_COLUMNS: tuple[str, ...] = (
    "targetPaperId",
    "contexts",
    "intents",
    "isInfluential",
    "paperId",
    "externalIds",
    "title",
    "abstract",
    "venue",
    "year",
    "citationCount",
    "publicationTypes",
)
EXCLUDED_PUBLICATION_TYPES: frozenset[str] = frozenset(
    {"Review", "Editorial", "LettersAndComments", "Book", "News", "Dataset"}
)
"""Non-primary publication types dropped from targets and references (IdeaBench §3.1)."""
NON_BACKGROUND_INTENTS: frozenset[str] = frozenset({"methodology", "result"})
DATASET = "ideabench"
_NULLS = frozenset({"", "nan", "none", "null"})


CSV_FIELD_LIMIT = 64 * 1024 * 1024
"""Largest CSV field read, in characters. Python's default (131,072) refuses real reference files
(a ``contexts`` cell of a much-cited reference runs to 200,000 characters); the bound still stops
a file without closing quotes from being read as one endless field."""


def _read_csv(path: Path, required: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """Rows of a CSV file as ``(row number, {column: text})``; header = row 1.

    Read as UTF-8 with an optional byte-order mark (Excel's "CSV UTF-8" starts with one), decoded
    line by line, so a non-UTF-8 byte is named by its line, its row and its byte offset.
    """
    if csv.field_size_limit() < CSV_FIELD_LIMIT:
        csv.field_size_limit(CSV_FIELD_LIMIT)
    row = 0  # the last row read
    try:
        with path.open("rb") as fh:
            reader = csv.reader(_csv_lines(fh, path, lambda: row + 1), strict=True)
            header = next(reader, None)
            if header is None:
                raise DataError(path, "empty file: no header row")
            row = 1
            names = [h.strip() for h in header]
            if names and (names[0] == "" or names[0].startswith("Unnamed:")):
                names[0] = "\0index"  # the leading unnamed index column pandas writes
            missing = [c for c in required if c not in names]
            if missing:
                raise DataError(path, f"missing required column(s): {', '.join(repr(c) for c in missing)}")
            rows: list[tuple[int, dict[str, str]]] = []
            for row, values in enumerate(reader, start=2):
                if not any(v.strip() for v in values):
                    continue
                if len(values) != len(names):
                    raise DataError(path, f"row {row}: {len(values)} fields, header has {len(names)}")
                rows.append((row, dict(zip(names, values, strict=True))))
    except FileNotFoundError as exc:
        raise DataError(path, "file not found") from exc
    except IsADirectoryError:
        raise DataError(path, "is a directory, expected a file") from None
    except csv.Error as exc:
        raise DataError(path, f"row {row + 1}: cannot parse CSV: {exc}") from exc
    return rows


_LONE_CR = re.compile(r"(?<=\r)(?!\n)")


def _csv_lines(fh: Iterable[bytes], path: Path, row_of: Any) -> Iterator[str]:
    """The text lines of a CSV file opened ``"rb"``, with their line ends, as ``csv.reader`` reads
    a file opened with ``newline=""``: ``"\\n"``, ``"\\r\\n"`` and a lone ``"\\r"`` end a line."""
    for _, line in iter_utf8_lines(fh, path, row_of=row_of):
        yield from (part for part in _LONE_CR.split(line) if part)


def _other_columns(row: dict[str, str], known: Iterable[str]) -> dict[str, str]:
    """Non-empty cells of columns the format does not define (kept, never dropped silently)."""
    skip = {*known, "\0index"}
    return {k: v.strip() for k, v in row.items() if k not in skip and k and not _null(v)}


def _null(value: str | None) -> bool:
    return value is None or value.strip().lower() in _NULLS


def _text(row: dict[str, str], field: str) -> str | None:
    value = row.get(field)
    return None if value is None or _null(value) else value.strip()


def _int(row: dict[str, str], field: str, path: Path, lineno: int) -> int | None:
    value = _text(row, field)
    if value is None:
        return None
    try:
        number = float(value)
        if not math.isfinite(number) or not number.is_integer():
            raise ValueError(value)
    except ValueError:
        raise DataError(path, f"row {lineno}, field {field!r}: not an integer: {value[:40]!r}") from None
    return int(number)


def _literal(row: dict[str, str], field: str, kind: type, path: Path, lineno: int) -> Any:
    value = _text(row, field)
    if value is None:
        return None
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise DataError(
            path, f"row {lineno}, field {field!r}: not a Python {kind.__name__} literal: {value[:60]!r}"
        ) from None
    if parsed is None:
        return None
    if not isinstance(parsed, kind):
        raise DataError(
            path, f"row {lineno}, field {field!r}: expected a {kind.__name__}, got {value[:60]!r}"
        )
    return parsed


def _str_list(row: dict[str, str], field: str, path: Path, lineno: int) -> list[str] | None:
    parsed = _literal(row, field, list, path, lineno)
    if parsed is None:
        return None
    if not all(isinstance(x, str) for x in parsed):
        raise DataError(path, f"row {lineno}, field {field!r}: expected a list of strings")
    return list(parsed)


def _ids(row: dict[str, str], path: Path, lineno: int) -> dict[str, str]:
    parsed = _literal(row, "externalIds", dict, path, lineno) or {}
    return {str(k): str(v) for k, v in parsed.items() if v is not None}


def _bool(row: dict[str, str], field: str, path: Path, lineno: int) -> bool | None:
    value = _text(row, field)
    if value is None:
        return None
    if value.lower() in ("true", "1"):
        return True
    if value.lower() in ("false", "0"):
        return False
    raise DataError(path, f"row {lineno}, field {field!r}: not True/False: {value[:20]!r}")


def load_target_papers(path: str | Path) -> list[Paper]:
    """Read an IdeaBench target-paper CSV into Papers (``extra``: strategy, abstract_summary, row).

    Raises:
        DataError: unreadable/unparsable CSV, missing column(s), an empty ``paperId``, ``title``
            or ``abstract``, a duplicate ``paperId``, or a malformed number/literal — naming the
            file, the row (header = row 1) and the field; a file with no data row.
    """
    path = Path(path)
    papers: list[Paper] = []
    seen: dict[str, int] = {}
    for lineno, row in _read_csv(path, TARGET_COLUMNS):
        for field in ("paperId", "title", "abstract"):
            if _text(row, field) is None:
                raise DataError(path, f"row {lineno}, field {field!r}: empty")
        pid = _text(row, "paperId") or ""
        if pid in seen:
            raise DataError(path, f"row {lineno}, field 'paperId': {pid!r} already in row {seen[pid]}")
        seen[pid] = lineno
        extra: dict[str, Any] = {"row": lineno}
        strategy = _int(row, "strategy", path, lineno)
        if strategy is not None:
            extra["strategy"] = strategy
        summary = _text(row, "abstract_summary")
        if summary is not None:
            extra["abstract_summary"] = summary
        other = _other_columns(row, (*TARGET_COLUMNS, "abstract_summary"))
        if other:
            extra["other_columns"] = other
        papers.append(
            Paper(
                id=pid,
                title=_text(row, "title") or "",
                abstract=_text(row, "abstract"),
                year=_int(row, "year", path, lineno),
                venue=_text(row, "venue"),
                citation_count=_int(row, "citationCount", path, lineno),
                publication_types=_str_list(row, "publicationTypes", path, lineno),
                external_ids=_ids(row, path, lineno),
                extra=extra,
            )
        )
    if not papers:
        raise DataError(path, "no target papers: a header row and no data rows")
    return papers


def load_references(path: str | Path) -> dict[str, list[Reference]]:
    """Read an IdeaBench reference CSV: ``{targetPaperId: [Reference, ...]}`` in file order.

    A reference without ``paperId`` (unresolved in Semantic Scholar) gets the id
    ``f"{targetPaperId}/ref{row}"``.

    Raises:
        DataError: as :func:`load_target_papers`; ``targetPaperId`` must not be empty; a file
            with no data row.
    """
    path = Path(path)
    out: dict[str, list[Reference]] = {}
    for lineno, row in _read_csv(path, REFERENCE_COLUMNS):
        target = _text(row, "targetPaperId")
        if target is None:
            raise DataError(path, f"row {lineno}, field 'targetPaperId': empty")
        other = _other_columns(row, REFERENCE_COLUMNS)
        out.setdefault(target, []).append(
            Reference(
                id=_text(row, "paperId") or f"{target}/ref{lineno}",
                title=_text(row, "title") or "",
                abstract=_text(row, "abstract"),
                year=_int(row, "year", path, lineno),
                venue=_text(row, "venue"),
                citation_count=_int(row, "citationCount", path, lineno),
                publication_types=_str_list(row, "publicationTypes", path, lineno),
                external_ids=_ids(row, path, lineno),
                contexts=_str_list(row, "contexts", path, lineno) or [],
                intents=_str_list(row, "intents", path, lineno) or [],
                is_influential=_bool(row, "isInfluential", path, lineno),
                extra={"row": lineno, **({"other_columns": other} if other else {})},
            )
        )
    if not out:
        raise DataError(path, "no references: a header row and no data rows")
    return out


def load_ideabench(
    targets_csv: str | Path, references_csv: str | Path, domain: str = "biomedical"
) -> list[Instance]:
    """Load IdeaBench target papers with their references as Instances.

    Instance ids are ``ideabench/<paperId>``; ``ground_truth.idea`` is ``abstract_summary`` when
    present (a summary starting with "err occured" — the published code's failure marker — is
    kept only in ``target.extra``). References of unknown targets are ignored; targets without
    references get an empty list (filtering then drops them).

    Raises:
        DataError: see :func:`load_target_papers` and :func:`load_references`.
    """
    targets = load_target_papers(targets_csv)
    refs = load_references(references_csv)
    instances: list[Instance] = []
    for paper in targets:
        summary = paper.extra.get("abstract_summary")
        idea = summary if summary and not summary.lower().startswith("err occured") else None
        instances.append(
            Instance(
                id=f"{DATASET}/{paper.id}",
                dataset=DATASET,
                target=paper,
                references=refs.get(paper.id, []),
                ground_truth=GroundTruth(idea=idea),
                domain=domain,
            )
        )
    return instances


def drop_reason(ref: Reference, min_citations: int = 5) -> str | None:
    """Why IdeaBench's relevance/significance filter drops ``ref``, or None if it is kept.

    Checks in order (IdeaBench, Guo et al. 2024, §3.1 "Relevance and Significance Based
    Reference Filtering"): ``no_abstract``; ``low_citations`` (citation count unknown or
    < ``min_citations``); ``non_primary_type`` (a type in
    :data:`EXCLUDED_PUBLICATION_TYPES`; unknown types are kept); ``not_background`` (no intents,
    or only ``methodology``/``result`` intents — compared as parsed lists; note the published
    script compared serialised strings, so it kept ``['methodology', 'result']``).
    """
    if not ref.abstract or not ref.abstract.strip():
        return "no_abstract"
    if ref.citation_count is None or ref.citation_count < min_citations:
        return "low_citations"
    if ref.publication_types and EXCLUDED_PUBLICATION_TYPES.intersection(ref.publication_types):
        return "non_primary_type"
    if set(ref.intents) <= NON_BACKGROUND_INTENTS:
        return "not_background"
    return None


def filter_references(instance: Instance, min_citations: int = 5, min_references: int = 3) -> Instance | None:
    """IdeaBench's reference filter for one instance.

    Keeps the references :func:`drop_reason` keeps, in order; returns None when fewer than
    ``min_references`` remain (the target is dropped), else a copy with those references and
    ``extra["reference_filter"] = {"kind": "relevance", "min_citations", "min_references",
    "n_before", "n_after"}``.
    """
    kept = [r for r in instance.references if drop_reason(r, min_citations) is None]
    if len(kept) < min_references:
        return None
    out = instance.model_copy(update={"references": kept, "extra": dict(instance.extra)})
    out.extra["reference_filter"] = {
        "kind": "relevance",
        "min_citations": min_citations,
        "min_references": min_references,
        "n_before": len(instance.references),
        "n_after": len(kept),
    }
    return out


class FilterStats(BaseModel):
    """Counts of a filtering pass: targets and references in/out and drops by reason."""

    targets_in: int = 0
    targets_kept: int = 0
    references_in: int = 0
    references_kept: int = 0
    dropped: dict[str, int] = Field(default_factory=dict)
    references_of_kept_targets: int = 0


def filter_stats(
    instances: Iterable[Instance], min_citations: int = 5, min_references: int = 3
) -> FilterStats:
    """Counts for :func:`filter_references` over ``instances`` (references dropped by reason,
    references surviving per target, targets kept; ``references_of_kept_targets`` is the size of
    the filtered reference set)."""
    stats = FilterStats()
    reasons: Counter[str] = Counter()
    for inst in instances:
        stats.targets_in += 1
        kept = 0
        for ref in inst.references:
            stats.references_in += 1
            reason = drop_reason(ref, min_citations)
            if reason is None:
                kept += 1
            else:
                reasons[reason] += 1
        stats.references_kept += kept
        if kept >= min_references:
            stats.targets_kept += 1
            stats.references_of_kept_targets += kept
    stats.dropped = dict(reasons)
    return stats


def random_filter(instance: Instance, k: int, seed: int) -> Instance | None:
    """Random-filtering baseline: keep ``k`` references drawn uniformly without replacement.

    The draw uses ``random.Random(f"{seed}:{instance.id}")``, so it is reproducible per instance
    and independent of the instance order; kept references stay in their original order.
    Returns None when the instance has fewer than ``k`` references.

    Raises:
        ValueError: if ``k`` < 1.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if len(instance.references) < k:
        return None
    rng = random.Random(f"{seed}:{instance.id}")
    chosen = sorted(rng.sample(range(len(instance.references)), k))
    out = instance.model_copy(
        update={"references": [instance.references[i] for i in chosen], "extra": dict(instance.extra)}
    )
    out.extra["reference_filter"] = {"kind": "random", "k": k, "seed": seed, "indices": chosen}
    return out


def _lit(value: Any) -> str:
    return "" if value is None else repr(value)


def _num(value: int | None) -> str:
    return "" if value is None else str(value)


def write_ideabench_csvs(
    instances: Sequence[Instance],
    out_dir: str | Path,
    targets_name: str = "target_papers.csv",
    references_name: str = "raw_references.csv",
) -> tuple[Path, Path]:
    """Write instances in the published IdeaBench CSV format (readable by :func:`load_ideabench`).

    Target rows take ``paperId`` from ``target.id`` and ``strategy`` from ``target.extra``; an
    ``abstract_summary`` column is written when any instance has ``ground_truth.idea``. Lists and
    dicts are written as Python literals, as pandas wrote them.

    Returns:
        (targets path, references path).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with_summary = any(i.ground_truth.idea for i in instances)
    t_path, r_path = out / targets_name, out / references_name
    with t_path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow([*TARGET_COLUMNS, *(["abstract_summary"] if with_summary else [])])
        for inst in instances:
            p = inst.target
            row = [
                p.id,
                p.title,
                p.abstract or "",
                _num(p.year),
                p.venue or "",
                _num(p.citation_count),
                _lit(p.publication_types),
                _lit(p.external_ids),
                _num(p.extra.get("strategy")),
            ]
            w.writerow(row + ([inst.ground_truth.idea or ""] if with_summary else []))
    with r_path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(REFERENCE_COLUMNS)
        for inst in instances:
            for r in inst.references:
                w.writerow(
                    [
                        inst.target.id,
                        _lit(r.contexts),
                        _lit(r.intents),
                        "" if r.is_influential is None else str(r.is_influential),
                        r.id,
                        _lit(r.external_ids),
                        r.title,
                        r.abstract or "",
                        r.venue or "",
                        _num(r.year),
                        _num(r.citation_count),
                        _lit(r.publication_types),
                    ]
                )
    return t_path, r_path
