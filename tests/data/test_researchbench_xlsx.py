"""ResearchBench discipline spreadsheets: header-name reading, chatter, gaps, duplicates, bad input."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from ideaharness.data.researchbench_xlsx import (
    RESEARCHBENCH_COLUMNS,
    load_researchbench_dir,
    load_researchbench_sheet,
    strip_chatter,
)
from ideaharness.errors import DataError


def rb_row(no: int, doi: str, insp3: bool = True, **over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {c: None for c in RESEARCHBENCH_COLUMNS}
    row.update(
        {
            "No": no,
            "Title": f"Paper {no}",
            "Background Little Survey": "Certainly! Here's a concise background survey of prior work:\n\n"
            f"Earlier studies of topic {no} established X.",
            "Background Question": f"How can we improve topic {no}?",
            "Inspiration paper 1 title": f"Inspiration A of {no}",
            "Relation between the main inspiration and the inspiration paper 1": "Provides method A.",
            "Inspiration paper 2 title": f"Inspiration B of {no}",
            "Relation between the main inspiration and the inspiration paper 2": "Provides data B.",
            "Inspiration paper 3 title": f"Inspiration C of {no}" if insp3 else None,
            "Relation between the main inspiration and the inspiration paper 3": "Adds C." if insp3 else None,
            "Main hypothesis": f"Combining A and B improves topic {no}.",
            "Reasoning Process": "bkg + insp1 + insp2 + insp3 = hyp",
            "Note": "insp1: A; insp2: B",
            "doi": doi,
            "abstract": f"We improve topic {no}.",
            "experiments details": "Sure! Below are the experiment details:\nWe ran assay Z.",
            "fine grained hypothesis": "A at 5 mM with B improves yield by 20%.",
            "sufficiency tag": "yes",
            "distance tag": "yes",
            "inf tag": "yes",
        }
    )
    row.update(over)
    return row


def write_rb(path: Path, rows: list[dict[str, Any]], columns: list[str] | None = None) -> Path:
    cols = columns or list(RESEARCHBENCH_COLUMNS)
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sheet1"
    ws.append(cols)
    for row in rows:
        ws.append([row.get(c) for c in cols])
    wb.save(path)
    return path


def test_sheet_with_gap_in_no_and_missing_insp3(tmp_path: Path) -> None:
    path = write_rb(
        tmp_path / "Chemistry.xlsx",
        [rb_row(1, "10.1/AbC"), rb_row(4, "10.1/def", insp3=False, **{"Public Date": "2024/03/05"})],
    )
    a, b = load_researchbench_sheet(path, discipline="Chemistry")
    assert (a.id, b.id) == ("researchbench/Chemistry/1", "researchbench/Chemistry/4")
    assert a.domain == "Chemistry" and a.extra["discipline"] == "Chemistry" and a.extra["row"] == 2
    assert len(a.references) == 3 and len(b.references) == 2
    assert [r.title for r in b.references] == ["Inspiration A of 4", "Inspiration B of 4"]
    assert b.references[1].relation == "Provides data B."
    assert a.target.external_ids == {"DOI": "10.1/AbC"} and a.target.id == "10.1/abc"
    assert a.target.abstract == "We improve topic 1."
    assert a.target.publication_date is None and b.target.publication_date == dt.date(2024, 3, 5)
    assert b.target.year == 2024
    assert a.background_survey == "Earlier studies of topic 1 established X."
    assert a.ground_truth.experiment_plan == "We ran assay Z."
    assert a.ground_truth.hypothesis == a.ground_truth.idea == "Combining A and B improves topic 1."
    assert a.ground_truth.fine_grained_hypothesis == "A at 5 mM with B improves yield by 20%."
    assert a.ground_truth.key_points == "insp1: A; insp2: B"
    assert a.extra["chatter_stripped"] == ["Background Little Survey", "experiments details"]
    assert a.extra["inf_tag"] == "yes"


def test_reordered_columns_load_identically(tmp_path: Path) -> None:
    rows = [rb_row(1, "10.1/a"), rb_row(2, "10.1/b", insp3=False)]
    plain = load_researchbench_sheet(write_rb(tmp_path / "x.xlsx", rows), discipline="Physics")
    (tmp_path / "r").mkdir()
    shuffled = list(reversed(RESEARCHBENCH_COLUMNS))
    shuffled = [f" {c}  " for c in shuffled[::2]] + shuffled[1::2]
    rows_sh = [{f" {k}  " if f" {k}  " in shuffled else k: v for k, v in r.items()} for r in rows]
    again = load_researchbench_sheet(
        write_rb(tmp_path / "r" / "x.xlsx", rows_sh, shuffled), discipline="Physics"
    )
    assert [i.model_dump() for i in again] == [i.model_dump() for i in plain]


def test_duplicate_dois_across_disciplines(tmp_path: Path) -> None:
    write_rb(tmp_path / "Biology.xlsx", [rb_row(1, "10.5/Shared"), rb_row(2, "10.5/bio")])
    write_rb(tmp_path / "Chemistry.xlsx", [rb_row(7, "https://doi.org/10.5/shared"), rb_row(9, "10.5/chem")])
    loaded = load_researchbench_dir(tmp_path)
    assert [i.id for i in loaded.instances] == [
        "researchbench/Biology/1",
        "researchbench/Biology/2",
        "researchbench/Chemistry/7",
        "researchbench/Chemistry/9",
    ]
    assert loaded.duplicate_dois == {"10.5/shared": ["Biology", "Chemistry"]}
    instances, dups = load_researchbench_dir(tmp_path, dedupe=True)
    assert [i.id for i in instances] == [
        "researchbench/Biology/1",
        "researchbench/Biology/2",
        "researchbench/Chemistry/9",
    ]
    assert dups == loaded.duplicate_dois


def test_missing_columns_are_all_named(tmp_path: Path) -> None:
    cols = [c for c in RESEARCHBENCH_COLUMNS if c not in ("Note", "Background Question")]
    path = write_rb(tmp_path / "Law.xlsx", [rb_row(1, "10.1/a")], cols)
    with pytest.raises(DataError) as err:
        load_researchbench_sheet(path)
    msg = str(err.value)
    assert "Law.xlsx" in msg and "'Background Question'" in msg and "'Note'" in msg


@pytest.mark.parametrize("column", ["Main hypothesis", "Inspiration paper 1 title", "Background Question"])
def test_empty_required_cell_names_row_and_column(tmp_path: Path, column: str) -> None:
    path = write_rb(tmp_path / "Math.xlsx", [rb_row(1, "10.1/a"), rb_row(2, "10.1/b", **{column: "  NA "})])
    with pytest.raises(DataError, match=rf"Math\.xlsx: row 3, field '{column}': empty required cell"):
        load_researchbench_sheet(path)


def test_other_bad_input(tmp_path: Path) -> None:
    dup = write_rb(tmp_path / "Dup.xlsx", [rb_row(1, "10.1/a"), rb_row(1, "10.1/b")])
    with pytest.raises(DataError, match=r"row 3, field 'No': '1' already used in row 2"):
        load_researchbench_sheet(dup)
    date = write_rb(tmp_path / "Date.xlsx", [rb_row(1, "10.1/a", **{"Public Date": "spring 2024"})])
    with pytest.raises(DataError, match=r"row 2, field 'Public Date'"):
        load_researchbench_sheet(date)
    with pytest.raises(DataError, match=r"no sheet 'Overall'"):
        load_researchbench_sheet(date, sheet="Overall")
    notxlsx = tmp_path / "n.xlsx"
    notxlsx.write_text("No,Title\n1,x\n")
    with pytest.raises(DataError, match=r"n\.xlsx: not a readable \.xlsx"):
        load_researchbench_sheet(notxlsx)
    with pytest.raises(DataError, match="no .xlsx"):
        load_researchbench_dir(tmp_path / "r")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Certainly! Here's a concise background survey:\n\nPrior work showed X.", "Prior work showed X."),
        ("Sure, here is the summary of the experiments: We ran Y.", "We ran Y."),
        ("Certainly! Below is the survey, structured as requested:\n1. Prior work.", "1. Prior work."),
        ("Here is the background survey:\nPrior work.", "Prior work."),
        ("Certainly! Here's the survey for 'MOFs: a review':\nPrior work.", "Prior work."),
        ("Here\u2019s a summary of the hypothesis:\nA causes B.", "A causes B."),
        ("Certainly!\nPrior work.", "Prior work."),
        # kept: not chatter, or nothing after the prefix
        ("Here, we show that X:\nfoo", "Here, we show that X:\nfoo"),
        ("Background Survey Summary\nPrior work.", "Background Survey Summary\nPrior work."),
        ("The following are the key advances:\n- A", "The following are the key advances:\n- A"),
        ("Surely the catalyst: it works.", "Surely the catalyst: it works."),
        ("Certainly! Here's the survey:", "Certainly! Here's the survey:"),
    ],
)
def test_strip_chatter(text: str, expected: str) -> None:
    assert strip_chatter(text) == expected
