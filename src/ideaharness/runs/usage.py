"""Model usage of a run, summed over every process that worked on it.

A run is often finished by several processes (a crash, Ctrl-C, a resume, shards merged into one
directory). Each process keeps its own counters (:class:`~ideaharness.llm.client.LLMStats`) and
writes them to ``usage/<process>.json`` in the run directory — when results are written, when the
store closes, and every :data:`FLUSH_INTERVAL_S` seconds while records are appended — so
``results.json`` can report the calls, tokens and cost of the whole run, not of the last process.

Cost is priced from the tokens (:func:`price_totals`): every recorded token of every process is
priced at the role's current ``--price``, so a resume given ``--price`` reports the cost of the whole
run, also of the tokens an earlier, unpriced process spent. The rule is
:data:`~ideaharness.llm.pricing.COST_RULE` (fresh prompt tokens at IN, cached prompt tokens at
CACHED_IN or IN, completion tokens, reasoning included, at OUT); :func:`cost_block` states it in
``results.json`` with the tokens of each kind. The counters carry ``prompt_tokens`` (cached ones
included), ``cached_prompt_tokens``, ``completion_tokens`` (reasoning included) and
``reasoning_tokens``; a usage file of an older version without the last two counts them as 0.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ideaharness.fileio import atomic_write_text
from ideaharness.llm.pricing import COST_RULE, Price, cost_of
from ideaharness.llm.types import Usage

USAGE_DIR = "usage"
FLUSH_INTERVAL_S = 10.0

RoleStats = dict[str, dict[str, Any] | None]
"""Counters per role (``generator``, ``judge``, ...); None for a role without its own client."""


def model_stats(model: Any) -> dict[str, Any] | None:
    """The call/cache/token counters of a model client as a dict (None for clients without stats)."""
    stats = getattr(model, "stats", None)
    if stats is None:
        return None
    return stats.model_dump() if hasattr(stats, "model_dump") else dict(vars(stats))


def sum_stats(items: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """Field-wise sum of counter dicts; None values and None dicts are skipped (None if all are)."""
    present = [d for d in items if d is not None]
    if not present:
        return None
    out: dict[str, Any] = {}
    for stats in present:
        for key, value in stats.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                out.setdefault(key, value)
            elif out.get(key) is None:
                out[key] = value
            else:
                out[key] += value
    return out


PriceLike = Price | tuple[float, ...]
"""A price: a :class:`~ideaharness.llm.pricing.Price` or ``(IN, OUT[, CACHED_IN])`` USD per million
tokens."""

TOKEN_FIELDS = ("prompt_tokens", "cached_prompt_tokens", "completion_tokens", "reasoning_tokens")
"""The token counters of a role's stats (:class:`~ideaharness.llm.client.LLMStats`)."""


def usage_of(stats: Mapping[str, Any]) -> Usage:
    """The tokens of counters (a role's stats) as one :class:`~ideaharness.llm.types.Usage`
    (missing or None counters are 0)."""
    return Usage(**{name: int(stats.get(name) or 0) for name in TOKEN_FIELDS})


def token_cost(stats: Mapping[str, Any], price: PriceLike) -> float:
    """USD of the tokens in ``stats`` by :data:`~ideaharness.llm.pricing.COST_RULE`:
    ``((prompt - cached) * IN + cached * (CACHED_IN or IN) + completion * OUT) / 1e6``.

    Raises:
        ValueError: ``price`` is not 2 or 3 non-negative numbers.
    """
    priced = Price.of(price)
    assert priced is not None
    return cost_of(usage_of(stats), priced)


def spent_tokens(stats: Mapping[str, Any]) -> int:
    """Tokens a budget counts for counters: prompt plus completion tokens (cached prompt tokens and
    reasoning tokens are parts of those)."""
    return int(stats.get("prompt_tokens") or 0) + int(stats.get("completion_tokens") or 0)


def price_totals(totals: RoleStats, prices: Mapping[str, PriceLike | None]) -> float | None:
    """Set ``cost_usd`` of every priced role in ``totals`` (in place) from its summed tokens, and
    return the total over roles (None when no role with counters is priced).

    A role without its own counters (it shares another role's client) is priced with that client.
    """
    total: float | None = None
    for role, stats in totals.items():
        price = prices.get(role)
        if stats is None:
            continue
        if price is None:
            stats["cost_usd"] = None
            continue
        stats["cost_usd"] = token_cost(stats, price)
        total = (total or 0.0) + stats["cost_usd"]
    return total


def cost_block(totals: RoleStats, prices: Mapping[str, PriceLike | None],
               sharing: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``results.json``'s ``cost`` block: which tokens were billed at which price, per role and in all.

    Args:
        totals: counters per role over every process (:meth:`UsageLog.totals`); None for a role
            that shares another role's client.
        prices: role -> its price now (None: unpriced).
        sharing: role -> the role whose client it shares (:meth:`UsageLog.sharing`).

    Returns:
        ``{"rule": COST_RULE, "roles": {role: {"price": Price.describe() | None, "tokens": {prompt,
        cached_prompt, uncached_prompt, completion, reasoning, answer}, "billed_usd": {input,
        cached_input, output} | None, "cost_usd": float | None, "shares_client_of": role | None}},
        "tokens": {the same token kinds summed over roles}, "cost_usd": total | None,
        "unpriced_roles": [roles with tokens and no price]}``. ``answer`` is completion minus
        reasoning; billed amounts are USD. A role sharing a client is listed with no tokens of its own.
    """
    roles: dict[str, Any] = {}
    summed = dict.fromkeys(("prompt", "cached_prompt", "uncached_prompt", "completion", "reasoning",
                            "answer"), 0)
    total: float | None = None
    unpriced: list[str] = []
    for role, stats in totals.items():
        if stats is None:
            roles[role] = {"price": None, "tokens": None, "billed_usd": None, "cost_usd": None,
                           "shares_client_of": (sharing or {}).get(role)}
            continue
        usage = usage_of(stats)
        cached = min(max(usage.cached_prompt_tokens, 0), max(usage.prompt_tokens, 0))
        reasoning = min(max(usage.reasoning_tokens, 0), max(usage.completion_tokens, 0))
        tokens = {"prompt": usage.prompt_tokens, "cached_prompt": cached,
                  "uncached_prompt": usage.prompt_tokens - cached, "completion": usage.completion_tokens,
                  "reasoning": reasoning, "answer": usage.completion_tokens - reasoning}
        for kind, count in tokens.items():
            summed[kind] += count
        price = Price.of(prices.get(role))
        entry: dict[str, Any] = {"price": None, "tokens": tokens, "billed_usd": None, "cost_usd": None,
                                 "shares_client_of": None}
        if price is None:
            if usage.prompt_tokens or usage.completion_tokens:
                unpriced.append(role)
        else:
            cached_price = price.input if price.cached_input is None else price.cached_input
            billed = {"input": tokens["uncached_prompt"] * price.input / 1e6,
                      "cached_input": cached * cached_price / 1e6,
                      "output": usage.completion_tokens * price.output / 1e6}
            cost = cost_of(usage, price)
            entry.update(price=price.describe(), billed_usd=billed, cost_usd=cost)
            total = (total or 0.0) + cost
        roles[role] = entry
    return {"rule": dict(COST_RULE), "roles": roles, "tokens": summed, "cost_usd": total,
            "unpriced_roles": unpriced}


class UsageLog:
    """This process's usage file in a run directory, and the totals over all of them.

    Args:
        run_dir: the run directory.
        roles: role -> model client (anything with a ``stats`` attribute, or None).
    """

    def __init__(self, run_dir: str | Path, roles: Mapping[str, Any]) -> None:
        self.dir = Path(run_dir) / USAGE_DIR
        self.roles = dict(roles)
        started = dt.datetime.now(dt.UTC)
        host = "".join(c if c.isalnum() or c in "-." else "_" for c in socket.gethostname())
        self.process = {"pid": os.getpid(), "host": host, "started": started.isoformat(timespec="seconds")}
        self.path = self.dir / f"{started:%Y%m%dT%H%M%S%f}-{host}-{os.getpid()}.json"
        self._last_flush = 0.0
        self._clock: Callable[[], float] = time.monotonic

    def current(self) -> RoleStats:
        """This process's counters per role (a role sharing another's client counts once)."""
        seen: set[int] = set()
        out: RoleStats = {}
        for role, model in self.roles.items():
            if model is None or id(model) in seen:
                out[role] = None
                continue
            seen.add(id(model))
            out[role] = model_stats(model)
        return out

    def prices(self) -> dict[str, PriceLike | None]:
        """Role -> the price its client charges now (``price``, else ``price_per_mtok``; None when
        unpriced)."""
        return {role: getattr(model, "price", None) if isinstance(getattr(model, "price", None), Price)
                else getattr(model, "price_per_mtok", None) for role, model in self.roles.items()}

    def sharing(self) -> dict[str, str]:
        """Role -> the role whose client it shares (the first role of that client), for the roles
        that share one."""
        first: dict[int, str] = {}
        out: dict[str, str] = {}
        for role, model in self.roles.items():
            if model is None:
                continue
            if id(model) in first:
                out[role] = first[id(model)]
            else:
                first[id(model)] = role
        return out

    def save(self) -> RoleStats:
        """Write this process's counters now; returns them."""
        stats = self.current()
        atomic_write_text(self.path, json.dumps({"process": self.process, "stats": stats}, indent=1))
        self._last_flush = self._clock()
        return stats

    def maybe_save(self) -> None:
        """Write this process's counters if the last write is older than :data:`FLUSH_INTERVAL_S`."""
        if self._clock() - self._last_flush >= FLUSH_INTERVAL_S:
            self.save()

    def totals(self) -> tuple[RoleStats, int]:
        """(counters per role summed over every process's file, number of processes)."""
        per_role: dict[str, list[dict[str, Any] | None]] = {role: [] for role in self.roles}
        n = 0
        for path in sorted(self.dir.glob("*.json")):
            try:
                stats = json.loads(path.read_text(encoding="utf-8"))["stats"]
            except (OSError, ValueError, KeyError, TypeError):
                continue  # a damaged usage file loses its counts, not the run
            n += 1
            for role, value in stats.items():
                per_role.setdefault(role, []).append(value if isinstance(value, dict) else None)
        return {role: sum_stats(values) for role, values in per_role.items()}, n
