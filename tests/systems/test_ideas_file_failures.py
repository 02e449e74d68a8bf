"""An ``ideas:`` file whose answer for one instance breaks the benchmark's rules: the error names every
line the answer came from (an answer made of several rows is named at each), the instance counts as
failed (status partial, exit 3, as a model's failed call), and nobody is told it will be re-asked
with new samples (a file cannot be): the fixed file, under --force, completes the run. (Two answers
to one task are refused before the run: tests/systems/test_duplicate_and_foreign_answers.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ideaharness.data.tomato import load_tomato_chem
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli
from tests.ideabench.conftest import ideabench_responder


def _answer(instance_id: str, words: list[str]) -> str:
    ideas = [{"idea": f"We hypothesise that doping the gel with salt {w} raises its thermopower"}
             for w in words]
    return json.dumps({"instance_id": instance_id, "ideas": ideas})


def _idea_rows(instance_id: str, words: list[str]) -> list[str]:
    """One row per idea (IdeaBench reads every row of an instance as one of its ideas)."""
    return [json.dumps({"instance_id": instance_id,
                        "text": f"We hypothesise that doping the gel with salt {w} raises its thermopower"})
            for w in words]


def test_an_answer_of_too_many_rows_is_a_failed_instance_named_at_each_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    first, second = load_tomato_chem()[:2]
    data = tmp_path / "inst.jsonl"
    data.write_text("".join(i.model_dump_json() + "\n" for i in (first, second)))
    ideas = tmp_path / "ideas.jsonl"
    ideas.write_text("\n".join([*_idea_rows(first.id, ["one", "two"]), _answer(second.id, ["a", "b", "c"]),
                                *_idea_rows(first.id, ["four", "five"])]) + "\n")
    respond = ideabench_responder()
    with OpenAICompatServer(lambda body: respond(body["messages"])) as judge:
        out = tmp_path / "run"
        args = ["run", "ideabench", "--data", str(data), "--ideas", str(ideas), "--judge", "openai/j",
                "--rewriter", "openai/j", "--judge-base-url", judge.base_url,
                "--no-progress", "--out", str(out)]
        code, stdout, err = run_cli(args, capsys)
        assert code == 3, stdout + err
        results = json.loads((out / "results.json").read_text())
        assert results["status"] == "partial"
        failed = [(u["step"], u["instance_id"]) for u in results["failed_units"]]
        assert failed == [("generate/low", first.id)]
        assert "ideas.jsonl lines 1, 2, 4, 5" in results["failed_units"][0]["error"]
        assert "expected 3 ideas, got 4" in results["failed_units"][0]["error"]
        assert results["unparsed_units"][0]["source"] == "file"
        assert "new samples" not in stdout + err and "cannot be re-asked" in stdout + err
        last = (stdout + err).strip().splitlines()[-1]  # the closing line says the same, not "retry them"
        assert "retry them" not in last and "fix the file" in last, last
        ideas.write_text("\n".join([_answer(first.id, ["one", "two", "three"]),
                                    _answer(second.id, ["a", "b", "c"])]) + "\n")  # the file, fixed
        code, stdout, err = run_cli([*args, "--force"], capsys)  # a changed input: a new run
    assert code == 0, stdout + err
    results = json.loads((out / "results.json").read_text())
    assert results["status"] == "complete" and results["failed_units"] == results["unparsed_units"] == []
