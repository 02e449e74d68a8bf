"""Form-only baselines: the answers a content-blind judge gives when it chooses by form alone.

A judged step with a gold answer (the target among generated ideas, the ground-truth option of an
IMCQ question, the gold hypothesis of a pair, the human label of a pair of papers) is answerable
without reading the content when the gold differs from the other items by form: it is shorter,
has fewer words, longer words, fewer lines, or is always shown first. The *form-only baseline* of
such a step is the score the benchmark gives a judge that answers every recorded prompt by one
:data:`FORM_RULES` rule; its best value over the rules is what a headline must clearly exceed to
be evidence about content (issue 32, Build (b)). Each benchmark computes its baselines from the
recorded prompts and records of the run, without model calls, and scores them with its own
scoring functions (``Benchmark.form_baselines``); this module holds what they share:

* :func:`shown_items`: the data texts of a rendered prompt in the order shown (every data text of
  a prompt is wrapped in ``<name>`` ... ``</name>`` tags, :func:`ideaharness.prompts.data_block`);
* :data:`FORM_RULES` and :func:`form_order` / :func:`form_choice` / :func:`form_pick`: a rule's
  ranking of the shown texts, its single choice and its top ``k``;
* :func:`baseline_entry`: one entry of ``results["form_baselines"]``.

Features (:func:`features`): characters (``len``), words (whitespace-separated), mean word length
(characters per word, 0 for a text without words), non-empty lines, and the position shown. Ties
go to the item shown first (the rule stays deterministic and blind). Everything here is pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["FORM_RULES", "FormRule", "baseline_entry", "features", "form_choice", "form_order", "form_pick",
           "shown_items"]


@dataclass(frozen=True)
class FormRule:
    """A content-blind preference: the item with the lowest (``prefer="low"``) or highest
    (``"high"``) value of one :func:`features` key is chosen (ranked) first."""

    name: str
    feature: str
    prefer: str  # "low" | "high"
    description: str


FORM_RULES: tuple[FormRule, ...] = (
    FormRule("shortest", "chars", "low", "the fewest characters"),
    FormRule("longest", "chars", "high", "the most characters"),
    FormRule("fewest_words", "words", "low", "the fewest words"),
    FormRule("most_words", "words", "high", "the most words"),
    FormRule("shortest_mean_word", "mean_word", "low", "the shortest mean word length"),
    FormRule("longest_mean_word", "mean_word", "high", "the longest mean word length"),
    FormRule("fewest_lines", "lines", "low", "the fewest non-empty lines"),
    FormRule("most_lines", "lines", "high", "the most non-empty lines"),
    FormRule("first", "position", "low", "the item shown first"),
    FormRule("last", "position", "high", "the item shown last"),
)
"""Every form-only rule, in the order entries list them (names are the keys of ``baselines``)."""

RULES_BY_NAME: dict[str, FormRule] = {r.name: r for r in FORM_RULES}


def features(text: str, position: int) -> dict[str, float]:
    """The form features of one shown text: ``chars``, ``words``, ``mean_word`` (characters per
    word), ``lines`` (non-empty) and ``position`` (0-based, as shown)."""
    words = text.split()
    return {"chars": float(len(text)), "words": float(len(words)),
            "mean_word": sum(len(w) for w in words) / len(words) if words else 0.0,
            "lines": float(sum(1 for line in text.splitlines() if line.strip())),
            "position": float(position)}


def form_order(rule: FormRule | str, texts: Sequence[str]) -> list[int]:
    """Indices of ``texts`` (in the order shown) ranked by ``rule``, preferred first; ties keep the
    order shown.

    Raises:
        KeyError: an unknown rule name.
    """
    rule = RULES_BY_NAME[rule] if isinstance(rule, str) else rule
    sign = 1.0 if rule.prefer == "low" else -1.0
    values = [sign * features(t, i)[rule.feature] for i, t in enumerate(texts)]
    return sorted(range(len(texts)), key=lambda i: (values[i], i))


def form_choice(rule: FormRule | str, texts: Sequence[str]) -> int:
    """The index ``rule`` chooses among ``texts`` (shown order).

    Raises:
        ValueError: no text to choose from.
    """
    if not texts:
        raise ValueError("a form choice needs at least one shown item")
    return form_order(rule, texts)[0]


def form_pick(rule: FormRule | str, texts: Sequence[str], k: int) -> list[int]:
    """The ``k`` indices ``rule`` prefers, preferred first (all when fewer are shown)."""
    return form_order(rule, texts)[:k]


_BLOCK = re.compile(r"<([a-z][a-z0-9_]*)>\n(.*?)\n</\1>", re.S)


def shown_items(messages: Sequence[Mapping[str, Any]] | None,
                name: str | Callable[[str], bool]) -> list[str]:
    """The data texts of a rendered prompt whose tag is ``name`` (or satisfies it), in the order shown.

    Args:
        messages: ``[{"role", "content"}, ...]`` as kept in ``prompts.jsonl`` (None: a prompt the
            run did not keep, which gives no items).
        name: the tag (``"idea"``, ``"candidate_1"``) or a predicate over tag names
            (``lambda n: n.startswith("option_")``).

    Returns:
        The texts inside the tags, without the tags (a text the prompt budget cut keeps its
        truncation mark: the judge saw it so). Empty when none matches.
    """
    if not messages:
        return []
    wanted = (lambda n: n == name) if isinstance(name, str) else name
    out: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            out += [m.group(2) for m in _BLOCK.finditer(content) if wanted(m.group(1))]
    return out


def baseline_entry(*, metric: str, group: str, system: str | None, step: str, n: int,
                   chance: float | None, baselines: Mapping[str, float | None],
                   higher_is_better: bool) -> dict[str, Any] | None:
    """One entry of ``results["form_baselines"]``: the values of every rule on one headline
    (metric, group, system) and the best of them in the metric's direction.

    Returns:
        ``{"metric", "group", "system", "step", "n", "chance", "baselines": {rule: value},
        "best", "best_value"}`` (values on the headline's scale; ``n`` the units the baselines are
        computed on; ``chance`` the expected value of a content-blind deterministic judge where the
        benchmark knows it, else None), or None when no rule has a value.
    """
    known = {k: float(v) for k, v in baselines.items() if v is not None}
    if not known:
        return None
    pick = max if higher_is_better else min
    best = pick(known, key=lambda k: known[k])
    return {"metric": metric, "group": group, "system": system, "step": step, "n": int(n),
            "chance": None if chance is None else float(chance), "baselines": known, "best": best,
            "best_value": known[best]}
