"""Resolve a ``--data`` argument to benchmark instances.

Accepted forms:

* ``tomato-chem`` — the bundled TOMATO-Chem dataset (51 chemistry papers of 2024, MIT);
* a ``.jsonl`` file of :class:`~ideaharness.schema.Instance` records (our format);
* a directory holding the original IdeaBench CSVs: a target-papers file
  (``target_papers.csv`` or ``ablation_target_papers.csv``) and a references file
  (``raw_references.csv``, ``filtered_references.csv`` or ``ablation_filtered_references.csv``);
* one of those CSV files: it is read with its partner from the same folder (a references file
  named as ``--data`` is the one used);
* a directory holding ``instances.jsonl`` and no IdeaBench CSVs (a builder's output folder).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ideaharness.errors import DataError, UserError
from ideaharness.jsonl import iter_jsonl_models
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
    jsonl = folder_instances(path)
    if jsonl is not None:
        return load_instances_jsonl(jsonl)
    if path.is_dir() or path.suffix.lower() == ".csv":
        from ideaharness.data.ideabench_csv import load_ideabench

        return load_ideabench(*_csv_pair(path))
    return load_instances_jsonl(path)


INSTANCES_FILE = "instances.jsonl"


def folder_instances(path: Path) -> Path | None:
    """``<path>/instances.jsonl`` for a folder that holds one and no IdeaBench CSVs (what the
    dataset builders write beside their CSVs, and what ``data validate`` reads there), else None."""
    if path.is_dir() and ideabench_csv_files(path) is None and (path / INSTANCES_FILE).is_file():
        return path / INSTANCES_FILE
    return None


def data_files(spec: str) -> list[Path]:
    """The files :func:`load_instances` reads for ``spec`` (to hash them into a run's identity).

    Raises:
        UserError: as :func:`load_instances`, for a spec that names nothing loadable.
    """
    if spec == "tomato-chem":
        from ideaharness.data.tomato import BUNDLED_FILE, bundled_path

        return [bundled_path(BUNDLED_FILE)]
    path = Path(spec)
    jsonl = folder_instances(path)
    if jsonl is not None:
        return [jsonl]
    if path.is_dir() or path.suffix.lower() == ".csv":
        return list(_csv_pair(path))
    return [path]


def ideabench_csv_files(directory: Path) -> tuple[Path, Path] | None:
    """(target papers CSV, references CSV) of an IdeaBench folder, or None if either is missing."""
    targets = next((directory / f for f in _TARGET_FILES if (directory / f).exists()), None)
    references = next((directory / f for f in _REFERENCE_FILES if (directory / f).exists()), None)
    return (targets, references) if targets and references else None


def _csv_pair(path: Path) -> tuple[Path, Path]:
    """(targets, references) for an IdeaBench folder or one of its CSV files."""
    folder = path if path.is_dir() else path.parent
    found = ideabench_csv_files(folder)
    if found is None or (not path.is_dir() and path.name not in _TARGET_FILES + _REFERENCE_FILES):
        raise UserError(
            f"{path}: expected IdeaBench CSVs ({' or '.join(_TARGET_FILES)} and one of "
            f"{', '.join(_REFERENCE_FILES)}) in {folder}"
        )
    if path.is_file() and path.name in _REFERENCE_FILES:
        return found[0], path
    return found


def iter_instances_jsonl(path: Path) -> Iterator[Instance]:
    """Instance records, one JSON object per line, yielded one at a time as the file is read
    (see :mod:`ideaharness.jsonl`); memory holds one instance plus the ids seen so far.

    Raises:
        DataError: (when the bad line is reached) invalid JSON, an invalid or duplicate instance
            (names line and field), or no instance at all.
    """
    seen: set[str] = set()
    for lineno, instance in iter_jsonl_models(path, Instance, noun="an instance"):
        if instance.id in seen:
            raise DataError(path, f"line {lineno}, field 'id': duplicate instance id {instance.id!r}")
        seen.add(instance.id)
        yield instance
    if not seen:
        raise DataError(path, "no instances in the file")


def load_instances_jsonl(path: Path) -> list[Instance]:
    """All instances of :func:`iter_instances_jsonl` in a list (same errors)."""
    return list(iter_instances_jsonl(path))


def write_instances_jsonl(instances: list[Instance], path: Path) -> None:
    """Write instances in the format :func:`load_instances_jsonl` reads."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for instance in instances:
            fh.write(instance.model_dump_json(exclude_none=True) + "\n")
