"""Resolve a ``--data`` argument to benchmark instances.

Accepted forms:

* ``tomato-chem`` — the bundled TOMATO-Chem dataset (51 chemistry papers of 2024, MIT);
* a ``.jsonl`` file of :class:`~ideaharness.schema.Instance` records (our format);
* a directory holding the original IdeaBench CSVs: a target-papers file
  (``target_papers.csv`` or ``ablation_target_papers.csv``) and a references file
  (``raw_references.csv``, ``filtered_references.csv`` or ``ablation_filtered_references.csv``).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from ideaharness.data.textio import read_text
from ideaharness.errors import DataError, UserError
from ideaharness.schema import Instance

BUNDLED = ("tomato-chem",)
_TARGET_FILES = ("target_papers.csv", "ablation_target_papers.csv")
_REFERENCE_FILES = ("raw_references.csv", "filtered_references.csv", "ablation_filtered_references.csv")


def load_instances(spec: str) -> list[Instance]:
    """Instances named by ``spec`` (see the module docstring).

    Raises:
        UserError: unknown name or missing path.
        DataError: a file that does not parse, naming the file, line/row and field.
    """
    if spec == "tomato-chem":
        from ideaharness.data.tomato import load_tomato_chem

        return load_tomato_chem()
    path = Path(spec)
    if not path.exists():
        raise UserError(
            f"--data {spec!r}: no such file or directory; use 'tomato-chem', an Instance JSONL file "
            "or a directory with IdeaBench CSVs"
        )
    if path.is_dir():
        files = ideabench_csv_files(path)
        if files is None:
            raise UserError(
                f"{path}: expected IdeaBench CSVs ({' or '.join(_TARGET_FILES)} and one of "
                f"{', '.join(_REFERENCE_FILES)})"
            )
        from ideaharness.data.ideabench_csv import load_ideabench

        return load_ideabench(*files)
    return load_instances_jsonl(path)


def ideabench_csv_files(directory: Path) -> tuple[Path, Path] | None:
    """(target papers CSV, references CSV) of an IdeaBench folder, or None if either is missing."""
    targets = next((directory / f for f in _TARGET_FILES if (directory / f).exists()), None)
    references = next((directory / f for f in _REFERENCE_FILES if (directory / f).exists()), None)
    return (targets, references) if targets and references else None


def load_instances_jsonl(path: Path) -> list[Instance]:
    """Read Instance records, one JSON object per line; blank lines are skipped."""
    instances: list[Instance] = []
    seen: set[str] = set()
    for lineno, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            instance = Instance.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DataError(
                path, f"line {lineno}: not valid JSON ({exc.msg} at column {exc.colno})"
            ) from None
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            raise DataError(path, f"line {lineno}, field '{field}': {err['msg']}") from None
        if instance.id in seen:
            raise DataError(path, f"line {lineno}, field 'id': duplicate instance id {instance.id!r}")
        seen.add(instance.id)
        instances.append(instance)
    if not instances:
        raise DataError(path, "no instances in the file")
    return instances


def write_instances_jsonl(instances: list[Instance], path: Path) -> None:
    """Write instances in the format :func:`load_instances_jsonl` reads."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for instance in instances:
            fh.write(instance.model_dump_json(exclude_none=True) + "\n")
