"""Whole runs over a run directory: torn records, full disks, changed inputs, clobbering, two processes,
usage over resumes, BERTScore progress and lone surrogates — through the CLI on a loopback server
(transport matters) or the Python API with a scripted model (transport irrelevant)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ideaharness
from ideaharness import arun, fileio
from ideaharness.benchmarks.researchbench import ResearchBenchConfig
from ideaharness.cli import main
from ideaharness.data.registry import write_instances_jsonl
from ideaharness.data.tomato import load_tomato_chem
from ideaharness.errors import UserError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.similarity import BertScorer
from ideaharness.runner.options import ExecutionOptions
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.ideabench.conftest import ideabench_responder
from tests.researchbench.test_rb_run import RELEASE, scripted

SRC = Path(ideaharness.__file__).parents[1]  # the package under test, for child processes


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def _data_file(tmp_path: Path, n: int = 2) -> Path:
    path = tmp_path / "data.jsonl"
    write_instances_jsonl(load_tomato_chem()[:n], path)
    return path


def _server(responder: Any = None, **kw: Any) -> OpenAICompatServer:
    respond = responder or ideabench_responder()
    return OpenAICompatServer(lambda body: respond(body["messages"]), **kw)


def _ib_args(server: OpenAICompatServer, out: Path, *extra: str) -> list[str]:
    return [
        "run",
        "ideabench",
        "--generator",
        "openai/m",
        "--judge",
        "openai/m",
        "--base-url",
        server.base_url,
        "--indicator",
        "novelty",
        "--out",
        str(out),
        *extra,
    ]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _tear_last_line(path: Path) -> None:
    """What a kill during a write leaves: the last line cut short, without its newline."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 20])


# ---------------------------------------------------------------- torn records (all benchmarks)


def test_torn_record_is_repaired_and_counted_in_ideabench(tmp_path: Path) -> None:
    model = ScriptedModel(ideabench_responder())
    out = tmp_path / "run"
    ideaharness.run("ideabench", generator=model, judge=model, limit=3, out=out, progress=False)
    _tear_last_line(out / "records" / "overlap_low.jsonl")
    results = ideaharness.run("ideabench", generator=model, judge=model, limit=3, out=out, progress=False)
    assert results["corrupt_record_lines"] == 1
    assert results["scenarios"]["low"]["overlap"]["n"] == 3  # the torn unit was redone, not glued
    assert len(_lines(out / "records" / "overlap_low.jsonl")) == 3


async def test_torn_record_is_counted_in_researchbench(tmp_path: Path) -> None:
    model = scripted("**Selection of research hypothesis candidate**: candidate 1")
    config = ResearchBenchConfig(data=str(RELEASE), tasks=["retrieval"])
    options = ExecutionOptions(out=tmp_path / "run", progress=False)
    first = await arun("researchbench", config=config, options=options, generator=model, judge=model)
    assert first["corrupt_record_lines"] == 0
    _tear_last_line(tmp_path / "run" / "records" / "researchbench_pool.jsonl")
    again = await arun("researchbench", config=config, options=options, generator=model, judge=model)
    assert again["corrupt_record_lines"] == 1
    assert len(_lines(tmp_path / "run" / "records" / "researchbench_pool.jsonl")) == 2


# ---------------------------------------------------------------- full disk


def test_full_disk_is_one_line_and_the_same_command_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data, out = _data_file(tmp_path), tmp_path / "run"
    real_write = os.write

    def full(fd: int, chunk: bytes) -> int:
        if os.fstat(fd).st_size > 0:  # the disk fills up once the first record is on it
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, chunk)

    with _server() as server:
        monkeypatch.setattr(fileio.os, "write", full)
        with pytest.raises(SystemExit) as exc:
            main(_ib_args(server, out, "--data", str(data), "--max-concurrency", "1"))
        monkeypatch.undo()
        assert exc.value.code == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "no space left on the device; free space there" in err[0]
        assert "records" in err[0] or "prompts.jsonl" in err[0]  # the file that could not be written
        for path in [*(out / "records").glob("*.jsonl"), out / "prompts.jsonl"]:
            if path.exists():
                assert all(json.loads(line) for line in path.read_text().splitlines())  # nothing half-written
        main(_ib_args(server, out, "--data", str(data)))  # space freed: resume
    results = json.loads((out / "results.json").read_text())
    low = results["scenarios"]["low"]
    assert (
        low["instances_generated"] == 2 and low["overlap"]["n"] == 2 and results["corrupt_record_lines"] == 0
    )


# ---------------------------------------------------------------- changed inputs and --force


def test_changed_data_file_is_refused_and_force_starts_a_new_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = _data_file(tmp_path), tmp_path / "run"
    with _server() as server:
        main(_ib_args(server, out, "--data", str(data)))
        edited = data.read_text().replace("Ultrastrong", "Ultra-strong", 1)
        assert edited != data.read_text()
        data.write_text(edited)
        with pytest.raises(SystemExit) as exc:
            main(_ib_args(server, out, "--data", str(data)))
        assert exc.value.code == 1
        err = capsys.readouterr().err.strip()
        assert (
            "\n" not in err and f"--data {data}: changed since this run started" in err and "--force" in err
        )
        main(_ib_args(server, out, "--data", str(data), "--force"))
    (old,) = (out / "superseded").iterdir()
    assert (old / "results.json").exists() and (old / "records" / "generate_low.jsonl").exists()
    assert json.loads((out / "results.json").read_text())["scenarios"]["low"]["instances_generated"] == 2


async def test_changed_ideas_file_is_refused(tmp_path: Path) -> None:
    from ideaharness.benchmarks.aiideabench import AIIdeaBenchConfig
    from tests.aiideabench.test_aiib_pipeline import DATA, responder, toy_embed

    ideas = tmp_path / "mysys.jsonl"
    ideas.write_text(json.dumps({"instance_id": "aiib-0", "motivation": "Why attention is slow here",
                                 "experiment_plan": "Run the sparse variant"}) + "\n")
    config = AIIdeaBenchConfig(data=DATA, ideas_file=str(ideas), metrics=["i2i"], bootstrap_resamples=20)
    options = ExecutionOptions(out=tmp_path / "run", limit=1, progress=False)
    await arun("aiideabench", config=config, options=options, judge=ScriptedModel(responder()),
               embed_fn=toy_embed)
    ideas.write_text(json.dumps({"instance_id": "aiib-0", "motivation": "Why attention is slow there",
                                 "experiment_plan": "Run the sparse variant"}) + "\n")
    with pytest.raises(UserError, match=rf"--ideas {ideas}: changed since this run started"):
        await arun("aiideabench", config=config, options=options, judge=ScriptedModel(responder()),
                   embed_fn=toy_embed)


# ---------------------------------------------------------------- never clobber


def test_cli_never_writes_into_a_folder_that_is_not_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "analysis"
    folder.mkdir()
    (folder / "results.json").write_text('{"mine": true}')
    (folder / "report.html").write_text("mine")
    with _server() as server:
        for out in (folder, folder / "results.json"):
            with pytest.raises(SystemExit) as exc:
                main(_ib_args(server, out, "--limit", "1"))
            assert exc.value.code == 1
            err = capsys.readouterr().err.strip()
            assert err.startswith("error: --out ") and "\n" not in err
        assert server.requests == []
    assert (folder / "results.json").read_text() == '{"mine": true}' and (
        folder / "report.html"
    ).read_text() == "mine"
    assert sorted(p.name for p in folder.iterdir()) == ["report.html", "results.json"]


# ---------------------------------------------------------------- two processes, one directory

_CLI = "import sys; from ideaharness.cli import main; main(sys.argv[1:])"


def test_two_processes_on_one_run_directory(tmp_path: Path) -> None:
    """Two real processes start the same run at once: one runs, the other is refused (naming the
    holder); the server sees the calls of one run, and every unit is recorded once."""
    data, out = _data_file(tmp_path), tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    with _server(latency_s=1.0) as server:  # the first process holds the directory for >= 6 s
        args = _ib_args(server, out, "--data", str(data), "--max-concurrency", "1")
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _CLI, *args],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        outputs = [p.communicate(timeout=600) for p in procs]
        codes = sorted(p.returncode for p in procs)
        refused = next(err for (_, err), p in zip(outputs, procs, strict=True) if p.returncode == 1)
        n_requests = len(server.requests)
    assert codes == [0, 1], outputs
    assert "in use by process" in refused and "one process per run directory" in refused
    # 2 instances x (generate, target rewrite, overlap, one ranking) + one consistency re-ask of a ranking
    assert n_requests == 2 * (1 + 1 + 1 + 1) + 1
    for path in (out / "records").glob("*.jsonl"):
        keys = [(r["step"], r["instance_id"], r["key"]) for r in _lines(path)]
        originals = [k for k in keys if not k[2].endswith("#reask")]
        per_instance = 2 if path.stem == "cutoff" else 1  # the knowledge cutoff's data and references
        assert len(keys) == len(set(keys)) and len(originals) == 2 * per_instance


# ---------------------------------------------------------------- usage over resumes


def test_usage_is_summed_over_every_process_of_the_run(tmp_path: Path) -> None:
    data, out = _data_file(tmp_path, n=2), tmp_path / "run"
    with _server() as server:
        main(_ib_args(server, out, "--data", str(data), "--limit", "1"))
        first = len(server.requests)
        main(_ib_args(server, out, "--data", str(data)))  # resume: the second instance only
        total = len(server.requests)
    results = json.loads((out / "results.json").read_text())
    assert 0 < first < total
    assert results["llm_stats"]["generator"]["calls"] == total
    assert results["llm_stats_this_process"]["generator"]["calls"] == total - first
    assert results["llm_stats_processes"] == 2
    assert (
        results["llm_stats"]["generator"]["completion_tokens"]
        > (results["llm_stats_this_process"]["generator"]["completion_tokens"])
    )


# ---------------------------------------------------------------- BERTScore progress


def test_bertscore_is_recorded_per_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ideaharness.benchmarks.ideabench.run as ib_run

    real_f1, batches = BertScorer.f1, []

    def killed_after_one_batch(self: BertScorer, candidates: list[str], references: list[str]) -> list[float]:
        batches.append(len(candidates))
        if len(batches) == 2:
            raise KeyboardInterrupt  # Ctrl-C or a kill while the second batch is scored
        return real_f1(self, candidates, references)

    monkeypatch.setattr(ib_run, "SIMILARITY_BATCH", 1)
    monkeypatch.setattr(BertScorer, "f1", killed_after_one_batch)
    model, out = ScriptedModel(ideabench_responder()), tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        ideaharness.run("ideabench", generator=model, judge=model, limit=3, out=out, progress=False)
    assert len(_lines(out / "records" / "similarity_low.jsonl")) == 1  # the first batch was kept
    monkeypatch.undo()
    results = ideaharness.run("ideabench", generator=model, judge=model, limit=3, out=out, progress=False)
    assert results["scenarios"]["low"]["similarity"]["n"] == 3
    assert len(_lines(out / "records" / "similarity_low.jsonl")) == 3


# ---------------------------------------------------------------- lone surrogates


def test_lone_surrogate_in_an_abstract_runs_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _data_file(tmp_path, n=1)
    text = data.read_text()
    data.write_text(text.replace('"abstract":"', '"abstract":"\\ud83d ', 1))
    assert "\\ud83d" in data.read_text()
    with _server() as server:
        main(_ib_args(server, tmp_path / "run", "--data", str(data)))
        # generate, rewrite of the target (blinding), overlap, ranking, its consistency re-ask
        assert len(server.requests) == 5
    err = capsys.readouterr().err
    assert f"warning: {data}: line 1, field 'references[0].abstract': a lone UTF-16 surrogate" in err


@pytest.mark.parametrize("cache", [True, False])
def test_judge_reply_with_a_lone_surrogate_never_ends_the_run(tmp_path: Path, cache: bool) -> None:
    base = ideabench_responder()

    def respond(messages: list[dict[str, str]]) -> str:
        reply = base(messages)
        return reply + " \ud83d" if "Rate how much" in messages[-1]["content"] else reply

    out = tmp_path / "run"
    with _server(respond) as server:
        main(_ib_args(server, out, "--limit", "1", *([] if cache else ["--no-cache"])))
    (overlap,) = _lines(out / "records" / "overlap_low.jsonl")
    assert overlap["data"]["judgment"]["raw_text"].endswith("7. It shares the core mechanism. \ufffd")
    assert overlap["data"]["judgment"]["parsed"]["rating"] == 7


@pytest.mark.parametrize(
    "command",
    [
        ["run", "ideabench"],
        ["run", "aiideabench"],
        ["run", "researchbench"],
        ["run", "ligbench"],
        ["run", "ligbench-judge"],
        ["score-idea"],
    ],
)
def test_every_command_with_a_run_directory_has_force(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    main([*command, "--help"])  # returns: help printed, exit 0
    assert "--force" in capsys.readouterr().out
