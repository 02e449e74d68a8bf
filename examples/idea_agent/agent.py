#!/usr/bin/env python3
"""A small idea-generation *system* for ideaharness: retrieve, draft, self-critique.

It answers one generation task (the JSON object ``ideaharness tasks export`` writes, the same one
a ``cmd:`` or ``http://`` system receives) with one answer JSON object, for every benchmark: the
answer is built from the task's ``answer_schema`` alone, so nothing here names a benchmark.

    # one task on stdin, one answer on stdout (ideaharness run ... --generator cmd:"python agent.py ...")
    python examples/idea_agent/agent.py --deterministic < task.json
    # an HTTP system (ideaharness run ... --generator http://127.0.0.1:8080/ideas)
    python examples/idea_agent/agent.py --deterministic --serve 8080
    # offline: one answer line per task line (then ideaharness run ... --ideas ideas.jsonl)
    python examples/idea_agent/agent.py --deterministic --answer tasks.jsonl > ideas.jsonl
    # drafts and critiques written by a model (any ideaharness model string; needs ideaharness)
    python examples/idea_agent/agent.py --model local/qwen2.5-coder-0.5b < task.json

The pipeline, one function each:

1. :func:`retrieve`: rank the texts of ``inputs`` (references, inspirations, a survey, ...) by
   word overlap with the query (the topic, keyword, question or domain) and keep the best.
2. :func:`draft_answer`: walk ``answer_schema`` and fill every required field: prose fields are
   drafted (from templates over the retrieved texts in ``--deterministic`` mode, by the model
   with ``--model``), lists get as many items as the task asks (``n_ideas``) or ``minItems``.
3. :func:`critique`: drop repeated sentences, top up prose that is too short, and check the
   answer against the schema (required fields present, types, ``minItems``, nothing empty); with
   ``--model`` a second model pass revises each prose field first.

Fault injection for tests: ``--crash-on ID`` exits non-zero (HTTP: status 500), ``--hang-on ID``
sleeps (``IDEA_AGENT_HANG_S`` seconds, default 3600), ``--garbage-on ID`` prints text that is no
answer; ID is an instance id or a task id, the flag may be repeated. The same faults can be set
by environment variables (comma-separated ids) ``IDEA_AGENT_CRASH_ON``, ``IDEA_AGENT_HANG_ON``,
``IDEA_AGENT_GARBAGE_ON``, which keeps the ``cmd:`` spec (and so the run's settings) unchanged
between a faulty run and its healthy re-run. ``IDEA_AGENT_LOG=DIR`` writes every task received,
byte for byte, to its own file in DIR (tests count invocations and compare the bytes).

Only the standard library is used, except ``ideaharness`` for ``--model``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

AGENT = "idea_agent"
DEFAULT_MIN_WORDS = 40
"""Words of a drafted prose field unless its schema description asks for more ("at least N words")."""
TOP_K = 3
"""Retrieved texts a draft draws on."""
QUERY_KEYS = ("topic", "keyword", "question", "domain", "discipline", "title", "task")
"""Input fields that say what the idea is about, in the order they are read."""
LONG_WORDS = 30
"""An input string of at least this many words is a text to retrieve from, not (only) a query."""
ENVELOPE = ("instance_id", "system", "title", "provenance", "sample_index")
GARBAGE = "Sure! Here is my answer: <<idea>> {not json at all"
STOPWORDS = frozenset("""a an the and or but nor of in on at by for with from to into onto over under
    about as is are was were be been being it its this that these those which who whom whose what when
    where why how we our us you your they their them he she his her i me my not no yes do does did
    done can could should would will shall may might must than then so such very more most less
    least also only just both each few other some any all many much own same too via per using used
    use based new paper study work results result method methods approach show shows shown propose
    proposed present presents here there while whereas however thus hence et al""".split())
FALLBACK_TERMS = ("measurement", "baselines", "robustness", "scaling", "ablations", "transfer",
                  "uncertainty", "benchmarks")
"""Terms a draft falls back on when the task gives too few words of its own (a bare keyword)."""

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")
_LETTERS = re.compile(r"[^\W\d_]{2}")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_AT_LEAST = re.compile(r"at least (\d+) words", re.IGNORECASE)

# --- 1. retrieve -----------------------------------------------------------------------------


def words(text: str) -> list[str]:
    """The word tokens of ``text`` (letters, digits, inner hyphens and apostrophes)."""
    return _WORD.findall(text)


def prose_words(text: str) -> int:
    """Words of ``text`` as the benchmarks count them: whitespace-separated tokens holding two
    letters in a row ("a", "1" and "--" are no words)."""
    return sum(bool(_LETTERS.search(token)) for token in text.split())


def content_words(text: str) -> set[str]:
    """Lower-cased words of ``text`` that carry content (no stopwords, at least 4 letters)."""
    return {w.lower() for w in words(text) if len(w) > 3 and w.lower() not in STOPWORDS}


def flatten(value: Any) -> str:
    """Every string inside ``value`` (a string, a list, a dict), joined by spaces."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return " ".join(flatten(v) for v in value.values())
    if isinstance(value, list):
        return " ".join(flatten(v) for v in value)
    return ""


def query_of(inputs: dict[str, Any]) -> list[str]:
    """What the idea is about: the query fields of ``inputs`` (:data:`QUERY_KEYS`, in that order),
    else its first string; a long one contributes its first line, at most :data:`LONG_WORDS` words."""
    found = [flatten(inputs[k]) for k in QUERY_KEYS if k in inputs and words(flatten(inputs[k]))]
    if not found:
        found = [v for v in inputs.values() if isinstance(v, str) and words(v)][:1]
    lines = [next(line for line in text.splitlines() if words(line)) for text in found]
    return [" ".join(words(line)[:LONG_WORDS]) for line in lines]


def label_of(passage: str | dict[str, Any]) -> str:
    """How a draft cites a passage: its title when it has one, else its first words."""
    if isinstance(passage, dict) and isinstance(passage.get("title"), str) and words(passage["title"]):
        return phrase(passage["title"], 12)
    return phrase(re.split(r"[.:;!?]\s", flatten(passage))[0], 8)


def passages_of(inputs: dict[str, Any]) -> list[str | dict[str, Any]]:
    """The texts to retrieve from: each item of each list in ``inputs`` and each long string."""
    out: list[str | dict[str, Any]] = []
    for value in inputs.values():
        if isinstance(value, list):
            out.extend(item for item in value if isinstance(item, str | dict) and flatten(item).strip())
        elif isinstance(value, str | dict) and len(words(flatten(value))) >= LONG_WORDS:
            out.append(value)
    return out


def retrieve(inputs: dict[str, Any], k: int = TOP_K) -> tuple[list[str], list[str], list[str]]:
    """``(query, texts, labels)``: the query's parts, and the k passages sharing most content
    words with it (ties in input order) as plain text and as the label a draft cites them by."""
    query = query_of(inputs)
    wanted = content_words(" ".join(query))
    passages = passages_of(inputs)
    overlap = [len(wanted & content_words(flatten(p))) for p in passages]
    best = [passages[i] for i in sorted(range(len(passages)), key=lambda i: (-overlap[i], i))[:k]]
    return query, [flatten(p) for p in best], [label_of(p) for p in best]


# --- 2. draft ----------------------------------------------------------------------------------


def phrase(text: str, limit: int) -> str:
    """At most ``limit`` words of ``text`` with punctuation removed (safe inside a sentence)."""
    return " ".join(words(text)[:limit])


def key_terms(query: str, passages: list[str], n: int = 12) -> list[str]:
    """The most frequent content words of the passages (not already in the query), then fillers."""
    seen = content_words(query)
    counts = Counter(w for p in passages for w in sorted(content_words(p)) if w not in seen)
    terms = [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return (terms + [t for t in FALLBACK_TERMS if t not in terms])[:max(n, len(FALLBACK_TERMS))]


ROLES: list[tuple[tuple[str, ...], list[str]]] = [  # (field name parts, sentences); a plan: one step a line
    (("motivation", "problem", "background", "rationale", "question"), [
        "Research on {topic} still lacks a way to connect {a} with {b}.",
        "The closest prior work, {source}, shows the need but leaves {c} open.",
        "Current practice treats {a} and {d} separately, so their interaction is rarely measured.",
        "Closing this gap would make results on {topic} easier to trust and to reuse.",
    ]),
    (("plan", "experiment", "design", "evaluation", "setup"), [
        "Step one builds a benchmark for {topic} with held-out cases that stress {a}.",
        "Step two compares the method with strong baselines drawn from {source}.",
        "Step three runs ablations that remove {b} and {c} one at a time.",
        "Success means a clear gain on the held-out cases at a similar compute budget.",
    ]),
    (("method", "idea", "hypothesis", "approach", "proposal", "abstract", "text", "summary"), [
        "We propose to study {topic} by combining {a} with {b} in one model.",
        "Building on {source}, the method adds an explicit treatment of {c}.",
        "The central hypothesis is that {a} and {d} interact, and that modelling them jointly helps.",
        "We test this with controlled comparisons against the closest published methods.",
    ]),
]
GENERIC = [
    "This part addresses {topic} with a focus on {a} and {b}.",
    "It draws on {source} and extends it with {c}.",
    "The expected outcome is a measurable improvement over current methods on {topic}.",
]
EXTRA = "A further check relates {a} to {b} under a fixed budget, as case {n} of the study."
"""The sentence a draft is topped up with (distinct for every n) when it is still too short."""


def templates_for(field: str) -> list[str]:
    """The sentence templates of the role a field's name suggests (motivation, plan, method)."""
    name = field.lower()
    for keys, sentences in ROLES:
        if any(key in name for key in keys):
            return sentences
    return GENERIC


@dataclass(frozen=True)
class Context:
    """What a draft is written from: the topic, the retrieved texts, how to cite them, key terms."""

    topic: str
    texts: list[str]
    labels: list[str]
    terms: list[str]

    @classmethod
    def of(cls, inputs: dict[str, Any]) -> Context:
        query, texts, labels = retrieve(inputs)
        topic = phrase(query[0], 12) if query else "this research area"
        if topic[:1].isupper() and topic.split(" ")[0][1:].islower():  # "How to ..." inside a sentence
            topic = topic[0].lower() + topic[1:]
        return cls(topic, texts, labels, key_terms(" ".join(query), texts))


class TemplateDrafter:
    """``--deterministic``: prose from sentence templates over the retrieved texts (no model)."""

    name = "deterministic"

    def draft(self, field: str, context: Context, offset: int, min_words: int) -> str:
        terms = context.terms[offset % len(context.terms):] + context.terms[:offset % len(context.terms)]
        labels = [label for label in context.labels if label]
        source = labels[offset % len(labels)] if labels else f"earlier work on {context.topic}"
        slots = {"topic": context.topic, "source": source, "a": terms[0], "b": terms[1], "c": terms[2],
                 "d": terms[3]}
        sentences = templates_for(field)
        joiner = "\n" if sentences is ROLES[1][1] else " "
        text = joiner.join(t.format(**slots) for t in sentences)
        return top_up(text, min_words, context.terms, offset)

    def revise(self, field: str, text: str, min_words: int) -> str:
        return text


class ModelDrafter:
    """``--model SPEC``: drafts and one revision pass by a model (``ideaharness.llm.get_llm``)."""

    def __init__(self, spec: str, seed: int = 0) -> None:
        from ideaharness.llm import get_llm  # the only dependency, and only in this mode

        self.name = spec
        self.llm = get_llm(spec)
        self.seed = seed
        self._lock = threading.Lock()  # one call at a time (the HTTP server answers in threads)

    def _ask(self, prompt: str) -> str:
        with self._lock:
            reply = asyncio.run(self.llm.chat([{"role": "user", "content": prompt}], temperature=0.0,
                                              max_tokens=512, seed=self.seed))
        return str(reply.text).strip()

    def draft(self, field: str, context: Context, offset: int, min_words: int) -> str:
        related = "\n".join(f"- {phrase(p, 80)}" for p in context.texts) or "- (no related texts given)"
        a, b = context.terms[offset % len(context.terms)], context.terms[(offset + 1) % len(context.terms)]
        text = self._ask(
            f"Write the {field.replace('_', ' ')} of a new research idea on: {context.topic}.\n"
            f"Related work:\n{related}\n"
            f"Focus on {a} and {b}. Write {min_words} to {2 * min_words} words of plain prose in full "
            "sentences, no heading, no list, nothing else.")
        tidied = tidy(text, min_words)
        if tidied is None:  # the model's draft fails the critique: fall back on the template draft
            return TemplateDrafter().draft(field, context, offset, min_words)
        return tidied

    def revise(self, field: str, text: str, min_words: int) -> str:
        revised = self._ask(
            f"Here is the {field.replace('_', ' ')} of a research idea:\n\n{text}\n\n"
            "Critique it silently, then rewrite it: remove repetition and vague claims, keep it "
            f"specific, at least {min_words} words of plain prose. Reply with the rewritten text only.")
        return tidy(revised, min_words) or text

Drafter = TemplateDrafter | ModelDrafter


def resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with ``$ref`` followed and an optional (``anyOf`` with null) unwrapped."""
    while True:
        if "$ref" in schema:
            node: Any = root
            for part in schema["$ref"].lstrip("#/").split("/"):
                node = node[part]
            schema = node
        elif "anyOf" in schema or "oneOf" in schema:
            options = [s for s in schema.get("anyOf", schema.get("oneOf", [])) if s.get("type") != "null"]
            schema = options[0] if options else {"type": "null"}
        else:
            return schema


def min_words_of(schema: dict[str, Any]) -> int:
    """Words a prose field must hold: "at least N words" in its description, else the default."""
    found = _AT_LEAST.search(schema.get("description", ""))
    return max(int(found.group(1)) + 5, DEFAULT_MIN_WORDS) if found else DEFAULT_MIN_WORDS


def list_length(schema: dict[str, Any], inputs: dict[str, Any]) -> int:
    """Items of a list: what the task asks (``inputs["n_ideas"]``), at least ``minItems``, at most
    ``maxItems``, else 1."""
    asked = inputs.get("n_ideas", inputs.get("n"))
    n = max(int(schema.get("minItems", 1)), asked if isinstance(asked, int) else 1)
    return min(n, int(schema.get("maxItems", n)))


class Draft:
    """Everything one answer is drafted from: the task, what was retrieved and the drafter."""

    def __init__(self, task: dict[str, Any], drafter: Drafter) -> None:
        self.task = task
        self.inputs: dict[str, Any] = task.get("inputs") or {}
        self.root: dict[str, Any] = task["answer_schema"]
        self.drafter = drafter
        self.context = Context.of(self.inputs)
        self.base = 3 * int(task.get("sample_index") or 0)

    def value(self, name: str, schema: dict[str, Any], index: int) -> Any:
        schema = resolve(schema, self.root)
        kind = schema.get("type")
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return schema["enum"][0]
        if kind == "object" or "properties" in schema:
            return self.fields(schema, index)
        if kind == "array":
            item = schema.get("items", {"type": "string"})
            return [self.value(name, item, index + i) for i in range(list_length(schema, self.inputs))]
        if kind == "integer":
            return int(schema.get("minimum", 0))
        if kind == "number":
            return float(schema.get("minimum", 0))
        if kind == "boolean":
            return False
        if name == "title":
            terms = self.context.terms
            a, b = terms[(self.base + index) % len(terms)], terms[(self.base + index + 1) % len(terms)]
            title = f"{phrase(self.context.topic, 6)}: {a} and {b}"
            return title[:1].upper() + title[1:]
        return self.drafter.draft(name, self.context, self.base + index, min_words_of(schema))

    def fields(self, schema: dict[str, Any], index: int) -> dict[str, Any]:
        properties = schema.get("properties", {})
        wanted = [n for n in properties if n in schema.get("required", []) or n == "title"]
        return {n: self.value(n, properties[n], index) for n in wanted if n not in ENVELOPE or n == "title"}


def draft_answer(task: dict[str, Any], drafter: Drafter) -> dict[str, Any]:
    """An answer to ``task``: every required field of ``answer_schema`` (plus ``title``) filled."""
    draft = Draft(task, drafter)
    answer = draft.fields(resolve(draft.root, draft.root), 0)
    properties = draft.root.get("properties", {})
    answer["instance_id"] = task["instance_id"]
    if "system" in properties:
        answer["system"] = AGENT
    if "sample_index" in properties:
        answer["sample_index"] = task.get("sample_index", 0)
    if "provenance" in properties:
        answer["provenance"] = {"agent": AGENT, "drafter": drafter.name,
                                "retrieved": draft.context.labels}
    return answer


# --- 3. self-critique ------------------------------------------------------------------------------


def dedupe_sentences(text: str) -> str:
    """``text`` without sentences it already said (case and spacing ignored; lines kept)."""
    seen: set[str] = set()
    lines = []
    for line in text.strip().splitlines():
        kept = []
        for sentence in _SENTENCE.split(line.strip()):
            key = " ".join(words(sentence.lower()))
            if key and key not in seen:
                seen.add(key)
                kept.append(sentence)
        if kept:
            lines.append(" ".join(kept))
    return "\n".join(lines)


def tidy(text: str, min_words: int) -> str | None:
    """A model's prose cut after its last full sentence, repeats dropped; None when that leaves
    fewer than ``min_words`` words or the text loops (under 40% of its words distinct)."""
    end = max(text.rfind(mark) for mark in ".!?")
    text = dedupe_sentences(text[: end + 1] if end > 0 else text)
    tokens = [w.lower() for w in words(text)]
    if prose_words(text) < min_words or len(set(tokens)) < 0.4 * len(tokens):
        return None
    return text


def top_up(text: str, min_words: int, terms: list[str], offset: int) -> str:
    """``text`` (repeats dropped) with :data:`EXTRA` sentences added until it has ``min_words`` words."""
    text = dedupe_sentences(text)
    n = 1
    while prose_words(text) < min_words:
        a, b = terms[(offset + n) % len(terms)], terms[(offset + 2 * n + 1) % len(terms)]
        text = f"{text} {EXTRA.format(a=a, b=b if b != a else 'the baseline', n=n)}".strip()
        n += 1
    return text


def problems(value: Any, schema: dict[str, Any], root: dict[str, Any], where: str = "answer") -> list[str]:
    """What is wrong with ``value`` against ``schema``: missing required fields, wrong types,
    too few items, empty or too short prose (one line each, naming the field)."""
    schema = resolve(schema, root)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        found = [f"{where}.{n}: missing" for n in schema.get("required", []) if n not in value]
        for n, sub in schema.get("properties", {}).items():
            if n in value and n not in ("provenance", "system", "sample_index"):
                found += problems(value[n], sub, root, f"{where}.{n}")
        return found
    if kind == "array":
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        if len(value) < int(schema.get("minItems", 0)):
            return [f"{where}: {len(value)} items, at least {schema['minItems']}"]
        item = schema.get("items", {})
        return [p for i, v in enumerate(value) for p in problems(v, item, root, f"{where}[{i}]")]
    if kind == "string":
        if not isinstance(value, str) or not value.strip():
            return [f"{where}: empty"]
        short = "enum" not in schema and not where.endswith((".title", "instance_id"))
        if short and prose_words(value) < min(min_words_of(schema), 12):
            return [f"{where}: {prose_words(value)} words"]
    return []


def critique(answer: dict[str, Any], task: dict[str, Any], drafter: Drafter) -> dict[str, Any]:
    """The answer revised (model mode), repeats dropped, and checked against ``answer_schema``.

    Raises:
        ValueError: the answer still breaks the schema (one line per problem).
    """
    root = task["answer_schema"]

    def revise(value: Any, schema: dict[str, Any], name: str) -> Any:
        schema = resolve(schema, root)
        if isinstance(value, dict):
            props = schema.get("properties", {})
            return {k: revise(v, props.get(k, {}), k) if k not in ENVELOPE else v for k, v in value.items()}
        if isinstance(value, list):
            return [revise(v, schema.get("items", {}), name) for v in value]
        prose = schema.get("type") == "string" and "enum" not in schema and name != "title"
        if isinstance(value, str) and prose:
            return dedupe_sentences(drafter.revise(name, value, min_words_of(schema)))
        return value

    revised: dict[str, Any] = revise(answer, root, "answer")
    found = problems(revised, root, root)
    if found:
        raise ValueError("; ".join(found))
    return revised


def answer_task(task: dict[str, Any], drafter: Drafter) -> dict[str, Any]:
    """Retrieve, draft and self-critique: the answer JSON object of one task."""
    for field in ("instance_id", "answer_schema"):
        if field not in task:
            raise ValueError(f"the task has no {field!r} (is it an ideaharness task?)")
    return critique(draft_answer(task, drafter), task, drafter)


# --- faults, logging, the three ways to run --------------------------------------------------------


def fault_ids(flag: list[str] | None, env: str) -> set[str]:
    """Ids named by a fault flag and its environment variable (comma-separated)."""
    return {*(flag or []), *(i.strip() for i in os.environ.get(env, "").split(",") if i.strip())}


class Faults:
    def __init__(self, args: argparse.Namespace) -> None:
        self.crash = fault_ids(args.crash_on, "IDEA_AGENT_CRASH_ON")
        self.hang = fault_ids(args.hang_on, "IDEA_AGENT_HANG_ON")
        self.garbage = fault_ids(args.garbage_on, "IDEA_AGENT_GARBAGE_ON")

    def of(self, task: dict[str, Any]) -> str | None:
        ids = {str(task.get("instance_id")), str(task.get("task_id"))}
        for name in ("crash", "hang", "garbage"):
            if ids & getattr(self, name):
                return name
        return None


def log_task(raw: bytes) -> None:
    """Keep the task bytes as received, one file each, when ``IDEA_AGENT_LOG`` names a folder."""
    folder = os.environ.get("IDEA_AGENT_LOG")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        name = f"{time.time_ns()}-{os.getpid()}-{threading.get_ident()}.task"
        (Path(folder) / name).write_bytes(raw)


def hang() -> None:
    time.sleep(float(os.environ.get("IDEA_AGENT_HANG_S", "3600")))


def dumps(answer: dict[str, Any]) -> str:
    return json.dumps(answer, ensure_ascii=False, sort_keys=True)


def run_once(drafter: Drafter, faults: Faults) -> int:
    """stdin -> stdout (the ``cmd:`` form): exit 0 with the answer, 1 on a bad task, 2 on a crash."""
    raw = sys.stdin.buffer.read()
    log_task(raw)
    try:
        task = json.loads(raw)
        fault = faults.of(task)
        if fault == "crash":
            print(f"{AGENT}: crashing on {task.get('task_id')} as asked", file=sys.stderr)
            return 2
        if fault == "hang":
            hang()
        if fault == "garbage":
            print(GARBAGE)
            return 0
        answer = answer_task(task, drafter)
        print(dumps(answer))
        retrieved = len((answer.get("provenance") or {}).get("retrieved") or [])
        print(f"{AGENT}: {task.get('task_id')}: {retrieved} texts retrieved, drafted by {drafter.name}",
              file=sys.stderr)  # a cmd: system's stderr is kept in the run's record
    except (ValueError, KeyError, TypeError) as exc:
        print(f"{AGENT}: {exc}", file=sys.stderr)
        return 1
    return 0


def answer_file(path: Path, drafter: Drafter, faults: Faults) -> int:
    """``--answer tasks.jsonl``: one answer line per task line on stdout. A crash fault leaves the
    task unanswered (a missing instance), a garbage fault writes an answer of non-words."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        log_task(line.encode("utf-8"))
        try:
            task = json.loads(line)
            fault = faults.of(task)
            if fault == "crash" or fault == "hang":
                print(f"{AGENT}: {path} line {number}: left unanswered as asked", file=sys.stderr)
                continue
            answer = answer_task(task, drafter)
            if fault == "garbage":
                answer = {k: ("?? ## ??" if isinstance(v, str) and k not in ENVELOPE else v)
                          for k, v in answer.items()}
            print(dumps(answer), flush=True)
        except (ValueError, KeyError, TypeError) as exc:
            print(f"{AGENT}: {path} line {number}: {exc}", file=sys.stderr)
            return 1
    return 0


def make_handler(drafter: Drafter, faults: Faults) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: str, kind: str = "application/json") -> None:
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802  (http.server's spelling)
            self._send(200, f"{AGENT}: POST an ideaharness task JSON to any path\n", "text/plain")

        def do_POST(self) -> None:  # noqa: N802
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            log_task(raw)
            try:
                task = json.loads(raw)
                fault = faults.of(task)
                if fault == "crash":
                    error = f"crashing on {task.get('task_id')} as asked"
                    return self._send(500, json.dumps({"error": error}))
                if fault == "hang":
                    hang()
                if fault == "garbage":
                    return self._send(200, GARBAGE, "text/plain")
                self._send(200, dumps(answer_task(task, drafter)))
            except (ValueError, KeyError, TypeError) as exc:
                self._send(400, json.dumps({"error": str(exc)}))

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # quiet: one line per request would drown the run's own output

    return Handler


def serve(port: int, drafter: Drafter, faults: Faults, host: str = "127.0.0.1") -> int:
    """``--serve PORT``: answer POSTed tasks until interrupted (port 0: any free port). The first
    line on stdout is the address, e.g. ``http://127.0.0.1:8080/``."""
    server = ThreadingHTTPServer((host, port), make_handler(drafter, faults))
    server.daemon_threads = True
    print(f"http://{host}:{server.server_address[1]}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def parse_args(argv: Iterable[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--deterministic", action="store_true", help="Template drafts, no model (the default).")
    how.add_argument("--model", metavar="SPEC", help="Draft and revise with this ideaharness model string.")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--serve", type=int, metavar="PORT", help="Run an HTTP server on 127.0.0.1:PORT.")
    where.add_argument("--answer", type=Path, metavar="TASKS", help="Answer a tasks JSONL file to stdout.")
    parser.add_argument("--host", default="127.0.0.1", help="Address --serve listens on.")
    for fault in ("crash", "hang", "garbage"):
        parser.add_argument(f"--{fault}-on", action="append", metavar="ID",
                            help=f"Test fault: {fault} on this instance or task id (repeatable).")
    return parser.parse_args(list(argv) if argv is not None else None)


def main(argv: Iterable[str] | None = None) -> int:
    args = parse_args(argv)
    drafter: Drafter = ModelDrafter(args.model) if args.model else TemplateDrafter()
    faults = Faults(args)
    if args.serve is not None:
        return serve(args.serve, drafter, faults, args.host)
    if args.answer is not None:
        return answer_file(args.answer, drafter, faults)
    return run_once(drafter, faults)

if __name__ == "__main__":
    sys.exit(main())
