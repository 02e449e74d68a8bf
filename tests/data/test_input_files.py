"""Real-world input files: Excel's BOM, long CSV fields, formulas without cached values, extra columns,
lone surrogates, and `data validate` on every form `--data` takes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ideaharness.cli import main
from ideaharness.data.ideabench_csv import REFERENCE_COLUMNS, load_ideabench
from ideaharness.data.registry import load_instances, load_instances_jsonl
from ideaharness.data.researchbench_xlsx import load_researchbench_sheet
from ideaharness.data.validate import validate_dataset
from ideaharness.errors import DataError, DataWarning
from ideaharness.schema import Instance, Paper
from tests.data.test_ideabench_csv import REFS, TARGETS, write_refs, write_rows
from tests.data.test_researchbench_xlsx import rb_row, write_rb

RB_RELEASE = Path(__file__).parents[1] / "researchbench" / "fixtures" / "release"


def _excel_csv(path: Path, rows: list[list[str]]) -> Path:
    """What Excel's "CSV UTF-8" writes: a byte-order mark, then the rows."""
    write_rows(path, rows)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    return path


def test_utf8_bom_is_not_part_of_the_header(tmp_path: Path) -> None:
    # the published target file without its unnamed index column: paperId is the first header cell
    rows = [row[1:] for row in TARGETS]
    targets = _excel_csv(tmp_path / "target_papers.csv", rows)
    refs = write_refs(tmp_path / "raw_references.csv", REFS)
    refs.write_bytes(b"\xef\xbb\xbf" + refs.read_bytes())
    t1, t2 = load_ideabench(targets, refs)
    assert (t1.target.id, t2.target.id) == ("t1", "t2") and len(t1.references) == 10
    report = validate_dataset(tmp_path)
    assert report.ok and report.counts["instances"] == 2


def test_long_csv_field_loads(tmp_path: Path) -> None:
    long_context = "cited because " + "x" * 200_000
    refs = [{**REFS[0], "contexts": repr([long_context])}, *REFS[1:]]
    t1, _ = load_ideabench(write_rows(tmp_path / "t.csv", TARGETS), write_refs(tmp_path / "r.csv", refs))
    assert t1.references[0].contexts == [long_context]


def test_unknown_csv_columns_are_kept(tmp_path: Path) -> None:
    targets = [[*TARGETS[0], "reviewer_note"], [*TARGETS[1], "check venue"], [*TARGETS[2], ""]]
    refs = tmp_path / "r.csv"
    with refs.open("w", newline="", encoding="utf-8") as fh:
        import csv

        writer = csv.DictWriter(fh, fieldnames=[*REFERENCE_COLUMNS, "source"])
        writer.writeheader()
        writer.writerows([{**r, "source": "crawl 3"} for r in REFS])
    t1, t2 = load_ideabench(write_rows(tmp_path / "t.csv", targets), refs)
    assert t1.target.extra["other_columns"] == {"reviewer_note": "check venue"}
    assert "other_columns" not in t2.target.extra
    assert t1.references[0].extra["other_columns"] == {"source": "crawl 3"}


def test_formula_without_cached_value_in_a_required_cell(tmp_path: Path) -> None:
    # openpyxl (like pandas) stores a formula without computing it: no cached value in the file
    path = write_rb(tmp_path / "Chemistry.xlsx", [rb_row(1, "10.1/a"), rb_row(2, "10.1/b")])
    import openpyxl

    wb = openpyxl.load_workbook(path)
    ws = wb.active
    col = [c.value for c in ws[1]].index("Main hypothesis") + 1
    ws.cell(row=3, column=col, value='=CONCATENATE("Combining ", B3)')
    wb.save(path)
    with pytest.raises(DataError) as exc:
        load_researchbench_sheet(path, discipline="Chemistry")
    message = str(exc.value)
    assert "row 3, field 'Main hypothesis': the cell holds a formula" in message
    assert "without a cached value" in message and "LibreOffice" in message
    assert "empty required cell" not in message


def test_formula_in_an_optional_cell_and_extra_columns_are_not_dropped_silently(tmp_path: Path) -> None:
    columns = [*rb_row(1, "x"), "Curator comment"]
    rows = [{**rb_row(1, "10.1/a"), "Curator comment": "double-check insp2"}, rb_row(2, "10.1/b")]
    path = write_rb(tmp_path / "Chemistry.xlsx", rows, columns=columns)
    import openpyxl

    wb = openpyxl.load_workbook(path)
    ws = wb.active
    col = columns.index("Reasoning Process") + 1
    ws.cell(row=2, column=col, value="=B2")
    wb.save(path)
    with pytest.warns(
        DataWarning, match=r"row 2, field 'Reasoning Process'.*formula \(=B2\) without a cached"
    ):
        first, second = load_researchbench_sheet(path, discipline="Chemistry")
    assert first.extra["formulas_without_value"] == ["Reasoning Process"]
    assert "reasoning_process" not in first.extra and second.extra["reasoning_process"]
    assert first.extra["other_columns"] == {"Curator comment": "double-check insp2"}


def test_lone_surrogate_in_an_instance_file_is_replaced_with_a_warning(tmp_path: Path) -> None:
    inst = Instance(id="x/1", dataset="x", target=Paper(id="1", title="T", abstract="An emoji PLACEHOLDER."))
    path = tmp_path / "d.jsonl"
    path.write_text(inst.model_dump_json().replace("PLACEHOLDER", "\\ud83d") + "\n", encoding="utf-8")
    with pytest.warns(DataWarning, match=r"d\.jsonl: line 1, field 'target\.abstract'"):
        (loaded,) = load_instances_jsonl(path)
    assert loaded.target.abstract == "An emoji \ufffd."


# ---------------------------------------------------------------- data validate = every form of --data


def test_validate_a_single_ideabench_csv_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    targets = write_rows(tmp_path / "target_papers.csv", TARGETS)
    write_refs(tmp_path / "raw_references.csv", REFS)
    assert [i.id for i in load_instances(str(targets))] == ["ideabench/t1", "ideabench/t2"]
    report = validate_dataset(targets)
    assert report.ok, report.issues
    assert report.counts["instances"] == 2 and not any("not JSON" in i.message for i in report.issues)
    main(["data", "validate", str(targets)])  # exit 0
    assert "instances 2" in capsys.readouterr().out


def test_validate_a_researchbench_release_with_only_ranking(tmp_path: Path) -> None:
    release = tmp_path / "release"
    release.mkdir()
    shutil.copy(RB_RELEASE / "ranking.jsonl", release / "ranking.jsonl")
    n = sum(1 for line in (release / "ranking.jsonl").read_text().split("\n") if line.strip())
    report = validate_dataset(release)
    assert report.ok, report.issues
    assert report.counts["ranking tasks"] == n
    main(["data", "validate", str(release)])


def test_validate_reports_a_loader_error_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = tmp_path / "release"
    release.mkdir()
    (release / "ranking.jsonl").write_text('{"sample_id": 1}\n', encoding="utf-8")
    report = validate_dataset(release)
    assert not report.ok and "ranking.jsonl" in report.errors[0].where
    with pytest.raises(SystemExit) as exc:
        main(["data", "validate", str(release)])
    assert exc.value.code == 1


def test_validate_target_paper_data_json_and_xlsx(tmp_path: Path) -> None:
    aiib = Path(__file__).parents[1] / "aiideabench" / "fixtures" / "target_paper_data.json"
    assert validate_dataset(aiib).counts["instances"] == len(json.loads(aiib.read_text()))
    sheet = write_rb(tmp_path / "Chemistry.xlsx", [rb_row(1, "10.1/a"), rb_row(2, "10.1/b")])
    assert validate_dataset(sheet).counts["instances"] == 2
    assert validate_dataset(tmp_path).counts["instances"] == 2  # a folder of sheets
