"""Idea files written by idea-generation systems, read into the common row vocabulary.

A *row* is a dict with ``instance_id`` (text), optional ``sample_index``, ``system``, ``title``,
``provenance`` and any of ``text``, ``motivation``, ``experiment_plan``, ``hypothesis``,
``problem``, ``method``, ``abstract``, ``related_work``, ``risks``; every row also carries
``_line`` (1-based line of a JSON Lines file, or 1-based position of the idea in a JSON file),
``_where`` (the idea's place for messages: ``"line 3"``, ``"item 2"``, ``"key 'x', idea 2"``) and
``_source`` (the file). A benchmark's idea contract (:mod:`ideaharness.systems.contract`) turns a
row into its answer; nothing here judges quality (empty or degenerate text is the contract's parse
failure of that one unit). Native rows also carry ``provenance``: ``format``, ``where`` (as
``_where``) and the system's own metadata (its scores, the idea's short name).

Mapping (native field -> row field; ``text`` is the labelled fields joined, unless given):

* aiscientist: Title (else Name) -> title, Motivation -> motivation, Experiment ->
  experiment_plan; Name, Interestingness, Feasibility, Novelty, novel, Score -> provenance.
* aiscientist-v2: Title (else Name) -> title, Short Hypothesis -> hypothesis, Related Work ->
  related_work, Abstract -> abstract, Experiments -> experiment_plan, Risk Factors and
  Limitations -> risks (a list becomes one item per line); Name -> provenance.
* ai-researcher: target -> title, task1 -> text and method, task2 -> problem, abstract ->
  abstract; url, year, venue -> provenance. Agent cache: the last assistant message -> text.
* researchagent: problem -> problem, problem_rationale -> motivation, method -> method,
  experiment -> experiment_plan (method/experiment rationales only in text); paper title and the
  reviewers' ratings (``*_feedbacks``) -> provenance.
* moose-chem: the hypothesis -> hypothesis and text; average score, scores, inspiration, round
  (evaluate.py), matched inspirations and score (expert files; never the ground truth) ->
  provenance.

Formats (:data:`FORMATS`; ``--ideas-format``, ``ideas:FILE#format=NAME``):

* ``jsonl`` -- rows of the contract vocabulary as they are (a benchmark's own answer fields, e.g.
  ``ideas``, pass through; a text ``model`` is also ``provenance.model``; the instance id may be
  spelled ``task_id`` as in MLR-Bench's files); JSON Lines, a JSON list of rows, or
  ``{instance_id: row | [rows]}``.
* ``aiscientist`` -- AI-Scientist v1 (SakanaAI/AI-Scientist ``ideas.json`` / ``seed_ideas.json``:
  ``Name``, ``Title``, ``Experiment``, ``Interestingness``, ``Feasibility``, ``Novelty``,
  ``novel``; also the lowercase ``name``, ``title``, ``motivation``, ``experiment`` /
  ``experiment_plan``) and AI Idea Bench 2025's variant with ``Motivation``, including its output
  files (``[{"index": i, "model_result": [ideas]}]``, instance id ``aiib-<i>``: the id ideaharness
  gives the AI Idea Bench target paper ``index`` i).
* ``aiscientist-v2`` -- AI-Scientist-v2 ideation (``Name``, ``Title``, ``Short Hypothesis``,
  ``Related Work``, ``Abstract``, ``Experiments``, ``Risk Factors and Limitations``).
* ``ai-researcher`` -- HKUDS/AI-Researcher: a benchmark proposal (``instance_id``, ``target``,
  ``task1`` the detailed idea, ``task2`` the problem) or an agent cache file
  (``{"messages": [...], "context_variables": {...}}``; the idea is the last assistant message).
* ``researchagent`` -- ResearchAgent (Baek et al. 2024; ``results/ideas.jsonl`` of its code:
  ``problem``, ``problem_rationale``, ``method``, ``method_rationale``, ``experiment``,
  ``experiment_rationale``, ``paper``, ``*_feedbacks``, ``history``).
* ``moose-chem`` -- MOOSE-Chem: ``Method/evaluate.py`` output (``[ranked, ...]``, ranked =
  ``{background question: [[hypothesis, average score, scores, inspiration, round, ids], ...]}``,
  best first), the ranked object alone, ``Method/hypothesis_generation.py`` output
  (``{question: {inspiration: {mutation id: [[hypothesis, reasoning, feedback, ...], ...]}}}``, the
  last hypothesis of each chain), the expert-evaluation files (``{background id: [[hypothesis,
  ground truth, ...], ...]}``) or ``{instance_id: hypothesis text}``. The key is the instance id.
* ``auto`` -- detected: ``.jsonl``/``.ndjson`` is JSON Lines, anything else one JSON document
  (JSON Lines when it holds several values); then, in this order, a MOOSE-Chem document shape;
  else the keys of every idea: ``task1``/``messages`` (ai-researcher), ``Short Hypothesis`` /
  ``Experiments`` / ``Risk Factors and Limitations`` (aiscientist-v2), ``*_rationale`` /
  ``experiment`` with ``problem`` or ``method`` (researchagent), ``Experiment`` or ``Motivation``
  with ``Title`` or ``Name`` (aiscientist), none of these (jsonl). Ideas of two formats in one
  file: a one-line error asking for ``--ideas-format``.

Native ideas rarely carry an instance id: a file is ``{instance_id: idea | [ideas]}``, a list of
ideas each with ``instance_id`` (also ``instanceId``, ``instance``, ``sample_id``, ``task_id``), or
JSON Lines of either. Errors are one line naming the file, the line (JSON Lines) or item / key, and the field.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ideaharness.errors import DataError
from ideaharness.jsonl import decode_input, iter_jsonl, parse_json_document
from ideaharness.textio import decode_utf8, read_text

__all__ = ["FORMATS", "VOCABULARY", "Converter", "read_idea_rows"]

VOCABULARY = ("instance_id", "sample_index", "system", "title", "provenance", "text", "motivation",
              "experiment_plan", "hypothesis", "problem", "method", "abstract", "related_work",
              "risks")
"""The common row fields (plus ``_line``, ``_where`` and ``_source``); other fields pass through."""

TEXT_FIELDS = ("system", "title", "text", "motivation", "experiment_plan", "hypothesis", "problem",
               "method", "abstract", "related_work", "risks")
INSTANCE_KEYS = ("instance_id", "instanceId", "instance", "sample_id", "task_id")
"""Names of the instance id in a row or native idea, first found wins (``task_id``: MLR-Bench's own
``--ideas`` files and its published ideas)."""
AI_IDEA_BENCH_PREFIX = "aiib-"
"""AI Idea Bench 2025 output names a target paper by its dataset ``index``; ideaharness's AI Idea
Bench instance of that paper is ``aiib-<index>``."""
AI_IDEA_BENCH = "aiideabench"
"""The benchmark whose output files (``{"index", "model_result"}``) the converters read: their rows carry
``_benchmark`` (its name), so another benchmark refuses them (:mod:`ideaharness.systems.checks`)."""
_Where = str


@dataclass(frozen=True)
class Converter:
    """One native format: how to recognise one of its ideas and turn it into row fields."""

    name: str
    summary: str
    """One line for documentation and ``--help``."""
    matches: Callable[[Any], bool] | None = None
    """Whether a value looks like one native idea of this format (key signature); None: no
    signature (``jsonl``, ``auto``)."""
    convert: Callable[[Any, Path, _Where], dict[str, Any]] | None = None
    """One native idea -> row fields (no ``instance_id``); DataError on a wrong type."""


# ---------------------------------------------------------------------------- reading the file


def _read_text(path: Path) -> str:
    """The file as text (``.gz`` decompressed; :func:`ideaharness.textio.read_text` otherwise)."""
    if path.suffix.lower() != ".gz":
        return read_text(path)
    try:
        data = gzip.decompress(path.read_bytes())
    except IsADirectoryError:
        raise DataError(path, "is a directory, expected a file") from None
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(path, f"not a gzip file ({getattr(exc, 'strerror', None) or exc})") from None
    return decode_utf8(data, path)  # a bad byte: named by line and offset of the decompressed text


def _is_jsonl_suffix(path: Path) -> bool:
    inner = Path(path.stem).suffix if path.suffix.lower() == ".gz" else path.suffix
    return inner.lower() in (".jsonl", ".ndjson")


def _load(path: Path) -> tuple[bool, Any]:
    """``(is_jsonl, value)``: ``[(line, value), ...]`` for JSON Lines (``.jsonl``/``.ndjson``, or a
    document holding several values), else the document; read by :mod:`ideaharness.jsonl` (keys
    given twice, over-long integers, deep nesting refused; lone surrogates replaced, with one
    :class:`~ideaharness.errors.DataWarning`)."""
    text = _read_text(path)
    if not text.strip(" \t\r\n\ufeff"):
        raise DataError(path, "no ideas in the file (it is empty)")
    if _is_jsonl_suffix(path):
        return True, list(iter_jsonl(path, text=text))
    try:
        return False, parse_json_document(text, path)
    except DataError:
        try:  # decoded again only to tell several values (JSON Lines under another name) from bad JSON
            decode_input(text.removeprefix("\ufeff"))
        except json.JSONDecodeError as exc:
            if exc.msg.startswith("Extra data"):
                return True, list(iter_jsonl(path, text=text))
        raise


# ---------------------------------------------------------------------------- field helpers


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "true/false", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _text(obj: dict[str, Any], field: str, path: Path, where: _Where) -> str | None:
    """Native field ``field`` of ``obj`` as text: text as is, a list one item per line, an object
    ``key: value`` lines; absent or null -> None. Any other type is a DataError naming the field."""
    value = obj.get(field)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_item_text(v) for v in value)
    if isinstance(value, dict):
        return "\n".join(f"{k}: {_item_text(v)}" for k, v in value.items())
    raise DataError(path, f"{where}, field '{field}': expected text, got {_kind(value)}")


def _first(obj: dict[str, Any], fields: tuple[str, ...], path: Path, where: _Where) -> str | None:
    """The first of ``fields`` that holds text (AI-Scientist names, then the lowercase ones)."""
    for field in fields:
        if (value := _text(obj, field, path, where)) is not None:
            return value
    return None


def _item_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_item_text(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "; ".join(_item_text(v) for v in value)
    return json.dumps(value)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _row(fields: dict[str, str | None], sections: list[tuple[str, str | None]],
         provenance: dict[str, Any]) -> dict[str, Any]:
    """Row fields (None dropped), ``text`` made of the present ``sections`` (label, text; an empty
    label for a bare line) unless ``fields`` has one, and ``provenance`` (None values dropped)."""
    row: dict[str, Any] = {k: v for k, v in fields.items() if v is not None}
    parts = [f"{label}: {value}" if label else value for label, value in sections if value]
    if parts and "text" not in row:
        row["text"] = "\n\n".join(parts)
    row["provenance"] = {k: v for k, v in provenance.items() if v is not None}
    return row


def _object(idea: Any, path: Path, where: _Where, fmt: str) -> dict[str, Any]:
    if not isinstance(idea, dict):
        raise DataError(path, f"{where}: expected an idea object ({fmt}), got {_kind(idea)}")
    return idea


# ---------------------------------------------------------------------------- the formats


def _is_aiscientist(v: Any) -> bool:
    return isinstance(v, dict) and ("Title" in v or "Name" in v) and ("Experiment" in v or "Motivation" in v)


def _aiscientist(idea: Any, path: Path, where: _Where) -> dict[str, Any]:
    obj = _object(idea, path, where, "AI-Scientist")
    name, title = _first(obj, ("Name", "name"), path, where), _first(obj, ("Title", "title"), path, where)
    motivation = _first(obj, ("Motivation", "motivation"), path, where)
    plan = _first(obj, ("Experiment", "experiment", "experiment_plan"), path, where)
    scores = {k.lower(): obj.get(k) for k in ("Interestingness", "Feasibility", "Novelty", "novel", "Score")
              if _scalar(obj.get(k))}
    return _row({"title": title or name, "motivation": motivation, "experiment_plan": plan,
                 "text": _text(obj, "text", path, where)},
                [("", title or name), ("Motivation", motivation), ("Experiment", plan)],
                {"format": "aiscientist", "where": where, "name": name, **scores})


_V2_KEYS = ("Short Hypothesis", "Experiments", "Risk Factors and Limitations")


def _is_v2(v: Any) -> bool:
    return isinstance(v, dict) and any(k in v for k in _V2_KEYS)


def _aiscientist_v2(idea: Any, path: Path, where: _Where) -> dict[str, Any]:
    obj = _object(idea, path, where, "AI-Scientist-v2")
    t = {f: _text(obj, f, path, where) for f in ("Name", "Title", "Short Hypothesis", "Related Work",
                                                "Abstract", "Experiments", "Risk Factors and Limitations")}
    title = t["Title"] or t["Name"]
    return _row(
        {"title": title, "hypothesis": t["Short Hypothesis"], "related_work": t["Related Work"],
         "abstract": t["Abstract"], "experiment_plan": t["Experiments"],
         "risks": t["Risk Factors and Limitations"]},
        [("", title), ("Short hypothesis", t["Short Hypothesis"]), ("Abstract", t["Abstract"]),
         ("Related work", t["Related Work"]), ("Experiments", t["Experiments"]),
         ("Risk factors and limitations", t["Risk Factors and Limitations"])],
        {"format": "aiscientist-v2", "where": where, "name": t["Name"]},
    )


def _is_ai_researcher(v: Any) -> bool:
    return isinstance(v, dict) and (("task1" in v and ("target" in v or "task2" in v))
                                    or (isinstance(v.get("messages"), list) and "context_variables" in v))


def _ai_researcher(idea: Any, path: Path, where: _Where) -> dict[str, Any]:
    obj = _object(idea, path, where, "AI-Researcher")
    if "messages" in obj and "task1" not in obj:  # an agent cache file: the idea is the last reply
        messages = obj["messages"]
        if not isinstance(messages, list):
            raise DataError(path, f"{where}, field 'messages': expected a list, got {_kind(messages)}")
        text = None
        for k, message in enumerate(messages, start=1):
            if not isinstance(message, dict):
                raise DataError(path, f"{where}, field 'messages.{k}': expected an object, "
                                      f"got {_kind(message)}")
            if message.get("role") == "assistant" and message.get("content"):
                text = _text(message, "content", path, f"{where}, message {k}")
        return _row({"text": text}, [], {"format": "ai-researcher", "where": where, "kind": "agent cache"})
    task1, task2 = _text(obj, "task1", path, where), _text(obj, "task2", path, where)
    return _row(
        {"title": _text(obj, "target", path, where), "text": task1, "method": task1, "problem": task2,
         "abstract": _text(obj, "abstract", path, where)},
        [],
        {"format": "ai-researcher", "where": where, "kind": "proposal",
         **{k: obj.get(k) for k in ("url", "year", "venue") if _scalar(obj.get(k))}},
    )


_RA_KEYS = ("problem_rationale", "method_rationale", "experiment_rationale", "experiment")


def _is_researchagent(v: Any) -> bool:
    return isinstance(v, dict) and ("problem" in v or "method" in v) and any(k in v for k in _RA_KEYS)


def _ratings(feedbacks: Any) -> dict[str, Any] | None:
    """``{"Clarity": 4, ...}`` from ResearchAgent's ``{"Clarity": {"rating": 4, ...}, ...}``."""
    if not isinstance(feedbacks, dict):
        return None
    out = {k: v.get("rating") for k, v in feedbacks.items()
           if isinstance(v, dict) and _scalar(v.get("rating"))}
    return out or None


def _researchagent(idea: Any, path: Path, where: _Where) -> dict[str, Any]:
    obj = _object(idea, path, where, "ResearchAgent")
    t = {f: _text(obj, f, path, where) for f in ("problem", "problem_rationale", "method", "method_rationale",
                                                "experiment", "experiment_rationale")}
    paper = obj.get("paper")
    paper_title = paper.get("title") if isinstance(paper, dict) else None
    ratings = {part: r for part in ("problem", "method", "experiment")
               if (r := _ratings(obj.get(f"{part}_feedbacks"))) is not None}
    return _row(
        {"problem": t["problem"], "motivation": t["problem_rationale"], "method": t["method"],
         "experiment_plan": t["experiment"]},
        [("Problem", t["problem"]), ("Rationale", t["problem_rationale"]), ("Method", t["method"]),
         ("Rationale", t["method_rationale"]), ("Experiment design", t["experiment"]),
         ("Rationale", t["experiment_rationale"])],
        {"format": "researchagent", "where": where,
         "paper": paper_title if isinstance(paper_title, str) else None,
         "ratings": ratings or None},
    )


def _is_step(v: Any) -> bool:
    """A list starting with a hypothesis (a step of a hypothesis_generation.py chain)."""
    return isinstance(v, list) and len(v) >= 2 and isinstance(v[0], str)


def _is_moose_entry(v: Any) -> bool:
    """A ranked (evaluate.py) or expert-evaluation entry: the hypothesis, then not only text."""
    return _is_step(v) and any(not isinstance(x, str) for x in v[1:])


def _is_moose_idea(v: Any) -> bool:
    return isinstance(v, str) or _is_moose_entry(v)


def _moose_chem(idea: Any, path: Path, where: _Where) -> dict[str, Any]:
    if isinstance(idea, str):
        return _row({"hypothesis": idea, "text": idea}, [], {"format": "moose-chem", "where": where})
    if not _is_step(idea):
        raise DataError(path, f"{where}: expected a MOOSE-Chem hypothesis (text, or a list starting with "
                              f"the hypothesis), got {_kind(idea)}")
    hyp, second = idea[0], idea[1]
    prov: dict[str, Any] = {"format": "moose-chem", "where": where}
    if isinstance(second, int | float) and not isinstance(second, bool):  # evaluate.py's ranked entry
        scores = idea[2] if len(idea) > 2 and isinstance(idea[2], list) and all(map(_scalar, idea[2])) \
            else None
        prov |= {"average_score": second, "scores": scores,
                 "inspiration": idea[3] if len(idea) > 3 and isinstance(idea[3], str) else None,
                 "round": idea[4] if len(idea) > 4 and _scalar(idea[4]) else None}
    elif len(idea) >= 4 and isinstance(idea[2], int) and not isinstance(idea[2], bool):  # expert evaluation
        prov |= {"matched_inspirations": idea[2], "matched_score": idea[3] if _scalar(idea[3]) else None}
    elif isinstance(idea[-1], list) and idea[-1] and isinstance(idea[-1][0], list):  # a chain's last step
        prov |= {"scores": idea[-1][0] if all(map(_scalar, idea[-1][0])) else None}
    return _row({"hypothesis": hyp, "text": hyp}, [], prov)


def _plain(row: Any, path: Path, where: _Where) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise DataError(path, f"{where}: expected a JSON object (a row), got {_kind(row)}")
    for field in TEXT_FIELDS:
        if row.get(field) is not None and not isinstance(row[field], str):
            raise DataError(path, f"{where}, field '{field}': expected text, got {_kind(row[field])}")
    if row.get("provenance") is not None and not isinstance(row["provenance"], dict):
        raise DataError(path, f"{where}, field 'provenance': expected an object, "
                              f"got {_kind(row['provenance'])}")
    k = row.get("sample_index")
    if k is not None and (not isinstance(k, int) or isinstance(k, bool) or k < 0):
        raise DataError(path, f"{where}, field 'sample_index': expected a whole number >= 0, got {k!r}")
    model = row.get("model")
    if model is None:
        return dict(row)
    if not isinstance(model, str):
        raise DataError(path, f"{where}, field 'model': expected text, got {_kind(model)}")
    return {**row, "provenance": {"model": model, **(row.get("provenance") or {})}}


def _never(value: Any) -> bool:
    return False


FORMATS: dict[str, Converter] = {
    "auto": Converter("auto", "detect the format from the file's suffix and its ideas' keys"),
    "jsonl": Converter("jsonl", "rows of the idea contract (instance_id plus the benchmark's fields)",
                       _never, _plain),
    "aiscientist": Converter("aiscientist", "AI-Scientist v1 ideas.json / seed_ideas.json; AI Idea Bench "
                             "2025 ideas (with Motivation) and its output files",
                             _is_aiscientist, _aiscientist),
    "aiscientist-v2": Converter("aiscientist-v2", "AI-Scientist-v2 ideation JSON (Short Hypothesis, "
                                "Abstract, Experiments, Risk Factors and Limitations)",
                                _is_v2, _aiscientist_v2),
    "ai-researcher": Converter("ai-researcher", "HKUDS/AI-Researcher proposals (task1, task2) and idea agent "
                               "cache files (messages)", _is_ai_researcher, _ai_researcher),
    "researchagent": Converter("researchagent", "ResearchAgent results/ideas.jsonl (problem, method, "
                               "experiment and their rationales)", _is_researchagent, _researchagent),
    "moose-chem": Converter("moose-chem", "MOOSE-Chem hypotheses: evaluate.py ranked output, "
                            "hypothesis_generation.py output, expert-evaluation files",
                            _is_moose_idea, _moose_chem),
}
"""Every ``--ideas-format``: name -> :class:`Converter`."""

_DETECT_ORDER = ("ai-researcher", "aiscientist-v2", "researchagent", "aiscientist")


# ---------------------------------------------------------------------------- file shapes


@dataclass(frozen=True)
class _Entry:
    where: _Where
    line: int
    instance_id: Any
    idea: Any
    has_id: bool
    benchmark: str | None = None
    """The benchmark whose own output shape held the idea (AI Idea Bench's ``index``/``model_result``)."""


@dataclass
class _Walk:
    """One pass over a file's ideas in one format (``is_idea``: its signature)."""

    path: Path
    fmt: str
    is_idea: Callable[[Any], bool]
    jsonl: bool
    count: int = 0

    def entry(self, idea: Any, where: _Where, line: int, instance_id: Any = None,
              has_id: bool = False, benchmark: str | None = None) -> _Entry:
        self.count += 1
        return _Entry(where, line if self.jsonl else self.count, instance_id, idea, has_id, benchmark)

    def keyed(self, obj: dict[str, Any]) -> bool:
        """Whether an object is ``{instance_id: idea | [ideas]}`` rather than one idea."""
        if not obj or self.is_idea(obj):
            return False
        if all(self.is_idea(v) or (isinstance(v, list) and v and all(map(self.is_idea, v)))
               for v in obj.values()):
            return True  # every value is an idea or a list of ideas: whatever the keys are called
        if any(k in VOCABULARY or k in ("idea", "ideas") for k in obj):
            return False  # a row without instance id, not {instance_id: ...}
        return all(isinstance(v, dict | list) or self.is_idea(v) for v in obj.values())

    def expand(self, value: Any, where: _Where, line: int) -> Iterator[_Entry]:
        """The ideas of one top-level value (a JSON Lines line, a list item or the document)."""
        if (isinstance(value, dict) and {"index", "model_result"} <= value.keys()
                and self.fmt in ("aiscientist", "auto")):
            yield from self._ai_idea_bench(value, where, line)
            return
        key = next((k for k in INSTANCE_KEYS if k in value), None) if isinstance(value, dict) else None
        if key is not None:
            yield self.entry(value, where, line, value[key], True)
        elif isinstance(value, dict) and self.keyed(value):
            prefix = f"{where}, " if self.jsonl else ""
            for instance_id, ideas in value.items():
                at = f"{prefix}key {_short(instance_id)}"
                if self.fmt == "moose-chem" and isinstance(ideas, dict):  # hypothesis_generation.py output
                    for steps, chain in _chains(ideas, []):
                        names = ", ".join(f"{n} {_short(k)}"
                                          for n, k in zip(_STEP_NAMES, steps, strict=False))
                        yield self.entry(chain[-1], f"{at}, {names}", line, instance_id, True)
                elif isinstance(ideas, list) and not _is_moose_entry(ideas):
                    for k, idea in enumerate(ideas, start=1):
                        yield self.entry(idea, f"{at}, idea {k}", line, instance_id, True)
                else:
                    yield self.entry(ideas, at, line, instance_id, True)
        else:
            yield self.entry(value, where, line)

    def _ai_idea_bench(self, value: dict[str, Any], where: _Where, line: int) -> Iterator[_Entry]:
        index, ideas = value["index"], value["model_result"]
        if not isinstance(index, int | str) or isinstance(index, bool) or not str(index).strip():
            raise DataError(self.path, f"{where}, field 'index': expected a number or text, "
                                       f"got {_kind(index)}")
        for k, idea in enumerate(ideas if isinstance(ideas, list) else [ideas], start=1):
            yield self.entry(idea, f"{where}, idea {k}", line, f"{AI_IDEA_BENCH_PREFIX}{index}", True,
                             AI_IDEA_BENCH)

    def entries(self, value: Any) -> list[_Entry]:
        if self.jsonl:
            return [e for lineno, v in value for e in self.expand(v, f"line {lineno}", lineno)]
        if self.fmt == "moose-chem":
            value = _moose_document(value)
        if isinstance(value, list):
            return [e for k, v in enumerate(value, start=1) for e in self.expand(v, f"item {k}", k)]
        if isinstance(value, dict):
            return list(self.expand(value, "the object", 1)) if value else []
        raise DataError(self.path, "expected ideas (a JSON list, an object {instance_id: [ideas]} or "
                                   f"JSON Lines), got {_kind(value)}")


_STEP_NAMES = ("inspiration", "mutation", "step", "match")


def _short(key: str) -> str:
    return repr(key if len(key) <= 60 else key[:57] + "...")


def _chains(obj: dict[str, Any], path: list[str]) -> Iterator[tuple[list[str], list[Any]]]:
    """``(keys, chain)`` of every hypothesis chain (a list of steps) under a nested object."""
    for key, value in obj.items():
        if isinstance(value, dict):
            yield from _chains(value, [*path, key])
        elif isinstance(value, list) and value and all(_is_step(step) for step in value):
            yield [*path, key], value


def _moose_document(doc: Any) -> Any:
    """evaluate.py's ``[ranked, ...]`` -> ``ranked``; any other document unchanged."""
    if (isinstance(doc, list) and 1 <= len(doc) <= 3 and isinstance(doc[0], dict) and doc[0]
            and all(isinstance(v, list) and all(map(_is_moose_entry, v)) for v in doc[0].values())):
        return doc[0]
    return doc


def _is_moose_document(doc: Any) -> bool:
    doc = _moose_document(doc)
    if not isinstance(doc, dict) or not doc or any(k in doc for k in INSTANCE_KEYS):
        return False
    values = list(doc.values())
    if all(isinstance(v, list) and all(map(_is_moose_entry, v)) for v in values) and any(values):
        return True  # ranked or expert-evaluation entries (a question may have none)
    return all(isinstance(v, dict) for v in values) and any(True for v in values for _ in _chains(v, []))


def _detect(path: Path, jsonl: bool, value: Any) -> str:
    if not jsonl and _is_moose_document(value):
        return "moose-chem"
    signatures = {name: FORMATS[name].matches or _never for name in _DETECT_ORDER}
    found: dict[str, str] = {}
    walk = _Walk(path, "auto", lambda v: any(m(v) for m in signatures.values()), jsonl)
    for e in walk.entries(value):
        names = [name for name, matches in signatures.items() if matches(e.idea)]
        if len(names) > 1 and not set(names) <= {"aiscientist-v2", "aiscientist"}:
            raise DataError(path, f"{e.where}: the idea has keys of both the {names[0]} and the {names[1]} "
                                  "format; pass --ideas-format to say which")
        if names:
            found.setdefault(names[0], e.where)
        if len(found) > 1:
            (a, at), (b, bt) = found.items()
            raise DataError(path, f"{bt} looks like {b} but {at} like {a}; pass --ideas-format to say which")
    return next(iter(found), "jsonl")


def read_idea_rows(path: str | Path, format: str = "auto") -> list[dict[str, Any]]:
    """Every idea of a system's file as a row of the common vocabulary, in file order.

    Args:
        path: a JSON Lines (``.jsonl``, ``.ndjson``) or JSON file, optionally gzip-compressed
            (``.jsonl.gz``); shapes and formats in the module docstring.
        format: a name in :data:`FORMATS` (``"auto"`` detects it).

    Returns:
        One dict per idea: ``instance_id`` (text), the mapped fields, ``provenance`` (native
        formats: ``format``, ``where`` and the system's own metadata), ``_line`` (1-based line of
        a JSON Lines file, or position of the idea in a JSON file), ``_where`` (``"line 3"``,
        ``"item 2"``, ``"key 'x', idea 2"``), ``_source`` (the path) and, for an idea read from
        AI Idea Bench's output shape, ``_benchmark`` (:data:`AI_IDEA_BENCH`). Rows of the ``jsonl``
        format are returned as written plus those three (and ``instance_id`` when spelled
        ``task_id`` or given by the key; a text ``model`` is also ``provenance.model``).

    Raises:
        DataError: an unknown format, an unreadable, empty or non-UTF-8 file, invalid JSON, an idea
            without instance id, a field of the wrong type, or ideas of two formats under
            ``auto`` -- one line naming the file, the line or item, and the field.

    Warns:
        DataWarning: once per file when lone UTF-16 surrogates were replaced by U+FFFD.
    """
    source = Path(path)
    if format not in FORMATS:
        raise DataError(source, f"unknown ideas format {format!r}; use one of {', '.join(FORMATS)}")
    jsonl, value = _load(source)
    fmt = _detect(source, jsonl, value) if format == "auto" else format
    converter = FORMATS[fmt]
    walk = _Walk(source, fmt, converter.matches or _never, jsonl)
    rows = [_to_row(e, fmt, converter, source) for e in walk.entries(value)]
    if not rows:
        raise DataError(source, "no ideas in the file (an empty list or object)")
    return rows


_HOW = "key the file by instance id ({\"<instance_id>\": [ideas]}) or give each idea an 'instance_id' field"


def _to_row(e: _Entry, fmt: str, converter: Converter, source: Path) -> dict[str, Any]:
    assert converter.convert is not None
    row = converter.convert(e.idea, source, e.where)  # a wrong type first: it says what the item is
    if not e.has_id:
        raise DataError(source, f"{e.where}, field 'instance_id': missing; {_HOW}")
    instance_id = e.instance_id
    if isinstance(instance_id, int) and not isinstance(instance_id, bool):
        instance_id = str(instance_id)
    if not isinstance(instance_id, str):
        raise DataError(source, f"{e.where}, field 'instance_id': expected text, got {_kind(instance_id)}")
    if not instance_id.strip():
        raise DataError(source, f"{e.where}, field 'instance_id': missing or empty")
    if fmt == "jsonl":
        if "instance_id" in row and row["instance_id"] != e.instance_id:  # a keyed row naming another
            raise DataError(source, f"{e.where}, field 'instance_id': {row['instance_id']!r} is not the "
                                    f"key {e.instance_id!r}")
        row["instance_id"] = instance_id
    else:
        row = {"instance_id": instance_id, **row}
    row["_line"] = e.line
    row["_where"] = e.where
    row["_source"] = str(source)
    if e.benchmark is not None:
        row["_benchmark"] = e.benchmark
    return row
