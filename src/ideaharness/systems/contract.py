"""Idea contracts: the answer a benchmark accepts from a system, and how it is scored.

Each benchmark that generates registers one :class:`IdeaContract` (``benchmarks/<name>/contract.py``,
at import of the benchmark package) with :func:`register_contract`. The contract names the answer's
fields (a pydantic model, subclass of :class:`IdeaAnswer`), turns an answer into exactly the value
the benchmark's reply parser returns for a model reply (:attr:`IdeaContract.to_parsed`, so a system's
idea is judged by the same code as a generated one) and maps converted file rows onto those fields
(:attr:`IdeaContract.from_row`). Its JSON Schema (:meth:`IdeaContract.json_schema`) is published as
``docs/schemas/<benchmark>.idea.v<N>.json`` and sent in every task (``answer_schema``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ideaharness.errors import ParseError, UserError
from ideaharness.systems.task import GenerationTask

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class IdeaAnswer(BaseModel):
    """The envelope every answer may carry; a benchmark's answer model subclasses it with its
    fields. Unknown fields are refused (``extra="forbid"``), so a misspelt field is a parse failure
    naming it, not a silently empty idea.

    Attributes:
        instance_id: the task's instance id (checked against the task).
        system: the system's name, free text.
        title: the idea's title.
        provenance: free-form: how the system produced it (the file adapter adds
            ``{"source": file, "line": n}``).
        sample_index: which of the instance's tasks it answers (multi-sample benchmarks).
    """

    model_config = ConfigDict(extra="forbid")

    instance_id: str
    system: str | None = None
    title: str | None = None
    provenance: dict[str, Any] | None = None
    sample_index: int | None = None


@dataclass(frozen=True)
class IdeaContract:
    """What one benchmark accepts from a system (see the module docstring).

    Attributes:
        benchmark: the benchmark's registry name.
        version: the answer schema's version; bumped when the schema changes.
        answer: the answer model (subclass of :class:`IdeaAnswer`).
        to_parsed: ``(answer, task) -> parsed`` value, the same the benchmark's reply parser returns
            for a model reply; raises :class:`~ideaharness.errors.ParseError` under the same
            degeneracy rules as generated ideas.
        from_row: ``(converted row, task) -> answer fields`` (the common row vocabulary of
            :mod:`ideaharness.systems.converters`).
        group: how the file adapter picks rows: ``"one"`` (the sample_index-th row of the instance)
            or ``"all"`` (every row of the instance, merged by ``from_rows``).
        from_rows: ``(rows, task) -> answer fields`` for ``group="all"``.
        description: one paragraph for the docs and the schema.
        row_fields: fields of a contract row (``--ideas-format jsonl``) that ``from_row`` reads as
            this benchmark's own besides the answer's fields and ``text`` (IdeaBench's one ``idea``
            per row, MLR-Bench's ``idea``/``proposal``/``stage``): a file whose rows have none of
            these and fit another contract is refused as that benchmark's answers
            (:func:`ideaharness.systems.checks.check_answer_rows`).
        answer_keys: ``rows of one instance (file order) -> per row, the keys of the tasks it
            answers``, for the duplicate check (two rows with a key in common answer the same task:
            refused); default :func:`sample_keys` of each row (the explicit ``sample_index``; a row
            without one answers the instance's next sample by its position, which no other row
            shares).
    """

    benchmark: str
    version: int
    answer: type[IdeaAnswer]
    to_parsed: Callable[[IdeaAnswer, GenerationTask], Any]
    from_row: Callable[[dict[str, Any], GenerationTask], dict[str, Any]]
    group: Literal["one", "all"] = "one"
    from_rows: Callable[[list[dict[str, Any]], GenerationTask], dict[str, Any]] | None = None
    description: str = ""
    row_fields: frozenset[str] = frozenset()
    answer_keys: Callable[[list[dict[str, Any]]], list[tuple[tuple[Any, ...], ...]]] | None = None

    def __post_init__(self) -> None:
        if self.group == "all" and self.from_rows is None:
            raise ValueError(f"contract {self.benchmark}: group 'all' needs from_rows")
        if not issubclass(self.answer, IdeaAnswer):
            raise TypeError(f"contract {self.benchmark}: answer must subclass IdeaAnswer")

    @property
    def own_fields(self) -> frozenset[str]:
        """The answer's fields other than the envelope's (:class:`IdeaAnswer`), plus
        :attr:`row_fields`: what marks a contract row as this benchmark's."""
        return frozenset(self.answer.model_fields) - frozenset(IdeaAnswer.model_fields) | self.row_fields

    @property
    def required_fields(self) -> frozenset[str]:
        """The answer's required fields other than the envelope's."""
        return frozenset(name for name, info in self.answer.model_fields.items()
                         if info.is_required() and name not in IdeaAnswer.model_fields)

    def keys_of(self, rows: list[dict[str, Any]]) -> list[tuple[tuple[Any, ...], ...]]:
        """Per row of one instance's ``rows`` (file order), the tasks it answers (:attr:`answer_keys`,
        default :func:`sample_keys` of each row)."""
        if self.answer_keys is not None:
            return self.answer_keys(rows)
        return [sample_keys(row) for row in rows]

    @property
    def schema_id(self) -> str:
        """``"ideaharness.idea/<benchmark>/v<version>"``."""
        return f"ideaharness.idea/{self.benchmark}/v{self.version}"

    def json_schema(self) -> dict[str, Any]:
        """The answer's JSON Schema (draft 2020-12, from pydantic's ``model_json_schema``) with
        ``$schema``, ``$id`` (:attr:`schema_id`), ``title`` and ``description``."""
        schema = self.answer.model_json_schema()
        return {
            "$schema": JSON_SCHEMA_DIALECT,
            "$id": self.schema_id,
            **schema,
            "title": f"{self.benchmark} idea (v{self.version})",
            "description": self.description or schema.get("description", ""),
        }

    def validate_answer(self, data: Any, task: GenerationTask, *, where: str = "") -> IdeaAnswer:
        """``data`` (a decoded JSON value) as this contract's answer to ``task``.

        Raises:
            ParseError: one line ``"<where>, field 'x': ..."``: not an object, fails the answer
                model (unknown, missing or mistyped field) or names another instance.
        """
        if not isinstance(data, dict):
            raise ParseError(f"{where or _default_where(None, task)}: the answer is not one JSON object "
                             f"(got {type(data).__name__})")
        where = where or _default_where(data.get("provenance"), task)
        try:
            answer = self.answer.model_validate(data)
        except ValidationError as exc:
            raise ParseError(f"{where}, {_first_error(exc)}") from None
        if answer.instance_id != task.instance_id:
            raise ParseError(f"{where}, field 'instance_id': {answer.instance_id!r} answers another instance "
                             f"than the task's {task.instance_id!r}")
        return answer

    def parse(self, text: str, task: GenerationTask, *, where: str = "") -> Any:
        """Answer JSON text -> the parsed value the benchmark records (``to_parsed``'s output).

        ``where`` names the answer in errors; default: the answer's provenance ``source`` with its
        ``where`` (``"ideas.json item 2"``) or ``line`` (``"ideas.jsonl line 3"``), else
        ``"answer of <task_id>"``.

        Raises:
            ParseError: one line ``"<where>, field 'x': ..."``: the text is not one JSON object, the
                object fails the answer model or names another instance, or ``to_parsed`` refuses
                it (degenerate text).
        """
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, TypeError) as exc:
            start = " ".join(str(text).split())[:60]
            raise ParseError(f"{where or _default_where(None, task)}: the answer is not JSON "
                             f"({getattr(exc, 'msg', exc)}; starts {start!r})") from None
        answer = self.validate_answer(data, task, where=where)
        where = where or _default_where(answer.provenance, task)
        try:
            return self.to_parsed(answer, task)
        except ParseError as exc:
            raise ParseError(f"{where}, {exc}") from None
        except ValueError as exc:
            raise ParseError(f"{where}, {exc}") from None


def sample_keys(row: dict[str, Any]) -> tuple[tuple[Any, ...], ...]:
    """``(("sample_index", k),)`` for a row with a whole-number ``sample_index`` k, else ``()`` (a
    row without one answers its instance's sample by position: no key to share)."""
    k = row.get("sample_index")
    if isinstance(k, int) and not isinstance(k, bool):
        return (("sample_index", k),)
    return ()


def field_text(value: Any) -> str | None:
    """A converted row's value as one text, stripped: a list's non-blank items joined by newlines,
    any other value as ``str``; ``None`` when the value is absent or blank."""
    if isinstance(value, list):
        value = "\n".join(str(v) for v in value if str(v).strip())
    if value is None or not str(value).strip():
        return None
    return str(value).strip()


def first_text(row: dict[str, Any], *keys: str) -> str | None:
    """The :func:`field_text` of the first of ``keys`` that is non-blank in ``row``, else ``None``
    (a ``from_row``'s "the row's ``idea``, else its ``text``")."""
    return next((text for text in (field_text(row.get(key)) for key in keys) if text), None)


def joined_text(row: dict[str, Any], *keys: str, sep: str = "\n\n") -> str:
    """The non-blank :func:`field_text` of ``keys`` in ``row``, in that order, joined by ``sep``;
    ``""`` when none is (a ``from_row``'s idea composed from a row's parts)."""
    return sep.join(text for key in keys if (text := field_text(row.get(key))))


def row_texts(row: dict[str, Any], keys: tuple[str, ...]) -> dict[str, str]:
    """The row's non-blank text values of ``keys``, stripped (the envelope fields a ``from_row``
    passes on: ``title``, ``system``, ...)."""
    return {key: row[key].strip() for key in keys if isinstance(row.get(key), str) and row[key].strip()}


def _default_where(provenance: Any, task: GenerationTask) -> str:
    if isinstance(provenance, dict) and provenance.get("source"):
        if isinstance(provenance.get("where"), str) and provenance["where"]:
            return f"{provenance['source']} {provenance['where']}"
        if provenance.get("line") is not None:
            return f"{provenance['source']} line {provenance['line']}"
    return f"answer of {task.task_id}"


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    parts = []
    for err in errors[:3]:
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(answer)"
        kind = err.get("type", "")
        msg = ("unknown field (not in the contract)" if kind == "extra_forbidden"
               else err.get("msg", "invalid"))
        parts.append(f"field {loc!r}: {msg}")
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return "; ".join(parts) + more


_CONTRACTS: dict[str, IdeaContract] = {}
_DISCOVERY: list[Callable[[], None]] = []
"""Callables that import the benchmark packages (which register their contracts at import); the
runner's registry installs its ``discover`` (:func:`set_discovery`), so a process that has not
imported a benchmark yet (a Ray worker) finds its contract."""


def set_discovery(discover: Callable[[], None]) -> None:
    """Install ``discover`` (imports the benchmark packages), called by :func:`get_contract` when a
    contract is not registered yet."""
    if discover not in _DISCOVERY:
        _DISCOVERY.append(discover)


def register_contract(contract: IdeaContract) -> IdeaContract:
    """Register ``contract`` under its benchmark's name (a later one replaces it); returns it."""
    _CONTRACTS[contract.benchmark] = contract
    return contract


def get_contract(benchmark: str) -> IdeaContract:
    """The contract of ``benchmark`` (the benchmark packages are imported first when it is not
    registered yet: :func:`set_discovery`).

    Raises:
        UserError: none is registered (the benchmark cannot score a system's ideas).
    """
    if benchmark not in _CONTRACTS:
        for discover in _DISCOVERY:
            discover()
    try:
        return _CONTRACTS[benchmark]
    except KeyError:
        known = ", ".join(sorted(_CONTRACTS)) or "none"
        raise UserError(f"benchmark {benchmark!r} has no idea contract: it cannot be given a system's ideas "
                        f"(benchmarks with one: {known})") from None


def contracts() -> dict[str, IdeaContract]:
    """Every registered contract, by benchmark name (a copy)."""
    return dict(_CONTRACTS)
