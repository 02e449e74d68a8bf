"""Every generating benchmark measured three ways against the same system (issue 20, "Done when" 1):
the example agent (``examples/idea_agent/agent.py --deterministic``) answers

* offline: ``tasks export`` -> ``agent.py --answer tasks.jsonl > ideas.jsonl`` -> ``run --ideas``;
* as a command: ``run --generator cmd:"python agent.py --deterministic"``;
* as a service: ``agent.py --serve 0`` and ``run --generator http://127.0.0.1:PORT/ideas``;

and one loopback judge (each benchmark's registry fixture replies) judges. The three runs must
give identical scores (values, instance ids), from the same ideas (the parsed answers) and the
same judgments (the same judge prompts).
"""

from __future__ import annotations

import json
import re
import shlex
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ideaharness.systems import contracts
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.systems.conftest import (
    MIN_GENERATING,
    ROOT,
    SYSTEM,
    ThreeWays,
    WayRun,
    cli,
    comparable,
    docs_reply,
    generating_benchmarks,
)

KINDS = {"ideas": "ideas-file", "cmd": "command", "http": "http"}


def test_every_generating_benchmark_has_an_idea_contract() -> None:
    """The registry: at least :data:`MIN_GENERATING` benchmarks generate, and each has a contract
    (else a system cannot be measured on it, and the parametrised test below would skip it)."""
    generating = generating_benchmarks()
    assert len(generating) >= MIN_GENERATING, f"only {len(generating)} generating benchmarks: {generating}"
    missing = [name for name in generating if name not in contracts()]
    assert not missing, f"generating benchmarks without an idea contract: {missing}"
    assert set(contracts()) <= set(generating), "a contract for a benchmark that does not generate"


def _parsed_answers(run: WayRun) -> Counter[str]:
    """The system's parsed answers (what the benchmark scores), one JSON string each, counted."""
    return Counter(json.dumps([r.get("judgment", {}).get("parsed")], sort_keys=True)
                   for r in run.system_records())


def _system_block(run: WayRun) -> dict[str, Any]:
    """The generator's entry of ``results.json`` ``idea_sources`` (how the ideas were produced)."""
    sources = run.results.get("idea_sources")
    assert isinstance(sources, list), f"{run.way}: results.json has no idea_sources list: {sources!r}"
    generators = [s for s in sources if str(s.get("role", "")).startswith("generator")]
    assert generators, f"{run.way}: no generator in results['idea_sources']: {sources}"
    return dict(generators[0])


@pytest.mark.parametrize("name", generating_benchmarks())
def test_three_ways_give_identical_scores(
    name: str, three_ways: Callable[..., ThreeWays], capsys: pytest.CaptureFixture[str]
) -> None:
    assert name in contracts(), f"{name} generates but has no idea contract"
    ways = three_ways(name, capsys)
    assert ways.tasks.read_text(encoding="utf-8").strip(), f"{name}: tasks export wrote no task"
    for run in ways.runs:
        assert run.code in (0, 3), f"{name} {run.way}: exit {run.code}: {run.err[-1500:]}"
        results = run.results
        assert not results.get("failed_units"), f"{name} {run.way}: {results.get('failed_units')}"
        block = _system_block(run)
        assert block["kind"] == KINDS[run.way] and block["system"] == SYSTEM, block
        answers = block.get("answers", {})
        assert not answers.get("missing") and not answers.get("extra_instances"), answers
        records = run.system_records()
        assert records, f"{name} {run.way}: no answer of the system was recorded"
        unparsed = [r["judgment"].get("errors") for r in records if not r["judgment"].get("parse_ok")]
        assert not unparsed, f"{name} {run.way}: answers of the agent did not parse: {unparsed[:3]}"
    base = ways.cmd
    stderr = [r["judgment"].get("stderr") or "" for r in base.system_records()]
    assert all("idea_agent: " in e for e in stderr), f"{name}: cmd: stderr not recorded: {stderr[:2]}"
    assert any(s.get("value") is not None for s in base.scores), f"{name}: nothing scored"
    for other in (ways.ideas, ways.http):
        assert other.code == base.code, (other.way, other.code, base.code)
        assert comparable(other.scores) == comparable(base.scores), f"{name}: {other.way} scores differ"
        assert _parsed_answers(other) == _parsed_answers(base), f"{name}: {other.way} ideas differ"
    # the same judgments: the same judge prompts (an --ideas run may find the pre-generation
    # judgments, e.g. blinding rewrites, already made by its tasks export)
    asked = set(base.judge_prompts)
    assert asked, f"{name}: the judge was never asked"
    assert set(ways.http.judge_prompts) == asked, f"{name}: http judge prompts differ from cmd:"
    offline = set(ways.ideas.judge_prompts)
    assert offline <= asked <= offline | set(ways.export.judge_prompts), \
        f"{name}: --ideas judge prompts differ from cmd:"


DOCS = (ROOT / "docs" / "systems.md", ROOT / "examples" / "idea_agent" / "README.md")


def docs_commands(doc: Path) -> list[str]:
    """The command lines of the ``bash`` blocks of ``doc`` (continuations joined)."""
    text = doc.read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [line.strip() for block in blocks for line in block.replace("\\\n", " ").splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_examples_of_the_systems_docs_run_as_written(
    doc: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command of ``doc`` (docs/systems.md, the example agent's README), in order, in one
    folder holding ``examples`` and ``tests`` of the checkout: ``ideaharness`` through the CLI with
    every model (``openai/...``) served by one loopback server, ``--limit N`` cut to 2 at most (a
    partial run, exit 3, passes); ``python`` by this interpreter, the ``--serve`` port replaced by a
    free one; ``head`` as a shell command."""
    commands = docs_commands(doc)
    assert any("--answer" in c for c in commands) and any("cmd:" in c for c in commands) and \
        any("--serve" in c for c in commands), f"{doc.name} no longer shows the three ways"
    monkeypatch.chdir(tmp_path)
    for name in ("examples", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "S2_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    port = str(_free_port())
    servers: list[subprocess.Popen[str]] = []
    failures = []
    try:
        with OpenAICompatServer(docs_reply) as llm:
            for line in commands:
                failure = _run_docs_line(line.replace("8080", port), llm.base_url, servers, capsys)
                if failure:
                    failures.append(f"{line}\n    -> {failure}")
    finally:
        for proc in servers:
            proc.terminate()
            proc.wait(timeout=10)
    assert not failures, f"{doc.name}: examples that fail as written:\n" + "\n".join(failures)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_docs_line(line: str, llm_url: str, servers: list[subprocess.Popen[str]],
                   capsys: pytest.CaptureFixture[str]) -> str | None:
    """Run one docs line; None when it worked, else why not."""
    background = line.endswith("&")
    words = shlex.split(line.rstrip("&"))
    target, mode = None, "w"
    for redirect in (">", ">>"):
        if redirect in words:
            target, mode = Path(words[words.index(redirect) + 1]), "a" if redirect == ">>" else "w"
            words = words[:words.index(redirect)]
    if words[0] == "ideaharness":
        args = words[1:]
        for i, word in enumerate(args[:-1]):
            if word == "--limit":
                args[i + 1] = str(min(int(args[i + 1]), 2))
        if any(w.startswith("openai/") for w in args):
            args += ["--base-url", llm_url]
        if args[:1] == ["run"]:
            args += ["--no-progress", "--max-attempts", "1", "--max-retries", "0"]
        code, err = cli(args, capsys)
        return None if code in (0, 3) and "Traceback" not in err else f"exit {code}: {err.strip()[-600:]}"
    if words[0] == "python":
        argv = [sys.executable, *words[1:]]
        if background:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
            servers.append(proc)
            assert proc.stdout is not None
            address = proc.stdout.readline().strip()
            return None if address.startswith("http://127.0.0.1:") else f"the server printed {address!r}"
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if target is not None:
            with target.open(mode, encoding="utf-8") as out:
                out.write(done.stdout)
        return None if done.returncode == 0 else f"exit {done.returncode}: {done.stderr[-600:]}"
    if words[0] == "head":
        done = subprocess.run(words, capture_output=True, text=True, check=False)
        if target is not None:
            target.write_text(done.stdout, encoding="utf-8")
        return None if done.returncode == 0 else f"exit {done.returncode}: {done.stderr[-300:]}"
    return f"not a command this test knows how to run: {words[0]}"
