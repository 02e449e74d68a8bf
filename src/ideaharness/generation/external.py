"""Ideas of external systems as :class:`~ideaharness.schema.Idea` objects (a reader for scripts).

A run does not use this module: ``--ideas FILE`` is the ``ideas:`` system, whose answers go through
AI Idea Bench's idea contract (:mod:`ideaharness.benchmarks.aiideabench.contract`) like any
system's. This is a thin wrapper over the same pieces for code that wants the ideas of a file at
once: the file is read by :func:`ideaharness.systems.converters.read_idea_rows` (every format it
knows: the contract's JSON Lines, AI-Scientist ``.json``, ...), each row mapped onto motivation and
experiment plan by the contract's ``from_row``.

Only degenerate text is refused here (fewer than :data:`IMPORTED_MIN_WORDS` words, no prose): the
benchmark, not the importer, judges quality; a run checks an answer by the contract's rules.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from ideaharness.errors import DataError, ParseError
from ideaharness.generation.aiideabench import fields_from_row, idea_text
from ideaharness.llm.parsing import check_text
from ideaharness.schema import Idea, Provenance
from ideaharness.systems.converters import read_idea_rows

IMPORTED_MIN_WORDS = 3
"""An imported motivation or plan shorter than this is not an idea."""


def _real_text(value: str | None, path: Path, where: str, field: str) -> str:
    if not value:
        raise DataError(path, f"{where}, field '{field}': missing or empty")
    try:
        return check_text(value, f"field '{field}'", min_words=IMPORTED_MIN_WORDS)
    except ParseError as exc:
        raise DataError(path, f"{where}, {exc}") from None


def _where(row: dict[str, Any]) -> str:
    """The idea's place in its file (``"line 3"``, ``"item 2"``, ``"key 'x', idea 2"``)."""
    where = row.get("_where") or (row.get("provenance") or {}).get("where")
    return str(where) if where else f"line {row.get('_line')}"


def load_external_ideas(
    path: str | Path, *, system: str | None = None, instance_ids: Collection[str] | None = None,
    format: str = "auto",
) -> dict[str, list[Idea]]:
    """Read external ideas into ``{instance_id: [Idea, ...]}`` (file order kept).

    Args:
        path: a file :func:`~ideaharness.systems.converters.read_idea_rows` reads.
        system: name recorded as the ideas' generator; default the file's stem.
        instance_ids: the ids of the dataset's instances; an idea for any other id is refused
            (None: not checked).
        format: the file's format (``"auto"``: detected).

    Raises:
        DataError: what ``read_idea_rows`` raises, an idea without motivation or experiment plan
            or with degenerate text, a ``model`` that is not text, or an instance id not in
            ``instance_ids`` (names the line or item and the field).
    """
    path = Path(path)
    system = system or path.stem
    known = set(instance_ids) if instance_ids is not None else None
    out: dict[str, list[Idea]] = {}
    for row in read_idea_rows(path, format):
        key, where = str(row["instance_id"]).strip(), _where(row)
        if known is not None and key not in known:
            example = f" (ids look like {min(known)!r})" if known else ""
            raise DataError(path, f"{where}, field 'instance_id': unknown instance id {key!r}{example}")
        model = row.get("model")
        if model is not None and not isinstance(model, str):
            raise DataError(path, f"{where}, field 'model': expected text, got {type(model).__name__}")
        ideas = out.setdefault(key, [])
        k = len(ideas)
        fields = fields_from_row(row)
        motivation = _real_text(fields.get("motivation"), path, where, "motivation")
        plan = _real_text(fields.get("experiment_plan"), path, where, "experiment_plan")
        title = fields.get("title")
        text = row.get("text") if isinstance(row.get("text"), str) and row["text"].strip() else None
        ideas.append(Idea(
            id=str(row.get("id") or f"{key}#{system}#{k}"), instance_id=key, title=title,
            text=text or idea_text(motivation, plan, title), motivation=motivation, experiment_plan=plan,
            provenance=Provenance(generator=system, model=model, sample_index=k),
        ))
    return out
