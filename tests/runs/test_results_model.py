"""The typed results.json (ideaharness.results): common blocks typed, the benchmark's block through
its results_class, one clear error naming the field, and the file's layout unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ConfigDict

from ideaharness.results import BenchmarkResults, InvalidResults, parse_results
from ideaharness.runs.store import RunStore


class CountBlock(BenchmarkResults):
    model_config = ConfigDict(extra="forbid")
    ideas: int
    per_topic: dict[str, float]


COMMON = {
    "benchmark": "countbench", "benchmark_version": "2",
    "settings": {"config": {"seed": 3}, "execution": {"limit": None}, "models": {"judge": "openai/j"},
                 "input_sha256": {}},
    "seeds": {"seed": 3},
    "selection": {"order": "data", "shard": [0, 2], "limit": 2, "selected": 2, "available": 5,
                  "ids": ["a", "b"]},
    "status": "partial", "failed_units": [{"step": "judge", "instance_id": "a", "key": "", "status": "failed",
                                           "error": "timeout"}],
    "unparsed_units": [], "truncated_texts": 0, "truncated_prompts": 0, "ended": "complete", "notes": ["n"],
    "metrics": [{"metric": "countbench.ideas", "group": "", "value": 0.5, "ci": [0.1, 0.9], "n": 2}],
    "not_computed": None,
}


def test_a_results_dict_reads_typed_and_flattens_back_unchanged() -> None:
    results = {**COMMON, "ideas": 4, "per_topic": {"x": 1.5}}
    typed = parse_results(results, CountBlock)
    assert typed.selection is not None and typed.selection.shard == (0, 2)
    assert typed.selection.ids == ["a", "b"]
    assert typed.failed_units[0].error == "timeout" and typed.status == "partial"
    assert isinstance(typed.block, CountBlock) and typed.block.per_topic == {"x": 1.5}
    value = typed.metric("countbench.ideas")
    assert value is not None and value.ci == (0.1, 0.9) and typed.metric("other") is None
    assert json.loads(json.dumps(typed.to_json())) == results


def test_the_default_block_takes_any_keys() -> None:
    typed = parse_results({**COMMON, "scenarios": {"low": {"n": 1}}, "anything": [1, "two"]})
    assert typed.block.model_dump() == {"scenarios": {"low": {"n": 1}}, "anything": [1, "two"]}


@pytest.mark.parametrize(("change", "field"), [
    ({"ideas": "four"}, "field ideas: Input should be a valid integer"),
    ({"surprise": 1}, "field surprise: Extra inputs are not permitted"),
    ({"selection": {**COMMON["selection"], "selected": -1}}, "field selection.selected:"),
    ({"status": "done"}, "field status: Input should be 'complete' or 'partial'"),
    ({"metrics": [{"metric": "m", "value": "high"}]}, "field metrics.0.value:"),
])
def test_an_invalid_block_is_one_error_naming_the_field(change: dict, field: str) -> None:
    results = {**COMMON, "ideas": 4, "per_topic": {}, **change}
    with pytest.raises(InvalidResults) as exc:
        parse_results(results, CountBlock)
    message = str(exc.value)
    assert message.startswith("results of countbench: ") and field in message and "\n" not in message


def test_write_results_refuses_an_invalid_block_and_writes_nothing(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run", {"a": 1}) as store:
        with pytest.raises(InvalidResults, match="field ideas"):
            store.write_results({**COMMON, "ideas": None, "per_topic": {}}, block_class=CountBlock)
        assert not (tmp_path / "run" / "results.json").exists()
        store.write_results({**COMMON, "ideas": 1, "per_topic": {}}, block_class=CountBlock)
    written = json.loads((tmp_path / "run" / "results.json").read_text())
    assert written == {**COMMON, "ideas": 1, "per_topic": {}, "corrupt_record_lines": 0}  # layout as given


def test_load_results_reads_a_run_directory_typed(tmp_path: Path) -> None:
    from ideaharness.analysis.load import load_results
    from ideaharness.errors import UserError

    with RunStore(tmp_path / "run", {"a": 1}) as store:
        store.write_results({**COMMON, "ideas": 2, "per_topic": {"t": 0.5}})
    typed = load_results(tmp_path / "run", CountBlock)
    assert isinstance(typed.block, CountBlock) and typed.block.ideas == 2 and typed.corrupt_record_lines == 0
    assert load_results(tmp_path / "run").block.model_dump() == {"ideas": 2, "per_topic": {"t": 0.5}}
    with pytest.raises(UserError, match="no results.json"):
        load_results(tmp_path / "missing")
