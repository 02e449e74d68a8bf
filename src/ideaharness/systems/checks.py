"""Checks of a whole ``--ideas`` file against the benchmark it is given to, before a run starts.

Every benchmark's ``--ideas`` (and every ``ideas:FILE`` generator) goes through
:func:`check_ideas_file` in the runner before the run folder is made, so a file refused here
leaves nothing behind; each refusal is one line (:class:`~ideaharness.errors.DataError`, exit 1)
naming the file, the lines (or items) and the field.

* **Another benchmark's answers** (:func:`foreign_benchmark`): a row naming another benchmark's
  contract (a ``contract``, ``schema`` or ``$schema`` field holding ``ideaharness.idea/<name>/v<N>``,
  the id every task carries), ideas read from AI Idea Bench's own output files
  (``{"index", "model_result"}``) given to another benchmark, or a file of contract rows none of
  which holds a field of this benchmark's contract (:attr:`IdeaContract.own_fields` or ``text``)
  while each has exactly another contract's fields (all its required ones, none outside its own).
  Native formats (rows whose ``provenance`` has the converter's ``format``) are read by every
  benchmark as documented and are not refused for their fields.
* **Duplicate answers** (:func:`duplicate_answers`): two rows of one instance that are identical
  (all fields but their place), or that answer the same task (the contract's
  :meth:`IdeaContract.keys_of`: the same ``sample_index``; IdeaBench's ``ideas`` rows of one
  scenario; MLR-Bench's rows of one stage). The run would score the first and ignore the second.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ideaharness.errors import DataError, UserError
from ideaharness.systems.contract import IdeaAnswer, IdeaContract, contracts, get_contract
from ideaharness.systems.converters import INSTANCE_KEYS, read_idea_rows
from ideaharness.systems.spec import IDEAS_PREFIX, split_ideas_spec

__all__ = ["SCHEMA_KEYS", "check_answer_rows", "check_ideas_file", "duplicate_answers", "foreign_benchmark"]

SCHEMA_KEYS = ("contract", "schema", "$schema")
"""Row fields read as the contract a row was written for (a task's ``contract`` value)."""

SCHEMA_ID = re.compile(r"^ideaharness\.idea/([^/]+)/v(\d+)$")
"""A contract's schema id (:attr:`IdeaContract.schema_id`): the benchmark, the version."""

_NOT_ANSWER = frozenset(IdeaAnswer.model_fields) | frozenset(INSTANCE_KEYS) | {"model", *SCHEMA_KEYS}
"""Row fields that say nothing about which benchmark a row was written for."""


def check_ideas_file(spec: str, benchmark: str) -> None:
    """Read the ideas file of ``spec`` (``ideas:PATH[#format=F]`` or a plain path) and check it for
    ``benchmark`` (:func:`check_answer_rows`). A benchmark without an idea contract is not checked
    (its generator refuses a system itself).

    Raises:
        DataError: the file cannot be read or converted
            (:func:`~ideaharness.systems.converters.read_idea_rows`), holds another benchmark's
            answers or a duplicate answer -- one line naming the file, the lines and the field.
        UserError: a malformed spec.
    """
    try:
        path, fmt = split_ideas_spec(spec if spec.startswith(IDEAS_PREFIX) else IDEAS_PREFIX + spec)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    try:
        contract = get_contract(benchmark)
    except UserError:
        return
    check_answer_rows(read_idea_rows(Path(path), fmt), contract, path)


def check_answer_rows(rows: Sequence[dict[str, Any]], contract: IdeaContract, path: str | Path) -> None:
    """Refuse ``rows`` (:func:`~ideaharness.systems.converters.read_idea_rows`' output) for
    ``contract``'s benchmark: another benchmark's answers first (:func:`foreign_benchmark`), then a
    duplicate answer (:func:`duplicate_answers`).

    Raises:
        DataError: one line naming ``path``, the benchmark the file fits or the two rows' places,
            and the field.
    """
    foreign = foreign_benchmark(rows, contract)
    if foreign is not None:
        raise DataError(path, foreign)
    duplicate = duplicate_answers(rows, contract)
    if duplicate is not None:
        raise DataError(path, duplicate)


def _answer_keys(row: dict[str, Any]) -> frozenset[str]:
    return frozenset(k for k in row if not k.startswith("_") and k not in _NOT_ANSWER)


def _native(row: dict[str, Any]) -> bool:
    provenance = row.get("provenance")
    return isinstance(provenance, dict) and "format" in provenance


def _fits(contract: IdeaContract, keys: frozenset[str]) -> bool:
    return bool(keys) and contract.required_fields <= keys <= contract.own_fields | {"text"}


def _schema_hint(contract: IdeaContract) -> str:
    required = ", ".join(sorted(contract.required_fields)) or "its fields"
    return (f"{contract.benchmark}'s answers give {required} (docs/schemas/{contract.benchmark}.idea."
            f"v{contract.version}.json)")


def foreign_benchmark(rows: Sequence[dict[str, Any]], contract: IdeaContract) -> str | None:
    """Why ``rows`` look like answers for another benchmark than ``contract``'s (the message after
    the file's name), or None (module docstring: the three signs).

    Returns:
        ``"this file looks like answers for <benchmark> (fields a, b; line 1), not <this>: ..."``,
        or None when the rows may be this benchmark's.
    """
    name = contract.benchmark
    for row in rows:
        for key in SCHEMA_KEYS:
            value = row.get(key)
            match = SCHEMA_ID.match(value) if isinstance(value, str) else None
            if match and match.group(1) != name:
                return (f"this file looks like answers for {match.group(1)} ({row.get('_where', 'a row')}, "
                        f"field '{key}': {value!r}), not {name}: {_schema_hint(contract)}")
    marked = {row.get("_benchmark") for row in rows}
    if len(marked) == 1 and (other := next(iter(marked))) not in (None, name):
        return (f"this file looks like answers for {other} (its output file: fields index, model_result), "
                f"not {name}: {_schema_hint(contract)}")
    plain = [row for row in rows if not _native(row) and not row.get("_benchmark")]
    if not plain or len(plain) < len(rows):
        return None
    own = contract.own_fields | {"text"}
    others = [c for c in contracts().values() if c.benchmark != name]
    fitting: list[str] | None = None
    for row in plain:
        keys = _answer_keys(row)
        if keys & own:
            return None
        names = [c.benchmark for c in others if _fits(c, keys)]
        if not names:
            return None
        fitting = names if fitting is None else [n for n in fitting if n in names] or fitting
    first = plain[0]
    fields = ", ".join(sorted(_answer_keys(first)))
    who = " or ".join(sorted(fitting or []))
    return (f"this file looks like answers for {who} (fields {fields}; {first.get('_where', 'row 1')} and "
            f"every other row), not {name}: {_schema_hint(contract)}")


def _content(row: dict[str, Any]) -> str:
    """A row's answer without its place (``_line``, ``_where``, ``_source``, provenance ``where``)."""
    body = {k: v for k, v in row.items() if not k.startswith("_")}
    if isinstance(body.get("provenance"), dict):
        body["provenance"] = {k: v for k, v in body["provenance"].items() if k != "where"}
    return json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)


def _place(row: dict[str, Any]) -> str:
    return str(row.get("_where") or f"line {row.get('_line')}")


def _places(a: dict[str, Any], b: dict[str, Any]) -> str:
    wa, wb = _place(a), _place(b)
    if wa.startswith("line ") and wb.startswith("line ") and "," not in wa + wb:
        return f"lines {wa.removeprefix('line ')} and {wb.removeprefix('line ')}"
    return f"{wa} and {wb}"


def _task_text(key: tuple[Any, ...]) -> str:
    field, value = key[0], key[1]
    if field == "ideas":
        return f", both with field 'ideas' (scenario {value!r})"
    return f", field '{field}' {value!r}"


def duplicate_answers(rows: Iterable[dict[str, Any]], contract: IdeaContract) -> str | None:
    """The first duplicate answer of ``rows`` for ``contract`` (the message after the file's name),
    or None: two rows of one ``instance_id`` that are identical but for their place, or that share
    a task key (:meth:`IdeaContract.keys_of`).

    Returns:
        ``"lines 1 and 3 give the same answer twice (field 'instance_id' 'x', ...): ..."`` or
        ``"lines 1 and 3 answer the same task differently (...)"``.
    """
    by_instance: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_instance.setdefault(str(row.get("instance_id")), []).append(row)
    found: list[tuple[int, int, str]] = []  # (line of the later row, kind, message): the first line wins
    for iid, group in by_instance.items():
        seen: dict[str, dict[str, Any]] = {}
        for row in group:
            first = seen.setdefault(_content(row), row)
            if first is not row:
                found.append((_order(row), 0, f"{_places(first, row)} give the same answer twice (field "
                              f"'instance_id' {iid!r}): a file holds one answer per task; delete one"))
                break
        tasks: dict[tuple[Any, ...], dict[str, Any]] = {}
        for row, keys in zip(group, contract.keys_of(group), strict=True):
            clash = next((key for key in keys if tasks.setdefault(key, row) is not row), None)
            if clash is not None:
                found.append((_order(row), 1, f"{_places(tasks[clash], row)} answer the same task "
                              f"differently (field 'instance_id' {iid!r}{_task_text(clash)}): a file holds "
                              "one answer per task; keep the one to score and delete the other"))
                break
    return min(found)[2] if found else None


def _order(row: dict[str, Any]) -> int:
    line = row.get("_line")
    return line if isinstance(line, int) else 0
