"""AI Idea Bench 2025 data: the published ``target_paper_data.json``, decomposition, TOMATO-Chem mapping.

Qiu et al. 2025 (arXiv 2504.14191); schema as used by the published code (``yansheng-qiu/
AI_Idea_Bench_2025``, see research/seed-benchmarks.md section 2.2). Per record: ``index``,
``target_paper``, ``summary`` = {``topic``, ``revised_topic`` (may be null), ``motivation``,
``method`` = {``targeted_designs_summary``, ``targeted_designs_details``: [{``design_name``,
``description``, ``problems_solved``}], ``datasets``, ``metrics``}, ``split_topic``: [{``rank``,
``keyword``, ``explanation``}]}, ``find_cite`` = {``top_references``: [{``title``, ``paper_local_path``,
...}]}. Topic = ``revised_topic`` if present else ``topic``; the ground-truth experiment plan is the
``design_name: description`` lines.

For datasets built from text (TOMATO-Chem) the ground truth is produced by an LLM decomposition of
the target (topic, motivation, experiment plan), recorded like every other LLM step; that step lives in
:mod:`ideaharness.benchmarks.aiideabench.decompose` (this loader never calls a model).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from ideaharness.errors import DataError
from ideaharness.jsonl import load_json
from ideaharness.schema import GroundTruth, Instance, Paper, Reference

DATASET = "aiideabench"
DEFAULT_CUTOFF = dt.date(2023, 10, 3)

def _field(record: dict[str, Any], key: str, where: str, path: Path, row: int, kind: type | tuple) -> Any:
    if not isinstance(record, dict):
        owner = where.rstrip(".") or "(record)"
        raise DataError(path, f"row {row}, field '{owner}': expected an object, got {type(record).__name__}")
    if key not in record:
        raise DataError(path, f"row {row}, field '{where}{key}': missing")
    value = record[key]
    if not isinstance(value, kind):
        raise DataError(path, f"row {row}, field '{where}{key}': expected {_kind(kind)}, "
                              f"got {type(value).__name__}")
    return value


def experiment_plan_from_designs(designs: list[dict[str, Any]]) -> str:
    """The ground-truth plan of the published code: one ``design_name: description`` line per design."""
    lines = (f"{d.get('design_name', '').strip()}: {d.get('description', '').strip()}" for d in designs)
    return "\n".join(lines)


def load_target_paper_data(
    path: str | Path, *, cutoff: dt.date = DEFAULT_CUTOFF, limit: int | None = None
) -> list[Instance]:
    """Load AI Idea Bench 2025's ``target_paper_data.json`` into instances.

    Args:
        path: the JSON file (a list of records in the published schema).
        cutoff: knowledge cutoff of every instance (the paper's 2023-10-03 by default).
        limit: keep only the first ``limit`` records.

    Returns:
        One :class:`Instance` per record: ``topic`` (revised topic if present), ``ground_truth``
        motivation and experiment plan, ``references`` = the top references (inspiration papers),
        ``extra["keywords"]`` = split_topic keywords by rank.

    Raises:
        DataError: unreadable file or a record lacking a field (names the row and field).
    """
    path = Path(path)
    data = load_json(path)
    if not isinstance(data, list):
        raise DataError(path, "expected a JSON list of target-paper records")
    instances: list[Instance] = []
    seen: dict[str, int] = {}
    for row, record in enumerate(data[:limit] if limit else data):
        index = _field(record, "index", "", path, row, (int, str))
        if isinstance(index, bool) or not str(index).strip():
            raise DataError(path, f"row {row}, field 'index': expected a number or a non-empty text")
        if str(index) in seen:
            raise DataError(path, f"row {row}, field 'index': {index!r} already used in row "
                                  f"{seen[str(index)]}")
        seen[str(index)] = row
        title = _field(record, "target_paper", "", path, row, str)
        summary = _field(record, "summary", "", path, row, dict)
        revised = _optional(summary, "revised_topic", "summary.", path, row, str)
        topic = revised or _field(summary, "topic", "summary.", path, row, str)
        motivation = _field(summary, "motivation", "summary.", path, row, str)
        method = _field(summary, "method", "summary.", path, row, dict)
        designs = _field(method, "targeted_designs_details", "summary.method.", path, row, list)
        for k, d in enumerate(designs):
            for key in ("design_name", "description"):
                _field(d, key, f"summary.method.targeted_designs_details[{k}].", path, row, str)
        references = [
            Reference(id=f"{index}-ref{k}", title=ref["title"], abstract=ref.get("abstract"),
                      extra={key: v for key, v in ref.items() if key not in ("title", "abstract")})
            for k, ref in enumerate(_top_references(record, path, row))
        ]
        instances.append(
            Instance(
                id=f"aiib-{index}",
                dataset=DATASET,
                target=Paper(id=str(index), title=title, extra={"path": record.get("target_paper_path")}),
                references=references,
                research_question=topic,
                topic=topic,
                ground_truth=GroundTruth(
                    motivation=motivation, experiment_plan=experiment_plan_from_designs(designs)
                ),
                knowledge_cutoff=cutoff,
                extra={
                    "keywords": _keywords(summary, path, row),
                    "original_topic": summary.get("topic"),
                    "datasets": method.get("datasets"),
                    "metrics": method.get("metrics"),
                },
            )
        )
    return instances


def _optional(record: dict[str, Any], key: str, where: str, path: Path, row: int, kind: type | tuple) -> Any:
    value = record.get(key)
    if value is not None and not isinstance(value, kind):
        raise DataError(path, f"row {row}, field '{where}{key}': expected {_kind(kind)}, "
                              f"got {type(value).__name__}")
    return value


def _kind(kind: type | tuple) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {"str": "text", "int": "a number", "list": "a list", "dict": "an object"}
    return " or ".join(names.get(k.__name__, k.__name__) for k in kinds)


def _keywords(summary: dict[str, Any], path: Path, row: int) -> list[str]:
    """``split_topic`` keywords ordered by ``rank`` (an integer, or text holding one)."""
    split = _optional(summary, "split_topic", "summary.", path, row, list) or []
    ranked: list[tuple[int, int, str]] = []
    for k, item in enumerate(split):
        where = f"summary.split_topic[{k}]."
        if not isinstance(item, dict):
            raise DataError(path, f"row {row}, field 'summary.split_topic[{k}]': expected an object, "
                                  f"got {type(item).__name__}")
        keyword = _optional(item, "keyword", where, path, row, str)
        rank = item.get("rank", 0)
        try:
            if isinstance(rank, bool) or (isinstance(rank, float) and not rank.is_integer()):
                raise ValueError(rank)
            number = int(rank) if isinstance(rank, int | float) else int(str(rank).strip())
        except (TypeError, ValueError):
            raise DataError(path, f"row {row}, field '{where}rank': expected an integer, "
                                  f"got {rank!r}") from None
        if keyword and keyword.strip():
            ranked.append((number, k, keyword))
    return [keyword for _, _, keyword in sorted(ranked)]


def _top_references(record: dict[str, Any], path: Path, row: int) -> list[dict[str, Any]]:
    """``find_cite.top_references`` checked: objects with a text ``title`` and text-or-null ``abstract``."""
    find_cite = _optional(record, "find_cite", "", path, row, dict) or {}
    refs = _optional(find_cite, "top_references", "find_cite.", path, row, list) or []
    for k, ref in enumerate(refs):
        where = f"find_cite.top_references[{k}]."
        _field(ref, "title", where, path, row, str)
        _optional(ref, "abstract", where, path, row, str)
    return refs


def inspiration_text(reference: Reference) -> str:
    """Text of an inspiration paper used by IMCQ and generation: its digest if any, else title + abstract."""
    digest = reference.extra.get("digest")
    if isinstance(digest, dict) and digest.get("idea"):
        return str(digest["idea"])
    if reference.abstract:
        return f"{reference.title}. {reference.abstract}"
    return reference.title


def needs_decomposition(instance: Instance) -> bool:
    """True when the instance lacks a ground-truth motivation or experiment plan."""
    gt = instance.ground_truth
    return not (gt.motivation and gt.experiment_plan)


def from_tomato(instances: list[Instance], *, cutoff: dt.date = DEFAULT_CUTOFF) -> list[Instance]:
    """Map TOMATO-Chem instances to AI Idea Bench: topic = background question, inspirations = refs.

    The ground-truth motivation and plan are still missing afterwards; the benchmark's decomposition
    step (:mod:`ideaharness.benchmarks.aiideabench.decompose`) fills them from background +
    hypothesis. An instance's own ``knowledge_cutoff`` wins over ``cutoff``.
    """
    out = []
    for inst in instances:
        topic = inst.topic or inst.research_question
        if not topic:
            raise DataError(inst.dataset, f"instance {inst.id}, field 'research_question': empty")
        update = {"topic": topic, "knowledge_cutoff": inst.knowledge_cutoff or cutoff}
        out.append(inst.model_copy(update=update))
    return out
