"""LigBench's ``--corpus`` (issue 33, item 5): read and checked before the run folder is made (a bad
corpus leaves nothing that blocks the corrected command), a repeated paper refused naming both rows,
and nothing ever written beside the corpus -- its folder may be read-only or versioned."""

from __future__ import annotations

import json
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from ideaharness import arun
from ideaharness.benchmarks.ligbench import LigBenchConfig
from ideaharness.benchmarks.ligbench.judge_eval import JudgeAccuracyConfig
from ideaharness.benchmarks.ligbench.score_idea import score_idea_async
from ideaharness.data.pairiq import load_pairiq
from ideaharness.errors import DataError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.runner.options import ExecutionOptions
from tests.cli_support import run_cli
from tests.ligbench.registry_fixtures import PAIRIQ, PLAN
from tests.ligbench.test_cli import _scripted_judge

ROWS = PAIRIQ.read_text(encoding="utf-8").splitlines()


@pytest.fixture(autouse=True)
def _cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


@pytest.fixture
def read_only_corpus(tmp_path: Path) -> Iterator[Path]:
    """The fixture corpus in a folder nobody may write to (restored for the clean-up)."""
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / "pairiq_mini.jsonl"
    shutil.copy(PAIRIQ, path)
    path.chmod(stat.S_IRUSR | stat.S_IRGRP)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    yield path
    folder.chmod(stat.S_IRWXU)


def _ligbench(corpus: Path, out: Path) -> tuple[LigBenchConfig, ExecutionOptions]:
    return (LigBenchConfig(generators=["scripted/gen"], judge="scripted/judge", corpus=str(corpus),
                           topics=["graph explanations"], ideas_per_topic=1),
            ExecutionOptions(out=out, progress=False))


def _models() -> dict[str, object]:
    return {"generators": {"scripted/gen": ScriptedModel(lambda m: PLAN, model="scripted/gen")},
            "judge": ScriptedModel(_scripted_judge, model="scripted/judge")}


def _write(path: Path, rows: list[str]) -> Path:
    path.write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def test_repeated_paper_is_refused_naming_both_rows(tmp_path: Path) -> None:
    same_id = _write(tmp_path / "same_id.jsonl", [*ROWS[:6], ROWS[2]])
    with pytest.raises(DataError, match=r"same_id.jsonl: row 7: repeats the paper of row 3 \(same id"):
        load_pairiq(same_id)
    copy = json.loads(ROWS[1])  # the same paper under another URL, re-cased and re-wrapped
    copy["url"] = "https://example.org/elsewhere"
    copy["title"] = copy["title"].upper()
    copy["abstract"] = "  " + copy["abstract"].replace(" ", "\n ", 3)
    same_text = _write(tmp_path / "same_text.jsonl", [*ROWS[:5], json.dumps(copy)])
    with pytest.raises(DataError, match=r"same_text.jsonl: row 6: repeats the paper of row 2 \(same venue, "
                                        r"title and abstract"):
        load_pairiq(same_text)
    other_venue = {**copy, "conference": "NeurIPS" if copy["conference"] != "NeurIPS" else "ICLR"}
    resubmitted = _write(tmp_path / "resubmitted.jsonl", [*ROWS[:5], json.dumps(other_venue)])
    assert len(load_pairiq(resubmitted)) == 6  # a resubmission elsewhere: reviewed again, kept
    folder = tmp_path / "venues"  # across two files of a directory: both files named
    folder.mkdir()
    _write(folder / "a.jsonl", ROWS[:4])
    _write(folder / "b.jsonl", [ROWS[4], ROWS[0]])
    with pytest.raises(DataError, match=r"b.jsonl: row 2: repeats the paper of .*a.jsonl row 1"):
        load_pairiq(folder)
    assert len(load_pairiq(_write(tmp_path / "fine.jsonl", ROWS))) == len(ROWS)  # distinct papers pass


@pytest.mark.parametrize("fault", ["repeated", "missing", "bad_row"])
async def test_bad_corpus_writes_nothing_and_the_corrected_command_runs(tmp_path: Path, fault: str) -> None:
    bad = tmp_path / "bad.jsonl"
    if fault == "repeated":
        _write(bad, [*ROWS, ROWS[0]])
    elif fault == "bad_row":
        _write(bad, [*ROWS[:3], '{"title": "x", "rating": 9}'])
    out = tmp_path / "run"
    config, options = _ligbench(bad, out)
    with pytest.raises(DataError, match="bad.jsonl"):
        await arun("ligbench", config=config, options=options, **_models())
    assert not out.exists()  # no config.json, records/ or usage/ to block the next command
    good = _write(tmp_path / "good.jsonl", ROWS)
    config, options = _ligbench(good, out)
    results = await arun("ligbench", config=config, options=options, **_models())
    assert results["status"] == "complete" and results["corpus_size"] == len(ROWS)


def test_cli_bad_corpus_is_one_line_and_leaves_no_folder(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    bad = _write(tmp_path / "dup.jsonl", [*ROWS, ROWS[5]])
    topics = _write(tmp_path / "topics.txt", ["graph explanations"])
    for name, args in (("ligbench", ["--topics", str(topics), "--generator", "scripted/gen"]),
                       ("ligbench-judge", ["--pairs", "2"])):
        out = tmp_path / f"run-{name}"
        code, _, err = run_cli(["run", name, "--corpus", str(bad), *args, "--judge", "scripted/judge",
                                "--out", str(out)], capsys)
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == 1 and len(lines) == 1 and "Traceback" not in err, err
        assert "dup.jsonl: row 21: repeats the paper of row 6" in lines[0], lines[0]
        assert not out.exists()


async def test_runs_and_score_idea_leave_a_read_only_corpus_folder_unchanged(
    tmp_path: Path, read_only_corpus: Path
) -> None:
    folder = read_only_corpus.parent
    before = _snapshot(folder)
    config, options = _ligbench(read_only_corpus, tmp_path / "run")
    results = await arun("ligbench", config=config, options=options, **_models())
    assert results["status"] == "complete" and results["corpus_size"] == len(ROWS)
    judge = ScriptedModel(_scripted_judge, model="scripted/judge")
    judged = await arun("ligbench-judge", config=JudgeAccuracyConfig(
        judge="scripted/judge", corpus=str(read_only_corpus), n_pairs=3, min_gap=0.0),
        options=ExecutionOptions(out=tmp_path / "judge", progress=False), judge=judge)
    assert judged["status"] == "complete" and judge.calls
    scorer = ScriptedModel(_scripted_judge, model="scripted/j")
    scored = await score_idea_async(PLAN, read_only_corpus, scorer,
                                    options=ExecutionOptions(progress=False, no_embedding_cache=True))
    assert scored.status == "scored"
    assert _snapshot(folder) == before  # no embeddings, no side file, nothing touched
    assert (tmp_path / "cache" / "embeddings.sqlite").is_file()  # the embeddings went to the store


@pytest.mark.parametrize("benchmark", ["ligbench", "ligbench-judge"])
async def test_no_embedding_cache_keeps_the_corpus_out_of_the_store(tmp_path: Path, benchmark: str) -> None:
    corpus = _write(tmp_path / "corpus.jsonl", ROWS)
    options = ExecutionOptions(out=tmp_path / "run", progress=False, no_embedding_cache=True)
    if benchmark == "ligbench":
        config, _ = _ligbench(corpus, tmp_path / "run")
        results = await arun(benchmark, config=config, options=options, **_models())
    else:
        results = await arun(benchmark, config=JudgeAccuracyConfig(judge="scripted/judge", corpus=str(corpus),
                                                                   n_pairs=2, min_gap=0.0),
                             options=options, judge=ScriptedModel(_scripted_judge, model="scripted/judge"))
    assert results["status"] == "complete"
    assert not (tmp_path / "cache" / "embeddings.sqlite").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["corpus.jsonl"]
