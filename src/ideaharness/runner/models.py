"""The model clients of a run: one per role the run uses, built through the provider registry.

A benchmark names its roles and their model strings (:meth:`Benchmark.model_roles`), e.g.
``{"generator": "openai/gpt-4o-mini", "judge": "local/qwen2.5-coder-1.5b"}``; LigBench with
several generators names ``"generator:<model>"`` roles. Roles starting with ``judge`` use
``--judge-base-url`` (else ``--base-url``); every other role uses ``--base-url``. Only the roles
given are built and validated (an unused default model is never checked), and a client is shared
by every role with the same model string, endpoint, price and reasoning settings.

Budgets: a run with ``--max-cost`` or ``--max-tokens`` has one
:class:`~ideaharness.llm.budget.RunBudget` (:func:`run_budget`), shared by every client the runner
builds and charged with what the run's earlier processes spent (their ``usage/`` files), so a
resume counts the whole run's spend.
Clients given in Python (``ideaharness.run(judge=...)``) are used as given: they spend against the
budget only when they were built with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ideaharness.errors import UserError
from ideaharness.llm.providers import accepts_base_url
from ideaharness.llm.types import ChatModel
from ideaharness.runner.options import ExecutionOptions, PriceTuple

if TYPE_CHECKING:
    from ideaharness.llm.budget import RunBudget


def is_judge_role(role: str) -> bool:
    """Whether ``role`` is a judge role (uses ``--judge-base-url``)."""
    return role.split(":", 1)[0] == "judge"


def role_url(role: str, options: ExecutionOptions) -> str | None:
    """The endpoint flag value that applies to ``role``."""
    if is_judge_role(role):
        return options.judge_base_url or options.base_url
    return options.base_url


def check_endpoint_flags(options: ExecutionOptions, roles: Mapping[str, str]) -> None:
    """Refuse ``--base-url`` / ``--judge-base-url`` when no model of the run could use it.

    Raises:
        UserError: ``base_url`` set but no non-judge role (nor a judge without its own endpoint)
            has a provider that takes an endpoint; ``judge_base_url`` set but no judge role does.
    """
    judges = [m for r, m in roles.items() if is_judge_role(r)]
    others = [m for r, m in roles.items() if not is_judge_role(r)]
    if options.base_url and not (
        any(accepts_base_url(m) for m in others)
        or (any(accepts_base_url(m) for m in judges) and not options.judge_base_url)
    ):
        raise UserError("--base-url applies to models whose provider takes an endpoint (openai/<model>), "
                        "and no model of this run is one")
    if options.judge_base_url and not any(accepts_base_url(m) for m in judges):
        raise UserError("--judge-base-url applies to a judge whose provider takes an endpoint "
                        "(openai/<model>) only")


def check_budget_prices(options: ExecutionOptions, roles: Mapping[str, str]) -> None:
    """Refuse ``--max-cost`` when a role that calls an endpoint has no price: its spend could not be
    counted. Local models and systems cost 0.

    Raises:
        UserError: naming the first unpriced endpoint role and the flag that prices it.
    """
    if options.max_cost is None:
        return
    for role, model in roles.items():
        if accepts_base_url(model) and options.price_for(role) is None:
            raise UserError(f"--max-cost: the {role} role ({model}) calls an endpoint and has no price; "
                            f"give --price {role.split(':', 1)[0]}=IN,OUT (or --price IN,OUT for every role)")


def run_budget(options: ExecutionOptions, run_dir: str | Path | None = None,
               roles: Mapping[str, Any] | None = None) -> RunBudget | None:
    """The run's budget from ``--max-cost`` / ``--max-tokens``, charged with what the earlier
    processes of the run in ``run_dir`` spent (:func:`earlier_spend`); None without either flag.

    Read before the run directory opens: when ``--force`` then moves an earlier run with other
    settings aside, its spend was counted all the same (the budget errs on the side of stopping
    early, never of spending more).
    """
    if not options.budgeted:
        return None
    from ideaharness.llm.budget import RunBudget

    cost, tokens = earlier_spend(run_dir, roles or {}, options) if run_dir is not None else (0.0, 0)
    return RunBudget(max_cost_usd=options.max_cost, max_tokens=options.max_tokens, spent_usd=cost,
                     spent_tokens=tokens)


def earlier_spend(run_dir: str | Path, roles: Mapping[str, Any],
                  options: ExecutionOptions) -> tuple[float, int]:
    """(USD, tokens) the earlier processes of the run in ``run_dir`` spent, from their ``usage/``
    files: every recorded token priced at the role's current ``--price`` (unpriced roles cost 0),
    tokens = prompt + completion; (0, 0) when the directory has none.

    Args:
        roles: the run's roles (keys); roles found only in the files count too.
    """
    from ideaharness.runs.usage import UsageLog, spent_tokens, token_cost

    totals, _ = UsageLog(run_dir, dict.fromkeys(roles)).totals()
    cost, tokens = 0.0, 0
    for role, stats in totals.items():
        if not stats:
            continue
        tokens += spent_tokens(stats)
        price = options.price_for(role)
        if price is not None:
            cost += token_cost(stats, price)
    return cost, tokens


def build_models(
    roles: Mapping[str, str], options: ExecutionOptions, given: Mapping[str, Any] | None = None, *,
    parity: bool = False, budget: RunBudget | None = None,
) -> dict[str, ChatModel]:
    """One client per role: ``given[role]`` when supplied (any ChatModel), else built with
    :func:`~ideaharness.llm.get_llm` from the role's model string and ``options`` (endpoint,
    cache, concurrency, rpm, retries, timeout, price, reasoning effort and budget).

    Args:
        roles: role -> model string, only the roles the run uses.
        given: role -> ready client (not built, not validated, not budgeted).
        parity: the benchmark's config asks for the published settings: a role's reasoning
            budget is 0 unless ``--reasoning-budget`` gives one
            (:meth:`ExecutionOptions.reasoning_budget_for`).
        budget: the run's budget (:func:`run_budget`), shared by every client built here.

    Returns:
        role -> client; roles with the same model string, endpoint, price (``--price``,
        :meth:`ExecutionOptions.price_for`), reasoning effort and reasoning budget share one client.

    Raises:
        UserError: an endpoint flag no model can use, a per-role flag for a role the run does not
            have, ``--max-cost`` with an unpriced endpoint role, or a bad model string / missing key.
    """
    from ideaharness.llm import get_llm

    given = dict(given or {})
    built_roles = {r: m for r, m in roles.items() if r not in given}
    check_endpoint_flags(options, built_roles)
    options.check_roles(roles)
    check_budget_prices(options, built_roles)
    built: dict[tuple[str, str | None, PriceTuple | None, str | None, int | None], ChatModel] = {}
    out: dict[str, ChatModel] = {}
    for role, model in roles.items():
        if role in given:
            out[role] = given[role]
            continue
        url = role_url(role, options) if accepts_base_url(model) else None
        price = options.price_for(role)
        effort = options.reasoning_effort_for(role)
        reasoning = options.reasoning_budget_for(role, parity=parity)
        key = (model, url, price, effort, reasoning)
        if key not in built:
            built[key] = get_llm(
                model, base_url=url, cache_path=options.cache_path, use_cache=options.use_cache,
                max_concurrency=options.max_concurrency, rpm=options.rpm, max_retries=options.max_retries,
                timeout_s=options.timeout, price_per_mtok=price, reasoning_budget=reasoning,
                reasoning_effort=effort, budget=budget,
            )
        out[role] = built[key]
    return out


def build_model(model: str, options: ExecutionOptions, *, role: str = "judge") -> ChatModel:
    """The client of one model for ``role`` outside a run directory (``score-idea``, ``compare
    --judge``; see :func:`build_models`): ``--max-cost`` / ``--max-tokens`` bound what this client
    spends in this process.

    Raises:
        UserError: see :func:`build_models`.
    """
    return build_models({role: model}, options, budget=run_budget(options))[role]
