"""Issue 33, items 1, 2 and 8: an ``--ideas`` file with two answers to one task, or written for another
benchmark, is refused by the shared ideas check before the run folder is made (one line naming the
file and the lines or the benchmark it fits, exit 1, nothing written), on every benchmark that takes
``--ideas``; and a run whose failures are answers missing from the file advises fixing the file, not
running the same command again (the same file lacks them again)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ideaharness.errors import DataError
from ideaharness.runner.registry import discover
from ideaharness.systems import contracts, get_contract
from ideaharness.systems.checks import check_answer_rows
from ideaharness.systems.converters import read_idea_rows
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli
from tests.runner.registry_support import fixture_for
from tests.systems.conftest import (
    MIN_GENERATING,
    SYSTEM,
    generating_benchmarks,
    judge_reply,
    system_data_args,
)

TEXT = ("We hypothesise that doping the hydrogel with lithium chloride raises its thermopower, and test it "
        "by measuring the Seebeck coefficient of doped and plain gels at three temperatures.")

ROWS: dict[str, dict[str, Any]] = {
    "aiideabench": {"motivation": TEXT, "experiment_plan": "1. Dope the gel.\n2. Measure.\n3. Compare."},
    "hindsight": {"idea": TEXT, "key_phrases": ["doped hydrogel"]},
    "ideabench": {"ideas": [{"idea": TEXT}, {"idea": TEXT + " Twice."}, {"idea": TEXT + " Thrice."}]},
    "ligbench": {"problem": TEXT, "method": "Dope the gel with salt.", "experiment_design": "Measure it."},
    "liveideabench": {"idea": TEXT},
    "mlrbench": {"stage": "idea", "text": TEXT},
    "researchbench": {"hypothesis": TEXT},
}
"""One answer row in each benchmark's own contract fields (``--ideas-format jsonl``)."""

FOREIGN = {name: "researchbench" if name == "aiideabench" else "aiideabench" for name in ROWS}
"""The benchmark whose answers each benchmark is given in the foreign-file case."""


def test_every_contract_has_an_answer_row_here() -> None:
    discover()
    assert len(contracts()) >= MIN_GENERATING
    assert set(contracts()) == set(ROWS), "a benchmark's contract has no answer row in ROWS"
    assert set(generating_benchmarks()) == set(ROWS)


def _row(name: str, instance_id: str, **more: Any) -> str:
    return json.dumps({"instance_id": instance_id, **ROWS[name], **more})


CASES = {
    "repeated": lambda name: [_row(name, "i-1"), _row(name, "i-2"), _row(name, "i-1")],
    "conflicting": lambda name: [_row(name, "i-1", sample_index=0, title="First run"), _row(name, "i-2"),
                                 _row(name, "i-1", sample_index=0, title="Second run")],
}


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    yield tmp_path


def _refused(name: str, ideas: Path, root: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``name`` on ``ideas``; assert exit 1, one line, no run folder; return the line."""
    out = root / "run"
    args = ["run", name, *system_data_args(name, root), *fixture_for(name).extra_args, "--ideas", str(ideas),
            "--system", SYSTEM, "--judge", "openai/judge", "--judge-base-url", "http://127.0.0.1:9/v1",
            "--no-progress", "--out", str(out)]
    code, stdout, err = run_cli(args, capsys)
    assert code == 1, f"{name}: exit {code}: {(stdout + err)[-1500:]}"
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    assert not out.exists(), f"{name}: a refused ideas file left {sorted(p.name for p in out.iterdir())}"
    return lines[0]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("name", sorted(ROWS))
def test_two_answers_to_one_task_are_refused_naming_both_lines(
    name: str, case: str, isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ideas = isolated / "ideas.jsonl"
    ideas.write_text("".join(f"{line}\n" for line in CASES[case](name)), encoding="utf-8")
    line = _refused(name, ideas, isolated, capsys)
    assert f"{ideas}: lines 1 and 3 " in line and "field 'instance_id' 'i-1'" in line, line
    said = "give the same answer twice" if case == "repeated" else "answer the same task differently"
    assert said in line, line


@pytest.mark.parametrize("name", sorted(ROWS))
def test_another_benchmarks_answers_are_refused_naming_it(
    name: str, isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = FOREIGN[name]
    ideas = isolated / "answers.jsonl"
    ideas.write_text("".join(f"{_row(other, f'i-{k}')}\n" for k in range(3)), encoding="utf-8")
    line = _refused(name, ideas, isolated, capsys)
    fields = ", ".join(sorted(ROWS[other]))
    assert f"{ideas}: this file looks like answers for {other} (fields {fields}; line 1" in line, line
    assert f"not {name}" in line, line


def test_researchbench_refuses_ai_idea_bench_output_files(isolated: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's example through AI Idea Bench's own output shape (``index``/``model_result``,
    read by the aiscientist converter): never turned into hypotheses."""
    ideas = isolated / "aiib_output.json"
    idea = {"Title": "An idea", "Motivation": TEXT, "Experiment": "Dope and measure."}
    ideas.write_text(json.dumps([{"index": k, "model_result": [idea, {**idea, "Title": "Another"}]}
                                 for k in range(3)]))
    line = _refused("researchbench", ideas, isolated, capsys)
    assert "looks like answers for aiideabench (its output file: fields index, model_result)" in line, line


def _check(name: str, rows: list[dict[str, Any]], tmp_path: Path) -> str | None:
    path = tmp_path / "ideas.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    try:
        check_answer_rows(read_idea_rows(path), get_contract(name), path)
    except DataError as exc:
        return str(exc)
    return None


def test_a_contract_id_of_another_benchmark_is_refused_and_the_own_is_accepted(tmp_path: Path) -> None:
    discover()
    own = get_contract("hindsight").schema_id
    other = get_contract("liveideabench").schema_id
    rows = [{"instance_id": "t", "idea": TEXT, "contract": other}]
    error = _check("hindsight", rows, tmp_path)
    said = f"looks like answers for liveideabench (line 1, field 'contract': {other!r})"
    assert error is not None and said in error, error
    assert _check("hindsight", [{**rows[0], "contract": own}], tmp_path) is None


def test_what_the_check_lets_through(tmp_path: Path) -> None:
    """Several samples of one instance by position, rows of one idea each (IdeaBench), MLR-Bench's
    idea then proposal rows, a generic ``text`` row and a file mixing own and other fields: none is
    refused (each is a documented way to answer)."""
    discover()
    assert _check("aiideabench", [{"instance_id": "a", **ROWS["aiideabench"]},
                                  {"instance_id": "a", **ROWS["aiideabench"], "title": "Second idea"}],
                  tmp_path) is None
    per_idea = [{"instance_id": "a", "text": f"{TEXT} {k}"} for k in range(3)]
    assert _check("ideabench", per_idea, tmp_path) is None
    stages = [{"instance_id": "a", "text": TEXT}, {"instance_id": "a", "text": TEXT + " More."}]
    assert _check("mlrbench", stages, tmp_path) is None
    assert _check("researchbench", [{"instance_id": "a", "text": TEXT}], tmp_path) is None
    assert _check("researchbench", [{"instance_id": "a", "hypothesis": TEXT},
                                    {"instance_id": "b", "motivation": TEXT, "experiment_plan": "x"}],
                  tmp_path) is None
    third = _check("mlrbench", [*stages, {"instance_id": "a", "text": TEXT + " Again."}], tmp_path)
    assert third is not None and "lines 1 and 3 answer the same task differently" in third \
        and "field 'stage' 'idea'" in third, third


KEYWORDS = ["meteorology", "stars", "enzymes", "glaciers", "volcanoes", "proteins"]
SAMPLES = 2
"""Ideas LiveIdeaBench asks per keyword by default."""


def test_answers_missing_from_the_file_get_the_file_advice(isolated: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Item 8: the closing line of a run whose only failures are answers the file lacks does not
    say "run the same command again to retry them" (it would find them missing again)."""
    for var in [v for v in os.environ if v.startswith("IDEA_AGENT_")]:
        os.environ.pop(var, None)
    ideas = isolated / "ideas.jsonl"
    rows = [{"instance_id": k, "sample_index": n, "idea": f"{TEXT} We study {k} in setting {n + 1} first."}
            for k in KEYWORDS[:-1] for n in range(SAMPLES)]
    ideas.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = isolated / "run"
    with OpenAICompatServer(judge_reply("liveideabench")) as judge:
        data = [a for k in KEYWORDS for a in ("--keyword", k)]
        args = ["run", "liveideabench", *data, "--ideas", str(ideas), "--system", SYSTEM, "--judge",
                "openai/judge", "--judge-base-url", judge.base_url, "--no-progress", "--out", str(out)]
        code, stdout, err = run_cli(args, capsys)
    assert code == 3, (stdout + err)[-1500:]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["unparsed_units"] == [], results["unparsed_units"]
    failed = results["failed_units"]
    assert {u["instance_id"] for u in failed} == {KEYWORDS[-1]}, failed
    assert len(failed) == SAMPLES and all(u.get("source") == "file" for u in failed), failed
    last = (stdout + err).strip().splitlines()[-1]
    assert last.startswith("error: partial run") and "retry them" not in last, last
    said = "missing from the ideas file cannot be retried by running again: add them to the file"
    assert said in last and "unit(s) failed" in last, last
