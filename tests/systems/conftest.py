"""What the system tests share (test_three_ways, test_tasks_export, test_faulty_agents): the example
agent (``examples/idea_agent/agent.py``, deterministic mode) as a ``cmd:`` system, as an HTTP
server and as an offline answerer; the benchmarks that generate; their cheapest data for a system
run; a loopback judge whose replies parse (each benchmark's registry fixture reply); and
:func:`three_ways`, one benchmark run the three ways (``--ideas`` from ``tasks export`` + the agent
offline, ``--generator cmd:``, ``--generator http://``), made once per session."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ideaharness.runner.registry import benchmarks
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import cli_output as cli
from tests.runner.registry_support import Reply, fixture_for

ROOT = Path(__file__).parents[2]
AGENT = ROOT / "examples" / "idea_agent" / "agent.py"
SYSTEM = "idea_agent"
"""The ``--system`` name every run of these tests gives (so the three ways name the system alike)."""
MIN_GENERATING = 5
"""IdeaBench, AI Idea Bench, ResearchBench, LigBench, LiveIdeaBench (and MLR-Bench) generate."""
EXECUTION = ["--no-progress", "--timeout", "60", "--max-retries", "1"]


def generating_benchmarks() -> list[str]:
    """Registered benchmarks whose config has a generator (``generator`` or ``generators``)."""
    return [name for name, cls in sorted(benchmarks().items())
            if {"generator", "generators"} & set(cls.config_class.model_fields)]


# --- the example agent ------------------------------------------------------------------------


def agent_argv(*flags: str) -> list[str]:
    return [sys.executable, str(AGENT), "--deterministic", *flags]


def agent_cmd(*flags: str) -> str:
    """The ``cmd:`` spec of the deterministic agent."""
    return "cmd:" + shlex.join(agent_argv(*flags))


@contextmanager
def agent_server(*flags: str, env: dict[str, str] | None = None, port: int = 0) -> Iterator[str]:
    """The agent serving on a loopback port (0: a free one); yields its base URL
    (``http://127.0.0.1:PORT/``)."""
    proc = subprocess.Popen(agent_argv("--serve", str(port), *flags), stdout=subprocess.PIPE, text=True,
                            env=env)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), f"the agent server printed {url!r}"
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def answer_offline(tasks: Path, ideas: Path, *flags: str, env: dict[str, str] | None = None) -> None:
    """``agent.py --deterministic --answer TASKS > IDEAS``."""
    with ideas.open("w", encoding="utf-8") as out:
        done = subprocess.run(agent_argv("--answer", str(tasks), *flags), stdout=out, stderr=subprocess.PIPE,
                              text=True, env=env, check=False)
    assert done.returncode == 0, f"agent --answer {tasks}: exit {done.returncode}: {done.stderr[-800:]}"


def logged_tasks(folder: Path) -> list[bytes]:
    """The task bytes the agent received (``IDEA_AGENT_LOG``), in arrival order."""
    if not folder.is_dir():
        return []
    return [p.read_bytes() for p in sorted(folder.iterdir(), key=lambda p: int(p.name.split("-")[0]))]


# --- data and judge ---------------------------------------------------------------------------


def _researchbench_composition(tmp_path: Path) -> list[str]:
    from tests.researchbench.test_rb_run import RELEASE

    return ["--data", str(RELEASE), "--task", "composition"]


SYSTEM_DATA: dict[str, Callable[[Path], list[str]]] = {
    "researchbench": _researchbench_composition,  # a system composes hypotheses (the generating task)
}
"""A benchmark's data flags for a system run when its registry fixture's flags are not that
(else :func:`~tests.runner.registry_support.RegistryFixture.data_args`)."""


def system_data_args(name: str, tmp_path: Path) -> list[str]:
    return SYSTEM_DATA[name](tmp_path) if name in SYSTEM_DATA else fixture_for(name).data_args(tmp_path)


def _liveideabench_critic(base: Reply) -> Reply:
    """LiveIdeaBench's fixture critic scores only its own scripted ideas: score any idea, by its length."""

    def reply(body: dict[str, Any]) -> str:
        system = body["messages"][0]["content"]
        if "scientific reviewer" in system and "clarity" in system:
            k = len(body["messages"][-1]["content"])
            scores = {"originality": 3 + k % 7, "feasibility": 2 + k % 5, "clarity": 6}
            return f"Brief analysis.\n```json\n{json.dumps(scores)}\n```"
        return base(body)

    return reply


JUDGE_OVERRIDES: dict[str, Callable[[Reply], Reply]] = {"liveideabench": _liveideabench_critic}
"""Judge replies that parse for any idea where the registry fixture's only parse for its own."""


def judge_reply(name: str) -> Reply:
    base = fixture_for(name).reply
    return JUDGE_OVERRIDES[name](base) if name in JUDGE_OVERRIDES else base


def docs_reply(body: dict[str, Any]) -> str:
    """One loopback model for the examples of docs/systems.md (LiveIdeaBench, AI Idea Bench and
    MLR-Bench, as judge and as generator): MLR-Bench's reviews, AI Idea Bench's scripted replies,
    else IdeaBench's, else LiveIdeaBench's (which answers anything)."""
    from tests.aiideabench.test_aiib_pipeline import responder
    from tests.ideabench.conftest import ideabench_responder
    from tests.mlrbench.replies import respond as mlrbench

    if str(body["messages"][0]["content"]).startswith("You review research"):
        return mlrbench(body["messages"])
    for respond in (responder(), ideabench_responder()):
        try:
            return str(respond(body["messages"]))
        except AssertionError:
            continue
    return judge_reply("liveideabench")(body)


def prompt_of(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"], sort_keys=True, ensure_ascii=False)


# --- one benchmark, three ways -----------------------------------------------------------------


@dataclass
class WayRun:
    """One run of a benchmark: its folder, exit status, console and the judge prompts it sent."""

    way: str
    out: Path
    code: int
    err: str
    judge_prompts: list[str] = field(default_factory=list)

    @property
    def results(self) -> dict[str, Any]:
        path = self.out / "results.json"
        assert path.is_file(), f"{self.way}: no results.json (exit {self.code}): {self.err[-1500:]}"
        return dict(json.loads(path.read_text(encoding="utf-8")))

    @property
    def scores(self) -> list[dict[str, Any]]:
        path = self.out / "scores.jsonl"
        assert path.is_file(), f"{self.way}: no scores.jsonl (exit {self.code}): {self.err[-1500:]}"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def records(self) -> list[tuple[str, dict[str, Any]]]:
        """``(step, record line)`` of every record file of the run."""
        out = []
        for path in sorted((self.out / "records").rglob("*.jsonl")):
            step = str(path.relative_to(self.out / "records").with_suffix(""))
            lines = path.read_text(encoding="utf-8").splitlines()
            out += [(step, json.loads(line)) for line in lines if line.strip()]
        return out

    def system_records(self) -> list[dict[str, Any]]:
        """Records of the system's answers (``system_task``), as ``record["data"]``."""
        return [r["data"] for _, r in self.records() if r.get("data", {}).get("system_task")]


@dataclass
class ThreeWays:
    name: str
    export: WayRun
    tasks: Path
    ideas: WayRun
    cmd: WayRun
    http: WayRun
    cmd_stdin: list[bytes]
    """What the ``cmd:`` agent read on stdin, one item per invocation."""

    @property
    def runs(self) -> list[WayRun]:
        return [self.ideas, self.cmd, self.http]


def comparable(scores: list[dict[str, Any]]) -> list[str]:
    """Scores as sorted JSON lines without ``reason`` (its wording may name the answer's source);
    whether a unit is unscored is kept."""
    return sorted(json.dumps({**{k: v for k, v in s.items() if k != "reason"},
                              "unscored": s.get("reason") is not None}, sort_keys=True) for s in scores)


def export_every_stage(export: Callable[[str, list[str]], WayRun], tasks: Path, ideas: Path) -> list[WayRun]:
    """``tasks export`` (``export(tag, flags)``) into ``tasks``, answered offline into ``ideas``;
    then, while it gives new tasks, ``tasks export --ideas IDEAS`` again: a later stage's tasks carry
    the system's earlier answers (MLR-Bench: the proposal developing its idea); the new tasks are
    answered and both files appended. Returns the export runs.

    Raises:
        AssertionError: an export did not exit 0.
    """
    root = tasks.parent
    runs = [export(tasks.stem, ["--out", str(tasks)])]
    assert runs[0].code == 0, f"tasks export: exit {runs[0].code}: {runs[0].err[-1500:]}"
    answer_offline(tasks, ideas)
    for stage in range(1, MAX_STAGES):
        more = root / f"{tasks.stem}.stage{stage}.jsonl"
        runs.append(export(f"{tasks.stem}-stage{stage}", ["--ideas", str(ideas), "--out", str(more)]))
        assert runs[-1].code == 0, f"tasks export --ideas: exit {runs[-1].code}: {runs[-1].err[-1500:]}"
        known = {json.loads(line)["task_id"] for line in tasks.read_text(encoding="utf-8").splitlines()}
        new = [line for line in more.read_text(encoding="utf-8").splitlines()
               if line.strip() and json.loads(line)["task_id"] not in known]
        if not new:
            break
        more.write_text("".join(f"{line}\n" for line in new), encoding="utf-8")
        answered = root / f"{ideas.stem}.stage{stage}.jsonl"
        answer_offline(more, answered)
        with tasks.open("a", encoding="utf-8") as out:
            out.writelines(f"{line}\n" for line in new)
        with ideas.open("a", encoding="utf-8") as out:
            out.write(answered.read_text(encoding="utf-8"))
    return runs


LIMIT = "2"
MAX_STAGES = 4
"""Rounds of ``tasks export --ideas`` the offline way may take (MLR-Bench: idea, then proposal)."""


def run_flags(name: str, root: Path, judge_url: str, cache: Path) -> list[str]:
    """The flags every system run of ``name`` in these tests gets after its own: the data, the
    loopback judge, a response cache file, ``--limit``, the execution flags."""
    return [*system_data_args(name, root), *fixture_for(name).extra_args, "--judge", "openai/judge",
            "--judge-base-url", judge_url, "--cache-path", str(cache), "--limit", LIMIT, *EXECUTION]


def run_three_ways(name: str, root: Path, capsys: pytest.CaptureFixture[str],
                   monkeypatch: pytest.MonkeyPatch) -> ThreeWays:
    """``name`` run the three ways against the deterministic agent and one loopback judge."""
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(root / "cache"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", *(v for v in os.environ if v.startswith("IDEA_AGENT_"))):
        monkeypatch.delenv(var, raising=False)
    with OpenAICompatServer(judge_reply(name)) as judge:

        def run(way: str, args: list[str]) -> WayRun:
            before = len(judge.requests)
            code, err = cli([*args, *run_flags(name, root, judge.base_url, root / f"cache-{way}.sqlite")],
                            capsys)
            return WayRun(way, root / way, code, err, [prompt_of(r.body) for r in judge.requests[before:]])

        tasks, ideas_file = root / "tasks.jsonl", root / "ideas.jsonl"
        exports = export_every_stage(lambda tag, flags: run(tag, ["tasks", "export", name, *flags]),
                                     tasks, ideas_file)
        export = exports[0]
        export.judge_prompts = [p for e in exports for p in e.judge_prompts]
        ideas = run("ideas", ["run", name, "--ideas", str(ideas_file), "--system", SYSTEM,
                              "--out", str(root / "ideas")])
        monkeypatch.setenv("IDEA_AGENT_LOG", str(root / "cmd-stdin"))
        cmd = run("cmd", ["run", name, "--generator", agent_cmd(), "--system", SYSTEM,
                          "--out", str(root / "cmd")])
        monkeypatch.delenv("IDEA_AGENT_LOG")
        with agent_server() as url:
            http = run("http", ["run", name, "--generator", url + "ideas", "--system", SYSTEM,
                                "--out", str(root / "http")])
    return ThreeWays(name, export, tasks, ideas, cmd, http, logged_tasks(root / "cmd-stdin"))


@pytest.fixture(scope="session")
def three_ways(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., ThreeWays]:
    """``three_ways(name, capsys)``: :func:`run_three_ways` of ``name``, run once per session."""
    made: dict[str, ThreeWays] = {}

    def get(name: str, capsys: pytest.CaptureFixture[str]) -> ThreeWays:
        if name not in made:
            root = tmp_path_factory.mktemp(re.sub(r"\W", "_", name))
            with pytest.MonkeyPatch.context() as monkeypatch:
                monkeypatch.chdir(root)
                made[name] = run_three_ways(name, root, capsys, monkeypatch)
        return made[name]

    return get
