"""The CLI: bad input gives one line naming the file/row/field or the fix, exit 1, no traceback;
and an end-to-end run with the real embedded 0.5B model that a second time makes no model call."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from ideaharness.cli import main
from ideaharness.data.ideabench_csv import REFERENCE_COLUMNS
from ideaharness.data.ideabench_csv import TARGET_COLUMNS as IB_TARGET_COLUMNS
from tests.cli_support import run_cli

TARGET_COLUMNS = ["", *IB_TARGET_COLUMNS]  # with the leading unnamed index column of the originals


def _write_csv(path: Path, columns: list[str], rows: list[list[str]]) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        writer.writerows(rows)


def _ideabench_dir(tmp_path: Path, *, drop_column: str | None = None, empty_abstract: bool = False) -> Path:
    data = tmp_path / "ib"
    data.mkdir()
    target = [
        "0",
        "t1",
        "A target paper",
        "" if empty_abstract else "We study X in Y.",
        "2024",
        "Nature",
        "12",
        "['JournalArticle']",
        "{'DOI': '10.1/abc'}",
        "1",
    ]
    columns = list(TARGET_COLUMNS)
    if drop_column:
        i = columns.index(drop_column)
        columns.pop(i)
        target.pop(i)
    _write_csv(data / "target_papers.csv", columns, [target])
    refs = [
        [
            "t1",
            "['ctx']",
            "['background']",
            "False",
            f"r{i}",
            "{}",
            f"Ref {i}",
            f"Abstract {i}.",
            "Cell",
            "2020",
            "30",
            "['JournalArticle']",
        ]
        for i in range(3)
    ]
    _write_csv(data / "raw_references.csv", REFERENCE_COLUMNS, refs)
    return data


def _assert_one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 1
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_missing_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _ideabench_dir(tmp_path, drop_column="abstract")
    code, _, err = run_cli(
        [
            "run",
            "ideabench",
            "--data",
            str(data),
            "--out",
            str(tmp_path / "o"),
            "--generator",
            "local/qwen2.5-coder-0.5b",
        ],
        capsys,
    )
    _assert_one_line_error(code, err, "target_papers.csv", "abstract")


def test_empty_abstract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _ideabench_dir(tmp_path, empty_abstract=True)
    code, _, err = run_cli(["run", "ideabench", "--data", str(data), "--out", str(tmp_path / "o")], capsys)
    _assert_one_line_error(code, err, "target_papers.csv", "row 2", "abstract")


def test_unparsable_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _ideabench_dir(tmp_path)
    (data / "target_papers.csv").write_bytes(b'paperId,title\n"t1,"unterminated\n\x00\xff')
    code, _, err = run_cli(["run", "ideabench", "--data", str(data), "--out", str(tmp_path / "o")], capsys)
    _assert_one_line_error(code, err, "target_papers.csv")


def test_bad_jsonl_names_line_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"id": "a", "dataset": "d", "target": {"id": "p"}}\n')
    code, _, err = run_cli(["run", "ideabench", "--data", str(path), "--out", str(tmp_path / "o")], capsys)
    _assert_one_line_error(code, err, "x.jsonl", "line 1", "target.title")


def test_unknown_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["run", "ideabench", "--generator", "foo/bar", "--out", str(tmp_path / "o")],
                           capsys)
    _assert_one_line_error(code, err, "foo/bar", "local/qwen2.5-coder-1.5b")


def test_openai_without_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    code, _, err = run_cli(
        ["run", "ideabench", "--generator", "openai/gpt-4o-mini", "--out", str(tmp_path / "o")], capsys
    )
    _assert_one_line_error(code, err, "OPENAI_API_KEY")


def test_unknown_data_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["run", "ideabench", "--data", "nope", "--out", str(tmp_path / "o")], capsys)
    _assert_one_line_error(code, err, "nope", "tomato-chem")


@pytest.mark.model
def test_end_to_end_with_real_local_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    args = [
        "run",
        "ideabench",
        "--generator",
        "local/qwen2.5-coder-0.5b",
        "--judge",
        "local/qwen2.5-coder-0.5b",
        "--rewriter",  # one model in the run: the default rewriter would load the 1.5B as well
        "local/qwen2.5-coder-0.5b",
        "--limit",
        "2",
        "--indicator",
        "novelty",
        "--out",
        str(out),
    ]
    _main(args)
    first = json.loads((out / "results.json").read_text())
    if first["status"] == "partial":  # the 0.5B's replies left a metric with no scored unit: said so
        assert first["not_computed"] and first["failed_units"] == []
    low = first["scenarios"]["low"]
    assert first["instances"] == 2
    assert low["instances_generated"] + low["generation_parse_failures"] == 2
    assert first["llm_stats"]["generator"]["calls"] >= 2
    assert "report:" in capsys.readouterr().out
    html = (out / "report.html").read_text()
    # one offline file: the viewer's script is inline, nothing is fetched
    assert not re.search(r"<script[^>]*\bsrc=|<link[^>]*\bhref=", html, re.I)
    reasked = [u for u in first["unparsed_units"] if not u["final"]]
    _main(args)  # resume: everything parsed is recorded; only replies that did not parse are re-asked
    second = json.loads((out / "results.json").read_text())
    calls = second["llm_stats_this_process"]["generator"]["calls"]  # one client: generator = judge
    assert calls <= 3 * len(reasked)  # at most --max-attempts (3) new samples per re-asked judgment
    assert second["llm_stats"]["generator"]["calls"] == first["llm_stats"]["generator"]["calls"] + calls
    if not reasked:
        assert calls == 0 and second["scenarios"] == first["scenarios"]


def _main(args: list[str]) -> None:
    """``main``: exit 0, or 3 when a metric had no scored unit (a 0.5B model's replies)."""
    try:
        main(args)
    except SystemExit as exc:
        assert exc.code == 3, exc.code


def test_cli_against_openai_compatible_server_with_429_and_500(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The openai/ provider on a real loopback server: a 429 with Retry-After and a 500 are retried,
    each unit of work is recorded once, and a second run makes no request."""
    from ideaharness.testing.openai_server import OpenAICompatServer, Reply
    from tests.ideabench.conftest import ideabench_responder

    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    respond = ideabench_responder()
    script = [Reply(status=429, headers={"Retry-After": "1"}, body={"error": {"message": "slow down"}}),
              Reply(status=500, body={"error": {"message": "boom"}})]
    with OpenAICompatServer(lambda body: respond(body["messages"]), script=script) as server:
        out = tmp_path / "run"
        args = ["run", "ideabench", "--generator", "openai/test-model", "--judge", "openai/test-model",
                "--base-url", server.base_url, "--limit", "2", "--max-concurrency", "1", "--out", str(out)]
        main(args)
        first_requests = len(server.requests)
        main(args)
        assert len(server.requests) == first_requests
    # 2 instances x (generate + target rewrite + overlap + 2 rankings) = 10 units, one consistency
    # re-ask of a ranking (--consistency-sample 0.1 re-asks at least one), plus 2 failed attempts
    assert first_requests == 10 + 1 + 2
    keys = [(json.loads(line)["step"], json.loads(line)["instance_id"], json.loads(line)["key"])
            for part in (out / "records").glob("*.jsonl") for line in part.read_text().splitlines()]
    # similarity and the target's placement are recorded too, once per instance; and the knowledge
    # cutoff's data and references
    assert len(keys) == len(set(keys)) == 2 * 7 + 1 + 2 * 2
    results = json.loads((out / "results.json").read_text())
    assert results["scenarios"]["low"]["insight"]["novelty"]["m"] == 2
    assert "OPENAI_API_KEY" not in (out / "config.json").read_text()


@pytest.mark.parametrize("suffix", [".jsonl"])
def test_non_utf8_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str) -> None:
    path = tmp_path / f"bad{suffix}"
    path.write_bytes(b'{"id": "\xff\xfe"}\n')
    code, _, err = run_cli(["run", "ideabench", "--data", str(path), "--out", str(tmp_path / "o")], capsys)
    _assert_one_line_error(code, err, f"bad{suffix}", "not UTF-8")


@pytest.mark.parametrize("flags", [["--n-ideas", "0"], ["--rpm", "-5"], ["--bogus"], ["--shard", "3/2"]])
def test_bad_flags_exit_1_without_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            flags: list[str]) -> None:
    code, _, err = run_cli(["run", "ideabench", *flags, "--out", str(tmp_path / "o")], capsys)
    assert code == 1 and "Traceback" not in err and err.strip()


def test_partial_results_are_not_a_success(tmp_path: Path) -> None:
    from ideaharness.errors import PartialRunError
    from ideaharness.runner.run import finish_run

    finish_run({"status": "complete", "failed_units": []}, tmp_path)
    units = [{"step": "generate/low", "instance_id": "x", "key": "", "status": "failed", "error": "e"},
             {"step": "novelty", "instance_id": "y", "key": "0", "status": "skipped", "error": "e"}]
    with pytest.raises(PartialRunError, match="1 unit.*failed.*1 skipped") as info:
        finish_run({"status": "partial", "failed_units": units}, tmp_path)
    assert info.value.exit_code == 3
