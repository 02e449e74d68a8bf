"""Batch mode with anthropic/ models against the loopback Message Batches API (round trip through the
response cache, re-attach, errored and expired lines, a whole benchmark run), results-file reading,
and the cost estimate that refuses a batch over the run's budget (openai/ and anthropic/)."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ideaharness import arun
from ideaharness.benchmarks.ideabench.config import IdeaBenchConfig
from ideaharness.errors import PartialRunError, UserError
from ideaharness.llm import get_llm
from ideaharness.llm.batch import (
    BatchableModel,
    BatchSettings,
    batchable_models,
    estimate_batch,
    run_phase_batched,
    run_phases_batched,
)
from ideaharness.llm.batch_files import (
    export_lines,
    import_output,
    load_state,
    read_output_lines,
    read_requests,
)
from ideaharness.llm.budget import RunBudget
from ideaharness.llm.cache import ResponseCache
from ideaharness.runner.options import ExecutionOptions
from ideaharness.runner.steps import StepRunner
from ideaharness.runs.store import RunStore
from ideaharness.testing.anthropic_server import Answer, AnthropicServer, BatchPlan, Reply
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.ideabench.conftest import ideabench_responder

FAST = BatchSettings(poll_interval_s=0.01)
SECRET = "sk-ant-" + uuid.uuid4().hex + "-batch"  # made per session: no key-like literal in the tree


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def _llm(server: AnthropicServer | OpenAICompatServer, cache: Path, provider: str = "anthropic",
         **kw) -> BatchableModel:
    (model,) = batchable_models(get_llm(f"{provider}/fake", base_url=server.base_url, cache_path=cache, **kw))
    return model


def _ask(model: BatchableModel, max_tokens: int = 8):
    async def ask(i: int) -> None:
        await model.chat([{"role": "system", "content": "Be brief."},
                          {"role": "user", "content": f"question number {i}"}], max_tokens=max_tokens)

    return ask


def _thinking(body: dict) -> Answer:
    return Answer(f"answer to {body['messages'][-1]['content']}", thinking="let me think about it",
                  cache_read_input_tokens=1)


def test_round_trip_through_message_batches_into_the_cache(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    with AnthropicServer(_thinking, api_key=SECRET, batch_plans=[BatchPlan(polls_per_state=3)]) as server:
        model = _llm(server, tmp_path / "c.sqlite", price_per_mtok=(3.0, 15.0, 0.3))
        assert model.batchable
        report = asyncio.run(run_phase_batched(_ask(model), list(range(4)), phase="ask", run_dir=tmp_path / "run",  # noqa: E501
                                               settings=FAST, progress=False))
        assert (report.submitted, report.imported, report.failed_lines) == (4, 4, {})
        assert len(server.batches) == 1 and server.requests == []
        (batch,) = server.batches.values()
        assert batch["processing_status"] == "ended" and batch["request_counts"]["succeeded"] == 4
        (requests,) = server.batch_requests.values()
        params = requests[0]["params"]
        assert params["system"] == "Be brief." and params["thinking"] == {"type": "enabled", "budget_tokens": 2048}  # noqa: E501
        assert params["max_tokens"] == 8 + 2048 and "temperature" not in params
        assert {r["custom_id"] for r in requests} == set(read_requests(tmp_path / "run"))
        # the normal pass: every answer from the cache, reasoning apart, nothing asked synchronously
        completion = asyncio.run(model.chat([{"role": "system", "content": "Be brief."},
                                             {"role": "user", "content": "question number 2"}], max_tokens=8))
        assert completion.cached and completion.text == "answer to question number 2"
        assert completion.reasoning == "let me think about it" and server.requests == []
        assert completion.usage.cached_prompt_tokens == 1 and completion.cost_usd and completion.cost_usd > 0
        stats = model.stats
        assert stats.calls == 4 and stats.reasoning_tokens == 4 * 5 and stats.cached_prompt_tokens == 4
        state = load_state(tmp_path / "run", "ask")
        (job,) = state.jobs
        assert job.api == "anthropic" and job.imported and job.succeeded == 4 and job.status == "ended"
        assert job.estimate_usd is not None and job.estimate_usd >= stats.cost_usd  # an upper bound
    for path in [*(tmp_path / "run").rglob("*"), tmp_path / "c.sqlite"]:
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_a_stopped_wait_reattaches_to_the_same_batch(tmp_path: Path) -> None:
    plan = BatchPlan(polls_per_state=10**9)
    with AnthropicServer(batch_plans=[plan]) as server:
        model = _llm(server, tmp_path / "c.sqlite")
        waiting = BatchSettings(poll_interval_s=0.01, max_wait_s=0.05)
        with pytest.raises(PartialRunError, match="run the same command again"):
            asyncio.run(run_phase_batched(_ask(model), list(range(3)), phase="ask", run_dir=tmp_path / "run",
                                          settings=waiting, progress=False))
        assert len(server.batches) == 1 and load_state(tmp_path / "run", "ask").jobs[0].status == "in_progress"  # noqa: E501
        plan.polls_per_state = 1
        report = asyncio.run(run_phase_batched(_ask(model), list(range(3)), phase="ask", run_dir=tmp_path / "run",  # noqa: E501
                                               settings=FAST, progress=False))
        assert len(server.batches) == 1  # re-attached: not submitted (nor paid) twice
        assert (report.reattached, report.submitted, report.imported) == (1, 0, 3)
        asyncio.run(_ask(model)(1))
        assert server.requests == []


def test_errored_and_expired_lines_are_asked_synchronously_or_reported(tmp_path: Path) -> None:
    plan = BatchPlan(errored_lines=frozenset({1}), expire_after=3)
    error = {"type": "error", "error": {"type": "api_error", "message": "down"}}
    with AnthropicServer(batch_plans=[plan], script=[Reply(500, error)]) as server:
        model = _llm(server, tmp_path / "c.sqlite", max_retries=0)
        store = RunStore(tmp_path / "run", {"test": "anthropic batch"})
        steps = StepRunner(store, progress=False)

        async def phase(i: int) -> None:
            await steps.judge_step("ask", str(i), "", model, [{"role": "user", "content": f"q{i}"}],
                                   lambda text: text, max_tokens=8)

        with store:
            (report,) = asyncio.run(run_phases_batched(steps.run_phases, list(range(5)), [("ask", phase)],
                                                       run_dir=store.dir, settings=FAST, progress=False))
            assert len(server.batches) == 1 and report.imported == 2 and len(report.failed_lines) == 3
            reasons = sorted(report.failed_lines.values())
            assert reasons[0].startswith("api_error") and all(r.startswith("batch_expired") for r in reasons[1:])  # noqa: E501
            assert len(server.requests) == 3  # the three lines without an answer, asked synchronously
            assert len({i for i, _, _ in store.records("ask")}) == 4
            outcome = steps.outcome()
            assert outcome["status"] == "partial" and "HTTP 500" in outcome["failed_units"][0]["error"]


def _ideabench_server(**kw) -> AnthropicServer:
    respond = ideabench_responder()

    def answer(body: dict) -> str:  # the responder reads the chat as sent: system first
        system = [{"role": "system", "content": body["system"]}] if body.get("system") else []
        return respond(system + body["messages"])

    return AnthropicServer(answer, **kw)


def _ideabench(server: AnthropicServer, out: Path, cache: Path, *, batch: bool) -> dict:
    options = ExecutionOptions(out=out, progress=False, base_url=server.base_url, cache_path=cache, limit=2,
                               batch=batch, batch_poll=0.01)
    config = IdeaBenchConfig(generator="anthropic/fake", judge="anthropic/fake", indicators=["novelty"])
    return asyncio.run(arun("ideabench", config=config, options=options))


def test_an_ideabench_batch_run_measures_what_a_synchronous_run_does(tmp_path: Path) -> None:
    volatile = {"settings", "llm_stats", "llm_stats_this_process", "llm_stats_processes", "cost_usd", "batch",
                "cost", "budget", "similarity_embeddings"}
    with _ideabench_server() as sync_server:
        plain = _ideabench(sync_server, tmp_path / "sync", tmp_path / "c1.sqlite", batch=False)
        assert sync_server.requests and not sync_server.batches
    with _ideabench_server() as server:
        results = _ideabench(server, tmp_path / "batch", tmp_path / "c2.sqlite", batch=True)
        assert server.requests == [] and server.batches  # every answer came through message batches
        assert results["status"] == plain["status"] == "complete"
        assert {k: v for k, v in results.items() if k not in volatile} == \
            {k: v for k, v in plain.items() if k not in volatile}
        succeeded = sum(b["request_counts"]["succeeded"] for b in server.batches.values())
        assert results["batch"]["imported"] == results["batch"]["submitted"] == succeeded


# ----------------------------------------------------------------------------- budget


def _server(provider: str):
    return AnthropicServer() if provider == "anthropic" else OpenAICompatServer()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_batch_over_the_cost_budget_is_refused_before_anything_is_sent(provider: str, tmp_path: Path) -> None:  # noqa: E501
    budget = RunBudget(max_cost_usd=0.01, spent_usd=0.005)
    with _server(provider) as server:
        model = _llm(server, tmp_path / "c.sqlite", provider, price_per_mtok=(3.0, 15.0), budget=budget)
        # 6 requests x (8 + 2048 reply tokens) x $15 / Mtok ~ $0.185: far over the $0.005 left
        with pytest.raises(UserError) as info:
            asyncio.run(run_phase_batched(_ask(model), list(range(6)), phase="ask", run_dir=tmp_path / "run",
                                          settings=FAST, progress=False))
        message = str(info.value)
        assert "\n" not in message and "not submitted" in message and "--max-cost $0.01" in message
        assert "a batch of 6 requests (ask)" in message and "completion cap 12,336" in message
        assert "$0.0050 spent" in message and "prompt ~" in message
        assert not server.batches and server.requests == []
        if provider == "openai":
            assert not server.files
        assert load_state(tmp_path / "run", "ask").jobs == []
        assert budget.in_flight_usd == 0 and budget.spent_usd == 0.005


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_batch_over_the_token_budget_is_refused(provider: str, tmp_path: Path) -> None:
    budget = RunBudget(max_tokens=1000)
    with _server(provider) as server:
        model = _llm(server, tmp_path / "c.sqlite", provider, budget=budget)
        with pytest.raises(UserError, match=r"would pass --max-tokens 1,000: not submitted"):
            asyncio.run(run_phase_batched(_ask(model), list(range(2)), phase="ask", run_dir=tmp_path / "run",
                                          settings=FAST, progress=False))
        assert not server.batches


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_batch_within_budget_is_submitted_and_charged_what_it_spent(provider: str, tmp_path: Path) -> None:
    budget = RunBudget(max_cost_usd=5.0)
    with _server(provider) as server:
        model = _llm(server, tmp_path / "c.sqlite", provider, price_per_mtok=(3.0, 15.0), budget=budget)
        report = asyncio.run(run_phase_batched(_ask(model), list(range(3)), phase="ask",
                                               run_dir=tmp_path / "run", settings=FAST, progress=False))
    assert report.submitted == report.imported == 3
    assert report.estimated_usd >= budget.spent_usd > 0  # the estimate is an upper bound
    assert budget.spent_usd == pytest.approx(model.stats.cost_usd) and budget.in_flight_usd == 0
    usage_tokens = model.stats.prompt_tokens + model.stats.completion_tokens
    assert budget.spent_tokens == usage_tokens


def test_the_estimate_is_the_budget_rule_summed_over_the_requests(tmp_path: Path) -> None:
    with AnthropicServer() as server:
        model = _llm(server, tmp_path / "c.sqlite", price_per_mtok=(1.0, 2.0), reasoning_budget=0)
        pending = []

        async def collect() -> None:
            from ideaharness.llm.batch import collect_pending

            found, _ = await collect_pending(_ask(model, max_tokens=100), list(range(3)))
            pending.extend(found.values())

        asyncio.run(collect())
    estimate = estimate_batch(model.llm, pending)
    chars = [len("Be brief.") + len(f"question number {i}") for i in range(3)]
    prompt = sum(c // 4 + 1 for c in chars)
    assert (estimate.requests, estimate.prompt_tokens, estimate.completion_cap) == (3, prompt, 300)
    assert estimate.tokens == prompt + 300
    assert estimate.usd == pytest.approx((prompt * 1.0 + 300 * 2.0) / 1e6)


# ----------------------------------------------------------------------------- results files


def test_export_and_import_of_anthropic_requests(tmp_path: Path) -> None:
    run_dir, cache_path = tmp_path / "run", tmp_path / "c.sqlite"
    with AnthropicServer(_thinking, batch_plans=[BatchPlan(expire_after=0)]) as server:
        model = _llm(server, cache_path)
        report = asyncio.run(run_phase_batched(_ask(model), list(range(3)), phase="ask", run_dir=run_dir,
                                               settings=FAST, progress=False))
        assert report.imported == 0 and len(report.failed_lines) == 3
        cache = ResponseCache(cache_path)
        lines = export_lines(run_dir, cache)
        assert len(lines) == 3 and all(set(line) == {"custom_id", "params"} for line in lines)
        # the exported requests are a valid Message Batches create body; its results file imports
        status, _, batch = server.handle("POST", "/v1/messages/batches", {},
                                         json.dumps({"requests": lines}).encode())
        assert status == 200
        server.handle("GET", f"/v1/messages/batches/{batch['id']}", {}, b"")
        _, _, results = server.handle("GET", f"/v1/messages/batches/{batch['id']}/results", {}, b"")
        output = tmp_path / "results.jsonl"
        output.write_bytes(results)
        imported = import_output(run_dir, output, cache)
        assert (imported.imported, imported.failed, imported.unreadable) == (3, {}, 0)
        cache.close()
        asyncio.run(_ask(model)(0))
        assert server.requests == []


_ids = st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=10)


@given(st.dictionaries(_ids, st.sampled_from(["succeeded", "errored", "expired", "canceled", "weird"]),
                       max_size=8),
       st.lists(st.text(st.characters(exclude_characters="\n"), max_size=20), max_size=3))
def test_every_results_line_is_an_answer_a_failure_or_unreadable(rows: dict[str, str], junk: list[str]) -> None:  # noqa: E501
    lines = []
    for key, kind in rows.items():
        result: dict = {"type": kind}
        if kind == "succeeded":
            result["message"] = {"id": "m", "content": []}
        elif kind == "errored":
            result["error"] = {"type": "error", "error": {"type": "api_error", "message": "m"}}
        lines.append({"custom_id": key, "result": result})
    junk_lines = [j for j in junk if j.strip() and not _json_with_id(j)]
    read = read_output_lines("\n".join([json.dumps(line) for line in lines] + junk_lines))
    assert set(read.answers) == {k for k, kind in rows.items() if kind == "succeeded"}
    assert set(read.failed) == {k for k, kind in rows.items() if kind != "succeeded"}
    assert all(read.failed[k].startswith("api_error") for k, kind in rows.items() if kind == "errored")
    assert read.unreadable == len(junk_lines)


def _json_with_id(text: str) -> bool:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return False
    return isinstance(value, dict) and "custom_id" in value
