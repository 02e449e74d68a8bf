"""The model clients of a run: one per role the run uses, built through the provider registry.

A benchmark names its roles and their model strings (:meth:`Benchmark.model_roles`), e.g.
``{"generator": "openai/gpt-4o-mini", "judge": "local/qwen2.5-coder-1.5b"}``; LigBench with
several generators names ``"generator:<model>"`` roles. Roles starting with ``judge`` use
``--judge-base-url`` (else ``--base-url``); every other role uses ``--base-url``. Only the roles
given are built and validated (an unused default model is never checked), and a client is shared
by every role with the same model string, endpoint and price.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ideaharness.errors import UserError
from ideaharness.llm.providers import accepts_base_url
from ideaharness.llm.types import ChatModel
from ideaharness.runner.options import ExecutionOptions


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


def build_models(
    roles: Mapping[str, str], options: ExecutionOptions, given: Mapping[str, Any] | None = None
) -> dict[str, ChatModel]:
    """One client per role: ``given[role]`` when supplied (any ChatModel), else built with
    :func:`~ideaharness.llm.get_llm` from the role's model string and ``options`` (endpoint,
    cache, concurrency, rpm, retries, timeout, price).

    Args:
        roles: role -> model string, only the roles the run uses.
        given: role -> ready client (not built, not validated).

    Returns:
        role -> client; roles with the same model string, endpoint and price (``--price``,
        :meth:`ExecutionOptions.price_for`) share one client.

    Raises:
        UserError: an endpoint flag no model can use, a ``--price ROLE=...`` for a role the run
            does not have, or a bad model string / missing key.
    """
    from ideaharness.llm import get_llm

    given = dict(given or {})
    check_endpoint_flags(options, {r: m for r, m in roles.items() if r not in given})
    options.check_price_roles(roles)
    built: dict[tuple[str, str | None, tuple[float, float] | None], ChatModel] = {}
    out: dict[str, ChatModel] = {}
    for role, model in roles.items():
        if role in given:
            out[role] = given[role]
            continue
        url = role_url(role, options) if accepts_base_url(model) else None
        price = options.price_for(role)
        key = (model, url, price)
        if key not in built:
            built[key] = get_llm(
                model, base_url=url, cache_path=options.cache_path, use_cache=options.use_cache,
                max_concurrency=options.max_concurrency, rpm=options.rpm, max_retries=options.max_retries,
                timeout_s=options.timeout, price_per_mtok=price,
            )
        out[role] = built[key]
    return out


def build_model(model: str, options: ExecutionOptions, *, role: str = "judge") -> ChatModel:
    """The client of one model for ``role`` (see :func:`build_models`).

    Raises:
        UserError: see :func:`build_models`.
    """
    return build_models({role: model}, options)[role]
