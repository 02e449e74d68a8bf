"""Section-aware reference filter on the real S2ORC and unarXive samples (hand-checked truths)."""

from __future__ import annotations

from ideaharness.data.sections import (
    background_references,
    load_fulltext,
    section_category,
)
from ideaharness.schema import Reference

from .conftest import S2ORC, UNARXIVE, need


def _by_num(ids):
    return sorted(ids, key=lambda b: int(b[1:]))


def test_section_headings_normalise():
    assert section_category("INTRODUCTION") == "introduction"  # not a roman numeral "I"
    assert section_category("2 RELATED WORK") == "related_work"
    assert section_category("II. Background") == "background"
    assert section_category("Context and related work") == "related_work"
    assert section_category("Further Related Work") == "related_work"
    assert section_category("PRELIMINARY INTERVIEWS") == "preliminaries"
    assert section_category("STUDY 2: FIELD DEPLOYMENT") == "experiments"
    assert section_category("") is None


def test_s2orc_citesee_intro_and_related_work():
    """arXiv 2302.07302 (CiteSee). Hand-checked in the text: [60] 'classifying their level of
    influence on the citing paper' (Introduction) = b60 Valenzuela et al. 'Identifying Meaningful
    Citations'; b1 'Elastic Documents' is cited in 2.1 Scientific Paper Reading Interfaces."""
    papers = {p.id: p for p in load_fulltext(need(S2ORC))}
    paper = papers["2302.07302"]
    assert paper.sections[:3] == ["INTRODUCTION", "RELATED WORK", "PRELIMINARY INTERVIEWS"]
    intro = paper.cited_in(["introduction"])
    related = paper.cited_in(["related_work"])
    assert _by_num(intro) == ["b11", "b15", "b22", "b25", "b33", "b44", "b47", "b58", "b60"]
    assert len(related) == 33 and "b1" in related and "b63" in related
    assert related["b1"] == ["RELATED WORK", "Scientific Paper Reading Interfaces"]
    assert paper.bib["b60"].title == "Identifying Meaningful Citations"
    assert paper.bib["b60"].ids == {"CorpusId": "2538517"}
    both = paper.cited_in()
    assert len(both) == 38 and set(both) == set(intro) | set(related)
    # b9/b10 sit in the figure caption before INTRODUCTION; b0 only in later sections
    assert not {"b0", "b9", "b10"} & set(both)


def test_unarxive_sections_roll_up_subsections():
    """arXiv 2212.11803 (EuclidNets): 8 entries cited in Introduction; 'Other Similarity Measures'
    (subsection after '2 Context and related work') rolls up to related work."""
    papers = {p.id: p for p in load_fulltext(need(UNARXIVE))}
    assert sorted(papers) == ["2212.11739", "2212.11791", "2212.11803"]  # the bundled 3-paper subset
    paper = papers["2212.11803"]
    intro = paper.cited_in(["introduction"])
    assert sorted(b[:8] for b in intro) == sorted(
        ["0ab12356", "27097ea9", "d64b6d28", "21517c5f", "c38c2e57", "a6063db7", "19977021", "6da0e4b5"]
    )
    related = {b[:8]: heads for b, heads in paper.cited_in(["related_work"]).items()}
    assert related["c7384569"] == ["Context and related work"]  # Hinton et al., distillation
    assert related["815f0301"] == ["Context and related work", "Other Similarity Measures"]
    assert "2c9b8e61" not in related and "4b7c6254" not in related  # CUDA (Training), ImageNet
    assert len(paper.cited_in()) == 32


def test_filter_matches_references_by_id_title_or_falls_back_to_intents():
    paper = {p.id: p for p in load_fulltext(need(S2ORC))}["2302.07302"]
    refs = [
        Reference(id="a", title="Identifying meaningful citations", intents=["methodology"]),  # title match
        Reference(id="b", title="Something else", external_ids={"CorpusId": "52042590"}),  # b1 by id
        Reference(id="c", title="A paper cited only in the study sections", intents=["background"]),
    ]
    result = background_references(refs, paper)
    assert result.method == "sections"
    assert [r.id for r in result.kept] == ["a", "b"]
    assert result.kept[0].sections == ["INTRODUCTION"]
    assert len(result.unmatched_bib_ids) == 36
    fallback = background_references(refs, None)
    assert fallback.method == "intents" and [r.id for r in fallback.kept] == ["c"]
