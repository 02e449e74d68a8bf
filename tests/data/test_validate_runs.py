"""``data validate`` and ``run`` apply one rule (issue 18, item 18, the ``data validate`` parts):
a ResearchBench sheet folder shaped like the real release (the same DOI in several disciplines)
validates as ``run`` loads it (warnings, exit 0); errors are listed before warnings and every kind
is counted, so a cap on printed issues never hides an error; and what validates runs — every form
``data validate`` accepts gives the benchmark that reads it at least the instances validate
counted (a ResearchBench release folder holding only ``ranking.jsonl`` included)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ideaharness.data.validate import validate_dataset
from ideaharness.runner.arguments import resolve
from ideaharness.runner.registry import benchmarks
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli
from tests.data.test_ideabench_csv import REFS, TARGETS, write_refs, write_rows
from tests.data.test_researchbench_xlsx import rb_row, write_rb

TESTS = Path(__file__).parents[1]
RB_RELEASE = TESTS / "researchbench" / "fixtures" / "release"
AIIB = TESTS / "aiideabench" / "fixtures" / "target_paper_data.json"
SHARED_DOIS = 105  # the count the issue met: every one "same DOI in N domains"


def _sheet_folder(root: Path, extra_rows: int = 0) -> Path:
    """Three discipline sheets in which each of SHARED_DOIS DOIs appears in two or three of them,
    as in the real release (678 rows, 539 DOIs)."""
    folder = root / "dataset"
    folder.mkdir()
    chem = [rb_row(i + 1, f"10.1000/shared{i}") for i in range(SHARED_DOIS)]
    # the same DOIs, spelled otherwise
    phys = [rb_row(i + 1, f"https://doi.org/10.1000/SHARED{i}") for i in range(SHARED_DOIS)]
    bio = [rb_row(i + 1, f"10.1000/shared{i}") for i in range(0, SHARED_DOIS, 7)]
    bio += [rb_row(1000 + i, f"10.1000/own{i}") for i in range(extra_rows)]
    write_rb(folder / "Chemistry.xlsx", chem)
    write_rb(folder / "Physics.xlsx", phys)
    write_rb(folder / "Biology.xlsx", bio)
    return folder


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """(exit status, stdout then stderr), never a traceback."""
    code, out, err = run_cli(args, capsys)
    assert "Traceback" not in err
    return code, out + err


def test_a_sheet_folder_shaped_like_the_real_release_validates_as_run_loads_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _sheet_folder(tmp_path)
    report = validate_dataset(folder)
    assert report.ok, [i for i in report.errors][:3]
    assert report.kind_counts() == {("warning", "duplicate-doi"): SHARED_DOIS}
    code, out = _cli(["data", "validate", str(folder)], capsys)
    assert code == 0 and f"warnings of kind duplicate-doi: {SHARED_DOIS}" in out
    # run reads the same folder, keeps every row and notes the DOIs (the same rule)
    bench = benchmarks()["researchbench"]
    loaded = bench(resolve(bench, data=str(folder)).config).load()
    assert len(list(loaded)) == report.counts["instances"] == 2 * SHARED_DOIS + len(range(0, SHARED_DOIS, 7))


def test_errors_come_before_warnings_and_every_kind_is_counted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _sheet_folder(tmp_path)
    bad = rb_row(999, "10.1000/secret", abstract="config api_key=abcd1234efgh5678ijkl")
    write_rb(folder / "Zoology.xlsx", [bad])  # loads last: its error is found after 105 warnings
    report = validate_dataset(folder)
    assert not report.ok
    assert report.ordered()[0].level == "error" and report.ordered()[0].kind == "secret"
    assert list(report.kind_counts()) == [("error", "secret"), ("warning", "duplicate-doi")]
    code, out = _cli(["data", "validate", str(folder), "--max-issues", "3"], capsys)
    lines = out.splitlines()
    assert code == 1
    assert lines[1:3] == ["errors of kind secret: 1", f"warnings of kind duplicate-doi: {SHARED_DOIS}"]
    assert lines[3].startswith("error: ") and "looks like a secret" in lines[3]
    assert lines[-1].startswith(f"... {SHARED_DOIS + 1 - 3} more not shown (0 error(s), ")


def _release(tmp_path: Path, *files: str) -> Path:
    folder = tmp_path / "release"
    folder.mkdir()
    for name in files:
        shutil.copy(RB_RELEASE / name, folder / name)
    return folder


def _forms(tmp_path: Path) -> list[tuple[str, str, list[str]]]:
    """(--data, benchmark, extra arguments) of every form ``data validate`` accepts."""
    csvs = tmp_path / "csvs"
    csvs.mkdir()
    write_rows(csvs / "target_papers.csv", TARGETS)
    write_refs(csvs / "raw_references.csv", REFS)
    jsonl = tmp_path / "instances.jsonl"
    from ideaharness.data.tomato import load_tomato_chem

    jsonl.write_text("".join(i.model_dump_json() + "\n" for i in load_tomato_chem()[:3]))
    sheets = tmp_path / "sheets"
    sheets.mkdir()
    write_rb(sheets / "Chemistry.xlsx", [rb_row(1, "10.1/a"), rb_row(2, "10.1/b")])
    built = tmp_path / "built"  # a builder's output folder: instances.jsonl (and a manifest)
    built.mkdir()
    shutil.copy(jsonl, built / "instances.jsonl")
    (built / "manifest.json").write_text("{}")
    forms = [
        (str(built), "ideabench", []),
        (str(built), "aiideabench", []),
        (str(built), "researchbench", []),
        (str(csvs), "ideabench", []),
        (str(csvs / "target_papers.csv"), "ideabench", []),
        (str(jsonl), "ideabench", []),
        (str(AIIB), "aiideabench", []),
        (str(sheets), "researchbench", []),
        (str(sheets / "Chemistry.xlsx"), "researchbench", []),
    ]
    for files in (("papers.jsonl",), ("generation.jsonl",), ("retrieve.jsonl",), ("ranking.jsonl",),
                  ("ranking.jsonl", "retrieve.jsonl"), ("papers.jsonl", "ranking.jsonl")):
        folder = tmp_path / "_".join(f.split(".")[0] for f in files)
        folder.mkdir()
        for name in files:
            shutil.copy(RB_RELEASE / name, folder / name)
        forms.append((str(folder), "researchbench", []))
    return forms


def test_what_validates_runs_for_every_form(tmp_path: Path) -> None:
    forms = _forms(tmp_path)
    assert {b for _, b, _ in forms} == {"ideabench", "aiideabench", "researchbench"}
    for data, name, _ in forms:
        report = validate_dataset(data)
        assert report.ok, (data, report.errors[:2])
        bench = benchmarks()[name]
        items = list(bench(resolve(bench, data=data).config).load())
        assert items, f"{data} validates ({report.counts}) but run {name} finds nothing to run"
        assert len(items) <= report.counts["instances"], data


def test_validate_refuses_data_with_no_instance(tmp_path: Path) -> None:
    empty = tmp_path / "instances.jsonl"
    empty.write_text("\n")
    report = validate_dataset(empty)
    assert [e.kind for e in report.errors] == ["no-instances"]


def test_a_release_folder_with_only_ranking_runs_the_ranking_task(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    release = _release(tmp_path, "ranking.jsonl")
    lines = (release / "ranking.jsonl").read_text().splitlines()
    tasks = [json.loads(line) for line in lines if line.strip()]
    report = validate_dataset(release)
    assert report.ok and report.counts["instances"] == report.counts["ranking tasks"] == len(tasks)
    with OpenAICompatServer(lambda body: "I am not sure.") as server:
        code, out = _cli(["run", "researchbench", "--task", "ranking", "--data", str(release), "--judge",
                          "openai/judge", "--base-url", server.base_url, "--max-attempts", "1",
                          "--max-retries", "0", "--no-progress", "--out", str(tmp_path / "run")], capsys)
        assert code in (0, 3), out
        assert server.requests  # the ranking's judge was asked
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["selection"]["selected"] == len(tasks)
