"""``ideaharness data validate`` of HindSight data (the bundled sample's topics, a build folder, bad
topics files) through the real CLI entry point: checked with the run's own loader, not as
instances."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ideaharness.benchmarks.hindsight.topics import load_topics, sample_path
from ideaharness.benchmarks.hindsight.validate import topics_file, validate_topics
from tests.cli_support import run_cli
from tests.hindsight.support import scenario_topics, write_topics


def _sample_lines() -> list[str]:
    return gzip.decompress(sample_path().read_bytes()).decode("utf-8").splitlines()


def test_the_sample_topics_and_a_build_folder_validate_as_topics(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "build"
    folder.mkdir()
    (folder / "topics.jsonl").write_text("\n".join(_sample_lines()) + "\n", encoding="utf-8")
    topics = load_topics("sample")
    for given in (sample_path(), folder, folder / "topics.jsonl"):
        code, out, err = run_cli(["data", "validate", str(given)], capsys)
        assert code == 0, err
        assert (f"topics {len(topics)}, literature {sum(len(t.literature) for t in topics)}, "
                f"pool {sum(len(t.future) for t in topics)}, errors 0") in out
        assert "Field required" not in out


@pytest.mark.parametrize(("change", "where"), [
    ({"window_end": "2022-11-30"}, "line 1, field 'window_end'"),
    ({"colour": "red"}, "line 1, field 'colour'"),
    ({"topic": " "}, "line 1, field 'topic'"),
])
def test_a_bad_topic_is_the_loaders_one_error(change: dict[str, str], where: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    topic = {**scenario_topics()[0], **change}
    path = write_topics(tmp_path / "topics.jsonl", [topic])
    code, out, _ = run_cli(["data", "validate", str(path)], capsys)
    assert code == 1 and f"error: {path}: {where}" in out and "errors of kind unloadable: 1" in out


def test_two_topics_with_one_id_fail_validation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topic = scenario_topics()[0]
    path = write_topics(tmp_path / "topics.jsonl", [topic, topic])
    code, out, _ = run_cli(["data", "validate", str(path)], capsys)
    assert code == 1 and "line 2, field 'id': 'llm' repeats line 1" in out


def test_local_paths_and_empty_pools_are_reported(tmp_path: Path) -> None:
    topics = scenario_topics()
    topics[0]["query"] = "/home/someone/notes.txt"
    topics[1]["future"] = []
    report = validate_topics(write_topics(tmp_path / "topics.jsonl", topics))
    assert [(i.level, i.kind, i.where) for i in report.issues] == [
        ("error", "local-path", "topic llm, field 'query'"), ("warning", "empty-pool", "topic turing")]
    assert not report.ok and report.counts["topics"] == 2


def test_instances_are_not_taken_for_topics(tmp_path: Path) -> None:
    path = tmp_path / "instances.jsonl"
    path.write_text(json.dumps({"id": "x", "dataset": "d", "target": {"id": "p", "title": "t"},
                                "topic": "a field an instance may carry"}) + "\n", encoding="utf-8")
    assert topics_file(path) is None and topics_file(tmp_path) is None
    (tmp_path / "other").mkdir()
    assert topics_file(tmp_path / "other") is None
