"""Model usage of a run, summed over every process that worked on it.

A run is often finished by several processes (a crash, Ctrl-C, a resume, shards merged into one
directory). Each process keeps its own counters (:class:`~ideaharness.llm.client.LLMStats`) and
writes them to ``usage/<process>.json`` in the run directory — when results are written, when the
store closes, and every :data:`FLUSH_INTERVAL_S` seconds while records are appended — so
``results.json`` can report the calls, tokens and cost of the whole run, not of the last process.

Cost is priced from the tokens (:func:`price_totals`): every recorded token of every process is
priced at the role's current ``--price``, so a resume given ``--price`` reports the cost of the whole
run, also of the tokens an earlier, unpriced process spent.
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


Price = tuple[float, float]
"""(input, output) USD per million tokens."""


def token_cost(stats: Mapping[str, Any], price: Price) -> float:
    """USD of the tokens in ``stats``: ``(prompt_tokens * IN + completion_tokens * OUT) / 1e6``."""
    price_in, price_out = price
    return (int(stats.get("prompt_tokens") or 0) * price_in
            + int(stats.get("completion_tokens") or 0) * price_out) / 1e6


def price_totals(totals: RoleStats, prices: Mapping[str, Price | None]) -> float | None:
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

    def prices(self) -> dict[str, Price | None]:
        """Role -> the price its client charges now (``price_per_mtok``; None when unpriced)."""
        return {role: getattr(model, "price_per_mtok", None) for role, model in self.roles.items()}

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
