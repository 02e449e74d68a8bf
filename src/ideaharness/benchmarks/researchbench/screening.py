"""Inspiration screening: windows of candidates, keep a few per window, repeat on the kept set.

MOOSE-Chem ``inspiration_screening.py`` (Yang et al., ICLR 2025) as used by ResearchBench: the
pool (75) is cut into windows of 15 in a seeded random order; the model keeps 3 per window; the
next round screens the kept set (15 -> 3); rounds stop when at most ``keep_size`` remain.

Reply titles are matched to the titles *of the window shown* with
:func:`ideaharness.data.matching.match_title` (exact, normalised, then fuzzy >= threshold). A title
that matches nothing is a miss: it is recorded and never snapped to the nearest candidate; a
reply with fewer than ``keep_size`` matched titles keeps only those. A window whose reply (after
bounded retries) yields no matched title is a recorded parse failure and keeps **nothing** (no
selection is invented); its candidates are *undetermined* and the retrieval metrics leave them
out (:mod:`ideaharness.metrics.retrieval`), so a parse failure never lowers the hit ratio.
A window no larger than ``keep_size`` (a trailing remainder) keeps all its candidates without a
model call, as MOOSE-Chem does.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from ideaharness.data.matching import DEFAULT_TITLE_THRESHOLD, match_title
from ideaharness.data.pools import CandidatePool, derive_seed
from ideaharness.errors import ParseError
from ideaharness.llm.parsing import extract_json
from ideaharness.llm.types import ChatModel
from ideaharness.prompts import render
from ideaharness.runner.steps import Reask, StepRunner

STEP = "researchbench_screen_window"
_TITLE_LINE = re.compile(
    r"^[\s#>*\-\d.)]*\**\s*title\s*\**\s*[:：]\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE
)

_PLACEHOLDER = re.compile(r"<[^<>]*>")  # the answer format restated: "Title: <exact title of a candidate>"


class WindowResult(BaseModel):
    """One window of one round: the pool indices shown (in order) and those kept."""

    round: int
    window: int
    shown: list[int]
    kept: list[int]
    called: bool
    parse_ok: bool = True
    error: bool = False
    misses: list[str] = Field(default_factory=list)
    judgment: dict[str, Any] | None = None


class RoundResult(BaseModel):
    round: int
    input: list[int]
    kept: list[int]
    window_firsts: list[int]
    parse_failures: int
    windows: list[WindowResult]


class ScreeningResult(BaseModel):
    """All rounds of one pool; ``complete`` False when a model call failed for good (re-run)."""

    instance_id: str
    rounds: list[RoundResult]
    complete: bool = True


def _clean_title(text: str) -> str:
    text = text.strip().strip("*").strip()
    if len(text) >= 2 and text[0] in "\"'“‘" and text[-1] in "\"'”’":
        text = text[1:-1]
    return text.strip()


def extract_titles(text: str) -> list[str]:
    """Titles listed in a screening reply: ``Title:`` lines, else JSON (list of titles or objects).

    A restated answer format (``Title: <exact title of a candidate>``) is not a title.

    Raises:
        ParseError: no title found.
    """
    titles = [_clean_title(m.group(1)) for m in _TITLE_LINE.finditer(text)]
    titles = [t for t in titles if t and not _PLACEHOLDER.fullmatch(t)]
    if titles:
        return titles
    try:
        value = extract_json(text)
    except ParseError:
        raise ParseError("no 'Title:' line or JSON list of titles in the reply") from None
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        value = lists[0] if lists else [value]
    if isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                titles.append(_clean_title(item))
            elif isinstance(item, dict):
                for key, val in item.items():
                    if str(key).lower() == "title" and isinstance(val, str):
                        titles.append(_clean_title(val))
    titles = [t for t in titles if t]
    if not titles:
        raise ParseError("the reply's JSON holds no titles")
    return titles


def parse_screening_reply(
    text: str, window_titles: list[str], keep: int, threshold: float = DEFAULT_TITLE_THRESHOLD
) -> dict[str, Any]:
    """Match the titles of a screening reply to the window's candidates.

    Returns:
        ``{"selected": [window positions, distinct, reply order, at most keep],
        "matches": [{"title", "position" (None = miss), "method", "similarity"}]}``.

    Raises:
        ParseError: no title found, or none matches a window candidate (so the caller retries).
    """
    matches = []
    selected: list[int] = []
    for title in extract_titles(text):
        m = match_title(title, window_titles, threshold)
        matches.append(
            {"title": title, "position": m.index, "method": m.method, "similarity": round(m.similarity, 4)}
        )
        if m.index is not None and m.index not in selected and len(selected) < keep:
            selected.append(m.index)
    if not selected:
        raise ParseError(f"none of the {len(matches)} titles in the reply matches a candidate shown")
    return {"selected": selected, "matches": matches}


async def _screen_window(
    steps: StepRunner,
    model: ChatModel,
    pool: CandidatePool,
    shown: list[int],
    *,
    round_no: int,
    window_no: int,
    question: str,
    survey: str | None,
    discipline: str,
    keep: int,
    threshold: float,
    temperature: float,
    max_tokens: int | None,
    seed: int,
) -> WindowResult:
    by_index = {c.index: c for c in pool.candidates}
    candidates = [by_index[i] for i in shown]
    if len(shown) <= keep:
        return WindowResult(round=round_no, window=window_no, shown=shown, kept=list(shown), called=False)
    def window(order: list[int]) -> Reask:
        """The window with its candidates in ``order`` (a --consistency-sample re-ask)."""
        listed = [candidates[i] for i in order]
        titles = [c.title for c in listed]
        messages = render(
            "researchbench_screening",
            discipline=discipline,
            question=question,
            survey=survey,
            candidates=[{"title": c.title, "abstract": c.abstract} for c in listed],
            keep=keep,
        )
        return Reask(messages, lambda text: parse_screening_reply(text, titles, keep, threshold),
                     {"shown": [shown[i] for i in order]})

    asked = window(list(range(len(shown))))
    record = await steps.judge_step(
        STEP, pool.instance_id, f"r{round_no}w{window_no}", model, asked.messages,
        lambda text: parse_screening_reply(text, [c.title for c in candidates], keep, threshold),
        extra=asked.extra, positions=[str(i) for i in shown],
        temperature=temperature, max_tokens=max_tokens, seed=seed, reorder=window,
    )
    if record is None:
        return WindowResult(
            round=round_no, window=window_no, shown=shown, kept=[], called=True, parse_ok=False, error=True
        )
    judgment = record["judgment"]
    if record.get("shown") != shown:
        raise RuntimeError(
            f"{pool.instance_id}: recorded window r{round_no}w{window_no} showed other candidates"
        )
    if not judgment["parse_ok"]:
        return WindowResult(
            round=round_no, window=window_no, shown=shown, kept=[], called=True, parse_ok=False,
            judgment=judgment,
        )
    parsed = judgment["parsed"]
    return WindowResult(
        round=round_no,
        window=window_no,
        shown=shown,
        kept=[shown[p] for p in parsed["selected"]],
        called=True,
        misses=[m["title"] for m in parsed["matches"] if m["position"] is None],
        judgment=judgment,
    )


async def screen_pool(
    steps: StepRunner,
    model: ChatModel,
    pool: CandidatePool,
    *,
    question: str,
    survey: str | None = None,
    discipline: str = "science",
    window_size: int = 15,
    keep_size: int = 3,
    max_rounds: int = 10,
    seed: int = 0,
    threshold: float = DEFAULT_TITLE_THRESHOLD,
    temperature: float = 0.0,
    max_tokens: int | None = 768,
) -> ScreeningResult:
    """Screen a pool round by round until at most ``keep_size`` candidates remain.

    Each round shuffles its input with a generator seeded by ``(seed, instance, round)``, cuts it
    into windows of ``window_size`` and asks ``model`` (concurrently) for ``keep_size`` titles
    per window. Each window is recorded by ``steps`` under step :data:`STEP`, key ``r<round>w<window>``,
    and a re-run reuses it (resume); retries on parse failure are ``steps.max_attempts``.
    ``max_tokens``: the answer cap, tokens (the model adds its reasoning budget); None sends no
    cap (``--parity``).

    Raises:
        ValueError: ``window_size <= keep_size`` or ``keep_size < 1`` (screening would not shrink).
    """
    if keep_size < 1 or window_size <= keep_size:
        raise ValueError(f"need window_size > keep_size >= 1, got {window_size} and {keep_size}")
    current = [c.index for c in pool.candidates]
    complete = True
    rounds: list[RoundResult] = []
    round_no = 0
    while len(current) > keep_size and round_no < max_rounds:
        round_no += 1
        rng = np.random.default_rng(derive_seed(seed, pool.instance_id, "screen", round_no))
        order = [current[i] for i in rng.permutation(len(current))]
        windows = [order[i : i + window_size] for i in range(0, len(order), window_size)]

        async def run(w: int, shown: list[int], r: int = round_no) -> WindowResult:
            return await _screen_window(
                steps, model, pool, shown, round_no=r, window_no=w, question=question, survey=survey,
                discipline=discipline, keep=keep_size, threshold=threshold,
                temperature=temperature, max_tokens=max_tokens, seed=seed,
            )

        results = await asyncio.gather(*(run(w, shown) for w, shown in enumerate(windows)))
        kept = [i for r in results for i in r.kept]
        rounds.append(
            RoundResult(
                round=round_no,
                input=order,
                kept=kept,
                window_firsts=[r.kept[0] for r in results if r.called and r.kept],
                parse_failures=sum(not r.parse_ok for r in results),
                windows=list(results),
            )
        )
        if any(r.error for r in results):
            complete = False
            break
        if len(kept) >= len(current):
            break
        current = kept
    return ScreeningResult(instance_id=pool.instance_id, rounds=rounds, complete=complete)
