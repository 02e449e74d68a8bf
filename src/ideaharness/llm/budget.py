"""A run's spending limit (``--max-cost USD``, ``--max-tokens N``), shared by every model client of
one process.

Every provider call the response cache cannot answer is *admitted* first
(:meth:`RunBudget.admit`): it reserves an estimate of what the call will cost, and is refused
(:class:`~ideaharness.llm.errors.BudgetExceeded`) when what is spent, plus what calls in flight
have reserved, plus this estimate would pass a limit. When the call ends it is *settled*
(:meth:`RunBudget.settle`) with what it really spent (0 when it failed), which releases the
reservation. Cache hits are never charged. So no new call starts once the budget would be
exceeded, and the run stops within about one call's cost of the limit (calls already in flight
finish).

The estimate of a call (:meth:`RunBudget.estimate`) is the mean of what earlier settled calls of
the same model spent, once any has settled; before that it is an upper bound from the request:
``prompt characters / 4`` tokens at the input price plus the whole reply cap (``max_tokens``, the
reasoning budget included) at the output price.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ideaharness.llm.errors import BudgetExceeded
from ideaharness.llm.pricing import Price
from ideaharness.llm.types import ChatRequest

CHARS_PER_TOKEN = 4
"""Prompt characters per token in the first estimate of a call (English text: about 4)."""
UNCAPPED_REPLY_TOKENS = 4096
"""Reply tokens assumed by the first estimate of a request that sends no cap (``max_tokens`` None)."""
ESTIMATE_RULE = (
    "mean cost and tokens of the model's settled calls; before any settled: prompt characters / 4 "
    f"tokens at the input price + max_tokens (or {UNCAPPED_REPLY_TOKENS} when no cap is sent) at the "
    "output price"
)


@dataclass(frozen=True)
class Reservation:
    """What one admitted call reserved: ``cost_usd`` (USD) and ``tokens`` (prompt + reply), for
    ``model``."""

    cost_usd: float
    tokens: int
    model: str = ""


@dataclass
class _Observed:
    calls: int = 0
    cost_usd: float = 0.0
    tokens: int = 0


@dataclass
class RunBudget:
    """The spending limits of one run and what was spent against them.

    Args:
        max_cost_usd: the cost limit, USD (> 0), or None for no cost limit.
        max_tokens: the token limit, prompt + completion tokens of every call (> 0), or None.
        spent_usd: USD already spent (a resumed run: what earlier processes spent), >= 0.
        spent_tokens: tokens already spent, >= 0.

    Thread-safe: every client of the process shares one budget.

    Raises:
        ValueError: a limit that is not > 0, or negative spending.
    """

    max_cost_usd: float | None = None
    max_tokens: int | None = None
    spent_usd: float = 0.0
    spent_tokens: int = 0
    in_flight_usd: float = field(default=0.0, init=False)
    in_flight_tokens: int = field(default=0, init=False)
    admitted: int = field(default=0, init=False)
    """Calls admitted by this process."""
    refused: int = field(default=0, init=False)
    """Calls refused by this process (each one a unit left undone)."""
    _start_usd: float = field(default=0.0, init=False, repr=False)
    _start_tokens: int = field(default=0, init=False, repr=False)
    _observed: dict[str, _Observed] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_cost_usd is not None and not self.max_cost_usd > 0:
            raise ValueError(f"--max-cost must be > 0 USD, got {self.max_cost_usd:g}")
        if self.max_tokens is not None and not self.max_tokens > 0:
            raise ValueError(f"--max-tokens must be > 0, got {self.max_tokens}")
        if self.spent_usd < 0 or self.spent_tokens < 0:
            raise ValueError("spent cost and tokens must be >= 0")
        self._start_usd, self._start_tokens = self.spent_usd, self.spent_tokens

    @property
    def limited(self) -> bool:
        """True when a cost or a token limit is set."""
        return self.max_cost_usd is not None or self.max_tokens is not None

    def estimate(self, request: ChatRequest, price: Price | None) -> tuple[float, int]:
        """(USD, tokens) one call of ``request`` is expected to spend (rule: :data:`ESTIMATE_RULE`).

        Args:
            request: the request about to be sent (``max_tokens`` already holds the reasoning budget).
            price: the model's price (USD per million tokens); None costs 0 (a local model, a system).

        Returns:
            (cost in USD >= 0, prompt + reply tokens >= 0). The mean of the model's settled calls
            once one settled with tokens; else an upper bound:
            prompt_tokens ~ characters / 4, cost = (prompt_tokens * IN + reply_cap * OUT) / 1e6.
        """
        with self._lock:
            seen = self._observed.get(request.model)
            if seen is not None and seen.calls:
                return seen.cost_usd / seen.calls, round(seen.tokens / seen.calls)
        prompt = sum(len(m.get("content", "")) for m in request.messages) // CHARS_PER_TOKEN + 1
        reply = request.max_tokens if request.max_tokens is not None else UNCAPPED_REPLY_TOKENS
        cost = 0.0 if price is None else (prompt * price.input + reply * price.output) / 1e6
        return cost, prompt + reply

    def admit(self, estimate_usd: float, estimate_tokens: int, *, model: str = "") -> Reservation:
        """Reserve ``estimate_usd`` and ``estimate_tokens`` for one call, or refuse it.

        Args:
            estimate_usd: what the call is expected to cost, USD (:meth:`estimate`).
            estimate_tokens: prompt + reply tokens it is expected to spend.
            model: the model string (named in the refusal).

        Returns:
            The reservation to :meth:`settle` when the call ends (also when it fails).

        Raises:
            BudgetExceeded: spent + in flight + estimate > a limit. The message names the limit, what
                is spent and in flight, and that a re-run with a larger budget resumes.
        """
        with self._lock:
            refusal = (_exceeded("--max-cost", self.max_cost_usd, self.spent_usd, self.in_flight_usd,
                                 estimate_usd, _usd)
                       or _exceeded("--max-tokens", self.max_tokens, self.spent_tokens, self.in_flight_tokens,
                                    estimate_tokens, _count, unit=" tokens"))
            if refusal is not None:
                flag, problem = refusal
                self.refused += 1
                who = f"{model}: " if model else ""
                raise BudgetExceeded(f"{who}budget reached: {problem}; not started. Run the same command "
                                     f"again with a larger {flag} to resume the units left")
            self.in_flight_usd += estimate_usd
            self.in_flight_tokens += estimate_tokens
            self.admitted += 1
            return Reservation(cost_usd=estimate_usd, tokens=estimate_tokens, model=model)

    def settle(self, reservation: Reservation, cost_usd: float, tokens: int) -> None:
        """Release ``reservation`` and charge what the call really spent.

        Args:
            reservation: from :meth:`admit` (settle each one once).
            cost_usd: USD the call spent (0 when it failed or is unpriced).
            tokens: prompt + completion tokens it spent (0 when it failed). A call with tokens > 0
                also feeds the model's mean used by :meth:`estimate`.
        """
        with self._lock:
            self.in_flight_usd = max(0.0, self.in_flight_usd - reservation.cost_usd)
            self.in_flight_tokens = max(0, self.in_flight_tokens - reservation.tokens)
            self.spent_usd += max(cost_usd, 0.0)
            self.spent_tokens += max(tokens, 0)
            if tokens > 0:
                seen = self._observed.setdefault(reservation.model, _Observed())
                seen.calls += 1
                seen.cost_usd += max(cost_usd, 0.0)
                seen.tokens += tokens

    def charge(self, cost_usd: float, tokens: int) -> None:
        """Add spending that was never admitted one call at a time (a batch's answers), USD and tokens."""
        self.settle(Reservation(0.0, 0), cost_usd, tokens)

    def summary(self) -> dict[str, Any]:
        """The budget for ``results.json``: limits (USD, tokens; None = none), what was spent (all
        processes: ``spent_*``; this process: ``spent_now_*``), calls admitted and refused here, and
        the estimate rule."""
        with self._lock:
            return {
                "max_cost_usd": self.max_cost_usd,
                "max_tokens": self.max_tokens,
                "spent_usd": self.spent_usd,
                "spent_tokens": self.spent_tokens,
                "spent_now_usd": self.spent_usd - self._start_usd,
                "spent_now_tokens": self.spent_tokens - self._start_tokens,
                "calls_admitted": self.admitted,
                "calls_refused": self.refused,
                "estimate_rule": ESTIMATE_RULE,
            }

    def status_text(self) -> str:
        """One line for the progress bar: ``tokens 12,345 · $0.0123 of $1.00`` (the limit after
        ``of`` when one is set; the cost part when a cost limit is set or anything was charged)."""
        with self._lock:
            tokens = f"tokens {self.spent_tokens:,}"
            if self.max_tokens is not None:
                tokens += f" of {self.max_tokens:,}"
            parts = [tokens]
            if self.max_cost_usd is not None or self.spent_usd > 0:
                cost = _usd(self.spent_usd)
                if self.max_cost_usd is not None:
                    cost += f" of {_usd(self.max_cost_usd)}"
                parts.append(cost)
            return " · ".join(parts)


def _exceeded(flag: str, limit: float | None, spent: float, in_flight: float, estimate: float,
              show: Callable[[float], str], unit: str = "") -> tuple[str, str] | None:
    """``(flag, why)`` when ``spent + in_flight + estimate`` would pass ``limit`` (None: no limit)."""
    if limit is None or spent + in_flight + estimate <= limit:
        return None
    return flag, (f"{flag} {show(limit)} would be exceeded: spent {show(spent)}{unit}, in flight "
                  f"{show(in_flight)}, this call about {show(estimate)}")


def _count(value: float) -> str:
    return f"{value:,}"


def _usd(value: float) -> str:
    """``$1.00`` for whole cents, else ``$0.0123`` (4 decimals)."""
    if abs(value - round(value, 2)) < 1e-12:
        return f"${value:.2f}"
    return f"${value:.4f}"
