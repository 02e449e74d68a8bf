"""IdeaBench when the knowledge cutoff takes every reference of an instance: the skip says so, with
counts, and is never offered as something a re-run retries; when it takes them from every instance
the run refuses up front (exit 1), before its folder is made or a model is asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli
from tests.cutoff.support import results
from tests.ideabench.conftest import ideabench_responder


def _instance(i: int, ref_dates: list[str]) -> dict[str, Any]:
    refs = [{"id": f"r{i}-{j}", "title": f"Reference {j} on gel mechanics {i}",
             "abstract": f"Gels of kind {j} toughen in salt baths.", "publication_date": d}
            for j, d in enumerate(ref_dates)]
    return {"id": f"inst{i}", "dataset": "cutoff-test", "domain": "materials chemistry",
            "target": {"id": f"t{i}", "title": f"Target paper on thermocells {i}",
                       "abstract": "We raise the thermopower of a hydrogel by salting it out.",
                       "publication_date": "2024-06-01"},
            "references": refs}


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _args(data: Path, out: Path, url: str, *extra: str) -> list[str]:
    return ["run", "ideabench", "--data", str(data), "--generator", "openai/gen", "--judge", "openai/judge",
            "--base-url", url, "--n-ideas", "2", "--reference-filter", "none", "--indicator", "novelty",
            "--max-retries", "0", "--no-progress", "--consistency-sample", "0", "--out", str(out), *extra]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))


def test_a_cutoff_that_leaves_no_instance_a_reference_is_refused_up_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    data = _write(tmp_path / "d.jsonl", [_instance(i, ["2023-05-01", "2023-06-01", "2024-01-01"])
                                        for i in range(3)])
    out = tmp_path / "run"
    respond = ideabench_responder()
    with OpenAICompatServer(lambda b: respond(b["messages"])) as server:
        code, _, err = run_cli(_args(data, out, server.base_url, "--cutoff", "2020-01-01", "--limit", "2"),
                               capsys)
        assert not server.requests
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1 and len(lines) == 1, err
    assert "--cutoff 2020-01-01" in lines[0] and "each of the 3 instances is dated after it" in lines[0]
    assert "9 references excluded" in lines[0] and "no reference has an abstract" not in lines[0]
    assert "again" not in lines[0] and not out.exists()


def test_an_instance_the_cutoff_leaves_no_reference_is_skipped_with_the_cutoff_and_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    data = _write(tmp_path / "d.jsonl", [_instance(0, ["2019-05-01", "2023-01-01"]),
                                        _instance(1, ["2023-05-01", "2023-06-01", "2024-01-01"])])
    out = tmp_path / "run"
    respond = ideabench_responder()
    with OpenAICompatServer(lambda b: respond(b["messages"])) as server:
        code, _, err = run_cli(_args(data, out, server.base_url, "--cutoff", "2020-01-01"), capsys)
        generated = [json.dumps(r.body["messages"]) for r in server.requests]
    assert code in (0, 3), err
    assert "retry them" not in err and "no reference has an abstract" not in err
    assert any("Reference 0 on gel mechanics 0" in t for t in generated)
    assert not any("on gel mechanics 1" in t for t in generated)  # inst1 showed the generator nothing
    skipped = results(out)["scenarios"]["low"]["skipped"]
    assert skipped == {"the knowledge cutoff 2020-01-01 excludes every reference with an abstract "
                       "(3 of 3 dated after it; a later --cutoff shows them)": 1}
    assert any("1 instance(s) skipped: the knowledge cutoff 2020-01-01" in n for n in results(out)["notes"])


def test_a_selection_the_cutoff_leaves_nothing_to_show_is_not_offered_as_retryable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    data = _write(tmp_path / "d.jsonl", [_instance(0, ["2023-05-01", "2024-01-01"]),
                                        _instance(1, ["2019-05-01"])])
    out = tmp_path / "run"
    respond = ideabench_responder()
    with OpenAICompatServer(lambda b: respond(b["messages"])) as server:
        code, _, err = run_cli(_args(data, out, server.base_url, "--cutoff", "2020-01-01", "--limit", "1"),
                               capsys)
    last = [line for line in err.splitlines() if line.strip()][-1]
    assert code == 3 and last.startswith("error: partial run: NOT COMPUTED"), err
    assert "the knowledge cutoff 2020-01-01 excludes every reference with an abstract (2 of 2" in last
    assert "retry them" not in last and "running the same command again gives the same" in last
