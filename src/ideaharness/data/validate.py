"""``ideaharness data validate PATH``: sanity checks of a built or converted dataset.

Reads ``instances.jsonl`` (a file, or a folder holding one) of :class:`Instance` and reports
counts plus problems. Errors (exit non-zero): unreadable lines, duplicate instance ids, empty
target title, the same DOI under two different domains / disciplines, absolute local paths and
strings that look like API keys or secrets anywhere in the data. Warnings: empty abstracts,
instances with fewer references than required, duplicate references inside an instance.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ideaharness.data.registry import ideabench_csv_files
from ideaharness.data.textio import read_text
from ideaharness.errors import DataError
from ideaharness.schema import Instance

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
    """One finding: ``level`` error|warning, where (line / instance id / field) and what."""

    level: str
    where: str
    message: str


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


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")


def dataset_file(path: str | Path) -> Path:
    """The instances file of ``path`` (the file itself, or ``<folder>/instances.jsonl``).

    Raises:
        DataError: nothing to validate there.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "instances.jsonl"
    if not p.is_file():
        raise DataError(p, "no such file (expected instances.jsonl or a folder holding one)")
    return p


def validate_dataset(path: str | Path, *, min_references: int = 3) -> ValidationReport:
    """Validate a JSONL of :class:`Instance` records, a builder folder holding ``instances.jsonl``,
    or a folder with the original IdeaBench CSVs (rows are then instances in file order); see the
    module docstring for the checks."""
    folder = Path(path)
    csv_files = ideabench_csv_files(folder) if folder.is_dir() else None
    if csv_files is not None:  # original IdeaBench CSVs: check the instances they load into
        from ideaharness.data.ideabench_csv import load_ideabench

        file = folder
        lines = [inst.model_dump_json() for inst in load_ideabench(*csv_files)]
    else:
        file = dataset_file(path)
        lines = read_text(file).split("\n")
    report = ValidationReport(path=str(file))
    add = report.issues.append
    ids: dict[str, int] = {}
    doi_domains: dict[str, set[str]] = defaultdict(set)
    n_refs = 0
    n_instances = 0
    for row, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            add(Issue(level="error", where=f"line {row}", message=f"not JSON ({exc.msg})"))
            continue
        for where, text in _strings(raw, f"line {row}"):
            for name, pattern in SECRET_PATTERNS:
                if pattern.search(text):
                    add(Issue(level="error", where=where, message=f"looks like a secret ({name})"))
            found = LOCAL_PATH.search(text)
            if found:
                add(Issue(level="error", where=where, message=f"absolute local path {found.group(0)[:80]!r}"))
        try:
            inst = Instance.model_validate(raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            add(Issue(level="error", where=f"line {row}, field '{field}'", message=err["msg"]))
            continue
        n_instances += 1
        where = f"line {row} ({inst.id})"
        if inst.id in ids:
            add(
                Issue(
                    level="error",
                    where=where,
                    message=f"duplicate instance id (first on line {ids[inst.id]})",
                )
            )
        ids.setdefault(inst.id, row)
        if not inst.target.title.strip():
            add(Issue(level="error", where=f"{where}, field 'target.title'", message="empty"))
        if not (inst.target.abstract or "").strip():
            add(Issue(level="warning", where=f"{where}, field 'target.abstract'", message="empty"))
        doi = inst.target.external_ids.get("DOI")
        if doi:
            doi_domains[doi.lower()].add(inst.domain or "")
        n_refs += len(inst.references)
        if len(inst.references) < min_references:
            add(
                Issue(
                    level="warning",
                    where=where,
                    message=f"{len(inst.references)} references (< {min_references})",
                )
            )
        ref_ids = [r.id for r in inst.references]
        if len(ref_ids) != len(set(ref_ids)):
            add(Issue(level="warning", where=where, message="the same reference appears twice"))
        for i, ref in enumerate(inst.references):
            if not ref.title.strip():
                add(Issue(level="warning", where=f"{where}, field 'references[{i}].title'", message="empty"))
    for doi, domains in sorted(doi_domains.items()):
        if len(domains) > 1:
            add(
                Issue(
                    level="error",
                    where=f"DOI {doi}",
                    message=f"same DOI in {len(domains)} domains: "
                    + ", ".join(sorted(d or "-" for d in domains)),
                )
            )
    report.counts = {
        "instances": n_instances,
        "references": n_refs,
        "errors": len(report.errors),
        "warnings": len(report.warnings),
    }
    return report
