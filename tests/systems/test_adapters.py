"""The system providers (issue 20) against real subprocesses and a real loopback HTTP server:
``cmd:`` (answers, stderr in the record, crash / hang / garbage, timeout and cancellation killing the
process group, retries, the response cache), ``ideas:`` (no cache, missing answers failing their units
without stopping the run, extras) and ``http://`` (2xx, retried 5xx, refused 4xx). The toy contract
of test_core keeps them independent of the benchmarks."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ideaharness.errors import UserError
from ideaharness.llm import get_llm
from ideaharness.llm.client import LLM
from ideaharness.llm.errors import LLMError, MissingAnswer
from ideaharness.runner.steps import MAX_CONSECUTIVE_ERRORS, StepRunner
from ideaharness.runs.store import RunStore
from ideaharness.systems import GenerationTask, register_contract, task_message
from ideaharness.systems.adapters import CommandProvider, IdeasFileProvider, redact_spec
from tests.systems.test_core import PROMPT, TOY_ALL, TOY_CONTRACT, toy_contracts, toy_task

__all__ = ["toy_contracts"]  # the autouse fixture of test_core: toy contracts for each test, then removed

AGENT = r'''
import json, os, subprocess, sys, time
task = json.load(sys.stdin)
iid = task["instance_id"]
log = os.environ.get("AGENT_LOG")
if log:
    with open(log, "a") as fh:
        fh.write(iid + "\n")
print(f"thinking about {iid} (task {os.environ['IDEAHARNESS_TASK_ID']})", file=sys.stderr)
if iid == "crash":
    print("Traceback: boom", file=sys.stderr)
    sys.exit(2)
if iid.startswith("hang"):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(os.environ["PID_FILE"], "w") as fh:
        fh.write(f"{os.getpid()} {child.pid}")
    time.sleep(600)
if iid == "garbage":
    print("<html>certainly not an answer</html>")
    sys.exit(0)
if iid == "silent":
    sys.exit(0)
if iid == "leak":
    print("using key " + os.environ.get("OPENAI_API_KEY", "none"), file=sys.stderr)
idea = f"an idea about {task['inputs']['topic']} seeded {task['seed']}"
print(json.dumps({"instance_id": iid, "idea": idea, "system": "toy-agent"}))
'''




@pytest.fixture
def agent(tmp_path: Path) -> Path:
    path = tmp_path / "toy_agent.py"
    path.write_text(AGENT)
    return path


def cmd_llm(agent: Path, tmp_path: Path, **kwargs: Any) -> LLM:
    options: dict[str, Any] = {"cache_path": tmp_path / "cache.sqlite", "max_retries": 0, "timeout_s": 30,
                               "backoff_base_s": 0.01, **kwargs}
    return get_llm(f"cmd:{sys.executable} {agent}", **options)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def wait_dead(pids: list[int], within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


async def generate(llm: Any, run_dir: Path, ids: list[str], *, contract_task: Any = toy_task,
                   max_attempts: int = 2) -> StepRunner:
    """One run: each instance id asked through StepRunner.generate_step."""
    with RunStore(run_dir, {"command": "test"}) as store:
        steps = StepRunner(store, max_attempts=max_attempts, progress=False)
        for iid in ids:
            await steps.generate_step("generate", iid, "0", llm, PROMPT, lambda t: t, task=contract_task(iid),
                                      temperature=0.7, max_tokens=64, seed=7, sample_index=0)
        await store.drain()
    await llm.aclose()
    return steps


def records(run_dir: Path) -> dict[str, dict[str, Any]]:
    lines = (run_dir / "records" / "generate.jsonl").read_text().splitlines()
    out = {}
    for line in lines:
        data = json.loads(line)
        out[data["instance_id"]] = data["data"]
    return out


# ------------------------------------------------------------------------------------------- cmd:


def test_a_command_answers_each_task_and_its_stderr_is_in_the_record(agent: Path, tmp_path: Path) -> None:
    steps = asyncio.run(generate(cmd_llm(agent, tmp_path), tmp_path / "run", ["i1", "i2"]))
    assert not steps.failures and not steps.unparsed
    got = records(tmp_path / "run")
    judgment = got["i1"]["judgment"]
    assert judgment["parse_ok"] and judgment["parsed"]["idea"] == "an idea about topic of i1 seeded 7"
    assert judgment["stderr"] == "thinking about i1 (task toybench/generate/i1/0)"
    assert got["i1"]["system_task"] is True and judgment["judge_model"].startswith("cmd:")


def test_a_rerun_of_a_command_is_answered_from_the_response_cache(agent: Path, tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    os.environ["AGENT_LOG"] = str(log)
    try:
        asyncio.run(generate(cmd_llm(agent, tmp_path), tmp_path / "run1", ["i1", "i2"]))
        second = cmd_llm(agent, tmp_path)
        asyncio.run(generate(second, tmp_path / "run2", ["i1", "i2"]))
    finally:
        del os.environ["AGENT_LOG"]
    assert log.read_text().split() == ["i1", "i2"]  # the second run ran no process
    assert second.stats.cache_hits == 2 and second.stats.calls == 0
    assert records(tmp_path / "run2")["i1"]["judgment"]["stderr"].startswith("thinking about i1")


def test_an_edited_agent_is_not_answered_from_the_old_ones_cache(agent: Path, tmp_path: Path) -> None:
    first = cmd_llm(agent, tmp_path)
    agent.write_text(AGENT + "\n# edited\n")
    second = cmd_llm(agent, tmp_path)
    assert first.base_url != second.base_url and str(first.base_url).startswith("cmd:sha256=")


def test_a_crashing_command_is_a_failed_unit_after_its_retries(agent: Path, tmp_path: Path) -> None:
    llm = cmd_llm(agent, tmp_path, max_retries=2)
    steps = asyncio.run(generate(llm, tmp_path / "run", ["crash", "i1"]))
    failed = steps.failures[("generate", "crash", "0")]
    assert "exited with status 2" in failed.error and "Traceback: boom" in failed.error
    assert "3 attempts" in failed.error and llm.stats.calls == 4  # 3 for crash, 1 for i1
    assert list(records(tmp_path / "run")) == ["i1"]


def test_garbage_on_stdout_is_a_parse_failure_counted_never_a_score(agent: Path, tmp_path: Path) -> None:
    steps = asyncio.run(generate(cmd_llm(agent, tmp_path), tmp_path / "run", ["garbage", "silent"]))
    judgment = records(tmp_path / "run")["garbage"]["judgment"]
    assert judgment["parse_ok"] is False and judgment["parsed"] is None and judgment["attempts"] == 2
    assert "not JSON" in judgment["errors"][-1]
    assert ("generate", "garbage", "0") in steps.unparsed
    assert "wrote no answer on stdout" in steps.failures[("generate", "silent", "0")].error


def test_a_hanging_command_is_killed_with_its_children_at_the_timeout(agent: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    os.environ["PID_FILE"] = str(pid_file)
    try:
        started = time.monotonic()
        steps = asyncio.run(generate(cmd_llm(agent, tmp_path, timeout_s=1.5), tmp_path / "run", ["hang"]))
    finally:
        del os.environ["PID_FILE"]
    assert time.monotonic() - started < 20
    assert "ran past the timeout of 1.5 s" in steps.failures[("generate", "hang", "0")].error
    pids = [int(p) for p in pid_file.read_text().split()]
    assert len(pids) == 2 and wait_dead(pids), "the agent or its child outlived the timeout"


def test_cancelling_a_call_kills_the_process_group(agent: Path, tmp_path: Path) -> None:
    """What Ctrl-C does to a run: the tasks in flight are cancelled; no agent may outlive them."""
    pid_file = tmp_path / "pids"
    provider = CommandProvider(f"cmd:{sys.executable} {agent}", timeout_s=60)
    request_messages = task_message(toy_task("hang-cancel").to_json(prompt=PROMPT, contract=TOY_CONTRACT))

    async def run() -> None:
        from ideaharness.llm.types import ChatRequest

        call = asyncio.create_task(provider.complete(ChatRequest(model="cmd:x", messages=request_messages)))
        for _ in range(200):
            if pid_file.exists() and len(pid_file.read_text().split()) == 2:
                break
            await asyncio.sleep(0.05)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    os.environ["PID_FILE"] = str(pid_file)
    try:
        asyncio.run(run())
    finally:
        del os.environ["PID_FILE"]
    pids = [int(p) for p in pid_file.read_text().split()]
    assert wait_dead(pids), "a cancelled agent (or its child) survived"


def test_ctrl_c_leaves_no_agent_behind(agent: Path, tmp_path: Path) -> None:
    """SIGINT to a process whose call runs an agent (its own session, so the terminal's Ctrl-C
    never reaches it): the process exits and the agent and its child are gone."""
    import signal
    import subprocess

    pid_file = tmp_path / "pids"
    script = tmp_path / "caller.py"
    script.write_text(
        "import asyncio, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parents[2])!r})\n"
        "from ideaharness.llm import get_llm\n"
        "from ideaharness.systems import register_contract, task_message\n"
        "from tests.systems.test_core import PROMPT, TOY_CONTRACT, toy_task\n"
        "register_contract(TOY_CONTRACT)\n"
        f"llm = get_llm('cmd:{sys.executable} {agent}', use_cache=False, max_retries=0)\n"
        "data = toy_task('hang-int').to_json(prompt=PROMPT, contract=TOY_CONTRACT)\n"
        "asyncio.run(llm.chat(task_message(data)))\n")
    caller = subprocess.Popen([sys.executable, str(script)], env={**os.environ, "PID_FILE": str(pid_file)},
                              stderr=subprocess.PIPE)
    try:
        for _ in range(400):
            if pid_file.exists() and len(pid_file.read_text().split()) == 2:
                break
            time.sleep(0.05)
        pids = [int(p) for p in pid_file.read_text().split()]
        assert all(alive(p) for p in pids)
        caller.send_signal(signal.SIGINT)
        caller.wait(timeout=30)
    finally:
        if caller.poll() is None:
            caller.kill()
    assert caller.returncode != 0
    assert wait_dead(pids), "an agent outlived the Ctrl-C of its caller"


def test_a_key_the_agent_prints_never_reaches_the_record(agent: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-" + "t3st" * 6  # made at run time: no key-like literal in the source
    monkeypatch.setenv("OPENAI_API_KEY", key)
    asyncio.run(generate(cmd_llm(agent, tmp_path), tmp_path / "run", ["leak"]))
    stderr = records(tmp_path / "run")["leak"]["judgment"]["stderr"]
    assert "using key" in stderr and key not in stderr and "[REDACTED]" in stderr
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert key not in path.read_text(errors="replace"), path


def test_a_spec_holding_a_secret_is_refused(agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-" + "k3y" * 8
    with pytest.raises(UserError, match="holds a secret") as info:
        get_llm(f"cmd:{sys.executable} {agent} --api-key {key}", use_cache=False)
    assert key not in str(info.value)
    with pytest.raises(UserError, match="holds a secret"):
        get_llm("https://me:hunter2pass@agents.example.org/ideas", use_cache=False)
    monkeypatch.setenv("OPENAI_API_KEY", "plainsecretvalue42")
    with pytest.raises(UserError, match="holds a secret"):
        get_llm(f"cmd:{sys.executable} {agent} --token-value plainsecretvalue42", use_cache=False)


def test_a_command_that_does_not_exist_is_one_line_at_start(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="program 'no-such-agent-xyz' not found"):
        get_llm("cmd:no-such-agent-xyz --fast", cache_path=tmp_path / "c.sqlite")
    with pytest.raises(UserError, match="no command"):
        get_llm("cmd:  ", cache_path=tmp_path / "c.sqlite")


def test_commands_in_flight_are_bounded_by_max_concurrency(tmp_path: Path) -> None:
    script = tmp_path / "slow_agent.py"
    script.write_text(
        "import json, os, sys, time\n"
        "task = json.load(sys.stdin)\n"
        "d = os.environ['RUN_DIR']\n"
        "open(os.path.join(d, task['instance_id'] + '.start'), 'w').write(str(time.time()))\n"
        "time.sleep(0.4)\n"
        "open(os.path.join(d, task['instance_id'] + '.end'), 'w').write(str(time.time()))\n"
        "print(json.dumps({'instance_id': task['instance_id'], 'idea': 'a slow but fine idea'}))\n")
    marks = tmp_path / "marks"
    marks.mkdir()
    llm = get_llm(f"cmd:{sys.executable} {script}", use_cache=False, max_concurrency=2, max_retries=0)

    async def run() -> None:
        async def one(iid: str) -> None:
            data = toy_task(iid).to_json(prompt=PROMPT, contract=TOY_CONTRACT)
            await llm.chat(task_message(data))

        await asyncio.gather(*(one(f"c{i}") for i in range(5)))
        await llm.aclose()

    os.environ["RUN_DIR"] = str(marks)
    try:
        asyncio.run(run())
    finally:
        del os.environ["RUN_DIR"]
    spans = [(float((marks / f"c{i}.start").read_text()), float((marks / f"c{i}.end").read_text()))
             for i in range(5)]
    most = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans)
    assert most <= 2 and llm.stats.calls == 5 and llm.stats.wall_s > 5 * 0.4


# ----------------------------------------------------------------------------------------- ideas:


def write_ideas(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_an_ideas_file_is_never_cached_and_answers_with_file_and_line(tmp_path: Path) -> None:
    ideas = write_ideas(tmp_path / "ideas.jsonl", [
        {"instance_id": "i1", "idea": "the first file idea here"},
        {"instance_id": "i2", "idea": "too short"},
        {"instance_id": "extra", "idea": "an idea nobody asks for"},
    ])
    llm = get_llm(f"ideas:{ideas}", cache_path=tmp_path / "cache.sqlite")
    assert llm.cache is None and llm.provider.cacheable is False  # type: ignore[attr-defined]
    steps = asyncio.run(generate(llm, tmp_path / "run", ["i1", "i2"]))
    got = records(tmp_path / "run")
    assert got["i1"]["judgment"]["parsed"]["idea"] == "the first file idea here"
    assert json.loads(got["i1"]["judgment"]["raw_text"])["provenance"]["line"] == 1
    bad = got["i2"]["judgment"]
    assert bad["parse_ok"] is False and bad["attempts"] == 1  # a file's answer cannot change
    assert bad["errors"][-1].endswith(f"{ideas} line 2, field 'idea': fewer than 3 words")
    assert not (tmp_path / "cache.sqlite").exists()
    provider = llm.provider
    assert isinstance(provider, IdeasFileProvider)
    assert provider.rows_unused() == ["extra"] and provider.asked() == {"i1", "i2"}
    # a file's answer that breaks the rules cannot be re-asked: listed unparsed and failed (a partial run)
    assert set(steps.unparsed) == set(steps.failures) == {("generate", "i2", "0")}
    assert steps.unparsed[("generate", "i2", "0")].source == "file"


def test_ten_missing_instances_are_ten_failed_units_and_the_run_goes_on(tmp_path: Path) -> None:
    ideas = write_ideas(tmp_path / "ideas.jsonl", [{"instance_id": "have", "idea": "one idea we do have"}])
    llm = get_llm(f"ideas:{ideas}")
    missing = [f"m{i}" for i in range(10)]
    assert len(missing) > MAX_CONSECUTIVE_ERRORS
    steps = asyncio.run(generate(llm, tmp_path / "run", [*missing, "have"]))
    assert sorted(iid for _, iid, _ in steps.failures) == sorted(missing)
    assert all("no answer for instance" in u.error and "ideas.jsonl" in u.error
               for u in steps.failures.values())
    assert list(records(tmp_path / "run")) == ["have"]
    assert steps.outcome()["status"] == "partial"
    assert isinstance(llm.provider, IdeasFileProvider) and llm.provider.missing() == set(missing)


def test_rows_are_picked_by_sample_index_or_merged_for_group_all(tmp_path: Path) -> None:
    ideas = write_ideas(tmp_path / "ideas.jsonl", [
        {"instance_id": "i1", "idea": "sample one of the instance", "sample_index": 1},
        {"instance_id": "i1", "idea": "sample zero of the instance", "sample_index": 0},
        {"instance_id": "i2", "text": "first plain row of i2"},
        {"instance_id": "i2", "text": "second plain row of i2"},
    ])
    provider = IdeasFileProvider(f"ideas:{ideas}")

    async def ask(task: GenerationTask, contract: Any) -> str:
        from ideaharness.llm.types import ChatRequest

        messages = task_message(task.to_json(prompt=PROMPT, contract=contract))
        request = ChatRequest(model="ideas:x", messages=messages)
        return json.loads((await provider.complete(request)).text)["idea"]

    assert asyncio.run(ask(toy_task("i1", sample_index=1), TOY_CONTRACT)) == "sample one of the instance"
    assert asyncio.run(ask(toy_task("i1", sample_index=0), TOY_CONTRACT)) == "sample zero of the instance"
    assert asyncio.run(ask(toy_task("i2", sample_index=1), TOY_CONTRACT)) == "second plain row of i2"
    merged = asyncio.run(ask(toy_task("i2", benchmark="toyall"), TOY_ALL))
    assert merged == "first plain row of i2 / second plain row of i2"
    with pytest.raises(MissingAnswer, match=r"no answer for instance i2 \(sample 2\)"):
        asyncio.run(ask(toy_task("i2", sample_index=2), TOY_CONTRACT))
    assert issubclass(MissingAnswer, LLMError)


def test_provenance_merges_from_row_and_names_the_place_in_a_json_file(tmp_path: Path) -> None:
    from tests.systems.test_core import ToyAnswer, toy_to_parsed

    def from_row(row: dict[str, Any], task: GenerationTask) -> dict[str, Any]:
        return {"idea": row.get("idea") or "", "provenance": {"model": row.get("model")}}

    register_contract(TOY_CONTRACT.__class__("toyprov", 1, ToyAnswer, toy_to_parsed, from_row))
    ideas = tmp_path / "ideas.json"
    ideas.write_text(json.dumps({"i1": [{"idea": "good enough idea text", "model": "gpt-x"},
                                        {"idea": "short"}]}))
    steps = asyncio.run(generate(get_llm(f"ideas:{ideas}#format=jsonl"), tmp_path / "run", ["i1"],
                                 contract_task=lambda iid: toy_task(iid, benchmark="toyprov")))
    record = records(tmp_path / "run")["i1"]["judgment"]
    provenance = json.loads(record["raw_text"])["provenance"]
    assert provenance["model"] == "gpt-x" and provenance["source"] == str(ideas)
    assert provenance["where"] == "key 'i1', idea 1"
    asyncio.run(generate(get_llm(f"ideas:{ideas}#format=jsonl"), tmp_path / "run2", ["i1"],
                         contract_task=lambda iid: toy_task(iid, sample_index=1, benchmark="toyprov")))
    error = records(tmp_path / "run2")["i1"]["judgment"]["errors"][-1]
    assert f"{ideas} key 'i1', idea 2, field 'idea': fewer than 3 words" in error
    assert not steps.failures


def test_an_unreadable_ideas_file_is_one_line_at_start(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="nothere.jsonl"):
        get_llm(f"ideas:{tmp_path / 'nothere.jsonl'}")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"instance_id": "a", "idea": "x"}\n{not json\n')
    with pytest.raises(UserError, match="line 2"):
        get_llm(f"ideas:{bad}")


# ------------------------------------------------------------------------------------------ http


class Service:
    """A stdlib HTTP server in a thread answering tasks; ``statuses`` queues error statuses first."""

    def __init__(self) -> None:
        self.statuses: list[int] = []
        self.bodies: list[dict[str, Any]] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                service.bodies.append(body)
                if service.statuses:
                    status = service.statuses.pop(0)
                    payload = b'{"error": "bad task, api_key=abcdefgh1234"}'
                else:
                    status = 200
                    payload = json.dumps({"instance_id": body["instance_id"],
                                          "idea": f"served idea for {body['instance_id']}"}).encode()
                self.send_response(status)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/answer"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)


@pytest.fixture
def service() -> Iterator[Service]:
    s = Service()
    s.thread.start()
    try:
        yield s
    finally:
        s.server.shutdown()
        s.server.server_close()


def test_an_http_system_answers_and_5xx_is_retried(service: Service, tmp_path: Path) -> None:
    service.statuses = [503]
    llm = get_llm(service.url, cache_path=tmp_path / "cache.sqlite", max_retries=2, backoff_base_s=0.01)
    steps = asyncio.run(generate(llm, tmp_path / "run", ["i1"]))
    assert not steps.failures and llm.stats.retries == 1
    assert records(tmp_path / "run")["i1"]["judgment"]["parsed"]["idea"] == "served idea for i1"
    assert service.bodies[0]["task_id"] == "toybench/generate/i1/0"


def test_an_http_4xx_is_not_retried_and_its_body_is_redacted(service: Service, tmp_path: Path) -> None:
    service.statuses = [400]
    llm = get_llm(service.url, use_cache=False, max_retries=3, backoff_base_s=0.01)
    steps = asyncio.run(generate(llm, tmp_path / "run", ["i1"]))
    error = steps.failures[("generate", "i1", "0")].error
    assert "HTTP 400" in error and "abcdefgh1234" not in error and llm.stats.calls == 1


def test_a_url_spec_is_recorded_without_credentials() -> None:
    spec = redact_spec("https://user:secretpw@agents.example.org:8443/v1?token=abcdef123456&x=1")
    assert spec == "https://agents.example.org:8443/v1?token=…&x=…"


def test_a_misspelt_field_of_an_ideas_file_is_refused_like_a_systems_answer(tmp_path: Path) -> None:
    """A contract row's unknown field (``ideaa`` for ``idea``) is a parse failure naming the file,
    line and field, as the same answer from ``cmd:`` or ``http://`` is; another field of the row
    (its title) is never scored in its place."""
    ideas = write_ideas(tmp_path / "ideas.jsonl", [
        {"instance_id": "i1", "idea": "the first file idea here"},
        {"instance_id": "i2", "ideaa": "a misspelt idea of several words",
         "title": "a long title that a fallback could take for the idea"},
    ])
    steps = asyncio.run(generate(get_llm(f"ideas:{ideas}"), tmp_path / "run", ["i1", "i2"]))
    got = records(tmp_path / "run")
    assert got["i1"]["judgment"]["parse_ok"] is True
    bad = got["i2"]["judgment"]
    assert bad["parse_ok"] is False and bad["parsed"] is None
    assert f"{ideas} line 2" in bad["errors"][-1] and "field 'ideaa': unknown field" in bad["errors"][-1]
    assert steps.unparsed
