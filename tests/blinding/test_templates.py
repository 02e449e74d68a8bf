"""The decomposition template shows only the parts of a paper it has (an IMCQ distractor known by
title and abstract gets no empty question or background block). The delimiters of every blinding
template are checked with all the others in tests/prompts/test_templates.py (specs in
tests/blinding/template_specs.py)."""

from __future__ import annotations

from ideaharness.prompts import render


def test_decompose_leaves_out_the_parts_a_paper_lacks() -> None:
    messages = render("aiideabench_decompose", title="T", question="", background=None, hypothesis="H",
                      abstract="")
    user = messages[-1]["content"]
    assert "<title>\nT\n</title>" in user and "<main_hypothesis_or_finding>\nH\n" in user
    assert "<research_question>" not in user and "<background>" not in user and "<abstract>" not in user
