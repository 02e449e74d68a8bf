"""Two-order pairwise ranking of a ground-truth hypothesis against negatives (ResearchBench
hypothesis ranking, Liu, Yang et al. 2025, §3.3; published code: ``hypothesis_ranking/ranking.py``).

Every (gold, negative) pair is judged twice, gold shown first (``gold_first``) and gold shown
second (``gold_second``). A choice is ``"gold"``, ``"negative"`` or None (parse failure — never a
win for either side). A pair counts as a gold win only when both orders choose gold, and as a loss
only when both choose the negative; orders that disagree are a self-contradiction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from ideaharness.errors import ParseError
from ideaharness.llm.parsing import NoVerdict, extract_json_object, final_verdict, verdict_pattern

Order = Literal["gold_first", "gold_second"]
Choice = Literal["gold", "negative"]
ORDERS: tuple[Order, Order] = ("gold_first", "gold_second")

_SELECTION = verdict_pattern(
    r"selection(?:\s+of\s+(?:the\s+)?(?:research\s+)?hypothesis\s+candidate)?|selected\s+candidate",
    r"(?:candidate|hypothesis)?\s*#?\s*\d+",
)


_NOT_CANDIDATE = r"(?:(?!candidate)[^.\n]){0,200}?"
_BETTER = (
    r"(?:more\s+(?:likely|promising|effective|plausible|valid|convincing|correct)|better|preferable|preferred"
    r"|superior|stronger)"
)
_STATED_PREFERENCE = (
    re.compile(
        r"\bcandidate\s*(\d+)\b" + _NOT_CANDIDATE
        + r"\b(?:is|would\s+be|seems|appears)\s+(?:the\s+)?" + _BETTER,
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:prefer|choose|select|pick)\s+(?:research\s+hypothesis\s+)?candidate\s*(\d+)\b", re.IGNORECASE
    ),
)


def _candidate(value: object) -> int:
    raw = str(value).lower().replace("candidate", "").replace("hypothesis", "").replace("#", "").strip()
    if not raw.isdigit():
        raise ParseError(f"selection {value!r} is not a candidate number")
    if int(raw) not in (1, 2):
        raise ParseError(f"selected candidate {int(raw)} is not 1 or 2")
    return int(raw)


def parse_pairwise_choice(text: str) -> int:
    """Which candidate (1 or 2) the reply selects.

    Accepts, in order: the published line ``**Selection of research hypothesis candidate**:
    candidate N`` (markdown optional; also ``Selection: candidate N``), read as its final
    verdict — a restated format ``candidate 1 or candidate 2`` is not a selection, and two
    different selections in the final answer are ambiguous; JSON ``{"selection": N}`` (read
    strictly); else an explicit preference sentence ("candidate 2 is more likely ...", "I choose
    candidate 1") when all such sentences name the same candidate (small models often answer
    so). Anything else — a reply naming neither, both, or a number other than 1 and 2 — raises
    :class:`ParseError`; it is never read as a win.
    """
    try:
        return final_verdict(text, _SELECTION, _candidate, what="selection")
    except NoVerdict:
        pass
    try:
        obj = extract_json_object(text, required=("selection",))
    except ParseError:
        stated = {int(m.group(1)) for pattern in _STATED_PREFERENCE for m in pattern.finditer(text)}
        if len(stated) == 1:
            return _candidate(stated.pop())
        if stated:
            raise ParseError(f"the reply states preferences for candidates {sorted(stated)}") from None
        raise ParseError("no 'Selection of research hypothesis candidate: candidate N' line") from None
    return _candidate(obj["selection"])


def choice_of(selected: int | None, order: Order) -> Choice | None:
    """Map a selected position (1/2, None = parse failure) to gold/negative for the given order."""
    if selected is None:
        return None
    gold_position = 1 if order == "gold_first" else 2
    return "gold" if selected == gold_position else "negative"


class PairResult(BaseModel):
    """The choices for one (gold, negative) pair, per order shown (None = parse failure)."""

    negative_id: str
    choices: dict[str, Choice | None]

    def consistency(self) -> Literal["both_gold", "both_negative", "disagree", "incomplete"]:
        """Pair-level order consistency; ``incomplete`` = an order missing or unparsed."""
        values = [self.choices.get(o) for o in ORDERS]
        if any(v is None for v in values):
            return "incomplete"
        if values[0] == values[1]:
            return "both_gold" if values[0] == "gold" else "both_negative"
        return "disagree"


def directional_accuracy(pairs: Sequence[PairResult], order: Order | None = None) -> float | None:
    """Share of parsed judgments that choose gold, in one order or (None) in all orders shown.

    Returns None when no judgment parsed.
    """
    values = [
        c
        for p in pairs
        for o, c in p.choices.items()
        if c is not None and (order is None or o == order)
    ]
    return sum(c == "gold" for c in values) / len(values) if values else None


def consistency_counts(pairs: Sequence[PairResult]) -> dict[str, int]:
    """Counts of ``both_gold`` / ``both_negative`` / ``disagree`` / ``incomplete`` pairs."""
    counts = {"both_gold": 0, "both_negative": 0, "disagree": 0, "incomplete": 0}
    for p in pairs:
        counts[p.consistency()] += 1
    return counts


def two_order_outcome(pairs: Sequence[PairResult]) -> Literal["neither", "one", "both", "undetermined"]:
    """Per task: in how many of the two orders the gold hypothesis beats every negative.

    Gold "wins an order" when it is chosen in every pair of that order. ``undetermined`` when an
    order has a parse failure and no lost pair (its outcome cannot be known).
    """
    wins = 0
    for order in ORDERS:
        choices = [p.choices.get(order) for p in pairs]
        if any(c == "negative" for c in choices):
            continue
        if any(c is None for c in choices) or not choices:
            return "undetermined"
        wins += 1
    return ("neither", "one", "both")[wins]


def rank_score(
    pairs: Sequence[PairResult], orders: Sequence[Order] = ORDERS
) -> tuple[int, int, float] | None:
    """Rank of the gold hypothesis among the negatives and the score Rank/(k+1).

    Rank = 1 + #pairs gold wins in every order of ``orders``; k = #pairs whose judgments in those
    orders all parsed (pairs with a parse failure are left out of k and counted by the caller).
    With one order this is the published ``Rank = (k+1) - #negatives preferred``, score
    ``Rank/(k+1)`` (1.0 = gold beats everything); with two orders a self-contradicting pair is not
    a win.

    Returns:
        ``(rank, k, rank / (k + 1))``, or None when no pair is complete.
    """
    complete = [p for p in pairs if all(p.choices.get(o) is not None for o in orders)]
    if not complete:
        return None
    k = len(complete)
    rank = 1 + sum(all(p.choices[o] == "gold" for o in orders) for p in complete)
    return rank, k, rank / (k + 1)


def rank_score_per_order_mean(pairs: Sequence[PairResult], orders: Sequence[Order] = ORDERS) -> float | None:
    """The paper's rank score: :func:`rank_score` of each order on its own, averaged over the orders.

    ResearchBench (§3.3, Table 5) reports ``Rank/(k+1)`` computed per order (gold first; the
    swapped run ``fan_1_res``) and averages the two; a pair that contradicts itself is then a win
    in one order. Our default (:func:`rank_score` over both orders) counts a pair only when both
    orders agree: a judge that always answers "candidate 1" scores ``1/(k+1)`` (0.0625 at k = 15)
    by ours and ``(1 + 1/(k+1)) / 2`` (0.53) by this one.

    Returns:
        The mean over the orders that have a complete pair, in [1/(k+1), 1]; None when none has.
    """
    scores = [s[2] for o in orders if (s := rank_score(pairs, [o])) is not None]
    return sum(scores) / len(scores) if scores else None
