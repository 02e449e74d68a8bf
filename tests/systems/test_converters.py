"""Idea files of systems read into the common row vocabulary (ideaharness.systems.converters).

Real published files (tests/systems/data/<format>/SOURCE.md): AI-Scientist v1 (seed_ideas.json,
ideas.json), AI-Scientist-v2 (i_cant_believe_its_not_better.json), MOOSE-Chem (an excerpt of an
expert-evaluation file). Files written from the documented shape (data/written/SOURCE.md says why
no real one is bundled): AI-Researcher, ResearchAgent, MOOSE-Chem evaluate.py and
hypothesis_generation.py output, AI Idea Bench 2025 output. Expected values are read from the
files themselves.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ideaharness.errors import DataError, DataWarning
from ideaharness.systems.converters import FORMATS, VOCABULARY, read_idea_rows

DATA = Path(__file__).parent / "data"
WRITTEN = DATA / "written"
HOW = "key the file by instance id ({\"<instance_id>\": [ideas]}) or give each idea an 'instance_id' field"


def _write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return path


def _error(path: Path, fmt: str = "auto") -> str:
    with pytest.raises(DataError) as info:
        read_idea_rows(path, fmt)
    message = str(info.value)
    assert "\n" not in message
    return message


# ---------------------------------------------------------------- real published files


def test_aiscientist_real_seed_ideas_as_published_ask_for_an_instance_id() -> None:
    path = DATA / "aiscientist" / "seed_ideas.json"
    assert _error(path) == f"{path}: item 1, field 'instance_id': missing; {HOW}"


def test_aiscientist_real_seed_ideas_keyed_by_instance_id(tmp_path: Path) -> None:
    ideas = json.loads((DATA / "aiscientist" / "seed_ideas.json").read_text())
    path = _write(tmp_path / "keyed.json", {"nanoGPT": ideas})
    rows = read_idea_rows(path)
    assert len(rows) == 2
    first = rows[0]
    assert first["instance_id"] == "nanoGPT"
    assert first["title"] == ideas[0]["Title"]
    assert first["title"] == "Adaptive Block Size: Dynamic Context Window Adjustment for Efficient Training"
    assert first["experiment_plan"] == ideas[0]["Experiment"]
    assert "motivation" not in first  # v1 has none: the contract's parse failure, not ours
    assert first["text"] == f"{ideas[0]['Title']}\n\nExperiment: {ideas[0]['Experiment']}"
    assert first["provenance"] == {"format": "aiscientist", "where": "key 'nanoGPT', idea 1",
                                   "name": "adaptive_block_size", "interestingness": 6,
                                   "feasibility": 4, "novelty": 4}
    assert [r["_line"] for r in rows] == [1, 2] and rows[1]["_source"] == str(path)
    assert rows[1]["_where"] == rows[1]["provenance"]["where"] == "key 'nanoGPT', idea 2"
    assert rows[1]["provenance"]["name"] == ideas[1]["Name"] == "layerwise_learning_rates"


def test_aiscientist_real_ideas_with_novel_flag_as_a_list_with_instance_ids(tmp_path: Path) -> None:
    ideas = json.loads((DATA / "aiscientist" / "ideas.json").read_text())
    listed = [{"instance_id": f"mace-{k}", **idea} for k, idea in enumerate(ideas)]
    path = _write(tmp_path / "ideas.json", listed)
    rows = read_idea_rows(path, "aiscientist")
    assert len(rows) == 4
    assert [r["instance_id"] for r in rows] == ["mace-0", "mace-1", "mace-2", "mace-3"]
    assert rows[3]["title"] == ideas[3]["Title"]
    assert rows[3]["provenance"] == {"format": "aiscientist", "where": "item 4",
                                     "name": "temperature_scaling", "interestingness": 9,
                                     "feasibility": 9, "novelty": 8, "novel": True}
    assert rows == read_idea_rows(path)  # auto detects it


def test_aiscientist_v2_real_ideation_file(tmp_path: Path) -> None:
    ideas = json.loads((DATA / "aiscientist-v2" / "i_cant_believe_its_not_better.json").read_text())
    path = _write(tmp_path / "v2.json", {"icbinb": ideas})
    rows = read_idea_rows(path)
    assert len(rows) == 3
    first, last = rows[0], rows[2]
    assert first["title"] == ideas[0]["Title"]
    assert first["title"].startswith("Enhancing Compositional Generalization in Neural Networks")
    assert first["hypothesis"] == ideas[0]["Short Hypothesis"]
    assert first["abstract"] == ideas[0]["Abstract"]
    assert first["related_work"] == ideas[0]["Related Work"]
    assert first["experiment_plan"] == "\n".join(ideas[0]["Experiments"])
    assert first["risks"] == "\n".join(ideas[0]["Risk Factors and Limitations"])
    assert isinstance(ideas[2]["Risk Factors and Limitations"], str)  # text in idea 3, a list in 1-2
    assert last["risks"] == ideas[2]["Risk Factors and Limitations"]
    assert last["provenance"] == {"format": "aiscientist-v2", "where": "key 'icbinb', idea 3",
                                  "name": "real_world_pest_detection"}
    hypothesis = ideas[0]["Short Hypothesis"]
    assert first["text"].startswith(f"{ideas[0]['Title']}\n\nShort hypothesis: {hypothesis}")
    assert read_idea_rows(path, "aiscientist-v2") == rows


def test_aiscientist_v2_real_file_as_published_asks_for_an_instance_id() -> None:
    path = DATA / "aiscientist-v2" / "i_cant_believe_its_not_better.json"
    assert _error(path) == f"{path}: item 1, field 'instance_id': missing; {HOW}"


def test_moose_chem_real_expert_evaluation_excerpt() -> None:
    path = DATA / "moose-chem" / "expert_eval_for_selected_hyp_in_exp_5.excerpt.json"
    data = json.loads(path.read_text())
    rows = read_idea_rows(path)
    assert len(rows) == 8
    assert [r["instance_id"] for r in rows] == ["0"] * 4 + ["1"] * 4
    assert rows[0]["hypothesis"] == rows[0]["text"] == data["0"][0][0]
    assert rows[0]["hypothesis"].startswith("Develop a cutting-edge flexible thermogalvanic device")
    assert rows[5]["hypothesis"] == data["1"][1][0]
    assert rows[0]["provenance"] == {"format": "moose-chem", "where": "key '0', idea 1",
                                     "matched_inspirations": 3, "matched_score": "5"}
    assert all(data[r["instance_id"]][0][1] not in json.dumps(r) for r in rows)  # no ground truth
    assert [r["_line"] for r in rows] == list(range(1, 9))
    assert read_idea_rows(path, "moose-chem") == rows


# ---------------------------------------------------------------- written files (documented shapes)


def test_ai_researcher_proposals_written() -> None:
    path = WRITTEN / "ai-researcher.proposals.written.jsonl"
    source = [json.loads(line) for line in path.read_text().splitlines()]
    rows = read_idea_rows(path)
    assert [r["instance_id"] for r in rows] == ["toy_quant", "toy_graph"]
    first = rows[0]
    assert first["title"] == source[0]["target"]
    assert first["text"] == first["method"] == source[0]["task1"]
    assert first["problem"] == source[0]["task2"]
    assert first["abstract"] == source[0]["abstract"]
    assert first["provenance"] == {"format": "ai-researcher", "where": "line 1", "kind": "proposal",
                                   "url": "http://example.org/toy_quant", "year": 2024,
                                   "venue": "Written Venue"}
    assert rows[1]["_line"] == 2 and "url" not in rows[1]["provenance"]


def test_ai_researcher_agent_cache_written() -> None:
    path = WRITTEN / "ai-researcher.agent-cache.written.json"
    messages = json.loads(path.read_text())["toy_quant"]["messages"]
    rows = read_idea_rows(path)
    assert len(rows) == 1
    assert rows[0]["instance_id"] == "toy_quant"
    assert rows[0]["text"] == messages[3]["content"]  # the last assistant reply with content
    assert rows[0]["provenance"] == {"format": "ai-researcher", "where": "key 'toy_quant'",
                                     "kind": "agent cache"}


def test_researchagent_written() -> None:
    path = WRITTEN / "researchagent.ideas.written.jsonl"
    rows = read_idea_rows(path)
    assert [r["instance_id"] for r in rows] == ["paper-a", "paper-b"]
    a = rows[0]
    assert a["problem"] == "How can written problem A be solved with less compute?"
    assert a["motivation"] == "Written rationale A: compute is the bottleneck."
    assert a["method"] == "1. Written method step A.\n2. Another step."
    assert a["experiment_plan"].startswith("Design: written experiment A")
    assert a["text"].split("\n\n")[:2] == ["Problem: How can written problem A be solved with less compute?",
                                           "Rationale: Written rationale A: compute is the bottleneck."]
    assert "Rationale: The experiment isolates the effect." in a["text"]
    assert a["provenance"] == {"format": "researchagent", "where": "line 1",
                               "paper": "Written Source Paper A",
                               "ratings": {"problem": {"Clarity": 4, "Relevance": 5},
                                           "method": {"Clarity": 3}, "experiment": {"Clarity": 4}}}
    assert rows[1]["provenance"]["where"] == "line 2, key 'paper-b'" and rows[1]["_line"] == 2


def test_moose_chem_evaluate_output_written() -> None:
    path = WRITTEN / "moose-chem.evaluate.written.json"
    ranked = json.loads(path.read_text())[0]
    (q1, first), (q2, second) = ranked.items()
    rows = read_idea_rows(path)
    assert [r["instance_id"] for r in rows] == [q1, q1, q2]  # best first, per question
    assert [r["hypothesis"] for r in rows] == [first[0][0], first[1][0], second[0][0]]
    assert rows[0]["provenance"] == {"format": "moose-chem", "where": f"key {q1[:57] + '...'!r}, idea 1",
                                     "average_score": 4.25, "scores": [5, 4, 4, 4],
                                     "inspiration": "Inspiration title X", "round": 1}


def test_moose_chem_hypothesis_generation_output_written() -> None:
    path = WRITTEN / "moose-chem.hypothesis_generation.written.json"
    rows = read_idea_rows(path)
    assert [r["hypothesis"] for r in rows] == ["Refined hypothesis X0.", "Recombined hypothesis X.",
                                              "Hypothesis X0 with Z."]  # the last step of each chain
    assert rows[0]["provenance"]["scores"] == [4, 4, 4, 3]
    assert rows[2]["provenance"]["where"].endswith(
        "inspiration 'Inspiration title X', mutation 'inter_recom_1', step 'Inspiration title X;0', "
        "match 'Inspiration title Z'")


def test_ai_idea_bench_output_written() -> None:
    path = WRITTEN / "aiideabench.final_ideas.written.json"
    rows = read_idea_rows(path)
    assert [r["instance_id"] for r in rows] == ["aiib-3", "aiib-3", "aiib-8"]  # index 7: no novel idea
    assert rows[1]["motivation"] == "Written motivation 2: prior work ignores the cost of retrieval."
    assert rows[1]["experiment_plan"] == "Written experiment 2: add a retrieval cache and measure latency."
    assert rows[1]["title"] == "Written Idea 2"
    assert rows[1]["provenance"]["where"] == "item 1, idea 2"
    assert [r["_line"] for r in rows] == [1, 2, 3]


# ---------------------------------------------------------------- auto-detection


@pytest.mark.parametrize(("path", "fmt"), [
    (WRITTEN / "ai-researcher.proposals.written.jsonl", "ai-researcher"),
    (WRITTEN / "ai-researcher.agent-cache.written.json", "ai-researcher"),
    (WRITTEN / "researchagent.ideas.written.jsonl", "researchagent"),
    (WRITTEN / "moose-chem.evaluate.written.json", "moose-chem"),
    (WRITTEN / "moose-chem.hypothesis_generation.written.json", "moose-chem"),
    (WRITTEN / "aiideabench.final_ideas.written.json", "aiscientist"),
    (DATA / "moose-chem" / "expert_eval_for_selected_hyp_in_exp_5.excerpt.json", "moose-chem"),
])
def test_auto_detects_the_format(path: Path, fmt: str) -> None:
    rows = read_idea_rows(path)
    assert {r["provenance"]["format"] for r in rows} == {fmt}
    assert read_idea_rows(path, fmt) == rows


def test_auto_reads_contract_rows_as_jsonl_unchanged(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [
            {"instance_id": "p1", "ideas": [{"title": None, "idea": "x"}], "provenance": {"seed": 3}},
            {"instance_id": "p2", "motivation": "m", "experiment_plan": "e", "sample_index": 1, "extra": [1]}]
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    expected = [{**r, "_line": k, "_where": f"line {k}", "_source": str(path)}
                for k, r in enumerate(rows, start=1)]
    assert read_idea_rows(path) == read_idea_rows(path, "jsonl") == expected


def test_jsonl_format_also_reads_a_json_list_and_a_keyed_object(tmp_path: Path) -> None:
    listed = _write(tmp_path / "rows.json", [{"instance_id": "a", "text": "t"}])
    assert read_idea_rows(listed) == [{"instance_id": "a", "text": "t", "_line": 1, "_where": "item 1",
                                       "_source": str(listed)}]
    keyed = _write(tmp_path / "keyed.json", {"a": [{"text": "t1"}, {"text": "t2"}], "b": {"hypothesis": "h"}})
    rows = read_idea_rows(keyed, "jsonl")
    assert [(r["instance_id"], r["_line"], r["_where"]) for r in rows] == [
        ("a", 1, "key 'a', idea 1"), ("a", 2, "key 'a', idea 2"), ("b", 3, "key 'b'")]


def test_gzip_and_jsonl_under_a_json_suffix(tmp_path: Path) -> None:
    line = json.dumps({"instance_id": "a", "Title": "T", "Experiment": "E"})
    gz = tmp_path / "ideas.jsonl.gz"
    gz.write_bytes(gzip.compress(f"{line}\n{line}\n".encode()))
    assert [r["_line"] for r in read_idea_rows(gz)] == [1, 2]
    several = tmp_path / "ideas.json"
    several.write_text(f"{line}\n{line}\n")
    assert [r["provenance"]["where"] for r in read_idea_rows(several)] == ["line 1", "line 2"]


def test_external_importer_shapes_keep_working(tmp_path: Path) -> None:
    """The shapes generation/external.py reads: {instance_id: [ideas]} with AI Idea Bench's
    Motivation, and JSON Lines mixing AI-Scientist names with the lowercase ones."""
    idea = {"Name": "n", "Title": "T", "Motivation": "M", "Experiment": "E"}
    keyed = _write(tmp_path / "keyed.json", {"aiib-1": [idea, idea]})
    rows = read_idea_rows(keyed)
    assert [(r["instance_id"], r["motivation"], r["experiment_plan"], r["title"]) for r in rows] == [
        ("aiib-1", "M", "E", "T")] * 2
    assert rows[0]["text"] == "T\n\nMotivation: M\n\nExperiment: E"
    mixed = tmp_path / "mixed.jsonl"
    lowercase = {"instance_id": "b", "title": "t", "motivation": "m", "experiment_plan": "e",
                 "text": "own text"}
    mixed.write_text(json.dumps({"instance_id": "a", **idea}) + "\n" + json.dumps(lowercase) + "\n")
    second = read_idea_rows(mixed)[1]
    assert (second["title"], second["motivation"], second["experiment_plan"], second["text"]) == (
        "t", "m", "e", "own text")
    assert second["provenance"] == {"format": "aiscientist", "where": "line 2"}


def test_an_instance_id_may_be_a_vocabulary_word_when_its_values_are_ideas(tmp_path: Path) -> None:
    ideas = json.loads((DATA / "aiscientist-v2" / "i_cant_believe_its_not_better.json").read_text())
    path = _write(tmp_path / "v2.json", {"ideas": ideas, "text": ideas[:1]})
    assert [r["instance_id"] for r in read_idea_rows(path)] == ["ideas"] * 3 + ["text"]


def test_moose_chem_question_without_hypotheses(tmp_path: Path) -> None:
    path = DATA / "moose-chem" / "expert_eval_for_selected_hyp_in_exp_5.excerpt.json"
    data = json.loads(path.read_text())  # the published exp_8 files have two ids with no hypothesis
    rows = read_idea_rows(_write(tmp_path / "expert.json", {**data, "2": []}))
    assert len(rows) == 8 and {r["provenance"]["format"] for r in rows} == {"moose-chem"}


def test_mlrbench_published_ideas_read_as_contract_rows() -> None:
    """MLR-Bench's own --ideas files key rows by task_id; idea, proposal, model pass through."""
    root = Path(__file__).parents[2] / "src/ideaharness/benchmarks/mlrbench/data/published/ideas"
    path = sorted(root.glob("*.jsonl"))[0]
    source = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = read_idea_rows(path)
    assert len(rows) == len(source)
    for row, line in zip(rows, source, strict=True):
        assert row == {**line, "instance_id": line["task_id"], "provenance": {"model": line["model"]},
                       "_line": row["_line"], "_where": f"line {row['_line']}", "_source": str(path)}


def test_model_of_a_contract_row(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    row = {"task_id": "t", "idea": "i", "model": "m", "provenance": {"model": "own"}}
    path.write_text(json.dumps(row) + "\n" + json.dumps({"task_id": "t", "model": 3}) + "\n")
    assert _error(path) == f"{path}: line 2, field 'model': expected text, got a number"
    path.write_text(json.dumps(row))
    assert read_idea_rows(path)[0]["provenance"] == {"model": "own"}


def test_aiideabench_fixture_keeps_working() -> None:
    path = Path(__file__).parents[1] / "aiideabench" / "fixtures" / "ai_scientist_ideas.json"
    data = json.loads(path.read_text())
    rows = read_idea_rows(path)
    ids = [k for k, v in data.items() for _ in (v if isinstance(v, list) else [v])]
    assert [r["instance_id"] for r in rows] == ids
    first = data["aiib-0"][0] if isinstance(data["aiib-0"], list) else data["aiib-0"]
    assert rows[0]["motivation"] == first["Motivation"] and rows[0]["experiment_plan"] == first["Experiment"]


def test_instance_id_spellings_and_numbers(tmp_path: Path) -> None:
    path = _write(tmp_path / "ideas.json", [{"sample_id": "s1", "Title": "T", "Experiment": "E"},
                                            {"instance_id": 7, "Title": "T", "Experiment": "E"}])
    assert [r["instance_id"] for r in read_idea_rows(path)] == ["s1", "7"]


# ---------------------------------------------------------------- errors: one line, file, line/item, field


def test_bad_json_line(tmp_path: Path) -> None:
    path = tmp_path / "ideas.jsonl"
    path.write_text('{"instance_id": "a"}\n\n{"instance_id": "b" "text": 1}\n')
    assert _error(path) == f"{path}: line 3: not valid JSON (Expecting ',' delimiter at column 21)"


def test_bad_json_document(tmp_path: Path) -> None:
    path = tmp_path / "ideas.json"
    path.write_text('[\n  {"Title": "T",\n   "Experiment": }\n]')
    assert _error(path) == f"{path}: line 3: not valid JSON (Expecting value at column 18)"


@pytest.mark.parametrize(("text", "detail"), [
    ('{"a": 1, "a": 2}', "line 1: not valid JSON (key 'a' given twice in one object)"),
    ("[" * 300 + "]" * 300, "line 1: not valid JSON (arrays/objects nested more than 200 levels deep)"),
    ("[" + "9" * 5000 + "]", "line 1: not valid JSON (an integer with more than 4300 digits at column 2)"),
])
def test_refused_json(tmp_path: Path, text: str, detail: str) -> None:
    path = tmp_path / "ideas.json"
    path.write_text(text)
    assert _error(path) == f"{path}: {detail}"


def test_missing_instance_id_in_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "ideas.jsonl"
    path.write_text(json.dumps({"instance_id": "a", "text": "x"}) + "\n" + json.dumps({"text": "y"}) + "\n")
    assert _error(path) == f"{path}: line 2, field 'instance_id': missing; {HOW}"


@pytest.mark.parametrize(("value", "detail"), [
    ({"instance_id": "  ", "text": "x"}, "line 1, field 'instance_id': missing or empty"),
    ({"instance_id": ["a"], "text": "x"}, "line 1, field 'instance_id': expected text, got a list"),
    ({"instance_id": True, "text": "x"}, "line 1, field 'instance_id': expected text, got true/false"),
    ({"instance_id": "a", "text": 3}, "line 1, field 'text': expected text, got a number"),
    ({"instance_id": "a", "provenance": "x"}, "line 1, field 'provenance': expected an object, got text"),
    ({"instance_id": "a", "sample_index": True},
     "line 1, field 'sample_index': expected a whole number >= 0, got True"),
    ({"instance_id": "a", "sample_index": -1},
     "line 1, field 'sample_index': expected a whole number >= 0, got -1"),
    (["a"], "line 1: expected a JSON object (a row), got a list"),
])
def test_wrong_types_in_contract_rows(tmp_path: Path, value: Any, detail: str) -> None:
    path = tmp_path / "ideas.jsonl"
    path.write_text(json.dumps(value) + "\n")
    assert _error(path) == f"{path}: {detail}"


@pytest.mark.parametrize(("fmt", "value", "detail"), [
    ("aiscientist", {"k": [{"Title": 3, "Experiment": "E"}]},
     "key 'k', idea 1, field 'Title': expected text, got a number"),
    ("aiscientist", {"k": ["not an idea"]},
     "key 'k', idea 1: expected an idea object (AI-Scientist), got text"),
    ("aiscientist-v2", [{"instance_id": "a", "Short Hypothesis": True}],
     "item 1, field 'Short Hypothesis': expected text, got true/false"),
    ("researchagent", {"p": {"problem": "x", "experiment": 5}}, "key 'p', field 'experiment': expected text, "
                                                                 "got a number"),
    ("ai-researcher", {"p": {"messages": ["hi"], "context_variables": {}}},
     "key 'p', field 'messages.1': expected an object, got text"),
    ("moose-chem", {"q": [5]}, "key 'q', idea 1: expected a MOOSE-Chem hypothesis (text, or a list starting "
                               "with the hypothesis), got a number"),
    ("aiscientist", [{"index": None, "model_result": []}],
     "item 1, field 'index': expected a number or text, got null"),
    ("jsonl", {"a": {"instance_id": "b", "text": "t"}},
     "key 'a', field 'instance_id': 'b' is not the key 'a'"),
])
def test_wrong_types_in_native_ideas(tmp_path: Path, fmt: str, value: Any, detail: str) -> None:
    path = _write(tmp_path / "ideas.json", value)
    assert _error(path, fmt) == f"{path}: {detail}"


def test_unknown_format(tmp_path: Path) -> None:
    path = _write(tmp_path / "ideas.json", [])
    assert _error(path, "chain-of-ideas") == (
        f"{path}: unknown ideas format 'chain-of-ideas'; use one of auto, jsonl, aiscientist, "
        "aiscientist-v2, ai-researcher, researchagent, moose-chem")


@pytest.mark.parametrize(("name", "content", "detail"), [
    ("ideas.jsonl", b"", "no ideas in the file (it is empty)"),
    ("ideas.json", b"\xef\xbb\xbf \n\t\n", "no ideas in the file (it is empty)"),
    ("ideas.json", b"[]", "no ideas in the file (an empty list or object)"),
    ("ideas.json", b'{"a": []}', "no ideas in the file (an empty list or object)"),
    ("ideas.json", b"{}", "no ideas in the file (an empty list or object)"),
    ("ideas.json", b"42", "expected ideas (a JSON list, an object {instance_id: [ideas]} or JSON Lines), "
                          "got a number"),
    ("ideas.json", b'["\xff"]', "line 1, byte 3 of the line (byte 2 of the file): not UTF-8 text (invalid "
                                "start byte); save the file as UTF-8"),
    ("ideas.json.gz", b"not gzip", "not a gzip file (Not a gzipped file (b'no'))"),
])
def test_empty_and_unreadable_files(tmp_path: Path, name: str, content: bytes, detail: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert _error(path) == f"{path}: {detail}"


def test_missing_file_and_directory(tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    assert _error(missing) == f"{missing}: cannot be read (No such file or directory)"
    assert _error(tmp_path) == f"{tmp_path}: is a directory, expected a file"


def test_auto_refuses_two_formats_in_one_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "mixed.json", {"a": [{"Title": "T", "Experiment": "E"},
                                                 {"problem": "p", "problem_rationale": "r"}]})
    assert _error(path) == (f"{path}: key 'a', idea 2 looks like researchagent but key 'a', idea 1 like "
                            "aiscientist; pass --ideas-format to say which")
    assert len(read_idea_rows(path, "aiscientist")) == 2  # an explicit format reads it


def test_auto_refuses_an_idea_with_the_keys_of_two_formats(tmp_path: Path) -> None:
    path = tmp_path / "ideas.jsonl"
    idea = {"instance_id": "a", "Title": "T", "Experiment": "E", "task1": "x", "target": "y"}
    path.write_text(json.dumps(idea))
    assert _error(path) == (f"{path}: line 1: the idea has keys of both the ai-researcher and the "
                            "aiscientist format; pass --ideas-format to say which")


def test_lone_surrogates_are_replaced_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "ideas.jsonl"
    path.write_text('{"instance_id": "a", "text": "half \\ud83d an emoji"}\n')
    with pytest.warns(DataWarning, match="lone UTF-16 surrogate"):
        rows = read_idea_rows(path)
    assert rows[0]["text"] == "half \ufffd an emoji"


def test_formats_registry() -> None:
    assert list(FORMATS) == ["auto", "jsonl", "aiscientist", "aiscientist-v2", "ai-researcher",
                             "researchagent", "moose-chem"]
    assert all(c.name == name and c.summary for name, c in FORMATS.items())


# ---------------------------------------------------------------- properties

_text = st.text(max_size=40)
_json_ish = st.text(alphabet='[]{}",:0123456789 \nabtrue-.\\u', max_size=80)
_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
                     max_leaves=8)
_row = st.fixed_dictionaries(
    {"instance_id": st.text(min_size=1, max_size=20).filter(str.strip)},
    optional={"sample_index": st.integers(min_value=0, max_value=50), "title": st.none() | _text,
              "provenance": st.dictionaries(_text, _json, max_size=3),
              **{f: st.none() | _text for f in VOCABULARY if f not in ("instance_id", "sample_index", "title",
                                                                      "provenance")},
              "ideas": st.lists(st.fixed_dictionaries({"title": st.none() | _text, "idea": _text}),
                                max_size=3)},
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_row, min_size=1, max_size=6))
def test_rows_written_as_jsonl_read_back_equal(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    expected = [{**r, "_line": k, "_where": f"line {k}", "_source": str(path)}
                for k, r in enumerate(rows, start=1)]
    assert read_idea_rows(path, "jsonl") == expected
    assert read_idea_rows(path) == expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=200) | _json_ish.map(str.encode),
       name=st.sampled_from(["x.jsonl", "x.json", "x.txt"]), fmt=st.sampled_from(sorted(FORMATS)))
def test_garbage_gives_data_error_never_another_exception(tmp_path: Path, data: bytes, name: str,
                                                          fmt: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    try:
        rows = read_idea_rows(path, fmt)
    except DataError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(f"{path}: ")
    else:
        assert rows and all(isinstance(r["instance_id"], str) and r["_source"] == str(path) for r in rows)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_json, fmt=st.sampled_from(sorted(FORMATS)))
def test_any_json_value_gives_rows_or_data_error(tmp_path: Path, value: Any, fmt: str) -> None:
    path = _write(tmp_path / "x.json", value)
    try:
        rows = read_idea_rows(path, fmt)
    except DataError as exc:
        assert "\n" not in str(exc)
    else:
        assert all(isinstance(r["instance_id"], str) and r["instance_id"].strip() for r in rows)
