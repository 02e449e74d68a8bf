"""A faulty system costs only its own units, and the run resumes (issue 20, "Done when" 3).

The example agent crashes on one instance, hangs on another (past a short ``--timeout``) and prints
garbage on a third, as a ``cmd:`` system and as an HTTP service: the run exits 3 with exactly those
units listed (``failed_units``: the crash and the hang; the garbage in ``unparsed_units``, or in
``failed_units`` where the adapter refuses a body that is no JSON), every other instance is scored.
The same command re-run with the agent healthy (the faults are set through the agent's environment,
so the ``cmd:`` spec and the run's settings are unchanged) completes, asking the agent again only
for the faulty units: its invocations are counted (``IDEA_AGENT_LOG``). On every generating
benchmark, a crash on one instance costs only that instance's units, and the resumed run ends with
the scores of a run that was never interrupted.
"""

from __future__ import annotations

import json
import os
import socket
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ideaharness.testing.openai_server import OpenAICompatServer
from tests.systems.conftest import (
    SYSTEM,
    ThreeWays,
    WayRun,
    agent_cmd,
    agent_server,
    cli,
    comparable,
    generating_benchmarks,
    judge_reply,
    logged_tasks,
    run_flags,
)

BENCHMARK = "liveideabench"
KEYWORDS = ["meteorology", "stars", "enzymes", "glaciers", "volcanoes", "proteins"]
"""LiveIdeaBench's instance ids are its keywords; flexibility needs five scored ones for a complete run."""
DATA = [arg for k in KEYWORDS for arg in ("--keyword", k)]
FAULTS = ("crash", "hang", "garbage")
TIMEOUT_S = "5"
"""The per-task timeout: a hanging agent is killed after it; a healthy one answers well within it."""


def _flags(judge: OpenAICompatServer, out: Path) -> list[str]:
    return [*DATA, "--judge", "openai/judge", "--judge-base-url", judge.base_url, "--system", SYSTEM,
            "--timeout", TIMEOUT_S, "--max-retries", "0", "--max-attempts", "1", "--no-progress",
            "--out", str(out)]


def _listed(results: dict[str, Any], key: str) -> set[str]:
    return {str(u["instance_id"]) for u in results.get(key) or []}


def _check_faulty_run(code: int, err: str, out: Path, faulty: dict[str, str], healthy: list[str],
                      crash_says: str) -> None:
    assert code == 3, f"a run with faulty units must exit 3, got {code}: {err[-1500:]}"
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    failed, unparsed = _listed(results, "failed_units"), _listed(results, "unparsed_units")
    assert {faulty["crash"], faulty["hang"]} <= failed, results.get("failed_units")
    assert faulty["garbage"] in failed | unparsed, (failed, unparsed)
    assert (failed | unparsed) <= set(faulty.values()), "a healthy instance was listed as failed"
    crash = [u for u in results["failed_units"] if u["instance_id"] == faulty["crash"]]
    assert crash and all(crash_says in u["error"] for u in crash), crash  # the agent's own words
    scores = [json.loads(line) for line in (out / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    scored = {s["instance_id"] for s in scores if s.get("value") is not None}
    assert set(healthy) <= scored, f"healthy instances {healthy} not all scored: {sorted(scored)}"
    assert not scored & set(faulty.values()), f"a faulty unit was scored: {scored & set(faulty.values())}"


def _check_resumed(code: int, err: str, out: Path, log: Path, faulty: dict[str, str], healthy: list[str],
                   counts: Counter[str]) -> None:
    assert code == 0, f"the healthy re-run must complete, got {code}: {err[-1500:]}"
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert not results.get("failed_units") and not results.get("unparsed_units"), results
    asked = [json.loads(raw)["instance_id"] for raw in logged_tasks(log)]
    assert sorted(asked) == sorted(i for i in faulty.values() for _ in range(counts[i])), \
        f"the re-run asked the agent {asked}; only the faulty units {sorted(faulty.values())} were due"
    scores = [json.loads(line) for line in (out / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    scored = {s["instance_id"] for s in scores if s.get("value") is not None}
    assert set(healthy) | set(faulty.values()) <= scored, sorted(scored)


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[OpenAICompatServer]:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", *(v for v in os.environ if v.startswith("IDEA_AGENT_"))):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    with OpenAICompatServer(judge_reply(BENCHMARK)) as server:
        yield server


def test_a_faulty_cmd_agent_costs_only_its_units_and_the_run_resumes(
    judge: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ids = KEYWORDS
    faulty = dict(zip(FAULTS, ids, strict=False))
    out = tmp_path / "run"
    args = ["run", BENCHMARK, "--generator", agent_cmd(), *_flags(judge, out)]
    for fault, iid in faulty.items():
        monkeypatch.setenv(f"IDEA_AGENT_{fault.upper()}_ON", iid)
    monkeypatch.setenv("IDEA_AGENT_HANG_S", "120")
    monkeypatch.setenv("IDEA_AGENT_LOG", str(tmp_path / "log1"))
    code, err = cli(args, capsys)
    _check_faulty_run(code, err, out, faulty, ids[3:], "crashing on")  # its stderr
    counts = Counter(json.loads(raw)["instance_id"] for raw in logged_tasks(tmp_path / "log1"))
    assert set(counts) == set(ids), counts  # every instance asked, each of its tasks once

    for fault in FAULTS:
        monkeypatch.delenv(f"IDEA_AGENT_{fault.upper()}_ON")
    monkeypatch.setenv("IDEA_AGENT_LOG", str(tmp_path / "log2"))
    code, err = cli(args, capsys)
    _check_resumed(code, err, out, tmp_path / "log2", faulty, ids[3:], counts)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _server_on(port: int, *flags: str, log: Path) -> Iterator[str]:
    env = {**os.environ, "IDEA_AGENT_LOG": str(log), "IDEA_AGENT_HANG_S": "120"}
    with agent_server(*flags, env=env, port=port) as url:
        yield url


def test_a_faulty_http_agent_costs_only_its_units_and_the_run_resumes(
    judge: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ids = KEYWORDS
    faulty = dict(zip(FAULTS, ids, strict=False))
    out = tmp_path / "run"
    port = _free_port()
    url = f"http://127.0.0.1:{port}/ideas"
    args = ["run", BENCHMARK, "--generator", url, *_flags(judge, out)]
    # both servers listen on the port chosen above: both runs name the same system URL
    fault_flags = [flag for fault, iid in faulty.items() for flag in (f"--{fault}-on", iid)]
    with _server_on(port, *fault_flags, log=tmp_path / "log1"):
        code, err = cli(args, capsys)
    _check_faulty_run(code, err, out, faulty, ids[3:], "500")
    counts = Counter(json.loads(raw)["instance_id"] for raw in logged_tasks(tmp_path / "log1"))
    assert set(counts) == set(ids), counts
    with _server_on(port, log=tmp_path / "log2"):
        code, err = cli(args, capsys)
    _check_resumed(code, err, out, tmp_path / "log2", faulty, ids[3:], counts)



@pytest.mark.parametrize("name", generating_benchmarks())
def test_a_crash_on_one_instance_costs_only_its_units_on_every_benchmark(
    name: str, three_ways: Callable[..., ThreeWays], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The ``cmd:`` agent crashes on the first instance it is asked about: only that instance's
    units fail (exit 3), every other unit scores as in the uninterrupted run of the three-ways test;
    the healthy re-run asks the agent only that instance's tasks and ends with the uninterrupted
    run's scores and exit status."""
    whole = three_ways(name, capsys).cmd  # the same command, never interrupted
    crashed = str(json.loads(three_ways(name, capsys).tasks.read_text(encoding="utf-8").splitlines()[0])
                  ["instance_id"])
    # its units: the task instance and the records answering it (LigBench: <system>::<topic>::<k>)
    units = {crashed} | {str(r["instance_id"]) for _, r in whole.records()
                         if r.get("data", {}).get("task_instance_id") == crashed}
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", *(v for v in os.environ if v.startswith("IDEA_AGENT_"))):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    with OpenAICompatServer(judge_reply(name)) as judge:
        args = ["run", name, "--generator", agent_cmd(), "--system", SYSTEM, "--out", str(out),
                *run_flags(name, tmp_path, judge.base_url, tmp_path / "cache.sqlite")]
        monkeypatch.setenv("IDEA_AGENT_CRASH_ON", crashed)
        code, err = cli(args, capsys)
        assert code == 3, f"{name}: crash on {crashed}: exit {code}: {err[-1500:]}"
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        failed = {str(u["instance_id"]) for u in results["failed_units"]}
        assert failed and failed <= units, f"{name}: failed units {sorted(failed)}, crashed {sorted(units)}"
        others = [s for s in comparable(WayRun("crashed", out, code, err).scores)
                  if json.loads(s)["instance_id"] not in units]
        assert others and set(others) <= set(comparable(whole.scores)), \
            f"{name}: the crash changed the scores of other instances"
        monkeypatch.delenv("IDEA_AGENT_CRASH_ON")
        monkeypatch.setenv("IDEA_AGENT_LOG", str(tmp_path / "log"))
        code, err = cli(args, capsys)
    asked = {str(json.loads(raw)["instance_id"]) for raw in logged_tasks(tmp_path / "log")}
    assert asked == {crashed}, f"{name}: the re-run asked the agent about {sorted(asked)}, not only {crashed}"
    assert code == whole.code, f"{name}: re-run exit {code} (uninterrupted: {whole.code}): {err[-1500:]}"
    assert comparable(WayRun("resumed", out, code, err).scores) == comparable(whole.scores), \
        f"{name}: the resumed run's scores differ from the uninterrupted run's"
