"""``ideaharness data validate`` of HindSight data: a topics file (JSON Lines, optionally ``.gz``)
or a build folder holding ``topics.jsonl``, checked with the run's own loader
(:func:`.topics.load_topics`: its first error is reported as it would stop a run), then every
string scanned for API-key-like strings and absolute local paths as for any dataset
(:data:`ideaharness.data.validate.SECRET_PATTERNS`, :data:`~ideaharness.data.validate.LOCAL_PATH`).
Warnings: a topic without pool papers (its ideas can only match through ``--corpus`` or
``--search``) or without literature (a grounded generator sees the topic alone)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ideaharness.benchmarks.hindsight.topics import load_topics
from ideaharness.data.builders.hindsight import TOPICS_FILE
from ideaharness.data.validate import LOCAL_PATH, SECRET_PATTERNS, Issue, ValidationReport
from ideaharness.errors import DataError
from ideaharness.jsonl import iter_jsonl


def topics_file(path: str | Path) -> Path | None:
    """The HindSight topics file ``path`` is (a folder holding ``topics.jsonl`` and no
    ``instances.jsonl``, or a JSON Lines file whose first row has ``topic`` and no ``target``),
    else None (another form, or nothing readable: the generic validation reports it)."""
    p = Path(path)
    if p.is_dir():
        found = (p / TOPICS_FILE).is_file() and not (p / "instances.jsonl").is_file()
        return p / TOPICS_FILE if found else None
    if not p.is_file() or not p.name.lower().endswith((".jsonl", ".jsonl.gz")):
        return None
    try:
        first = next((value for _, value in iter_jsonl(p)), None)
    except DataError:
        return None
    return p if isinstance(first, dict) and "topic" in first and "target" not in first else None


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{where}[{i}]")


def validate_topics(path: str | Path) -> ValidationReport:
    """Validate a HindSight topics file (see the module docstring); ``counts``: topics, literature
    and pool papers, errors, warnings.

    Raises:
        DataError: no topics file at ``path`` (:func:`topics_file` is None).
    """
    file = topics_file(path)
    if file is None:
        raise DataError(Path(path), "not a HindSight topics file or build folder")
    report = ValidationReport(path=str(file), issues=[])
    add = report.issues.append
    try:
        topics = load_topics(str(file))
    except DataError as exc:
        add(Issue(level="error", kind="unloadable", where=exc.path, message=exc.detail))
        topics = []
    for topic in topics:
        where = f"topic {topic.id}"
        for field, text in _strings(topic.model_dump(mode="json"), ""):
            for name, pattern in SECRET_PATTERNS:
                if pattern.search(text):
                    add(Issue(level="error", kind="secret", where=f"{where}, field '{field}'",
                              message=f"looks like a secret ({name})"))
            found = LOCAL_PATH.search(text)
            if found:
                add(Issue(level="error", kind="local-path", where=f"{where}, field '{field}'",
                          message=f"absolute local path {found.group(0)[:80]!r}"))
        if not topic.future:
            add(Issue(level="warning", kind="empty-pool", where=where,
                      message="no pool paper: its ideas can only match through --corpus or --search"))
        if not topic.literature:
            add(Issue(level="warning", kind="no-literature", where=where,
                      message="no literature: a grounded generator sees the topic alone"))
    report.counts = {"topics": len(topics), "literature": sum(len(t.literature) for t in topics),
                     "pool": sum(len(t.future) for t in topics), "errors": len(report.errors),
                     "warnings": len(report.warnings)}
    return report
