"""Import ideas produced by external systems, so any system can be benchmarked.

Two formats, chosen by the file suffix:

* ``.json`` -- AI-Scientist style ideas (keys ``Name``, ``Title``, ``Motivation``, ``Experiment``, as
  written by AI Idea Bench 2025's ``generate_ideas_fron_papers.py``), either an object
  ``{instance_id: [idea, ...]}`` or a list of ideas each carrying an ``instance_id`` key.
* ``.jsonl`` -- one idea per line: ``instance_id`` plus ``motivation`` and ``experiment_plan``
  (AI-Scientist key names also accepted), optional ``title`` / ``text`` / ``id``.

Every idea becomes an :class:`~ideaharness.schema.Idea` with provenance ``generator = system name``.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from ideaharness.data.jsonl import iter_jsonl, parse_json_document
from ideaharness.data.textio import read_text
from ideaharness.errors import DataError, ParseError
from ideaharness.llm.parsing import check_text
from ideaharness.schema import Idea, Provenance

_MOTIVATION_KEYS = ("motivation", "Motivation")
_PLAN_KEYS = ("experiment_plan", "Experiment", "experiment", "Experiment_Plan", "experiment plan")
_TITLE_KEYS = ("title", "Title", "Name", "name")


def _first(obj: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if obj.get(key):
            return obj[key]
    return None


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        value = "\n".join(str(v) for v in value)
    return str(value).strip() or None


def _model_name(obj: dict[str, Any], path: Path, where: str) -> str | None:
    model = obj.get("model")
    if model is None or isinstance(model, str):
        return model
    raise DataError(path, f"{where}, field 'model': expected text, got {type(model).__name__}")


IMPORTED_MIN_WORDS = 3
"""An imported motivation or plan shorter than this is not an idea (only degenerate text is refused:
the benchmark, not the importer, judges quality)."""


def _real_text(value: str | None, path: Path, where: str, field: str) -> str:
    if not value:
        raise DataError(path, f"{where}, field '{field}': missing or empty")
    try:
        return check_text(value, f"field '{field}'", min_words=IMPORTED_MIN_WORDS)
    except ParseError as exc:
        raise DataError(path, f"{where}, {exc}") from None


def _idea(obj: Any, instance_id: str, k: int, system: str, path: Path, where: str) -> Idea:
    if not isinstance(obj, dict):
        raise DataError(path, f"{where}: expected an object, got {type(obj).__name__}")
    motivation = _real_text(_as_text(_first(obj, _MOTIVATION_KEYS)), path, where, "Motivation")
    plan = _real_text(_as_text(_first(obj, _PLAN_KEYS)), path, where, "Experiment")
    title = _as_text(_first(obj, _TITLE_KEYS))
    text = _as_text(obj.get("text")) or (
        (f"Title: {title}\n" if title else "") + f"Motivation: {motivation}\nExperiment plan: {plan}"
    )
    return Idea(
        id=str(obj.get("id") or f"{instance_id}#{system}#{k}"),
        instance_id=instance_id,
        title=title,
        text=text,
        motivation=motivation,
        experiment_plan=plan,
        provenance=Provenance(generator=system, model=_model_name(obj, path, where), sample_index=k),
    )


def load_external_ideas(
    path: str | Path, *, system: str | None = None, instance_ids: Collection[str] | None = None
) -> dict[str, list[Idea]]:
    """Read external ideas into ``{instance_id: [Idea, ...]}`` (file order kept).

    Args:
        path: a ``.json`` (AI-Scientist style) or ``.jsonl`` file (formats in the module docstring).
        system: name recorded as the ideas' generator; default the file's stem.
        instance_ids: the ids of the dataset's instances; an idea for any other id is refused
            (None: not checked).

    Raises:
        DataError: unreadable file, unknown suffix, no idea at all, or an idea without instance
            id, motivation or experiment plan, or with an instance id not in ``instance_ids``
            (names the line or row and the field).
    """
    path = Path(path)
    system = system or path.stem
    raw = read_text(path)
    out: dict[str, list[Idea]] = {}
    known = set(instance_ids) if instance_ids is not None else None

    def add(obj: Any, instance_id: Any, where: str) -> None:
        if instance_id is None or not str(instance_id).strip():
            raise DataError(path, f"{where}, field 'instance_id': missing or empty")
        if not isinstance(instance_id, str | int):
            kind = type(instance_id).__name__
            raise DataError(path, f"{where}, field 'instance_id': expected text, got {kind}")
        key = str(instance_id).strip()
        if known is not None and key not in known:
            example = f" (ids look like {min(known)!r})" if known else ""
            raise DataError(path, f"{where}, field 'instance_id': unknown instance id {key!r}{example}")
        ideas = out.setdefault(key, [])
        ideas.append(_idea(obj, key, len(ideas), system, path, where))

    if path.suffix == ".jsonl":
        for lineno, obj in iter_jsonl(path, text=raw):
            add(obj, obj.get("instance_id") if isinstance(obj, dict) else None, f"line {lineno}")
    elif path.suffix == ".json":
        data = parse_json_document(raw, path)
        if isinstance(data, dict):
            for instance_id, ideas in data.items():
                items = ideas if isinstance(ideas, list) else [ideas]
                for k, obj in enumerate(items):
                    add(obj, instance_id, f"key {instance_id!r}, idea {k}")
        elif isinstance(data, list):
            for row, obj in enumerate(data):
                add(obj, obj.get("instance_id") if isinstance(obj, dict) else None, f"row {row}")
        else:
            raise DataError(path, "expected an object {instance_id: [ideas]} or a list of ideas")
    else:
        raise DataError(path, "unknown format: use .json (AI-Scientist ideas) or .jsonl")
    if not out:
        raise DataError(path, "no ideas in the file (empty, or only blank lines / an empty list)")
    return out
