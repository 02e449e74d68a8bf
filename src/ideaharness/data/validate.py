"""``ideaharness data validate PATH``: sanity checks of a dataset in any form ``--data`` accepts.

Forms: an Instance JSONL file (or a folder holding ``instances.jsonl``, as the builders write);
the original IdeaBench CSVs (a folder, or one of the CSV files with its partner beside it); a
ResearchBench release folder (any of ``papers/retrieve/generation/ranking.jsonl``); a folder of
ResearchBench ``.xlsx`` sheets or one sheet; an AI Idea Bench ``target_paper_data.json``.

An Instance JSONL is checked line by line (every bad line reported); other forms are loaded with
the benchmark's own loader (its first error is reported as it would stop a run) and the loaded
instances are checked. Errors (exit non-zero): unreadable lines, an invalid instance (an empty
``id`` included), duplicate instance ids, empty target title, no instance at all (what validates
must run), absolute local paths and strings that look like API keys or secrets anywhere in the
data. Warnings: empty abstracts, instances with fewer references than required, duplicate
references inside an instance, lone surrogates (replaced by U+FFFD on load), and the same DOI under
several domains / disciplines — how the real ResearchBench release is shaped (678 rows, 539 DOIs)
and what ``run`` accepts (it notes them; ``--dedupe`` keeps the first), so it is the same rule here.

Every issue has a ``kind``; the report lists errors before warnings and counts each kind, so a
large count of one kind never hides an error behind a display cap.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ideaharness.data.registry import ideabench_csv_files
from ideaharness.data.researchbench_xlsx import normalise_doi
from ideaharness.errors import DataError
from ideaharness.jsonl import decode_input, describe_json_error, first_error, split_lines
from ideaharness.schema import Instance
from ideaharness.textio import read_text, replace_surrogates_in

#: Patterns of strings that look like credentials (provider key formats and key=value pairs).
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("openai-style key", re.compile(r"\bsk-(proj-)?[A-Za-z0-9_-]{20,}")),
    ("github token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}")),
    ("aws access key", re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    ("google api key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("huggingface token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("bearer token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/-]{20,}")),
    (
        "key=value secret",
        re.compile(
            r"(?i)\b(api[_-]?key|x-api-key|secret|password|access[_-]?token)\b[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9_\-]{12,}"
        ),
    ),
)
#: Absolute local paths: common POSIX top-level folders (home, tmp, mnt, ...) and Windows drives.
LOCAL_PATH = re.compile(
    r"(?<![\w/:.])(/(home|Users|root|tmp|work|mnt|var|opt|data)/[^\s\"']+|[A-Za-z]:\\\\[^\s\"']+)"
)


class Issue(BaseModel):
    """One finding: ``level`` error|warning, its ``kind`` (one short name per check, e.g.
    ``duplicate-doi``), where (line / instance id / field) and what."""

    level: str
    where: str
    message: str
    kind: str = "other"


class ValidationReport(BaseModel):
    """Counts and issues of a dataset; ``ok`` is False when any error was found."""

    path: str
    counts: dict[str, Any] = Field(default_factory=dict)
    issues: list[Issue] = Field(default_factory=list)

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.level == "error"]

    @property
    def warnings(self) -> list[Issue]:
        return [i for i in self.issues if i.level == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def ordered(self) -> list[Issue]:
        """Errors first, then warnings, each in the order found."""
        return self.errors + self.warnings

    def kind_counts(self) -> dict[tuple[str, str], int]:
        """(level, kind) -> number of issues, errors first, then by count (largest first)."""
        counts: dict[tuple[str, str], int] = defaultdict(int)
        for issue in self.issues:
            counts[(issue.level, issue.kind)] += 1
        return dict(sorted(counts.items(), key=lambda kv: (kv[0][0] != "error", -kv[1], kv[0][1])))


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")


INSTANCES_FILE = "instances.jsonl"


def dataset_file(path: str | Path) -> Path:
    """The instances file of ``path`` (the file itself, or ``<folder>/instances.jsonl``).

    Raises:
        DataError: nothing to validate there.
    """
    p = Path(path)
    if p.is_dir():
        p = p / INSTANCES_FILE
    if not p.is_file():
        raise DataError(p, "no such file (expected instances.jsonl or a folder holding one, IdeaBench CSVs, "
                           "a ResearchBench release or .xlsx sheets, a target_paper_data.json or a "
                           "HindSight topics file)")
    return p


Row = tuple[str, Any]
"""(where, decoded value): ``line 3`` for a JSONL line, ``instance <id>`` for a loaded instance."""


def _jsonl_rows(file: Path, issues: list[Issue]) -> Iterator[Row]:
    for lineno, line in split_lines(read_text(file)):
        try:
            raw = decode_input(line)
        except json.JSONDecodeError as exc:
            issues.append(Issue(level="error", kind="not-json", where=f"line {lineno}",
                                message=f"not JSON ({describe_json_error(exc)})"))
            continue
        raw, changed = replace_surrogates_in(raw)
        for where in changed:
            issues.append(Issue(level="warning", kind="lone-surrogate",
                                where=f"line {lineno}, field '{where}'",
                                message="lone UTF-16 surrogate (replaced by U+FFFD when loaded)"))
        yield f"line {lineno}", raw


def _loaded(instances: Iterable[Instance]) -> Iterator[Row]:
    for inst in instances:
        yield f"instance {inst.id}", inst.model_dump(mode="json")


def _resolve(path: Path, counts: dict[str, Any]) -> tuple[Path, Iterator[Row] | None]:
    """(the path reported, rows of loaded instances) for every form but an Instance JSONL (None)."""
    from ideaharness.data.researchbench_jsonl import RELEASE_FILES

    if path.suffix.lower() == ".csv" or (path.is_dir() and (
            ideabench_csv_files(path) is not None
            or (not (path / INSTANCES_FILE).is_file() and any(path.glob("*.csv"))))):
        # IdeaBench CSVs, complete or not: the run's loader, so its error (a partner missing) is
        # the one a run would stop with
        from ideaharness.data.registry import load_instances

        return path, _loaded(load_instances(str(path)))
    if path.is_dir() and any((path / f).is_file() for f in RELEASE_FILES):
        from ideaharness.data.researchbench_jsonl import load_release_dir

        release = load_release_dir(path)
        counts.update({"retrieval tasks": len(release.retrieve), "ranking tasks": len(release.ranking)})
        return path, _loaded(release.instances())
    if path.is_dir() and not (path / INSTANCES_FILE).is_file() and any(path.glob("*.xlsx")):
        from ideaharness.data.researchbench_xlsx import load_researchbench_dir

        return path, _loaded(load_researchbench_dir(path).instances)
    if path.is_file() and path.suffix.lower() == ".xlsx":
        from ideaharness.data.researchbench_xlsx import load_researchbench_sheet

        return path, _loaded(load_researchbench_sheet(path, discipline=path.stem, sheet=None))
    if path.is_file() and path.suffix.lower() == ".json":
        from ideaharness.data.aiideabench import load_target_paper_data

        return path, _loaded(load_target_paper_data(path))
    return dataset_file(path), None


def validate_dataset(path: str | Path, *, min_references: int = 3) -> ValidationReport:
    """Validate a dataset in any form ``--data`` accepts (see the module docstring).

    Raises:
        DataError: ``path`` holds nothing to validate.
    """
    given = Path(path)
    if not given.exists():
        raise DataError(given, "no such file or directory")
    counts: dict[str, Any] = {}
    issues: list[Issue] = []
    file = given
    rows: list[Row] = []
    try:
        file, loaded = _resolve(given, counts)
        rows = list(_jsonl_rows(file, issues) if loaded is None else loaded)
    except DataError as exc:  # a loader's first error: reported, as it would stop a run
        issues.append(Issue(level="error", kind="unloadable", where=exc.path, message=exc.detail))
    report = ValidationReport(path=str(file), issues=issues)
    _check_rows(rows, report, min_references)
    report.counts.update(counts)
    report.counts.update(errors=len(report.errors), warnings=len(report.warnings))
    return report


def _check_rows(rows: Iterable[Row], report: ValidationReport, min_references: int) -> None:
    add = report.issues.append
    ids: dict[str, str] = {}
    doi_domains: dict[str, set[str]] = defaultdict(set)
    n_refs = 0
    n_instances = 0
    for row, raw in rows:
        for where, text in _strings(raw, row):
            for name, pattern in SECRET_PATTERNS:
                if pattern.search(text):
                    add(Issue(level="error", kind="secret", where=where,
                              message=f"looks like a secret ({name})"))
            found = LOCAL_PATH.search(text)
            if found:
                add(Issue(level="error", kind="local-path", where=where,
                          message=f"absolute local path {found.group(0)[:80]!r}"))
        if not isinstance(raw, dict):
            add(Issue(level="error", kind="invalid-instance", where=row,
                      message=f"expected a JSON object (an instance), got {type(raw).__name__}"))
            continue
        try:
            inst = Instance.model_validate(raw)
        except ValidationError as exc:
            field, message = first_error(exc)
            add(Issue(level="error", kind="invalid-instance", where=f"{row}, field '{field}'",
                      message=message))
            continue
        n_instances += 1
        where = row if row.startswith("instance ") else f"{row} ({inst.id})"
        if inst.id in ids:
            add(Issue(level="error", kind="duplicate-id", where=where,
                      message=f"duplicate instance id (first on {ids[inst.id]})"))
        ids.setdefault(inst.id, row)
        if not inst.target.title.strip():
            add(Issue(level="error", kind="empty-title", where=f"{where}, field 'target.title'",
                      message="empty"))
        if not (inst.target.abstract or "").strip():
            add(Issue(level="warning", kind="empty-abstract", where=f"{where}, field 'target.abstract'",
                      message="empty"))
        doi = inst.target.external_ids.get("DOI")
        if doi:
            doi_domains[normalise_doi(doi)].add(inst.domain or "")
        n_refs += len(inst.references)
        if len(inst.references) < min_references:
            add(Issue(level="warning", kind="few-references", where=where,
                      message=f"{len(inst.references)} references (< {min_references})"))
        ref_ids = [r.id for r in inst.references]
        if len(ref_ids) != len(set(ref_ids)):
            add(Issue(level="warning", kind="duplicate-reference", where=where,
                      message="the same reference appears twice"))
        for i, ref in enumerate(inst.references):
            if not ref.title.strip():
                add(Issue(level="warning", kind="empty-reference-title",
                          where=f"{where}, field 'references[{i}].title'", message="empty"))
    for doi, domains in sorted(doi_domains.items()):
        if len(domains) > 1:  # the real ResearchBench release: run keeps them (--dedupe: the first)
            names = ", ".join(sorted(d or "-" for d in domains))
            message = f"same DOI in {len(domains)} domains: {names} (run keeps every row; --dedupe the first)"
            add(Issue(level="warning", kind="duplicate-doi", where=f"DOI {doi}", message=message))
    if n_instances == 0 and not any(i.level == "error" for i in report.issues):
        add(Issue(level="error", kind="no-instances", where=report.path,
                  message="no instances: a run of this data would have nothing to run"))
    report.counts = {"instances": n_instances, "references": n_refs}
