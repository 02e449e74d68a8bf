"""The leakage check on hand-made records (each kind of leak it must find, and what it must not call
a leak), the models' training-cutoff table and ``--model-cutoff``."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ideaharness.cutoff import CUTOFF_STEP, DATA_KEY, LiteratureAccess
from ideaharness.errors import UserError
from ideaharness.runner.leakage import checkable, leakage_block, leakage_check, normalise
from ideaharness.runner.model_cutoffs import MODEL_CUTOFFS, training_cutoff
from ideaharness.runner.options import ExecutionOptions

CUT = dt.date(2023, 10, 3)
LIT = LiteratureAccess(sources={"references": "r", "s2": "s", "future": "f"}, prompt_steps=("generate/",),
                       future_sources=("future",), note="n")
LATER = {"id": "w9", "title": "A later paper on thermogalvanic gels", "publication_date": "2024-01-05",
         "year": 2024}
EARLIER = {"id": "w1", "title": "An earlier paper on hydrogel salting", "publication_date": None,
           "year": 2020}
PROMPTS = {"p-clean": [{"role": "user", "content": "Read: An earlier paper on hydrogel salting."}],
           "p-leak": [{"role": "user", "content": "Read: a LATER paper on thermogalvanic-gels!"}]}


def _record(source: str, kept: list[dict[str, Any]], excluded: list[dict[str, Any]] | None = None,
            window: list[str | None] | None = None) -> dict[str, Any]:
    return {"source": source, "cutoff": CUT.isoformat(), "window": window or [None, CUT.isoformat()],
            "kept": len(kept), "excluded": len(excluded or []), "undated": 0, "kept_works": kept,
            "excluded_works": excluded or []}


def _generation(prompt: str) -> dict[str, Any]:
    return {"judgment": {"prompt_hash": prompt, "parse_ok": True}}


def _check(records: list[tuple[str, str, str, dict[str, Any]]]) -> dict[str, Any]:
    return leakage_check(records, PROMPTS.get, LIT, {"i": CUT})


def test_a_clean_run_has_no_leak() -> None:
    check = _check([(CUTOFF_STEP, "i", "references", _record("references", [EARLIER], [LATER])),
                    ("generate/low", "i", "", _generation("p-clean"))])
    assert check["leaks"] == 0 and check["prompts_checked"] == 1 and check["titles_checked"] == 1


def test_an_excluded_work_found_in_a_prompt_is_a_leak() -> None:
    check = _check([(CUTOFF_STEP, "i", "references", _record("references", [EARLIER], [LATER])),
                    ("generate/low", "i", "", _generation("p-leak")),
                    ("rank/low/novelty", "i", "", _generation("p-leak"))])  # a judge step: not checked
    assert check["leaks"] == 1
    assert check["examples"][0] == {"kind": "prompt", "instance_id": "i", "step": "generate/low", "key": "",
                                    "work": LATER}


def test_a_work_of_the_item_data_found_in_a_prompt_is_a_leak_even_without_an_access_record() -> None:
    data = {"data": True, "cutoff": CUT.isoformat(), "works": [EARLIER, LATER]}
    check = _check([(CUTOFF_STEP, "i", DATA_KEY, data), ("generate/high", "i", "", _generation("p-leak"))])
    assert check["leaks"] == 1 and check["accesses_checked"] == 0


def test_a_kept_later_work_and_a_window_past_the_cutoff_are_leaks() -> None:
    check = _check([(CUTOFF_STEP, "i", "s2", _record("s2", [EARLIER, LATER], window=[None, "2023-12-31"]))])
    assert check["leaks"] == 2
    assert [e["kind"] for e in check["examples"]] == ["retrieved", "search window"]


def test_a_future_window_is_no_leak_in_a_search_but_is_one_in_a_prompt() -> None:
    future = _record("future", [LATER], window=["2023-10-04", None])
    assert _check([(CUTOFF_STEP, "i", "future", future)])["leaks"] == 0
    check = _check([(CUTOFF_STEP, "i", "future", future), ("generate/low", "i", "", _generation("p-leak"))])
    assert check["leaks"] == 1 and check["examples"][0]["kind"] == "prompt"


def test_short_titles_are_counted_unchecked() -> None:
    short = {"id": "s", "title": "Gels", "year": 2025}
    check = _check([(CUTOFF_STEP, "i", "references", _record("references", [], [short])),
                    ("generate/low", "i", "", {"judgment": {"prompt_hash": "x"}})])
    assert check["titles_unchecked"] == 1 and check["titles_checked"] == 0 and check["leaks"] == 0


@given(st.text(max_size=60))
def test_normalise_is_idempotent_and_a_title_is_found_in_its_own_markup(title: str) -> None:
    assert normalise(normalise(title)) == normalise(title)
    if checkable(title):
        assert normalise(title) in normalise(f"**Title:** {title.upper()}\n")


def test_the_block_counts_exclusions_and_warns_for_a_model_trained_after_the_cutoffs() -> None:
    records = [(CUTOFF_STEP, "a", "references", _record("references", [EARLIER], [LATER])),
               (CUTOFF_STEP, "b", "references", {**_record("references", [EARLIER]), "cutoff": "2025-01-01"}),
               (CUTOFF_STEP, "z", "references", _record("references", [], [LATER]))]  # not selected
    block = leakage_block(records, PROMPTS.get, LIT, run_cutoff=None, ids=["a", "b"],
                          models={"generator": "openai/gpt-4o-2024-08-06", "judge": "cmd:./judge.sh"})
    assert block["excluded"] == {"references": {"kept": 2, "excluded": 1, "undated": 0}}
    assert block["instances"] == {"with_cutoff": 2, "without_cutoff": 0, "earliest": "2023-10-03",
                                  "latest": "2025-01-01"}
    rows = {m["role"]: m for m in block["models"]}
    assert rows["generator"]["training_cutoff"] == "2023-10-01" and rows["generator"]["instances_before"] == 0
    assert rows["judge"]["training_cutoff"] == "unknown" and "a system" in rows["judge"]["source"]
    assert block["warnings"] == []
    override = leakage_block(records, PROMPTS.get, LIT, run_cutoff=None, ids=["a", "b"],
                             models={"generator": "openai/gpt-4o"}, overrides={"generator": "2024-06-01"})
    row = override["models"][0]
    assert row["instances_before"] == 1 and row["source"] == "--model-cutoff"
    assert override["warnings"] == [
        "generator openai/gpt-4o: trained on data to 2024-06-01 (2024-06-01), after the cutoff of 1/2 "
        "instance(s): the model may have seen their targets"]


@pytest.mark.parametrize(("model", "expected"), [
    ("openai/gpt-4o", "2023-10-01"), ("openai/gpt-4o-2024-08-06", "2023-10-01"),
    ("openai/gpt-4o-mini", "2023-10-01"), ("openai/gpt-4.1-mini-2025-04-14", "2024-06-01"),
    ("openai/o3", "2024-06-01"), ("openai/o3-mini", "2023-10-01"), ("openai/gpt-5", "2024-09-30"),
    ("anthropic/claude-sonnet-4-20250514", "2025-03-31"), ("local/qwen2.5-coder-0.5b", "2024-01-31"),
    ("local/qwen2.5-coder-1.5b", "2024-01-31"),
    ("openai/gpt-4o-audio-preview", None), ("anthropic/claude-sonnet-4-5-20250929", None),
    ("openai/some-new-model", None), ("ideas:ideas.jsonl", None), ("http://127.0.0.1:8000", None),
])
def test_training_cutoffs_of_known_models_and_unknown_otherwise(model: str, expected: str | None) -> None:
    found = training_cutoff(model)
    assert (found.cutoff.isoformat() if found.cutoff else None) == expected
    if expected:
        assert found.source.startswith("https://") and found.stated


def test_every_table_row_cites_a_source_and_a_statement() -> None:
    assert MODEL_CUTOFFS
    for row in MODEL_CUTOFFS:
        assert row.source.startswith("https://") and row.stated and row.cutoff.year >= 2021


def test_model_cutoff_option() -> None:
    opts = ExecutionOptions(model_cutoff=["2024-01-01", "judge=unknown"])
    assert opts.model_cutoff == {"*": "2024-01-01", "judge": "unknown"}
    assert training_cutoff("openai/gpt-4o", "unknown").cutoff is None
    with pytest.raises(UserError, match=r"--model-cutoff judge=2024-13-01: expected YYYY-MM-DD or 'unknown'"):
        ExecutionOptions(model_cutoff=["judge=2024-13-01"])
    with pytest.raises(UserError, match="this run has no rewriter role"):
        ExecutionOptions(model_cutoff=["rewriter=2024-01-01"]).check_roles(["generator", "judge"])


def test_a_title_is_found_as_whole_words_only() -> None:
    """A later paper titled like a common phrase is not found inside a longer word of a prompt (its
    plural, a compound): that would be a false alarm and make ``check leakage`` exit 4."""
    later = {"id": "w8", "title": "Graph neural network for molecules", "publication_date": "2024-02-01",
             "year": 2024}
    prompts = {"p-plural": [{"role": "user", "content": "Graph neural network for moleculesets, and more"}],
               "p-same": [{"role": "user", "content": "see: graph-neural network for MOLECULES."}]}
    records = [(CUTOFF_STEP, "i", "references", _record("references", [EARLIER], [later]))]
    plural = leakage_check([*records, ("generate/low", "i", "", _generation("p-plural"))], prompts.get, LIT,
                           {"i": CUT})
    same = leakage_check([*records, ("generate/low", "i", "", _generation("p-same"))], prompts.get, LIT,
                         {"i": CUT})
    assert plural["leaks"] == 0 and plural["prompts_checked"] == 1
    assert same["leaks"] == 1


def test_the_console_line_counts_undated_works_and_warns_when_most_are_undated() -> None:
    undated = {"id": "w5", "title": "A paper of unknown date on gels", "publication_date": None, "year": None}
    mostly = [(CUTOFF_STEP, "a", "references",
               {**_record("references", [undated, undated, EARLIER]), "undated": 2})]
    block = leakage_block(mostly, PROMPTS.get, LIT, run_cutoff=CUT, ids=["a"], models={})
    assert "0 work(s) excluded, 2 undated, 0 leak(s)" in block["line"]
    assert block["warnings"] == ["2 of 3 work(s) seen are undated: the cutoff could not be checked for them "
                                 "(a work needs a publication_date, or a year other than the cutoff's)"]
    few = [(CUTOFF_STEP, "a", "references",
            {**_record("references", [undated, EARLIER], [LATER]), "undated": 1})]
    block = leakage_block(few, PROMPTS.get, LIT, run_cutoff=CUT, ids=["a"], models={})
    assert "1 work(s) excluded, 1 undated, 0 leak(s)" in block["line"] and block["warnings"] == []
