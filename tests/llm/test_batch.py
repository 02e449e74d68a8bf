"""Batch mode against the loopback server's Files and Batch APIs: IdeaBench round trip, re-attach
after a kill, partially failed / expired batches, and `batch export` / `batch import`."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ideaharness import arun
from ideaharness.analysis.load import read_records
from ideaharness.api import available_benchmarks
from ideaharness.benchmarks.ideabench.config import IdeaBenchConfig
from ideaharness.benchmarks.researchbench import ResearchBenchConfig
from ideaharness.llm import get_llm
from ideaharness.llm.batch import (
    BatchableModel,
    BatchSettings,
    batchable_models,
    run_phase_batched,
    run_phases_batched,
)
from ideaharness.llm.batch_files import load_state, read_output_lines, read_requests, requests_path
from ideaharness.llm.judge import prompt_hash
from ideaharness.runner.options import ExecutionOptions
from ideaharness.runner.steps import StepRunner
from ideaharness.runs.store import RunStore, read_prompts
from ideaharness.testing.openai_server import BatchPlan, OpenAICompatServer, Reply, echo_responder
from tests.cli_support import exit_status
from tests.ideabench.conftest import ideabench_responder
from tests.researchbench.test_rb_run import RELEASE as RB_RELEASE

FAST = BatchSettings(poll_interval_s=0.01)
SECRET = f"batch-test-key-{uuid.uuid4().hex}"  # made per session: no key-like literal in the tree


def _llm(server: OpenAICompatServer, cache: Path, **kw) -> BatchableModel:
    (model,) = batchable_models(get_llm("openai/fake", base_url=server.base_url, cache_path=cache, **kw))
    return model


def _ideabench_server(**kw) -> OpenAICompatServer:
    respond = ideabench_responder()
    return OpenAICompatServer(lambda body: respond(body["messages"]), **kw)


VOLATILE = {"settings", "llm_stats", "llm_stats_this_process", "llm_stats_processes", "cost_usd", "batch",
            "similarity_embeddings"}
"""Result blocks that depend on how a run executed (options, counters such as the texts embedded or
reused from the embedding store), not on what it measured."""


def _measured(results: dict) -> dict:
    return {k: v for k, v in results.items() if k not in VOLATILE}


def _rb_responder():
    from tests.researchbench.test_rb_run import scripted

    return scripted("**Analysis**: x\n**Selection of research hypothesis candidate**: candidate 1")._responder


RUNS = {  # benchmark -> (config, responder of its replies), over the registry's benchmarks
    "ideabench": (lambda: IdeaBenchConfig(generator="openai/fake", judge="openai/fake",
                                          indicators=["novelty"]), ideabench_responder),
    "researchbench": (lambda: ResearchBenchConfig(data=str(RB_RELEASE), generator="openai/fake",
                                                  judge="openai/fake", n_mutations=1, n_refine=1),
                      _rb_responder),
}


def _server_for(name: str, **kw) -> OpenAICompatServer:
    respond = RUNS[name][1]()
    return OpenAICompatServer(lambda body: respond(body["messages"]), **kw)


def _run(name: str, server: OpenAICompatServer, out: Path, cache: Path, *, batch: bool) -> dict:
    options = ExecutionOptions(out=out, progress=False, base_url=server.base_url, cache_path=cache,
                               limit=2, batch=batch, batch_poll=0.01)
    return asyncio.run(arun(name, config=RUNS[name][0](), options=options))


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_batch_run_of_each_benchmark_makes_no_synchronous_call_and_measures_the_same(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert set(RUNS) <= set(available_benchmarks())
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with _server_for(name) as sync_server:
        plain = _run(name, sync_server, tmp_path / "sync", tmp_path / "c1.sqlite", batch=False)
        assert sync_server.requests and not sync_server.batches
    with _server_for(name) as server:
        results = _run(name, server, tmp_path / "batch", tmp_path / "c2.sqlite", batch=True)
        assert server.requests == []  # every answer came through batches, none synchronously
        assert server.batches and all(b["status"] == "completed" for b in server.batches.values())
        assert results["status"] == plain["status"] == "complete"
        assert _measured(results) == _measured(plain)
        answered = sum(b["request_counts"]["completed"] for b in server.batches.values())
        assert results["batch"]["imported"] == results["batch"]["submitted"] == answered
        saved = json.loads((tmp_path / "batch" / "results.json").read_text())
        assert saved["batch"]["submitted"] == answered and saved["settings"]["execution"]["batch"] is True
        # a re-run submits nothing and calls nobody: everything is recorded or cached
        n_batches = len(server.batches)
        again = _run(name, server, tmp_path / "batch", tmp_path / "c2.sqlite", batch=True)
        assert len(server.batches) == n_batches and server.requests == []
        assert _measured(again) == _measured(plain) and again["batch"]["submitted"] == 0
    for path in [*(tmp_path / "batch").rglob("*"), tmp_path / "c2.sqlite"]:
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET.encode() not in b"".join(server.files.values())


def test_ideabench_round_trip_through_the_batch_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with _ideabench_server() as server:
        options = ExecutionOptions(out=tmp_path / "batch", progress=False, base_url=server.base_url,
                                   cache_path=tmp_path / "c.sqlite", limit=2, batch=True, batch_poll=0.01)
        config = IdeaBenchConfig(generator="openai/fake", judge="openai/fake")
        results = asyncio.run(arun("ideabench", config=config, options=options))
        assert server.requests == [] and results["status"] == "complete"
        # one batch per LLM phase that asks anything (the data has target ideas: none extracted)
        phases = [p["phase"] for p in results["batch"]["phases"] if p["submitted"]]
        assert len(server.batches) == len(phases), phases
        assert model_calls(results) == results["batch"]["imported"]
        # every judgment's rendered prompt is kept, exactly as the batch sent it
        sent = [json.loads(line)["body"]["messages"] for blob in server.files.values()
                for line in blob.decode().splitlines() if '"messages"' in line]
    kept = read_prompts(tmp_path / "batch")
    assert sent and all(kept[prompt_hash(messages)] == messages for messages in sent)
    records, _, _ = read_records(tmp_path / "batch")
    hashes = {d["judgment"]["prompt_hash"] for _, _, _, d in records if "judgment" in d}
    assert hashes == set(kept)
    state = load_state(tmp_path / "batch", "generate (low)")
    assert state.jobs[0].imported and state.jobs[0].succeeded == 2


def model_calls(results: dict) -> int:
    """Provider calls over every role's distinct client (roles sharing a client count once)."""
    return max(stats["calls"] for stats in results["llm_stats"].values() if stats)


def _chat_phase(model):
    async def ask(i: int) -> None:
        await model.chat([{"role": "user", "content": f"question {i}"}], max_tokens=8)

    return ask


_KILLED_RUN = """
import asyncio, sys
from ideaharness.llm import get_llm
from ideaharness.llm.batch import BatchSettings, batchable_models, run_phase_batched
(model,) = batchable_models(get_llm("openai/fake", base_url=sys.argv[1], cache_path=sys.argv[2]))
async def ask(i):
    await model.chat([{"role": "user", "content": f"question {i}"}], max_tokens=8)
asyncio.run(run_phase_batched(ask, list(range(6)), phase="ask", run_dir=sys.argv[3],
                              settings=BatchSettings(poll_interval_s=0.02), progress=False))
"""


def test_a_killed_process_reattaches_to_its_batch(tmp_path: Path) -> None:
    plan = BatchPlan(polls_per_state=10**9)  # stays "validating" while the first process polls
    with OpenAICompatServer(batch_plans=[plan]) as server:
        run_dir, cache = tmp_path / "run", tmp_path / "cache.sqlite"
        script = tmp_path / "killed.py"
        script.write_text(_KILLED_RUN)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        argv = [sys.executable, str(script), server.base_url, str(cache), str(run_dir)]
        proc = subprocess.Popen(argv, env=env)
        try:
            deadline = time.monotonic() + 60
            while not load_state(run_dir, "ask").jobs and time.monotonic() < deadline:
                assert proc.poll() is None, "the batch run ended before it was killed"
                time.sleep(0.05)
            time.sleep(0.2)  # it is polling now
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        assert len(server.batches) == 1
        plan.polls_per_state = 1  # the provider finishes the batch
        model = _llm(server, cache)
        report = asyncio.run(run_phase_batched(_chat_phase(model), list(range(6)), phase="ask",
                                               run_dir=run_dir, settings=FAST, progress=False))
        assert len(server.batches) == 1  # re-attached: not submitted (nor paid) twice
        assert (report.reattached, report.submitted, report.imported) == (1, 0, 6)
        asyncio.run(_chat_phase(model)(0))
        assert server.requests == []


def test_expired_and_failed_lines_are_asked_synchronously_or_reported(tmp_path: Path) -> None:
    # line 1 fails with HTTP 500, lines 3 and 4 expire; the first synchronous call fails for good
    plan = BatchPlan(failed_lines=frozenset({1}), expire_after=3)
    with OpenAICompatServer(batch_plans=[plan], script=[Reply(status=500)]) as server:
        model = _llm(server, tmp_path / "cache.sqlite", max_retries=0)
        store = RunStore(tmp_path / "run", {"test": "batch"})
        steps = StepRunner(store, progress=False)

        async def phase(i: int) -> None:
            await steps.judge_step("ask", str(i), "", model, [{"role": "user", "content": f"q{i}"}],
                                   lambda text: text, max_tokens=8)

        with store:
            reports = asyncio.run(run_phases_batched(steps.run_phases, list(range(5)), [("ask", phase)],
                                                     run_dir=store.dir, settings=FAST, progress=False))
            (report,) = reports
            assert server.batches["batch_1"]["status"] == "expired"
            assert len(server.batches) == 1  # failed lines are not resubmitted in a batch
            assert report.imported == 2 and len(report.failed_lines) == 3
            reasons = sorted(report.failed_lines.values())
            assert reasons[0].startswith("HTTP 500") and all("batch_expired" in r for r in reasons[1:])
            assert len(server.requests) == 3  # the three failed lines, asked synchronously
            done = {i for i, _, _ in store.records("ask")}
            assert len(done) == 4  # the one whose synchronous call failed is a reported failed unit
            outcome = steps.outcome()
            assert outcome["status"] == "partial" and len(outcome["failed_units"]) == 1
            assert "HTTP 500" in outcome["failed_units"][0]["error"]


def test_batch_export_is_accepted_by_the_batch_api_and_import_fills_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    with OpenAICompatServer(batch_plans=[BatchPlan(expire_after=0)]) as server:
        model = _llm(server, cache)
        report = asyncio.run(run_phase_batched(_chat_phase(model), list(range(4)), phase="ask",
                                               run_dir=run_dir, settings=FAST, progress=False))
        assert report.imported == 0 and len(report.failed_lines) == 4
        exported = tmp_path / "requests.jsonl"
        assert exit_status(["batch", "export", str(run_dir), "--output", str(exported),
                            "--cache", str(cache)]) == 0
        lines = [json.loads(line) for line in exported.read_text().splitlines()]
        assert len(lines) == 4 and {line["url"] for line in lines} == {"/v1/chat/completions"}
        assert set(read_requests(run_dir)) == {line["custom_id"] for line in lines}

        async def submit_as_is() -> str:
            client = openai.AsyncOpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
            upload = await client.files.create(file=exported.open("rb"), purpose="batch")
            batch = await client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                                completion_window="24h")
            while batch.status not in ("completed", "failed", "expired"):
                batch = await client.batches.retrieve(batch.id)
            assert batch.status == "completed" and batch.request_counts.failed == 0
            return (await client.files.content(batch.output_file_id)).text

        output = tmp_path / "output.jsonl"
        output.write_text(asyncio.run(submit_as_is()))
        assert exit_status(["batch", "import", str(run_dir), str(output), "--cache", str(cache)]) == 0
        assert "4 answers imported" in capsys.readouterr().out
        for i in range(4):
            asyncio.run(_chat_phase(model)(i))
        assert server.requests == []  # every answer came from the imported file
        assert exit_status(["batch", "export", str(run_dir), "--output", str(exported),
                            "--cache", str(cache)]) == 0
        assert exported.read_text() == ""  # nothing left uncached


def test_batch_export_of_a_folder_without_requests_is_one_line(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_status(["batch", "import", str(tmp_path), str(tmp_path / "missing.jsonl")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err and "Traceback" not in err


_custom_ids = st.text(min_size=1, max_size=12)


@given(st.dictionaries(_custom_ids, st.sampled_from([200, 400, 500, None]), max_size=8),
       st.lists(st.text(st.characters(exclude_characters="\n"), max_size=20), max_size=3))
def test_every_output_line_is_an_answer_a_failure_or_unreadable(rows: dict[str, int | None],
                                                                 junk: list[str]) -> None:
    lines = []
    for key, status in rows.items():
        if status is None:
            expired = {"code": "batch_expired", "message": "x"}
            lines.append({"custom_id": key, "response": None, "error": expired})
        else:
            lines.append({"custom_id": key, "error": None,
                          "response": {"status_code": status, "body": {"error": {"message": "m"}}}})
    junk_lines = [j for j in junk if j.strip() and not _is_json_object_with_id(j)]
    text = "\n".join([json.dumps(line) for line in lines] + junk_lines)
    read = read_output_lines(text)
    assert set(read.answers) == {k for k, s in rows.items() if s == 200}
    assert set(read.failed) == {k for k, s in rows.items() if s != 200}
    assert read.unreadable == len(junk_lines)  # one per line: JSONL lines end at "\n" only


def _is_json_object_with_id(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict) and "custom_id" in json.loads(text)
    except json.JSONDecodeError:
        return False


def test_batch_requests_file_holds_no_key_and_collected_bodies_match_synchronous_ones(tmp_path: Path) -> None:
    with OpenAICompatServer(echo_responder) as server:
        model = _llm(server, tmp_path / "cache.sqlite")
        asyncio.run(run_phase_batched(_chat_phase(model), [7], phase="ask", run_dir=tmp_path,
                                      settings=FAST, progress=False))
        batch_body = json.loads(server.files["file-1"])["body"]
        # the same request sent synchronously (cache bypassed) carries the same body
        asyncio.run(get_llm("openai/fake", base_url=server.base_url, use_cache=False)
                    .chat([{"role": "user", "content": "question 7"}], max_tokens=8))
        assert server.requests[0].body == batch_body
    assert requests_path(tmp_path, "ask").exists()


def test_force_moves_the_batches_of_the_old_run_aside(tmp_path: Path) -> None:
    with OpenAICompatServer() as server:
        model = _llm(server, tmp_path / "cache.sqlite")
        with RunStore(tmp_path / "run", {"seed": 0}):
            asyncio.run(run_phase_batched(_chat_phase(model), [1], phase="ask", run_dir=tmp_path / "run",
                                          settings=FAST, progress=False))
    assert load_state(tmp_path / "run", "ask").jobs
    with RunStore(tmp_path / "run", {"seed": 1}, force=True):
        pass
    assert not load_state(tmp_path / "run", "ask").jobs  # never re-attached by a new run
    (old,) = (tmp_path / "run" / "superseded").iterdir()
    assert (old / "batches" / "ask.json").exists()


def _chat_body(content: str) -> dict:
    """A chat completion as a Batch output line's ``response.body`` holds it."""
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}


def test_batch_import_counts_a_request_without_a_line_as_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33, item 8: a recorded request the output file has no line for (and the cache no answer
    to) is counted as missing, named, and makes the import partial (exit 3); once a later file
    answers it, nothing is missing."""
    run_dir, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    with OpenAICompatServer(batch_plans=[BatchPlan(expire_after=0)]) as server:
        model = _llm(server, cache)
        asyncio.run(run_phase_batched(_chat_phase(model), list(range(4)), phase="ask", run_dir=run_dir,
                                      settings=FAST, progress=False))
    keys = list(read_requests(run_dir))
    assert len(keys) == 4
    answered, failed, absent = keys[:2], keys[2], keys[3]
    lines = [{"custom_id": k, "error": None, "response": {"status_code": 200, "body": _chat_body("ok")}}
             for k in answered]
    lines.append({"custom_id": failed, "response": None, "error": {"code": "batch_expired", "message": "x"}})
    first = tmp_path / "output-1.jsonl"
    first.write_text("".join(json.dumps(line) + "\n" for line in lines))
    capsys.readouterr()
    assert exit_status(["batch", "import", str(run_dir), str(first), "--cache", str(cache)]) == 3
    captured = capsys.readouterr()
    assert ("2 answers imported, 1 line(s) without an answer, 1 request(s) with no line in the file and no "
            "answer yet, 0 unreadable") in captured.out, captured.out
    assert f"{absent[:12]}: no line in {first}" in captured.err, captured.err
    second = tmp_path / "output-2.jsonl"
    second.write_text("".join(json.dumps({"custom_id": k, "error": None,
                                          "response": {"status_code": 200, "body": _chat_body("ok")}}) + "\n"
                              for k in (failed, absent)))
    assert exit_status(["batch", "import", str(run_dir), str(second), "--cache", str(cache)]) == 0
    said = "2 answers imported, 0 line(s) without an answer, 0 request(s) with no line"
    assert said in capsys.readouterr().out
