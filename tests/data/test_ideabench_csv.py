"""IdeaBench CSV loader, reference filtering, random baseline and the reverse writer."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from ideaharness.data.ideabench_csv import (
    REFERENCE_COLUMNS,
    TARGET_COLUMNS,
    drop_reason,
    filter_references,
    filter_stats,
    load_ideabench,
    random_filter,
    write_ideabench_csvs,
)
from ideaharness.errors import DataError
from ideaharness.schema import Instance, Paper, Reference

TARGETS = [
    # leading unnamed index column, as pandas writes it
    ["", *TARGET_COLUMNS, "abstract_summary"],
    [
        "0",
        "t1",
        "Gene X drives disease Y",
        "We show gene X drives Y.",
        "2024",
        "Nature",
        "31",
        "['JournalArticle']",
        "{'DOI': '10.1/t1', 'CorpusId': 123}",
        "1",
        "Hypothesis: gene X drives Y.",
    ],
    ["1", "t2", "Drug Z", "Z works, {x_i} and {{", "2024.0", "", "", "", "", "2", "err occured: timeout"],
]
REF = dict.fromkeys(REFERENCE_COLUMNS, "")
REFS = [
    # t1: 3 kept + one of each drop reason
    {**REF, "targetPaperId": "t1", "paperId": "r1", "title": "R1", "abstract": "a1", "citationCount": "5",
     "intents": "['background']", "publicationTypes": "['JournalArticle']", "contexts": "['as shown [1]']",
     "isInfluential": "True", "externalIds": "{'DOI': '10.2/r1'}", "year": "2020", "venue": "Cell"},
    {**REF, "targetPaperId": "t1", "paperId": "r2", "title": "R2", "abstract": "a2", "citationCount": "50",
     "intents": "['methodology', 'background']", "publicationTypes": "", "isInfluential": "False"},
    {**REF, "targetPaperId": "t1", "paperId": "r3", "title": "R3", "abstract": "a3", "citationCount": "9.0",
     "intents": "['background']", "publicationTypes": "['JournalArticle', 'Study']"},
    {**REF, "targetPaperId": "t1", "paperId": "r4", "title": "R4", "abstract": "", "citationCount": "99",
     "intents": "['background']"},
    {**REF, "targetPaperId": "t1", "paperId": "r5", "title": "R5", "abstract": "a5", "citationCount": "4",
     "intents": "['background']"},
    {**REF, "targetPaperId": "t1", "paperId": "r6", "title": "R6", "abstract": "a6", "citationCount": "",
     "intents": "['background']"},
    {**REF, "targetPaperId": "t1", "paperId": "r7", "title": "R7", "abstract": "a7", "citationCount": "70",
     "intents": "['background']", "publicationTypes": "['Review', 'JournalArticle']"},
    {**REF, "targetPaperId": "t1", "paperId": "r8", "title": "R8", "abstract": "a8", "citationCount": "70",
     "intents": "[]"},
    {**REF, "targetPaperId": "t1", "paperId": "r9", "title": "R9", "abstract": "a9", "citationCount": "70",
     "intents": "['methodology', 'result']"},
    {**REF, "targetPaperId": "t1", "paperId": "", "title": "Unresolved", "abstract": "", "citationCount": ""},
    # t2: only two kept -> dropped by filtering
    {**REF, "targetPaperId": "t2", "paperId": "s1", "title": "S1", "abstract": "b1", "citationCount": "8",
     "intents": "['background']"},
    {**REF, "targetPaperId": "t2", "paperId": "s2", "title": "S2", "abstract": "b2", "citationCount": "8",
     "intents": "['result', 'background']"},
    # unknown target: ignored
    {**REF, "targetPaperId": "zz", "paperId": "q", "title": "Q", "abstract": "c", "citationCount": "8"},
]  # fmt: skip


def write_rows(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return path


def write_refs(path: Path, refs: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(REFERENCE_COLUMNS))
        w.writeheader()
        w.writerows(refs)
    return path


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    return write_rows(tmp_path / "target_papers.csv", TARGETS), write_refs(
        tmp_path / "raw_references.csv", REFS
    )


def test_load_published_format(files: tuple[Path, Path]) -> None:
    t1, t2 = load_ideabench(*files)
    assert t1.id == "ideabench/t1" and t1.dataset == "ideabench" and t1.domain == "biomedical"
    assert t1.target.publication_types == ["JournalArticle"]
    assert t1.target.external_ids == {"DOI": "10.1/t1", "CorpusId": "123"}
    assert t1.target.year == 2024 and t1.target.citation_count == 31 and t1.target.extra["strategy"] == 1
    assert t1.ground_truth.idea == "Hypothesis: gene X drives Y."
    assert t2.ground_truth.idea is None and t2.target.extra["abstract_summary"].startswith("err occured")
    assert t2.target.venue is None and t2.target.publication_types is None and t2.target.external_ids == {}
    assert t2.target.abstract == "Z works, {x_i} and {{"
    assert [r.id for r in t1.references] == ["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "t1/ref11"]
    r1 = t1.references[0]
    assert r1.intents == ["background"] and r1.contexts == ["as shown [1]"] and r1.is_influential is True
    assert r1.external_ids == {"DOI": "10.2/r1"} and r1.citation_count == 5 and r1.year == 2020
    assert t1.references[1].publication_types is None and t1.references[2].citation_count == 9
    assert len(t2.references) == 2


def test_filter_references_rules(files: tuple[Path, Path]) -> None:
    t1, t2 = load_ideabench(*files)
    reasons = [drop_reason(r) for r in t1.references]
    assert reasons == [
        None,
        None,
        None,
        "no_abstract",
        "low_citations",
        "low_citations",
        "non_primary_type",
        "not_background",
        "not_background",
        "no_abstract",
    ]
    kept = filter_references(t1)
    assert kept is not None and [r.id for r in kept.references] == ["r1", "r2", "r3"]
    assert kept.extra["reference_filter"]["n_before"] == 10 and len(t1.references) == 10
    assert filter_references(t2) is None
    assert filter_references(t2, min_references=2) is not None
    only = filter_references(t1, min_citations=50, min_references=1)
    assert only is not None and [r.id for r in only.references] == ["r2"]
    assert filter_references(t1, min_citations=50) is None
    stats = filter_stats([t1, t2])
    assert stats.targets_in == 2 and stats.targets_kept == 1
    assert stats.references_in == 12 and stats.references_kept == 5 and stats.references_of_kept_targets == 3
    assert stats.dropped == {"no_abstract": 2, "low_citations": 2, "non_primary_type": 1, "not_background": 2}


def test_random_filter_is_seeded() -> None:
    inst = Instance(
        id="ideabench/t",
        dataset="ideabench",
        target=Paper(id="t", title="T"),
        references=[Reference(id=f"r{i}", title=f"R{i}") for i in range(20)],
    )
    a, b, c = random_filter(inst, 5, seed=1), random_filter(inst, 5, seed=1), random_filter(inst, 5, seed=2)
    assert a is not None and b is not None and c is not None
    ids = [r.id for r in a.references]
    assert ids == [r.id for r in b.references] and len(set(ids)) == 5
    assert ids != [r.id for r in c.references]
    assert a.extra["reference_filter"]["indices"] == sorted(a.extra["reference_filter"]["indices"])
    assert random_filter(inst, 21, seed=1) is None
    with pytest.raises(ValueError):
        random_filter(inst, 0, seed=1)


def test_writer_round_trip(files: tuple[Path, Path], tmp_path: Path) -> None:
    instances = load_ideabench(*files)
    t, r = write_ideabench_csvs(instances, tmp_path / "out")
    again = load_ideabench(t, r)

    def strip(i: Instance) -> dict:
        d = i.model_dump(exclude={"extra": True})
        d["target"].pop("extra")
        for ref in d["references"]:
            ref.pop("extra")
        return d

    assert [strip(i) for i in again] == [strip(i) for i in instances]
    assert again[0].ground_truth.idea == "Hypothesis: gene X drives Y."


def _bad_target(tmp_path: Path, col: str, value: str) -> Path:
    rows = [list(r) for r in TARGETS]
    rows[2][rows[0].index(col)] = value
    return write_rows(tmp_path / "bad_targets.csv", rows)


@pytest.mark.parametrize(
    ("col", "value", "message"),
    [
        ("abstract", "  ", r"bad_targets\.csv: row 3, field 'abstract': empty"),
        ("paperId", "t1", r"bad_targets\.csv: row 3, field 'paperId': 't1' already in row 2"),
        (
            "publicationTypes",
            "['Journal",
            r"bad_targets\.csv: row 3, field 'publicationTypes': not a Python list",
        ),
        ("externalIds", "['DOI']", r"bad_targets\.csv: row 3, field 'externalIds': expected a dict"),
        ("year", "twenty", r"bad_targets\.csv: row 3, field 'year': not an integer"),
        ("citationCount", "3.5", r"bad_targets\.csv: row 3, field 'citationCount': not an integer"),
    ],
)
def test_bad_target_cells(
    tmp_path: Path, files: tuple[Path, Path], col: str, value: str, message: str
) -> None:
    with pytest.raises(DataError, match=message):
        load_ideabench(_bad_target(tmp_path, col, value), files[1])


def test_bad_files(tmp_path: Path, files: tuple[Path, Path]) -> None:
    targets, refs = files
    no_col = write_rows(tmp_path / "nocol.csv", [[c for c in TARGETS[0] if c != "venue"]])
    with pytest.raises(DataError, match=r"nocol\.csv: missing required column\(s\): 'venue'"):
        load_ideabench(no_col, refs)
    broken = tmp_path / "broken.csv"
    broken.write_text(",".join(TARGETS[0]) + '\n0,t9,"unclosed title,abs\n')
    with pytest.raises(DataError, match=r"broken\.csv: row 2: cannot parse CSV: unexpected end of data"):
        load_ideabench(broken, refs)
    short = tmp_path / "short.csv"
    short.write_text(",".join(TARGETS[0]) + "\n0,t9,title\n")
    with pytest.raises(DataError, match=r"short\.csv: row 2: 3 fields, header has 11"):
        load_ideabench(short, refs)
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"\xff\xfe\x00paperId")
    with pytest.raises(DataError, match=r"bin\.csv: line 1 \(row 1\), byte 1 of the line \(byte 0 of the "
                                        r"file\): not UTF-8"):
        load_ideabench(binary, refs)
    with pytest.raises(DataError, match=r"missing\.csv: file not found"):
        load_ideabench(tmp_path / "missing.csv", refs)
    bad_refs = write_refs(tmp_path / "bad_refs.csv", [{**REFS[0], "intents": "background"}])
    with pytest.raises(DataError, match=r"bad_refs\.csv: row 2, field 'intents'"):
        load_ideabench(targets, bad_refs)
    bad_bool = write_refs(tmp_path / "bad_bool.csv", [{**REFS[0], "isInfluential": "maybe"}])
    with pytest.raises(DataError, match=r"bad_bool\.csv: row 2, field 'isInfluential'"):
        load_ideabench(targets, bad_bool)
    no_target = write_refs(tmp_path / "no_target.csv", [{**REFS[0], "targetPaperId": ""}])
    with pytest.raises(DataError, match=r"no_target\.csv: row 2, field 'targetPaperId': empty"):
        load_ideabench(targets, no_target)
