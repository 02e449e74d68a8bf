"""Reply caps of the benchmarks' prompts: ours, or under ``--parity`` what the published code sends.

Every model call of a benchmark passes ``max_tokens``: the tokens its *answer* needs (a grade, a
JSON verdict, an idea of at most N words). It is not the reply's whole budget: the LLM client adds
the role's reasoning budget (``--reasoning-budget ROLE=N``; by default 2,048 tokens for an
``openai/`` or ``anthropic/`` model, 0 for a local one and under ``--parity``,
:func:`ideaharness.llm.client.default_reasoning_budget`), so a reasoning model gets
room to think before it answers and a plain model is not sent a cap it can never reach. The caps
that a user may need to change are config fields (``--<kind>-max-tokens``), each described with
the answer it is sized for.

Under ``--parity`` a benchmark sends what its published code sends for the same prompt kind
(:class:`PublishedCap`, the source file and line in ``source``): often no cap at all (``tokens``
None: the request carries no ``max_tokens``), sometimes a large fixed number (AI Idea Bench's
``max_tokens=8000``). Where the published code is not released (LigBench) or has no counterpart
of one of our prompts (a rewrite for blinding), ``known`` is False and our cap is kept; the
benchmark's documentation says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class PublishedCap:
    """The reply cap the published code sends for one prompt kind.

    Attributes:
        tokens: the cap, tokens; None: the published request carries no cap (the provider's
            default applies).
        source: where it is set, ``owner/repo@commit:path:line`` (or why it is unknown).
        known: False when there is no published value (no released code, or no published step
            of this kind): :func:`parity_cap` keeps our cap then.
    """

    tokens: int | None
    source: str
    known: bool = True


def unpublished(reason: str) -> PublishedCap:
    """A :class:`PublishedCap` with no published value (``known`` False): our cap is kept."""
    return PublishedCap(None, reason, known=False)


def parity_cap(kind: str, ours: int | None, published: Mapping[str, PublishedCap], *,
               parity: bool) -> int | None:
    """The answer cap a benchmark passes for prompt ``kind``, tokens (None: no cap sent).

    Args:
        kind: the prompt kind (a key of ``published``).
        ours: our cap for it: the tokens the answer needs (the client adds the reasoning budget).
        published: prompt kind -> the published code's cap (the benchmark's ``PUBLISHED_CAPS``).
        parity: ``--parity``: the published cap where one is known, else ours.

    Raises:
        KeyError: ``kind`` is not in ``published`` (every prompt kind a benchmark asks must be
            listed, with its source or the reason none is known).
    """
    entry = published[kind]
    if parity and entry.known:
        return entry.tokens
    return ours
