"""Run budgets end to end (issue 21): a LiveIdeaBench run whose generator and judge are priced
``openai/`` models on a loopback server. ``--max-cost`` stops it within one unit's cost of the
budget with exit 3 and the units left listed; a resume with a larger budget ends with the scores
of an unbudgeted run. The ``cost`` block states which tokens were billed at which price."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ideaharness.cli import main
from ideaharness.errors import UserError
from ideaharness.runner.options import ExecutionOptions
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.liveideabench.registry_fixtures import reply

KEYWORDS = ["meteorology", "stars", "volcanoes", "glaciers", "tides", "corals"]
PRICE = "2,8"  # USD per million prompt / completion tokens


def _run(server: OpenAICompatServer, out: Path, *extra: str) -> int:
    args = ["run", "liveideabench", *[a for k in KEYWORDS for a in ("--keyword", k)],
            "--generator", "openai/gen", "--judge", "openai/judge", "--base-url", server.base_url,
            "--max-retries", "0", "--max-concurrency", "1", "--no-progress", "--price", PRICE,
            "--reasoning-budget", "0", "--out", str(out), *extra]
    with pytest.raises(SystemExit) as exc:
        main(args)
        raise SystemExit(0)
    return int(exc.value.code or 0)


def _results(out: Path) -> dict[str, Any]:
    return json.loads((out / "results.json").read_text())


def _scores(out: Path) -> list[str]:
    return sorted((out / "scores.jsonl").read_text().splitlines())


def test_max_cost_stops_within_one_unit_and_a_larger_budget_resumes_to_the_unbudgeted_scores(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with OpenAICompatServer(reply) as server:
        monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache-free"))
        free_code = _run(server, tmp_path / "free")
        free = _results(tmp_path / "free")
        total = free["cost_usd"]
        calls = len(server.requests)
        assert total and calls > 4
        unit = max(s["cost_usd"] / max(s["calls"], 1) for s in free["llm_stats"].values() if s)

        monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache-budget"))
        limit = total / 2  # above the first call's upper-bound estimate (prompt/4 + the reply cap)
        out = tmp_path / "budget"
        assert _run(server, out, "--max-cost", f"{limit:.9f}") == 3
        printed = capsys.readouterr().out
        assert "budget reached:" in printed and "--max-cost" in printed
        stopped = _results(out)
        assert stopped["status"] == "partial"
        budget = stopped["budget"]
        assert budget["max_cost_usd"] == pytest.approx(limit)
        assert budget["units_left"] > 0 and budget["calls_refused"] > 0
        assert 0 < budget["spent_usd"] <= limit + unit  # never more than one unit's cost past the budget
        assert stopped["cost_usd"] == pytest.approx(budget["spent_usd"])
        left = [u for u in stopped["failed_units"] if u["status"] == "budget"]
        assert len(left) == budget["units_left"] and "budget reached" in left[0]["error"]

        assert _run(server, out, "--max-cost", f"{total * 3:.9f}") == free_code
        resumed = _results(out)
        assert resumed["budget"]["units_left"] == 0
        assert resumed["budget"]["spent_usd"] == pytest.approx(total)  # earlier spend counted once
        assert resumed["cost_usd"] == pytest.approx(total)
        assert _scores(out) == _scores(tmp_path / "free")
        assert resumed["metrics"] == free["metrics"]


def test_the_cost_block_states_which_tokens_were_billed_at_which_price(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    with OpenAICompatServer(reply) as server:
        _run(server, tmp_path / "run", "--price", "judge=3,15,1.5")
    results = _results(tmp_path / "run")
    cost = results["cost"]
    assert "cached_prompt_tokens" in cost["rule"]["formula"]
    judge = cost["roles"]["judge:openai/judge"]
    assert judge["price"]["input_usd_per_mtok"] == 3 and judge["price"]["cached_input_usd_per_mtok"] == 1.5
    assert judge["tokens"]["prompt"] == results["llm_stats"]["judge:openai/judge"]["prompt_tokens"]
    assert judge["cost_usd"] == pytest.approx(sum(judge["billed_usd"].values()))
    assert cost["roles"]["generator"]["price"]["input_usd_per_mtok"] == 2
    assert cost["cost_usd"] == pytest.approx(results["cost_usd"])


def test_max_cost_refuses_an_unpriced_endpoint_role_and_ray(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from ideaharness.runner.models import build_models

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    options = ExecutionOptions(max_cost=1.0, price=["generator=1,2"], base_url="http://127.0.0.1:9/v1")
    with pytest.raises(UserError, match="judge role"):
        build_models({"generator": "openai/a", "judge": "openai/b"}, options)
    with pytest.raises(UserError, match="--runner ray"):
        ExecutionOptions(max_tokens=100, runner="ray")


def test_cost_block_bills_cached_prompt_tokens_at_the_cached_price_and_reasoning_once() -> None:
    from ideaharness.runs.usage import cost_block, token_cost

    stats = {"judge": {"prompt_tokens": 1000, "cached_prompt_tokens": 400, "completion_tokens": 300,
                       "reasoning_tokens": 250}, "judge:b": None, "generator": {"prompt_tokens": 10}}
    block = cost_block(stats, {"judge": (3.0, 15.0, 1.5), "judge:b": (3.0, 15.0, 1.5)}, {"judge:b": "judge"})
    judge = block["roles"]["judge"]
    assert judge["tokens"] == {"prompt": 1000, "cached_prompt": 400, "uncached_prompt": 600,
                               "completion": 300, "reasoning": 250, "answer": 50}
    assert judge["billed_usd"] == pytest.approx({"input": 600 * 3 / 1e6, "cached_input": 400 * 1.5 / 1e6,
                                                 "output": 300 * 15 / 1e6})
    assert judge["cost_usd"] == pytest.approx((600 * 3 + 400 * 1.5 + 300 * 15) / 1e6)
    assert block["roles"]["judge:b"]["shares_client_of"] == "judge"
    assert block["unpriced_roles"] == ["generator"] and block["cost_usd"] == judge["cost_usd"]
    # an old usage file without the new counters: every prompt token at IN
    assert token_cost({"prompt_tokens": 1000, "completion_tokens": 300}, (3.0, 15.0, 1.5)) == pytest.approx(
        (1000 * 3 + 300 * 15) / 1e6)
