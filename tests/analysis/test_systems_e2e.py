"""Systems side by side, end to end (issue 20, item 5): one benchmark run by a raw model, by the
example agent as a ``cmd:`` system and by the same agent's answers to the tasks it was sent,
written offline and imported with ``--ideas`` (one instance left out of the file), against one
loopback judge; then ``compare`` of the three saved runs (console, ``--json``, ``--html``), the
export's system columns and the viewer's task JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ideaharness.analysis.compare import compare_runs
from ideaharness.analysis.export import export_run, read_export
from ideaharness.analysis.load import load_run
from ideaharness.report.viewer import prompt_map, render_viewer
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import offline_env
from tests.runner.registry_support import fixture_for
from tests.systems.conftest import (
    EXECUTION,
    agent_cmd,
    answer_offline,
    cli,
    judge_reply,
    logged_tasks,
    system_data_args,
)

BENCHMARK = "aiideabench"
LIMIT = "3"


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """``{"model", "cmd", "ideas": run dir, "left_out": instance id, "codes": {way: exit}}``."""
    root = tmp_path_factory.mktemp("e2e")
    codes: dict[str, int] = {}
    logs: dict[str, str] = {}
    with offline_env(root / "cache") as mp:
        mp.chdir(root)
        data = system_data_args(BENCHMARK, root)
        extra = list(fixture_for(BENCHMARK).extra_args)
        with OpenAICompatServer(judge_reply(BENCHMARK)) as server:

            def run(way: str, args: list[str]) -> None:
                judging = ["--judge", "openai/judge", "--judge-base-url", server.base_url]
                with _Capture() as cap:
                    codes[way], logs[way] = cli([*args, *data, *extra, *judging, "--limit", LIMIT,
                                                 *EXECUTION], cap)

            mp.setenv("IDEA_AGENT_LOG", str(root / "asked"))  # the tasks the cmd: agent is sent
            run("cmd", ["run", BENCHMARK, "--generator", agent_cmd(), "--system", "agent",
                        "--out", str(root / "cmd")])
            mp.delenv("IDEA_AGENT_LOG")
            tasks = [json.loads(t) for t in logged_tasks(root / "asked")]
            (root / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
            answer_offline(root / "tasks.jsonl", root / "answers.jsonl")  # the same agent, offline
            lines = (root / "answers.jsonl").read_text(encoding="utf-8").splitlines()
            left_out = json.loads(lines[0])["instance_id"]
            kept = [line for line in lines if json.loads(line)["instance_id"] != left_out]
            (root / "my-ideas.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
            run("ideas", ["run", BENCHMARK, "--ideas", str(root / "my-ideas.jsonl"),
                          "--out", str(root / "ideas")])
            run("model", ["run", BENCHMARK, "--generator", "openai/gen", "--base-url", server.base_url,
                          "--out", str(root / "model")])
    yield {"model": root / "model", "cmd": root / "cmd", "ideas": root / "ideas", "left_out": left_out,
           "codes": codes, "logs": logs}


class _Capture:
    """A stand-in for pytest's capsys inside a module fixture (``cli`` reads and clears it)."""

    def __enter__(self) -> _Capture:
        import contextlib
        import io

        self._out, self._err = io.StringIO(), io.StringIO()
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(contextlib.redirect_stdout(self._out))
        self._stack.enter_context(contextlib.redirect_stderr(self._err))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def readouterr(self) -> Any:
        out, err = self._out.getvalue(), self._err.getvalue()
        self._out.seek(0), self._out.truncate(), self._err.seek(0), self._err.truncate()
        return type("Captured", (), {"out": out, "err": err})()


def test_three_systems_run_and_record_how_their_ideas_were_produced(saved: dict[str, Any]) -> None:
    # exit 3 may also come from the scripted judge's unparsed replies; no generation unit fails
    assert saved["codes"]["model"] in (0, 3) and saved["codes"]["cmd"] in (0, 3), saved["logs"]
    assert saved["codes"]["ideas"] == 3, saved["logs"]["ideas"][-1500:]  # one instance has no answer
    for way in ("model", "cmd"):
        failed = json.loads((saved[way] / "results.json").read_text())["failed_units"]
        assert not failed, (way, failed)
    sources = {way: json.loads((saved[way] / "results.json").read_text())["idea_sources"]
               for way in ("model", "cmd", "ideas")}
    assert [(s["kind"], s["system"]) for s in sources["model"]] == [("model", "openai/gen")]
    assert [(s["kind"], s["system"]) for s in sources["cmd"]] == [("command", "agent")]
    assert [(s["kind"], s["system"]) for s in sources["ideas"]] == [("ideas-file", "my-ideas")]
    failed = json.loads((saved["ideas"] / "results.json").read_text())["failed_units"]
    assert [(u["step"], u["instance_id"]) for u in failed] == [("generate", saved["left_out"])]
    assert f"no answer for instance {saved['left_out']}" in failed[0]["error"]


def test_compare_ranks_a_model_a_command_and_an_ideas_file(
        saved: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [saved["model"], saved["cmd"], saved["ideas"]]
    result = compare_runs(runs, n_resamples=100)
    assert result["settings_mismatch"] == []  # only how the ideas were produced differs
    systems = {s["label"]: s for s in result["systems"]}
    assert {n: s["kind_label"] for n, s in systems.items()} == {
        "openai/gen": "model", "agent": "command", "my-ideas": "ideas file"}
    (source,) = json.loads((saved["ideas"] / "results.json").read_text())["idea_sources"]
    missing = source["answers"]["missing"]
    assert missing == [saved["left_out"]] and systems["my-ideas"]["missing"] == 1  # as the runner listed it
    assert systems["agent"]["missing"] == 0 and systems["openai/gen"]["missing"] == 0
    scored = {n: s["instances_scored"] for n, s in systems.items()}
    assert scored["my-ideas"] < scored["agent"] == scored["openai/gen"]
    for block in result["metrics"].values():
        pairs = {frozenset((p["a"], p["b"])): p["n_shared"] for p in block["paired"]}
        board = {b["system"]: b["own_n"] for b in block["leaderboard"]}
        assert all(b["n"] <= block["n_shared_all"] or b["ranked_on"] == "own" for b in block["leaderboard"])
        for pair, n in pairs.items():  # every difference over the instances both were scored on
            assert n <= min(board[s] for s in pair)
    # the instance without an answer is no zero: it has no value in any metric
    ideas = load_run(saved["ideas"]).scores
    assert ideas[ideas["instance_id"] == saved["left_out"]]["value"].isna().all()
    page = tmp_path / "cmp.html"
    cli(["compare", *map(str, runs), "--resamples", "100", "--html", str(page)], capsys)
    code, text = cli(["compare", *map(str, runs), "--resamples", "100"], capsys)
    assert code == 0 and "Systems compared" in text
    for word in ("ideas file", "command", "model"):
        assert word in text, word
    assert f"my-ideas (ideas file) gave no answer for 1 instance(s) ({saved['left_out']})" in text
    html = page.read_text()
    assert "<td>ideas file</td>" in html and "<td>command</td>" in html and "my-ideas.jsonl" in html
    code, text = cli(["compare", *map(str, runs), "--resamples", "100", "--json"], capsys)
    kinds = {s["label"]: s["kind"] for s in json.loads(text[text.index("{"):])["systems"]}
    assert kinds == {"openai/gen": "model", "agent": "command", "my-ideas": "ideas-file"}


def test_export_and_viewer_of_a_command_system(saved: dict[str, Any], tmp_path: Path) -> None:
    scores, judgments, _ = export_run(saved["cmd"], "csv", tmp_path)
    frame = read_export(scores)
    assert set(frame["system"]) == {"agent"} and set(frame["system_kind"]) == {"command"}
    table = read_export(judgments)
    asked = table[table["system_task"].astype(bool)]
    assert len(asked) and (asked["model"].str.startswith("cmd:")).all()
    assert asked["stderr"].str.startswith("idea_agent: ").all()  # what the agent wrote on stderr, kept
    run = load_run(saved["cmd"])
    tasks = run.judgments[run.judgments["system_task"]]
    prompts = prompt_map([run])
    for h in tasks["prompt_hash"]:  # the prompt of a system step is the task JSON it was sent
        ((role, content),) = prompts[h]
        task = json.loads(str(content))
        assert role == "user" and task["format"] == "ideaharness.task/1" and task["benchmark"] == BENCHMARK
    page = render_viewer(saved["cmd"])
    assert 'id="ih-system"' in page and "command" in page
