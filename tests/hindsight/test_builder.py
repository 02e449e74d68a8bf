"""``data build hindsight`` against the Semantic Scholar emulator over recorded real records on
127.0.0.1: the literature ends at the cutoff, the pool lies in the window, a manifest is written,
an interrupted build resumes without asking a page twice, and the bundled sample is exactly what
the builder makes of the recordings."""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

from ideaharness.benchmarks.hindsight.topics import load_topics, sample_path, window_place
from ideaharness.cli import main
from ideaharness.cutoff import verdict
from ideaharness.data.builders.hindsight import (
    HindsightSettings,
    TopicSpec,
    build_hindsight,
    check_distinct,
    page_key,
    topic_id,
)
from ideaharness.data.builders.ideabench import BuildResult
from ideaharness.errors import UserError
from ideaharness.scholarly import SemanticScholar
from ideaharness.scholarly.errors import ScholarlyError
from ideaharness.testing.s2_emulator import S2Emulator, corpus_from_recordings
from ideaharness.testing.scholarly_replay import ReplayServer
from tests.cli_support import run_cli
from tests.shared_data import RAW, need

FAST = {"max_retries": 0, "backoff_base_s": 0.01, "min_interval_s": 0.0}
CUTOFF = dt.date(2022, 11, 30)
SETTINGS = HindsightSettings(topics=[TopicSpec(topic="Large language models", cutoff=CUTOFF),
                                     TopicSpec(topic="The Turing test", query="turing test imitation game",
                                               cutoff=dt.date(2023, 3, 31), field="Computer Science")],
                             n_literature=12, n_future=30, as_of=dt.date(2024, 12, 1))


@pytest.fixture(scope="module")
def emulator() -> S2Emulator:
    need(RAW / "s2-api-recordings" / "Paper.json")
    return corpus_from_recordings(RAW, seed=0)


async def _build(server: ReplayServer, out: Path, settings: HindsightSettings = SETTINGS) -> BuildResult:
    async with SemanticScholar(base_url=server.base_url, api_key="", cache_dir=out / "cache",
                               **FAST) as client:
        return await build_hindsight(out, settings, {"s2": client})


async def test_topics_hold_literature_up_to_the_cutoff_and_a_pool_in_the_window(
        tmp_path: Path, emulator: S2Emulator) -> None:
    with ReplayServer() as server:
        emulator.mount(server)
        result = await _build(server, tmp_path)
    topics = load_topics(str(tmp_path / "topics.jsonl"))
    assert [t.id for t in topics] == ["large-language-models@2022-11-30", "the-turing-test@2023-03-31"]
    for topic, spec in zip(topics, SETTINGS.topics, strict=True):
        assert topic.knowledge_cutoff == spec.cutoff and topic.impact_as_of == dt.date(2024, 12, 1)
        assert 0 < len(topic.literature) <= 12 and 0 < len(topic.future) <= 30
        assert all(verdict(p, spec.cutoff) == "before" for p in topic.literature)
        assert topic.window_end is not None
        assert all(window_place(p, spec.cutoff, topic.window_end) == "in" for p in topic.future)
        assert topic.window_end == dt.date(2025, 5, 30) if spec.cutoff == CUTOFF else dt.date(2025, 9, 30)
    assert topics[1].field == "Computer Science" and topics[1].query == "turing test imitation game"
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["builder"] == "hindsight" and manifest["counts"]["topics"] == 2
    assert manifest["http"]["s2"]["requests"] > 0 and result.instances == 2
    assert manifest["counts"]["per_topic"][topics[0].id]["window_open"] is True


async def test_an_interrupted_build_resumes_without_asking_a_page_twice(tmp_path: Path,
                                                                        emulator: S2Emulator) -> None:
    clean = tmp_path / "clean"
    with ReplayServer() as server:
        emulator.mount(server)
        await _build(server, clean)
        total = server.requests
    assert total >= 4
    resumed = tmp_path / "resumed"
    with ReplayServer() as server:
        emulator.mount(server)
        server.fail_after = total // 2  # the service starts refusing mid-build
        with pytest.raises(ScholarlyError):
            await _build(server, resumed)
        first = server.requests
    with ReplayServer() as server:
        emulator.mount(server)
        await _build(server, resumed)
        again = server.requests
    assert again == total - total // 2  # only the pages not logged, and not cached
    assert first > total // 2  # the failing request was made
    assert (resumed / "topics.jsonl").read_text() == (clean / "topics.jsonl").read_text()


async def test_a_folder_with_another_build_is_refused(tmp_path: Path, emulator: S2Emulator) -> None:
    with ReplayServer() as server:
        emulator.mount(server)
        await _build(server, tmp_path)
        other = SETTINGS.model_copy(update={"n_future": 10})
        with pytest.raises(UserError, match="other settings"):
            await _build(server, tmp_path, other)


def test_the_command_builds_topics(tmp_path: Path, emulator: S2Emulator, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("S2_API_KEY", raising=False)
    with ReplayServer() as server:
        emulator.mount(server)
        with pytest.raises(SystemExit) as exc:
            main(["data", "build", "hindsight", "--topic", "Machine consciousness", "--cutoff", "2022-11-30",
                  "--horizon", "2y", "--n-future", "10", "--out", str(tmp_path / "out"), "--base-url",
                  server.base_url, "--min-interval", "0"])
            raise SystemExit(0)
    assert (exc.value.code or 0) == 0, capsys.readouterr().err
    topics = load_topics(str(tmp_path / "out" / "topics.jsonl"))
    assert topics[0].window_end == dt.date(2024, 11, 30) and len(topics[0].future) == 10


@pytest.mark.parametrize(("argv", "message"), [
    (["--topic", "x"], "needs a knowledge cutoff"),
    (["--topic", "x", "--cutoff", "2022-13-01"], "'2022-13-01' is not a calendar day: expected YYYY-MM-DD"),
    (["--topic", "x", "--cutoff", "2022-11-30", "--horizon", "soon"], "--horizon"),
    (["--topic", "x", "--cutoff", "2022-11-30", "--source", "arxiv"], "--source 'arxiv'"),
    ([], "give --topic"),
    (["--topic", " ", "--cutoff", "2022-11-30"], "empty topic"),
])
def test_bad_arguments_are_one_line_errors(argv: list[str], message: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["data", "build", "hindsight", *argv, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert exc.value.code == 1 and message in err and "Traceback" not in err


def test_the_bundled_sample_is_what_the_builder_makes_of_the_recordings(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("build_sample", Path(__file__).parents[2] / "scripts" /
                                                  "build_hindsight_sample.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import asyncio

    asyncio.run(module.build(RAW, tmp_path))
    built = hashlib.sha256((tmp_path / "topics.jsonl.gz").read_bytes()).hexdigest()
    assert built == hashlib.sha256(sample_path().read_bytes()).hexdigest()
    source = (sample_path().parent / "SOURCE.md").read_text(encoding="utf-8")
    assert f"{built}  topics.jsonl.gz" in source
    assert (sample_path().parent / "LICENSE.recordings").read_text(encoding="utf-8").startswith("MIT License")
    topics = load_topics("sample")
    assert len(topics) == 8 and {t.knowledge_cutoff for t in topics} == {CUTOFF}
    assert all(len(t.literature) == 15 and len(t.future) == 40 for t in topics)


def _build_command(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                   emulator: S2Emulator) -> tuple[int, str, int]:
    """``data build hindsight`` against the emulator: (exit code, stderr, requests it received)."""
    with ReplayServer() as server:
        emulator.mount(server)
        with pytest.raises(SystemExit) as exc:
            main(["data", "build", "hindsight", *argv, "--out", str(tmp_path / "out"), "--base-url",
                  server.base_url, "--min-interval", "0"])
            raise SystemExit(0)
        requests = server.requests
    return int(exc.value.code or 0), capsys.readouterr().err, requests


def test_two_topics_with_one_given_id_are_refused_before_any_request(
        tmp_path: Path, emulator: S2Emulator, capsys: pytest.CaptureFixture[str]) -> None:
    topics = tmp_path / "topics.jsonl"
    topics.write_text('{"topic": "Large language models", "cutoff": "2022-11-30", "id": "a"}\n'
                      '{"topic": "The Turing test", "cutoff": "2022-11-30", "id": "a"}\n', encoding="utf-8")
    code, err, requests = _build_command(["--topics", str(topics)], tmp_path, capsys, emulator)
    assert code == 1 and requests == 0 and not (tmp_path / "out").exists()
    assert f"{topics} line 2 has the id 'a' of {topics} line 1" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_two_topics_with_one_generated_id_are_refused_before_any_request(
        tmp_path: Path, emulator: S2Emulator, capsys: pytest.CaptureFixture[str]) -> None:
    code, err, requests = _build_command(
        ["--topic", "Turing test", "--topic", "Turing-Test", "--cutoff", "2022-11-30", "--query",
         "turing test imitation game", "--query", "chatbot"], tmp_path, capsys, emulator)
    assert code == 1 and requests == 0 and not (tmp_path / "out").exists()
    assert "--topic 'Turing-Test' has the id 'turing-test@2022-11-30' of --topic 'Turing test'" in err


async def test_the_builder_itself_refuses_two_topics_with_one_id(tmp_path: Path,
                                                                 emulator: S2Emulator) -> None:
    twins = HindsightSettings(topics=[TopicSpec(topic="Turing test", cutoff=CUTOFF),
                                      TopicSpec(topic="turing TEST!", cutoff=CUTOFF, query="chatbot")])
    with ReplayServer() as server:
        emulator.mount(server)
        with pytest.raises(UserError, match=r"topic 2 \('turing TEST!'\) has the id 'turing-test@"):
            await _build(server, tmp_path, twins)
        assert server.requests == 0


def test_long_topics_that_share_their_first_60_characters_get_two_ids() -> None:
    stem = "Evaluating the factual consistency of abstractive summaries produced by large "
    first, second = topic_id(stem + "language models", CUTOFF), topic_id(stem + "vision models", CUTOFF)
    assert first != second
    assert all(len(i.split("@")[0]) <= 60 for i in (first, second))
    assert topic_id("Large language models", CUTOFF) == "large-language-models@2022-11-30"  # short: unchanged
    check_distinct([TopicSpec(topic=stem + "language models", cutoff=CUTOFF),
                    TopicSpec(topic=stem + "vision models", cutoff=CUTOFF)])


REQUEST = {"topic": "a", "query": "q", "window": [None, "2022-11-30"], "part": "literature", "source": "s2",
           "offset": 0}


@pytest.mark.parametrize(("name", "other"), [
    ("topic", "b"), ("query", "chatbot"), ("window", [None, "2021-06-01"]),
    ("window", ["2022-11-30", "2025-05-30"]),
    ("part", "future"), ("source", "openalex"), ("offset", 100),
])
def test_the_page_log_keys_a_page_on_every_part_of_its_request(name: str, other: object) -> None:
    assert page_key({**REQUEST, name: other}) != page_key(REQUEST)
    assert page_key({**REQUEST, "fetched": "2024-12-01", "papers": []}) == page_key(REQUEST)


@pytest.mark.parametrize(("row", "message"), [
    ('{"topic": "", "cutoff": "2022-11-30"}', "line 1, field 'topic'"),
    ('{"topic": "  ", "cutoff": "2022-11-30"}', "line 1, field 'topic'"),
    ('{"topic": "x", "cutoff": "2022-11-30", "colour": "red"}', "line 1, field 'colour'"),
    ('{"topic": "x", "cutoff": "2022-11-30", "id": " "}', "line 1, field 'id'"),
    ('{"topic": "x", "cutoff": "2022-11-30", "query": ""}', "line 1, field 'query'"),
    ('{"topic": "x"}', "line 1, field 'cutoff'"),
    ('{"topic": "x", "cutoff": "2022-13-01"}', "line 1, field 'cutoff'"),
])
def test_bad_topic_rows_are_refused_before_any_request(row: str, message: str, tmp_path: Path,
                                                       emulator: S2Emulator,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    topics = tmp_path / "topics.jsonl"
    topics.write_text(row + "\n", encoding="utf-8")
    code, err, requests = _build_command(["--topics", str(topics)], tmp_path, capsys, emulator)
    assert code == 1 and requests == 0 and message in err and str(topics) in err and "Traceback" not in err


def test_a_row_the_run_writes_back_is_a_row_the_builder_reads() -> None:
    spec = TopicSpec.model_validate({"topic": " Large language models ", "knowledge_cutoff": "2022-11-30",
                                     "id": "llm"})
    assert spec.topic == "Large language models" and spec.cutoff == CUTOFF and spec.key() == "llm"


def test_the_help_names_its_values_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["data", "build", "hindsight", "--help"], capsys)
    assert code == 0
    assert "--topic TEXT" in out and "--n-future INT" in out and "--cutoff DATE" in out
    assert "<" not in out.replace("<out>", "")
