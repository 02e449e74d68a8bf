"""Bundled TOMATO-Chem data, its conversion from the MOOSE-Chem sheet, and the inspiration corpora."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest

from ideaharness.data.corpus import load_corpus_file
from ideaharness.data.tomato import (
    attach_corpus_abstracts,
    bundled_path,
    convert_tomato,
    load_inspiration_corpus,
    load_tomato_chem,
)
from ideaharness.errors import DataError, UserError
from ideaharness.schema import Instance, Paper, Reference

FIXTURES = Path(__file__).parent / "fixtures"
TOMATO_XLSX = FIXTURES / "chem_research_2024.xlsx"


def rewrite_sheet(
    src: Path,
    dst: Path,
    order: list[int] | None = None,
    pad_header: bool = False,
    drop: str | None = None,
    sheet: str = "Overall",
) -> Path:
    """Copy one sheet into a new workbook with columns permuted / a column dropped."""
    wb = openpyxl.load_workbook(src, read_only=True)
    rows = [list(r) for r in wb[sheet].iter_rows(values_only=True)]
    wb.close()
    header = rows[0]
    idx = order if order is not None else list(range(len(header)))
    if drop is not None:
        idx = [j for j in idx if header[j] != drop]
    out = openpyxl.Workbook()
    ws = out.active
    ws.title = sheet
    for i, row in enumerate(rows):
        cells = [row[j] for j in idx]
        if i == 0 and pad_header:
            cells = [f"  {c} " for c in cells]
        ws.append(cells)
    out.save(dst)
    return dst


def test_bundled_tomato_loads_51_instances_with_abstracts() -> None:
    instances = load_tomato_chem()
    assert len(instances) == 51
    assert [i.id for i in instances] == [f"tomato-chem/{n}" for n in range(51)]
    first = instances[0]
    assert first.dataset == "tomato-chem" and first.domain == "chemistry"
    assert first.target.title.startswith("Ultrastrong, flexible thermogalvanic armor")
    assert first.target.year == 2024 and first.target.venue == "Nature Communication"
    assert first.research_question and first.background_survey
    assert first.ground_truth.hypothesis == first.ground_truth.idea
    assert first.ground_truth.key_points and first.ground_truth.key_points.startswith("insp1/2")
    assert first.extra["reasoning_process"] == "bkg + insp1/insp2 + insp3 = hyp"
    refs = [r for i in instances for r in i.references]
    # seed-benchmarks §3.5: insp2 in 50 rows, insp3 in 15; strict question in 14
    assert len(refs) == 51 + 50 + 15
    assert sum("research_question_strict" in i.extra for i in instances) == 14
    for ref in refs:
        assert ref.extra["match_method"] in {"exact", "normalised", "fuzzy"}
        assert ref.abstract, ref.title
        assert ref.relation
    assert all(i.extra["unmatched_inspirations"] == [] for i in instances)
    # the Hofmeister review is the first inspiration of paper 0, abstract from the corpus
    assert first.references[0].title == "Interactions between macromolecules and ions: the Hofmeister series"
    corpus = {p.title: p.abstract for p in load_inspiration_corpus(1000)}
    assert first.references[0].abstract == corpus[first.references[0].title]


def test_bundled_matches_conversion_of_reordered_sheet(tmp_path: Path) -> None:
    """The shipped JSONL is what converting the sheet gives, whatever the column order."""
    header = next(openpyxl.load_workbook(TOMATO_XLSX, read_only=True)["Overall"].iter_rows(values_only=True))
    order = list(reversed(range(len(header))))
    copy = rewrite_sheet(TOMATO_XLSX, tmp_path / TOMATO_XLSX.name, order=order, pad_header=True)
    converted, report = convert_tomato(copy, bundled_path("Inspiration_Corpus_1000.json"))
    assert report.counts["none"] == 0 and sum(report.counts.values()) == 116
    assert [i.model_dump() for i in converted] == [i.model_dump() for i in load_tomato_chem()]


def test_missing_column_is_a_data_error(tmp_path: Path) -> None:
    bad = rewrite_sheet(TOMATO_XLSX, tmp_path / "bad.xlsx", drop="Main hypothesis")
    with pytest.raises(DataError, match=r"bad\.xlsx.*'Main hypothesis'"):
        convert_tomato(bad, bundled_path("Inspiration_Corpus_150.json"))


def test_unmatched_inspiration_keeps_no_abstract() -> None:
    inst = Instance(
        id="x/1",
        dataset="x",
        target=Paper(id="t", title="T"),
        references=[
            Reference(id="r1", title="beyond hofmeister."),  # normalised match
            Reference(id="r2", title="Beyond Hofmeister effects in quantum gravity"),  # no match
        ],
    )
    corpus = load_inspiration_corpus(150)
    (out,), report = attach_corpus_abstracts([inst], corpus, threshold=0.9)
    ok, miss = out.references
    assert ok.title == "Beyond Hofmeister" and ok.abstract and ok.extra["match_method"] == "normalised"
    assert (
        miss.abstract is None and miss.extra["match_method"] == "none" and miss.extra["corpus_index"] is None
    )
    assert out.extra["unmatched_inspirations"] == ["Beyond Hofmeister effects in quantum gravity"]
    assert report.counts == {"exact": 0, "normalised": 1, "fuzzy": 0, "none": 1}
    assert inst.references[0].abstract is None  # input untouched


@pytest.mark.parametrize("size", [150, 300, 1000])
def test_inspiration_corpora(size: int) -> None:
    corpus = load_inspiration_corpus(size)
    assert len(corpus) == size
    assert corpus[0].id == f"Inspiration_Corpus_{size}/0"
    assert all(p.title and p.abstract for p in corpus)


def test_unknown_corpus_size() -> None:
    with pytest.raises(UserError, match="150, 300, 1000"):
        load_inspiration_corpus(500)


def test_corpus_file_formats(tmp_path: Path) -> None:
    pairs = tmp_path / "c.json"
    pairs.write_text(json.dumps([["A title", "An abstract."], ["B", ""]]))
    papers = load_corpus_file(pairs)
    assert [(p.id, p.title, p.abstract) for p in papers] == [
        ("c/0", "A title", "An abstract."),
        ("c/1", "B", None),
    ]
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text("\n".join(p.model_dump_json() for p in papers) + "\n")
    assert load_corpus_file(jsonl) == papers
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([["only a title"]]))
    with pytest.raises(DataError, match="entry 0"):
        load_corpus_file(bad)
    badl = tmp_path / "bad.jsonl"
    badl.write_text(papers[0].model_dump_json() + "\n" + '{"id": "x"}\n')
    with pytest.raises(DataError, match=r"line 2, field 'title'"):
        load_corpus_file(badl)


def test_damaged_bundle_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = load_tomato_chem()[0].model_dump_json()
    path.write_text(good + "\n" + '{"id": "y", "dataset": "d"}\n')
    with pytest.raises(DataError, match=r"t\.jsonl: line 2, field 'target'"):
        load_tomato_chem(path)
