"""The per-role token and budget options (issue 21): --reasoning-effort, --reasoning-budget, --price
with a cached-input price, --max-cost, --max-tokens; parsing, lookup by role and refusals."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ideaharness.errors import UserError
from ideaharness.llm.client import REASONING_EFFORTS as CLIENT_EFFORTS
from ideaharness.runner.options import REASONING_EFFORTS, ExecutionOptions, parse_prices


def test_per_role_values_own_then_kind_then_every_role() -> None:
    options = ExecutionOptions(reasoning_effort=["low", "judge=high"], reasoning_budget=["0", "judge=auto"],
                               price=["1,2", "judge=3,15,1.5"])
    assert options.reasoning_effort_for("judge:openai/x") == "high"
    assert options.reasoning_effort_for("generator") == "low"
    assert options.reasoning_budget_for("generator") == 0
    assert options.reasoning_budget_for("judge") is None  # auto: the provider's default
    assert options.reasoning_budget_for("judge", parity=True) == 0  # parity: auto is 0
    assert options.price_for("judge:x") == (3.0, 15.0, 1.5) and options.price_for("rewriter") == (1.0, 2.0)
    assert ExecutionOptions(reasoning_budget=512).reasoning_budget_for("x") == 512
    assert ExecutionOptions().reasoning_budget_for("judge") is None
    assert set(REASONING_EFFORTS) == set(CLIENT_EFFORTS)


@pytest.mark.parametrize("kwargs, match", [
    ({"reasoning_effort": "max"}, "one of none"),
    ({"reasoning_budget": "-1"}, "negative"),
    ({"reasoning_budget": "lots"}, "whole number"),
    ({"reasoning_effort": ["low", "low"]}, "given twice"),
    ({"price": "1,2,3,4"}, "IN,OUT"),
    ({"price": "1,2,-1"}, "negative"),
    ({"price": "=1,2"}, "a role before"),
    ({"max_cost": 1.0, "runner": "ray"}, "--runner ray"),
])
def test_bad_values_are_refused_in_one_line(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(UserError, match=match):
        ExecutionOptions(**kwargs)


def test_a_per_role_flag_for_a_role_the_run_lacks_is_refused() -> None:
    with pytest.raises(UserError, match="--reasoning-budget rewriter="):
        ExecutionOptions(reasoning_budget=["rewriter=0"]).check_roles(["generator", "judge"])


@given(st.lists(st.floats(min_value=0, max_value=1e4, allow_nan=False), min_size=2, max_size=3))
def test_price_text_round_trips(numbers: list[float]) -> None:
    text = ",".join(repr(n) for n in numbers)
    assert parse_prices(text) == {"*": tuple(numbers)}
    assert parse_prices(f"judge={text}") == {"judge": tuple(numbers)}
