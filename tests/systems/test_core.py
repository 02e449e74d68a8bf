"""The systems core API (issue 20): tasks and their messages, the idea contract's parser and
registry, system specs, the config mixin and StepRunner.generate_step (model, system and capture
paths). A toy contract registered here (``toybench``) keeps these tests independent of the benchmarks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ideaharness.errors import ParseError, UserError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.runner.protocol import GeneratorJudgeConfig
from ideaharness.runner.steps import StepRunner
from ideaharness.runs.store import RunStore
from ideaharness.systems import (
    TASK_FORMAT,
    GenerationTask,
    IdeaAnswer,
    IdeaContract,
    SystemFields,
    contracts,
    default_system_name,
    get_contract,
    is_system,
    read_task,
    register_contract,
    system_kind,
    task_message,
)

TOY = "toybench"
MIN_WORDS = 3


class ToyAnswer(IdeaAnswer):
    idea: str


def toy_to_parsed(answer: IdeaAnswer, task: GenerationTask) -> dict[str, Any]:
    assert isinstance(answer, ToyAnswer)
    if len(answer.idea.split()) < MIN_WORDS:
        raise ParseError(f"field 'idea': fewer than {MIN_WORDS} words")
    return {"idea": answer.idea, "words": len(answer.idea.split())}


def toy_from_row(row: dict[str, Any], task: GenerationTask) -> dict[str, Any]:
    return {"idea": row.get("idea") or row.get("text") or ""}


def toy_from_rows(rows: list[dict[str, Any]], task: GenerationTask) -> dict[str, Any]:
    return {"idea": " / ".join(str(r.get("idea") or r.get("text") or "") for r in rows)}


TOY_CONTRACT = IdeaContract(benchmark=TOY, version=1, answer=ToyAnswer, to_parsed=toy_to_parsed,
                            from_row=toy_from_row, description="A toy contract for the core tests.")
TOY_ALL = IdeaContract(benchmark="toyall", version=2, answer=ToyAnswer, to_parsed=toy_to_parsed,
                       from_row=toy_from_row, group="all", from_rows=toy_from_rows)


@pytest.fixture(autouse=True)
def toy_contracts() -> Iterator[None]:
    """The toy contracts, registered for one test (never left in the registry for other tests)."""
    from ideaharness.systems.contract import _CONTRACTS

    register_contract(TOY_CONTRACT)
    register_contract(TOY_ALL)
    yield
    for name in (TOY, "toyall", "toyprov", "toyexport"):
        _CONTRACTS.pop(name, None)


def toy_task(instance_id: str = "i1", *, sample_index: int = 0, benchmark: str = TOY) -> GenerationTask:
    return GenerationTask(benchmark=benchmark, step="generate", instance_id=instance_id,
                          key=str(sample_index), sample_index=sample_index,
                          inputs={"topic": f"topic of {instance_id}"}, seed=7)


PROMPT = [{"role": "system", "content": "You generate ideas."}, {"role": "user", "content": "Topic: x"}]


# --------------------------------------------------------------------------------------- tasks


def test_task_json_has_the_contract_shape() -> None:
    data = toy_task("p-3", sample_index=2).to_json(prompt=PROMPT, contract=TOY_CONTRACT)
    assert data["format"] == TASK_FORMAT
    assert data["task_id"] == "toybench/generate/p-3/2"
    assert data["contract"] == "ideaharness.idea/toybench/v1"
    assert data["prompt"] == PROMPT and data["seed"] == 7 and data["sample_index"] == 2
    assert data["answer_schema"]["$id"] == "ideaharness.idea/toybench/v1"
    assert set(data) == {"format", "task_id", "benchmark", "contract", "step", "instance_id", "key",
                         "sample_index", "seed", "inputs", "prompt", "answer_schema"}
    assert GenerationTask.from_json(data) == toy_task("p-3", sample_index=2)


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


@settings(max_examples=60, deadline=None)
@given(instance_id=st.text(min_size=1, max_size=30), key=st.text(max_size=5),
       sample_index=st.integers(0, 50), seed=st.integers(0, 2**31),
       inputs=st.dictionaries(st.text(max_size=10), JSON_VALUES, max_size=5))
def test_read_task_inverts_task_message(instance_id: str, key: str, sample_index: int, seed: int,
                                        inputs: dict[str, Any]) -> None:
    task = GenerationTask(TOY, "generate", instance_id, key, sample_index, inputs, seed)
    data = task.to_json(prompt=PROMPT, contract=TOY_CONTRACT)
    messages = task_message(data)
    assert len(messages) == 1 and messages[0]["role"] == "user"
    assert read_task(messages) == data
    assert GenerationTask.from_json(read_task(messages)) == task
    assert task_message(data) == messages  # deterministic: equal tasks, equal cache keys


@pytest.mark.parametrize("messages", [
    [], [{"role": "system", "content": "{}"}], [{"role": "user", "content": "Topic: x"}],
    [{"role": "user", "content": json.dumps({"format": "other"})}],
    [{"role": "user", "content": "[1, 2]"}], PROMPT,
])
def test_read_task_refuses_a_model_prompt(messages: list[dict[str, str]]) -> None:
    with pytest.raises(ValueError):
        read_task(messages)


# ------------------------------------------------------------------------------------ contracts


def answer(**fields: Any) -> str:
    return json.dumps({"instance_id": "i1", **fields})


def test_contract_parses_a_good_answer_into_the_benchmarks_parsed_value() -> None:
    parsed = TOY_CONTRACT.parse(answer(idea="a fine new idea", title="T", system="s"), toy_task())
    assert parsed == {"idea": "a fine new idea", "words": 4}


@pytest.mark.parametrize(("text", "fragment"), [
    ("not json at all", "not JSON"),
    ("[1, 2]", "not one JSON object"),
    (answer(), "field 'idea'"),
    (answer(idea="three good words", colour="red"), "field 'colour': unknown field"),
    (answer(idea=3), "field 'idea'"),
    (json.dumps({"instance_id": "i2", "idea": "three good words"}), "field 'instance_id'"),
    (answer(idea="two words"), "field 'idea': fewer than 3 words"),
])
def test_contract_parse_failures_are_one_line_naming_the_answer_and_field(text: str, fragment: str) -> None:
    with pytest.raises(ParseError) as info:
        TOY_CONTRACT.parse(text, toy_task())
    message = str(info.value)
    assert fragment in message and "\n" not in message
    assert message.startswith("answer of toybench/generate/i1/0")


def test_contract_parse_names_the_file_and_line_of_a_file_answer() -> None:
    text = answer(idea="too short", provenance={"source": "ideas.jsonl", "line": 3})
    with pytest.raises(ParseError, match=r"^ideas\.jsonl line 3, field 'idea'"):
        TOY_CONTRACT.parse(text, toy_task())
    with pytest.raises(ParseError, match=r"^mine, "):
        TOY_CONTRACT.parse(text, toy_task(), where="mine")


FIELD_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(FIELD_NAMES, JSON_VALUES, max_size=6) | JSON_VALUES | st.text(max_size=40))
def test_contract_parser_either_parses_or_raises_one_line_parse_error(value: Any) -> None:
    """Whatever a system returns, the parser gives a value or one ParseError line, nothing else."""
    for text in (json.dumps(value), value if isinstance(value, str) else json.dumps(value)[:-1]):
        try:
            parsed = TOY_CONTRACT.parse(text, toy_task())
        except ParseError as exc:
            assert "\n" not in str(exc)
        else:
            assert isinstance(value, dict) and parsed["idea"] == value["idea"]


def test_json_schema_is_draft_2020_12_with_id_title_and_description() -> None:
    schema = TOY_CONTRACT.json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == TOY_CONTRACT.schema_id
    assert schema["title"] == "toybench idea (v1)" and schema["description"].startswith("A toy")
    assert set(schema["required"]) == {"instance_id", "idea"}
    assert schema["additionalProperties"] is False


def test_registry_lookup_and_one_line_error_for_a_benchmark_without_contract() -> None:
    assert get_contract(TOY) is TOY_CONTRACT and contracts()[TOY] is TOY_CONTRACT
    with pytest.raises(UserError, match="'nobench' has no idea contract"):
        get_contract("nobench")


def test_a_contract_of_group_all_needs_from_rows() -> None:
    with pytest.raises(ValueError, match="from_rows"):
        IdeaContract("x", 1, ToyAnswer, toy_to_parsed, toy_from_row, group="all")


# ---------------------------------------------------------------------------------------- specs


@pytest.mark.parametrize(("spec", "kind", "name"), [
    ("ideas:runs/my_ideas.jsonl", "ideas-file", "my_ideas"),
    ("ideas:/x/ai_scientist.json#format=aiscientist", "ideas-file", "ai_scientist"),
    ("cmd:python examples/idea_agent/agent.py --deterministic", "command", "agent.py"),
    ("cmd:./run.sh", "command", "run.sh"),
    ("cmd:my-agent --fast", "command", "my-agent"),
    ("http://127.0.0.1:8123/answer", "http", "127.0.0.1:8123/answer"),
    ("https://agents.example.org/v1/ideas/", "http", "agents.example.org/v1/ideas"),
    ("openai/gpt-4o-mini", "model", "openai/gpt-4o-mini"),
    ("local/qwen2.5-coder-0.5b", "model", "local/qwen2.5-coder-0.5b"),
])
def test_system_specs(spec: str, kind: str, name: str) -> None:
    assert is_system(spec) is (kind != "model")
    assert system_kind(spec) == kind
    assert default_system_name(spec) == name


# --------------------------------------------------------------------------------------- config


class ToyConfig(SystemFields, GeneratorJudgeConfig):
    benchmark: str = TOY


def test_system_fields_spec_name_and_identity_files() -> None:
    plain = ToyConfig()
    assert plain.generator_spec(plain.generator) == plain.generator and plain.ideas_files() == []
    assert plain.system_name(plain.generator) == plain.generator
    with_file = ToyConfig(ideas="out/ideas.jsonl")
    assert with_file.generator_spec(with_file.generator) == "ideas:out/ideas.jsonl"
    assert with_file.system_name(with_file.generator) == "ideas"
    assert with_file.ideas_files() == [Path("out/ideas.jsonl")]
    native = ToyConfig(ideas="a.json", ideas_format="aiscientist", system="AI-Scientist")
    assert native.generator_spec(native.generator) == "ideas:a.json#format=aiscientist"
    assert native.system_name(native.generator) == "AI-Scientist"
    assert ToyConfig(ideas="a.jsonl", generator="ideas:a.jsonl").ideas == "a.jsonl"


def test_ideas_and_another_generator_are_refused_in_one_line() -> None:
    with pytest.raises(UserError, match="give --ideas or --generator, not both"):
        ToyConfig(ideas="a.jsonl", generator="openai/gpt-4o-mini")


# ---------------------------------------------------------------------------------- generate_step


def ask_generation(tmp_path: Path, model: Any, *, capture: list[dict[str, Any]] | None = None,
                   task: GenerationTask | None = None) -> tuple[dict[str, Any] | None, StepRunner]:
    import asyncio

    async def run() -> tuple[dict[str, Any] | None, StepRunner]:
        with RunStore(tmp_path / "run", {"command": "test"}) as store:
            steps = StepRunner(store, progress=False)
            steps.capture = capture
            record = await steps.generate_step(
                "generate", "i1", "0", model, PROMPT, lambda t: {"model_reply": t}, task=task or toy_task(),
                extra={"n": 1}, temperature=0.7, max_tokens=64, seed=7, sample_index=0)
            await store.drain()
            return record, steps

    return asyncio.run(run())


def test_a_model_generator_is_asked_the_prompt_as_judge_step_would(tmp_path: Path) -> None:
    model = ScriptedModel(["an idea"], model="scripted/test")
    record, _ = ask_generation(tmp_path, model)
    assert record is not None and record["judgment"]["parsed"] == {"model_reply": "an idea"}
    assert model.calls[0][0] == PROMPT and "system_task" not in record and record["n"] == 1


def test_a_system_generator_gets_the_task_as_its_one_message(tmp_path: Path) -> None:
    model = ScriptedModel(lambda messages: answer(idea="an answer of the system"), model="cmd:toy-agent")
    record, _ = ask_generation(tmp_path, model)
    assert record is not None and record["system_task"] is True and record["n"] == 1
    assert record["judgment"]["parsed"] == {"idea": "an answer of the system", "words": 5}
    sent = read_task(model.calls[0][0])
    assert sent["prompt"] == PROMPT and sent["instance_id"] == "i1"
    assert sent["inputs"]["topic"] == "topic of i1"


def test_a_system_answer_that_does_not_parse_is_an_unparsed_unit_never_a_score(tmp_path: Path) -> None:
    model = ScriptedModel(lambda messages: "I'm sorry, no JSON today", model="cmd:toy-agent")
    record, steps = ask_generation(tmp_path, model)
    assert record is not None
    assert record["judgment"]["parse_ok"] is False and record["judgment"]["parsed"] is None
    assert list(steps.unparsed) == [("generate", "i1", "0")]
    assert steps.unparsed[("generate", "i1", "0")].generation
    # an unparsed generation is a failed unit of its system (issue 32, item 1): the run is partial
    assert list(steps.failures) == [("generate", "i1", "0")]


def test_capture_mode_collects_the_task_and_asks_nothing(tmp_path: Path) -> None:
    model = ScriptedModel([], model="local/qwen2.5-coder-0.5b")
    captured: list[dict[str, Any]] = []
    record, steps = ask_generation(tmp_path, model, capture=captured)
    assert record is None and steps.exporting and not steps.failures and model.calls == []
    assert [t["task_id"] for t in captured] == ["toybench/generate/i1/0"]
    assert captured[0]["prompt"] == PROMPT


def test_a_benchmark_without_contract_cannot_take_a_system(tmp_path: Path) -> None:
    model = ScriptedModel(["{}"], model="cmd:toy-agent")
    with pytest.raises(UserError, match="no idea contract"):
        ask_generation(tmp_path, model, task=toy_task(benchmark="nobench"))


def test_get_contract_imports_the_benchmarks_first() -> None:
    """A process that has not imported a benchmark yet (a Ray worker) still finds its contract."""
    from ideaharness.systems.contract import _CONTRACTS, _DISCOVERY, set_discovery

    def discover() -> None:
        register_contract(IdeaContract("latebench", 1, ToyAnswer, toy_to_parsed, toy_from_row))

    set_discovery(discover)
    try:
        assert get_contract("latebench").benchmark == "latebench"
    finally:
        _DISCOVERY.remove(discover)
        _CONTRACTS.pop("latebench", None)
