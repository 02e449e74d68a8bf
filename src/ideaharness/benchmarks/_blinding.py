"""Blinding: the reference of a blind comparison rewritten into the form of the generated items.

Where a judge ranks or compares a reference (the target paper's idea or hypothesis, a reference
paper) together with generated items without being told which is which, a position shuffle is not
enough: a published ground truth that opens with "The hypothesis is that ...", says "this paper"
or quotes measured results is recognised by its form (see :mod:`ideaharness.metrics.surface`).
By default each benchmark therefore shows the judge a *rewrite* of the reference: one recorded,
cached LLM step (template ``prompts/reference_rewrite.j2``) that restates it in the same fields as
the generated items, with no measured results, no self-references and no reference-style opening.
:func:`parse_rewrite` checks all of that; a reply that fails the check is a parse failure
(retried, then counted), and a reference whose rewrite failed is not judged at all — never shown
unblinded. ``parity`` keeps the published text.

*Length.* The word bounds that are checked come from the text being rewritten, so that a faithful
rewrite can always meet them (:func:`faithful_bounds`: half to one and a half times the original's
words once its measured values are dropped, plus :data:`FAITHFUL_SLACK`). The generated items'
typical length is what the prompt asks for (``target_words``, clipped into those bounds and to at
most :data:`ASKED_MAX_SHARE` of the original), not a check: bounds taken from the generated items
(a 77-word original had to fit [5, 38] words beside short ideas, a 41-word one [53, 177]) refused
most faithful rewrites, and the instances they dropped left headlines resting on m = 1. The
length difference that remains is what the surface check's ``words`` row reports.

*Length matched to the compared items* (:func:`matched_form`, ResearchBench's ranking): where the
judge compares the reference with each generated item *pairwise*, a length-only judge scores the
share of pairs in which the reference is the shorter (or longer) text. Faithful bounds leave that
share far from one half when the two lengths differ (a release with 44-word gold hypotheses beside
138-word negatives: even the longest faithful rewrite, 1.5·44 + 10 = 76 words, is shorter than
nine negatives in ten, and an always-shorter judge scored directional accuracy 0.978). There the
bounds come from the compared items instead (:func:`matched_bounds`): the rewrite is asked at their
median length and checked within their middle third widened to :data:`MATCH_MIN_HALF_WIDTH` words
either side of the median, so it is shorter than about half of them whatever its original's length.
A rewrite that cannot reach that band fails its check like any other (the reference is not judged,
counted); the record's form says how far the band is from the faithful one (``length_from``,
``faithful_words``), and the benchmark says how many references were asked beyond it.

*Final.* A rewrite that failed its check is final (:func:`rewrite_reference`): a later run of the
same command does not ask it again (it used to ask a new round of samples on every run, each
failing like the first), and the run lists it once, as final. A new ``--out`` asks again;
``--rejudge-changed`` re-asks it when the rewrite prompt or its check changed.

*Who rewrites.* The rewriter is a model role of its own (:func:`default_rewriter`: by default
neither the judge nor the generator where one is available), because a judge ranks its own text
above others' (self-preference): the rewrite record names its model (``rewriter``).

*Drops.* :func:`rewrite_counts` reports the share of references the check dropped; above
:data:`REWRITE_DROP_WARNING` the benchmark warns that its headline rests on the rest.

The record (step chosen by the benchmark) holds the judgment (raw text, parsed fields, parse
status), the original text, the form asked for (fields and word bounds) and the rewriter model.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from ideaharness.errors import ParseError
from ideaharness.llm.parsing import extract_json_object
from ideaharness.llm.types import ChatModel, Message
from ideaharness.metrics.surface import (
    measured_results,
    reference_lead,
    result_claims,
    self_references,
    without_measured_results,
    word_count,
)
from ideaharness.prompts import render
from ideaharness.runner.steps import StepRunner

FAITHFUL_MIN_SHARE = 0.5
"""A rewrite that keeps the content has at least this share of the original's words ..."""
FAITHFUL_MAX_SHARE = 1.5
"""... and at most this share ..."""
FAITHFUL_SLACK = 10
"""... plus this many words (a short original restated in full sentences grows)."""
ASKED_MAX_SHARE = 1.25
"""The length asked for is at most this share of the original's words (asking for more invites
padding: the 1.5B model asked for 93 words of a 55-word original wrote 121)."""
REWRITE_DROP_WARNING = 0.2
"""A run warns when the rewrite check dropped more than this share of the references it tried."""
LOCAL_REWRITERS = ("local/qwen2.5-coder-1.5b", "local/qwen2.5-coder-0.5b")
"""The bundled models a default rewriter is chosen among, in this order (see :func:`default_rewriter`)."""

MATCH_QUANTILES = (1 / 3, 2 / 3)
"""Length-matched bounds (:func:`matched_bounds`): the compared items' word counts at these quantiles ..."""
MATCH_MIN_HALF_WIDTH = 5
"""... widened to at least this many words either side of their median (a rewriter cannot hit an
exact length)."""
REWRITE_FINAL = "final: a rewrite that failed its check is not re-asked by a later run"
"""Recorded with every rewrite (``on_failure``) and said of a failed one."""

LENGTH_TOLERANCE = 0.25
"""Word bounds derived from generated items are widened by this share of their extremes ..."""
LENGTH_SLACK = 10
"""... or by this many words, whichever is wider."""


class FieldSpec(BaseModel):
    """One field of the generated items' form: name (the JSON key), what it holds, word bounds
    (checked) and the typical length of the generated items (asked for, not checked)."""

    name: str
    description: str
    min_words: int = Field(ge=1)
    max_words: int = Field(ge=1)
    target_words: int | None = None


class ReferenceForm(BaseModel):
    """The form a reference is rewritten into: ``kind`` names what it is ("research idea").

    ``length_from``: where the word bounds come from, ``"original"`` (:func:`faithful_bounds`) or
    ``"compared"`` (:func:`matched_bounds` of the items the reference is compared with; then
    ``faithful_words`` holds the faithful bounds of the original, for the record)."""

    kind: str
    fields: list[FieldSpec]
    length_from: Literal["original", "compared"] = "original"
    faithful_words: tuple[int, int] | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)


def length_bounds(
    texts: Sequence[str], *, tolerance: float = LENGTH_TOLERANCE, slack: int = LENGTH_SLACK
) -> tuple[int, int]:
    """Word bounds that cover the lengths of ``texts``, widened a little.

    lo = min(w_min·(1 − tolerance), w_min − slack), hi = max(w_max·(1 + tolerance), w_max + slack),
    lo clipped to ≥ 1; w_min/w_max = the fewest/most words of a non-empty text.

    Raises:
        ValueError: no non-empty text.
    """
    counts = [word_count(t) for t in texts if t.strip()]
    if not counts:
        raise ValueError("no generated text to take length bounds from")
    low, high = min(counts), max(counts)
    lo = max(1, math.floor(min(low * (1 - tolerance), low - slack)))
    hi = max(lo, math.ceil(max(high * (1 + tolerance), high + slack)))
    return lo, hi


def content_words(text: str) -> int:
    """Words of ``text`` less the words of its measured values (:func:`~ideaharness.metrics.surface.
    measured_results`), which a rewrite must drop."""
    return max(0, word_count(text) - sum(word_count(m) for m in measured_results(text)))


def faithful_bounds(original: str, *, min_share: float = FAITHFUL_MIN_SHARE,
                    max_share: float = FAITHFUL_MAX_SHARE, slack: int = FAITHFUL_SLACK) -> tuple[int, int]:
    """Word bounds that a rewrite keeping the content of ``original`` can meet.

    With w = :func:`content_words` of ``original``: lo = max(1, floor(min_share·w)),
    hi = max(lo, ceil(max_share·w) + slack). E.g. a 56-word original quoting one measured value
    ("8%") gives w = 55 and [27, 93]; a 77-word one without measured values [38, 126]. (Rule of
    this project: a paraphrase keeps most of its source's length; the factors are wide enough for
    a restatement that drops the results and turns a finding into a proposal.)

    Raises:
        ValueError: ``original`` has no words.
    """
    w = content_words(original)
    if w == 0:
        raise ValueError("no text to rewrite")
    lo = max(1, math.floor(min_share * w))
    return lo, max(lo, math.ceil(max_share * w) + slack)


def paragraph_form(kind: str, name: str, description: str, original: str,
                   generated: Sequence[str]) -> ReferenceForm:
    """A one-field form for rewriting ``original``: checked bounds :func:`faithful_bounds` of the
    original; asked length the generated items' :func:`typical_length` clipped into
    [lo, min(hi, ceil(ASKED_MAX_SHARE·w))], w = :func:`content_words` of the original.

    Raises:
        ValueError: ``original`` has no words or no generated text is non-empty.
    """
    lo, hi = faithful_bounds(original)
    ceiling = max(lo, min(hi, math.ceil(ASKED_MAX_SHARE * content_words(original))))
    target = min(ceiling, max(lo, typical_length(generated)))
    return ReferenceForm(kind=kind, fields=[FieldSpec(name=name, description=description, min_words=lo,
                                                      max_words=hi, target_words=target)])


def matched_bounds(compared: Sequence[str], *, quantiles: tuple[float, float] = MATCH_QUANTILES,
                   min_half_width: int = MATCH_MIN_HALF_WIDTH) -> tuple[int, int, int]:
    """Word bounds and asked length that put a text in the middle of ``compared`` by length.

    With c = the word counts of the non-empty ``compared`` texts and m their median:
    lo = max(1, min(floor(q_lo(c)), floor(m) − min_half_width)), hi = max(ceil(q_hi(c)),
    ceil(m) + min_half_width), target = round(m); q = linear-interpolation quantiles at
    ``quantiles``. A text within [lo, hi] words is shorter than between about a third and two
    thirds of ``compared`` (all of them closer to m when they are spread: a judge that picks the
    shorter of two texts then picks it in about half the pairs). E.g. negatives of 120, 130,
    138, 150 and 160 words give (132, 146, 138). (Rule of this project, issue 32 item 3.)

    Returns:
        ``(lo, hi, target)`` in words, lo ≤ target ≤ hi.

    Raises:
        ValueError: no non-empty text in ``compared``.
    """
    counts = sorted(word_count(t) for t in compared if t.strip())
    if not counts:
        raise ValueError("no compared text to take length bounds from")
    median = statistics.median(counts)
    q_lo, q_hi = (float(np.quantile(counts, q)) for q in quantiles)
    lo = max(1, min(math.floor(q_lo), math.floor(median) - min_half_width))
    hi = max(lo, math.ceil(q_hi), math.ceil(median) + min_half_width)
    return lo, hi, min(hi, max(lo, round(median)))


def matched_form(kind: str, name: str, description: str, original: str,
                 compared: Sequence[str]) -> ReferenceForm:
    """A one-field form whose length matches ``compared`` (:func:`matched_bounds`), not the
    original: for a reference judged pairwise against each of ``compared``. The original's
    :func:`faithful_bounds` are recorded as ``faithful_words`` (a band outside them asks the
    rewriter to stretch or condense it; :func:`stretched` tells).

    Raises:
        ValueError: ``original`` has no words or no compared text is non-empty.
    """
    faithful = faithful_bounds(original)
    lo, hi, target = matched_bounds(compared)
    return ReferenceForm(kind=kind, length_from="compared", faithful_words=faithful, fields=[
        FieldSpec(name=name, description=description, min_words=lo, max_words=hi, target_words=target)])


def stretched(form: ReferenceForm | dict[str, Any]) -> str | None:
    """``"longer"`` / ``"shorter"`` when a length-matched form's band lies wholly above / below the
    faithful bounds of its original (the rewrite must add or drop that much), else None."""
    data = form.model_dump() if isinstance(form, ReferenceForm) else form
    faithful = data.get("faithful_words")
    if data.get("length_from") != "compared" or not faithful:
        return None
    lo = sum(int(f["min_words"]) for f in data["fields"])
    hi = sum(int(f["max_words"]) for f in data["fields"])
    return "longer" if lo > faithful[1] else "shorter" if hi < faithful[0] else None


def default_rewriter(judge: str, generator: str | None = None, rewriter: str | None = None) -> str:
    """The model that rewrites references (a model string).

    Rule: ``rewriter`` when given; else, when the run already uses a bundled local model (judge or
    generator ``local/...``), the first of :data:`LOCAL_REWRITERS` that is neither the judge nor the
    generator; else the generator when it is not the judge (the judge then never ranks its own
    text, and the reference reads like the ideas it is ranked with); else the judge itself (then
    reported: rewriter = judge counts as self-judged). No model of another provider is added
    unasked (it could need a key or a download the run did not ask for).
    """
    if rewriter:
        return rewriter
    used = {judge, generator} - {None}
    if any(str(m).startswith("local/") for m in used):
        for model in LOCAL_REWRITERS:
            if model not in used:
                return model
    if generator and generator != judge:
        return generator
    return judge


def typical_length(texts: Sequence[str]) -> int:
    """The median word count of the non-empty ``texts`` (rounded down; 1 at least).

    Raises:
        ValueError: no non-empty text.
    """
    counts = sorted(word_count(t) for t in texts if t.strip())
    if not counts:
        raise ValueError("no generated text to take a length from")
    return max(1, int(statistics.median(counts)))


def check_blind_text(text: str, *, what: str = "text", min_words: int | None = None,
                     max_words: int | None = None, results: bool = True) -> str:
    """``text`` stripped, after checking it carries none of a reference's surface cues.

    ``results=False`` skips the measured-value check (an experiment plan states conditions such
    as "anneal at 300 °C", which no pattern tells from results).

    Raises:
        ParseError: empty; outside [min_words, max_words]; a measured result (a number with a
            unit, a percentage, a fold change); a claim of findings ("the results validate");
            a self-reference ("this paper", "the authors"); or a reference-style opening ("The
            hypothesis is", "This study").
    """
    text = text.strip()
    if not text:
        raise ParseError(f"{what} is empty")
    words = word_count(text)
    if min_words is not None and words < min_words:
        raise ParseError(f"{what} has {words} words, fewer than {min_words}")
    if max_words is not None and words > max_words:
        raise ParseError(f"{what} has {words} words, more than {max_words}")
    found = measured_results(text) if results else []
    if found:
        raise ParseError(f"{what} quotes measured results: {', '.join(found[:3])}")
    claims = result_claims(text)
    if claims:
        raise ParseError(f"{what} claims findings: {', '.join(claims[:3])}")
    refs = self_references(text)
    if refs:
        raise ParseError(f"{what} refers to a publication: {', '.join(refs[:3])}")
    lead = reference_lead(text)
    if lead:
        raise ParseError(f"{what} opens like a paper's summary: {lead!r}")
    return text


def _field_text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(f"{i}. {str(v).strip()}" for i, v in enumerate(value, 1))
    if not isinstance(value, str):
        raise ParseError(f"expected text, got {type(value).__name__}")
    return value


def parse_rewrite(text: str, form: ReferenceForm) -> dict[str, str]:
    """The rewritten reference: one text per field of ``form``, each passing :func:`check_blind_text`.

    A JSON object holding every field of the form is demanded (other keys are ignored); a list
    value is joined as a numbered list.

    Raises:
        ParseError: no such object, or a field that is empty, outside its word bounds, or carries
            a measured result, a self-reference or a reference-style opening.
    """
    obj = extract_json_object(text, required=form.names)
    return {
        f.name: check_blind_text(_field_text(obj[f.name]), what=f"'{f.name}'", min_words=f.min_words,
                                 max_words=f.max_words)
        for f in form.fields
    }


def rewrite_schema(form: ReferenceForm) -> dict[str, Any]:
    """JSON schema of a rewrite reply (for structured output)."""
    return {"type": "object", "properties": {name: {"type": "string"} for name in form.names},
            "required": list(form.names)}


def rewrite_messages(form: ReferenceForm, text: str) -> list[Message]:
    """Prompt ``reference_rewrite``: restate ``text`` in ``form``."""
    return render("reference_rewrite", kind=form.kind, fields=[f.model_dump() for f in form.fields],
                  reference=text)


async def rewrite_reference(
    steps: StepRunner,
    rewriter: ChatModel,
    step: str,
    instance_id: str,
    text: str,
    form: ReferenceForm,
    *,
    key: str = "",
    temperature: float = 0.0,
    seed: int = 0,
    max_tokens: int | None = None,
) -> dict[str, Any] | None:
    """Rewrite one reference with the ``rewriter`` model and record it (resumes from the record).

    The prompt shows ``text`` without its measured values (:func:`~ideaharness.metrics.surface.
    without_measured_results`, recorded as ``shown_to_rewriter`` when it differs): a rewrite must
    drop them, and a model that is not shown them cannot copy them.

    ``max_tokens``: the answer cap, tokens; default 64 + 2 per word the form allows (the rewrite's
    length; the rewriter's reasoning budget is added by the client). No benchmark rewrites under
    ``--parity``, so there is no published cap.

    A rewrite that failed its check is final (:data:`REWRITE_FINAL`): recorded by an earlier run,
    it is returned as recorded and asked no more (listed once more as an unparsed unit, ``final``);
    only ``--rejudge-changed`` with a changed prompt template or check asks it again.

    Returns:
        The record ``{"judgment", "original", "form", "rewriter", "on_failure"}`` (+
        ``shown_to_rewriter``; ``rewriter``: the model string); None when the model call failed
        for good (not recorded: a re-run retries it).
    """
    existing = steps.store.get(step, instance_id, key)
    if failed_rewrite(existing) and not _changed_under_rejudge(steps, existing):
        steps.note_recorded(step, instance_id, key)  # listed as it was, never re-asked
        _list_final(steps, step, instance_id, key)
        return existing
    budget = max_tokens or 64 + 2 * sum(f.max_words for f in form.fields)
    shown = without_measured_results(text)  # a value not shown cannot be copied into the rewrite
    extra: dict[str, Any] = {"original": text, "form": form.model_dump(),
                             "rewriter": getattr(rewriter, "model", None), "on_failure": REWRITE_FINAL}
    if shown != text:
        extra["shown_to_rewriter"] = shown
    record = await steps.judge_step(
        step, instance_id, key, rewriter, rewrite_messages(form, shown), lambda t: parse_rewrite(t, form),
        extra=extra, json_schema=rewrite_schema(form), temperature=temperature, seed=seed, max_tokens=budget,
    )
    if failed_rewrite(record):
        _list_final(steps, step, instance_id, key)
    return record


def failed_rewrite(record: dict[str, Any] | None) -> bool:
    """Whether ``record`` is a rewrite whose reply never passed its check (final, see
    :func:`rewrite_reference`)."""
    judgment = (record or {}).get("judgment")
    return isinstance(judgment, dict) and judgment.get("parse_ok") is False


def _changed_under_rejudge(steps: StepRunner, record: dict[str, Any] | None) -> bool:
    """Whether ``--rejudge-changed`` would judge ``record`` anew (its template or check changed)."""
    rejudging = getattr(steps, "_rejudging", None)
    stale = getattr(steps, "_stale", None)
    return bool(record is not None and callable(rejudging) and callable(stale) and rejudging()
                and stale(record))


def _list_final(steps: StepRunner, step: str, instance_id: str, key: str) -> None:
    """Mark the listed unparsed unit of a failed rewrite ``final`` (no later run asks it again)."""
    unit = steps.unparsed.get((step, instance_id, key))
    if unit is not None and not unit.final:
        steps.unparsed[(step, instance_id, key)] = unit.model_copy(update={"final": True})


def rewritten(record: dict[str, Any] | None) -> dict[str, str] | None:
    """The parsed fields of a rewrite record; None when not done or never parsed."""
    if record is None or not record["judgment"]["parse_ok"]:
        return None
    fields: dict[str, str] = record["judgment"]["parsed"]
    return fields


def _last_error(record: dict[str, Any]) -> str:
    return str((record["judgment"].get("errors") or ["the reply did not parse"])[-1])[:200]


def rewrite_counts(records: Sequence[dict[str, Any] | None]) -> dict[str, Any]:
    """Counts over rewrite records (None = not done).

    Returns:
        ``{"rewritten", "failed", "not_done"}`` (ints), ``"dropped_share"`` = failed / (rewritten +
        failed) in [0, 1] (None when none was tried), ``"drop_warning"`` (True when the share
        exceeds :data:`REWRITE_DROP_WARNING`, stated as ``"drop_threshold"``) and ``"rewriters"``
        (model -> references it rewrote, parsed or not); ``"errors"``: the check's last error of the
        failed rewrites, each different one once, at most three (why they were dropped);
        ``"final"``: True (a failed rewrite is not re-asked by a later run, :func:`rewrite_reference`).
    """
    done = [r for r in records if r is not None]
    ok = sum(1 for r in done if r["judgment"]["parse_ok"])
    share = (len(done) - ok) / len(done) if done else None
    rewriters: dict[str, int] = {}
    for r in done:
        model = str(r.get("rewriter") or r["judgment"].get("judge_model"))
        rewriters[model] = rewriters.get(model, 0) + 1
    return {
        "rewritten": ok,
        "failed": len(done) - ok,
        "not_done": len(records) - len(done),
        "dropped_share": share,
        "drop_threshold": REWRITE_DROP_WARNING,
        "drop_warning": share is not None and share > REWRITE_DROP_WARNING,
        "rewriters": dict(sorted(rewriters.items())),
        "errors": list(dict.fromkeys(_last_error(r) for r in done if not r["judgment"]["parse_ok"]))[:3],
        "final": True,
    }
