"""Resume keyed on what produced a judgment, through the CLI: a benchmark registered from a
temporary package (its own ``prompts/`` folder, a module-level idea parser, a lambda grade
parser), a real loopback OpenAI-compatible server and the real response cache.

A one-word template edit refuses the resume (exit 1, one line naming the template);
``--rejudge-changed`` re-judges only the affected units (and the units whose prompts show them)
and says how many; a parser change is refused naming the step and parser, or re-judged from the
cached replies; ``--force`` starts anew; a run recorded before ``produced_by`` resumes unchanged;
``--batch`` and ``--runner ray`` keep the check.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ideaharness.cli.app import run_app
from ideaharness.runner import registry
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli

PACKAGE = "provbench_pkg"
IDEA_TEMPLATE = "### system\n{{ DATA_NOTICE }}\n### user\nPropose one idea about {{ word | data('word') }}\n"
GRADE_TEMPLATE = "### system\n{{ DATA_NOTICE }}\n### user\nGrade this idea from 1 to 9: {{ idea | data('idea') }}\n"  # noqa: E501
SOURCE = '''
from pydantic import BaseModel, Field

from ideaharness.prompts import render
from ideaharness.runner import Benchmark, BenchmarkConfig, register_benchmark


class ProvConfig(BenchmarkConfig):
    generator: str = Field("openai/gen", description="Generator.")
    judge: str = Field("openai/judge", description="Judge.")
    items: int = Field(3, ge=1, description="Items.")


class Item(BaseModel):
    id: str
    word: str


def parse_idea(text):
    return text.strip()


def _grade_core(text):
    return int(text.strip())


@register_benchmark("provbench")
class ProvBench(Benchmark):
    config_class = ProvConfig

    def load(self):
        return [Item(id=f"w{i}", word=f"word{i}") for i in range(self.config.items)]

    async def execute(self, ctx, items):
        gen, judge = ctx.model("generator"), ctx.model("judge")

        async def idea(item):
            await ctx.steps.judge_step("idea", item.id, "", gen, render("provbench_idea", word=item.word),
                                       parse_idea, max_tokens=64)

        async def grade(item):
            record = ctx.store.get("idea", item.id)
            if record is None or not record["judgment"]["parse_ok"]:
                return
            await ctx.steps.judge_step("grade", item.id, "", judge,
                                       render("provbench_grade", idea=record["judgment"]["parsed"]),
                                       lambda text: _grade_core(text), max_tokens=8)

        await ctx.steps.run_phases(items, [("ideas", idea), ("grades", grade)])

    def aggregate(self, ctx, items):
        grades = [(ctx.store.get("grade", i.id) or {}).get("judgment", {}).get("parsed") for i in items]
        return {"grades": grades}
'''


def reply(body: dict[str, Any]) -> str:
    """Ideas echo their prompt (so an edited idea template gives other ideas); grades are the
    prompt's length mod 9, plus 1."""
    content = body["messages"][-1]["content"]
    if content.startswith("Grade"):
        return str(len(content) % 9 + 1)
    return "an idea on: " + " ".join(re.sub(r"</?word>", " ", content).split())


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The benchmark's package in a temporary folder on sys.path (imported once: registered)."""
    site = tmp_path_factory.mktemp("site")
    (site / PACKAGE / "prompts").mkdir(parents=True)
    (site / PACKAGE / "__init__.py").write_text(SOURCE)
    sys.path.insert(0, str(site))
    importlib.import_module(PACKAGE)
    yield site / PACKAGE
    registry._BENCHMARKS.pop("provbench", None)
    run_app.registered_commands[:] = [c for c in run_app.registered_commands if c.name != "provbench"]
    sys.modules.pop(PACKAGE, None)
    sys.path.remove(str(site))


@pytest.fixture
def bench(package: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The package with its templates as written (each test edits its own copy of the words)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    (package / "prompts" / "provbench_idea.j2").write_text(IDEA_TEMPLATE)
    (package / "prompts" / "provbench_grade.j2").write_text(GRADE_TEMPLATE)
    return package


def changed_in_package(monkeypatch: pytest.MonkeyPatch, function: Any) -> None:
    """``function`` in the toy package under its own name, as if its code there had been edited."""
    function.__module__, function.__qualname__ = PACKAGE, function.__name__
    monkeypatch.setattr(sys.modules[PACKAGE], function.__name__, function)


def asked(server: OpenAICompatServer, since: int = 0) -> dict[str, int]:
    """Chat requests since request ``since``, by step (idea or grade)."""
    out = {"idea": 0, "grade": 0}
    for request in server.requests[since:]:
        out["grade" if request.body["messages"][-1]["content"].startswith("Grade") else "idea"] += 1
    return out


def records(out: Path, step: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "records" / f"{step}.jsonl").read_text().splitlines()]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


@pytest.fixture
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer(reply) as s:
        yield s


def flags(server: OpenAICompatServer, out: Path, *more: str) -> list[str]:
    return ["run", "provbench", "--base-url", server.base_url, "--no-progress", "--out", str(out), *more]


def test_a_template_edit_refuses_and_rejudge_changed_rejudges_only_the_affected_steps(
    bench: Path, server: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code, _, err = run_cli(flags(server, out), capsys)
    assert code == 0, err
    assert asked(server) == {"idea": 3, "grade": 3}
    config = json.loads((out / "config.json").read_text())
    templates = config["produced_by"]["templates"]
    assert {"provbench_idea", "provbench_grade", "reference_rewrite"} <= set(templates)
    [first, *_] = records(out, "grade")
    produced = first["data"]["produced_by"]
    assert produced["template"] == "provbench_grade" and produced["template_sha256"] == templates["provbench_grade"]  # noqa: E501
    assert produced["parser"].startswith(f"{PACKAGE}.ProvBench.execute.<locals>.grade.<locals>.<lambda>")
    assert len(produced["parser_version"]) == 16 and "parser_by_name" not in produced
    assert records(out, "idea")[0]["data"]["produced_by"]["parser_by_name"] is True
    before = (out / "results.json").read_text()

    # one word of the grade template changed: refused, nothing asked, nothing rewritten
    edit(bench / "prompts" / "provbench_grade.j2", "this idea", "the idea")
    n = len(server.requests)
    code, _, err = run_cli(flags(server, out), capsys)
    assert code == 1
    [line] = [x for x in err.splitlines() if x.strip()]
    assert "prompt templates changed" in line and "provbench_grade" in line and "provbench_idea" not in line
    assert "--rejudge-changed" in line and "--force" in line
    assert len(server.requests) == n and (out / "results.json").read_text() == before

    # --rejudge-changed: only the three grades are asked again; the ideas are reused
    code, stdout, err = run_cli(flags(server, out, "--rejudge-changed"), capsys)
    assert code == 0, err
    assert asked(server, n) == {"idea": 0, "grade": 3}
    results = json.loads((out / "results.json").read_text())
    assert results["rejudged"]["units"] == 3 and results["rejudged"]["steps"] == {"grade": 3}
    assert results["rejudged"]["templates"] == ["provbench_grade"]
    assert results["rejudged"]["line"] in results["notes"] and results["rejudged"]["line"] in stdout
    assert "3 unit(s) re-judged" in stdout
    grades = records(out, "grade")
    assert len(grades) == 3  # one line per unit: the replaced lines are dropped
    assert all(g["data"]["rejudged_from"]["template_sha256"] == templates["provbench_grade"] for g in grades)
    assert all(g["data"]["produced_by"]["template_sha256"] != templates["provbench_grade"] for g in grades)
    assert results["settings"]["template_sha256"]["provbench_grade"] != templates["provbench_grade"]

    # the same command again: nothing is asked, nothing re-judged
    n = len(server.requests)
    code, stdout, err = run_cli(flags(server, out), capsys)
    assert code == 0, err
    assert len(server.requests) == n and "re-judged" not in stdout
    assert "rejudged" not in json.loads((out / "results.json").read_text())


def test_an_edited_generation_template_rejudges_the_judgments_that_show_its_output(
    bench: Path, server: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert run_cli(flags(server, out), capsys)[0] == 0
    ideas = {r["instance_id"]: r["data"]["judgment"]["parsed"] for r in records(out, "idea")}
    edit(bench / "prompts" / "provbench_idea.j2", "one idea", "a single idea")
    n = len(server.requests)
    code, stdout, err = run_cli(flags(server, out, "--rejudge-changed"), capsys)
    assert code == 0, err
    # the ideas are new (their template changed), so the grades showing them are asked again too
    assert asked(server, n) == {"idea": 3, "grade": 3}
    results = json.loads((out / "results.json").read_text())
    assert results["rejudged"]["steps"] == {"idea": 3, "grade": 3}
    assert "6 unit(s) re-judged" in stdout
    assert {r["instance_id"]: r["data"]["judgment"]["parsed"] for r in records(out, "idea")} != ideas
    assert json.loads((out / "config.json").read_text())["produced_by"]["rejudged"] is True


def test_a_changed_parser_is_refused_by_name_or_rejudged_from_the_cached_replies(
    bench: Path, server: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "run"
    assert run_cli(flags(server, out), capsys)[0] == 0

    def parse_idea(text: str) -> str:  # the same name, other code
        return text.strip().upper()

    changed_in_package(monkeypatch, parse_idea)
    n = len(server.requests)
    code, _, err = run_cli(flags(server, out), capsys)
    assert code == 1 and len(server.requests) == n
    [line] = [x for x in err.splitlines() if x.strip()]
    assert f"reply parsers changed (idea: {PACKAGE}.parse_idea)" in line and "--rejudge-changed" in line

    code, stdout, err = run_cli(flags(server, out, "--rejudge-changed"), capsys)
    assert code == 0, err
    # the ideas are re-parsed from the cached replies (same prompts: no request); the grades
    # now show other (upper-case) ideas, so they are asked again
    assert asked(server, n) == {"idea": 0, "grade": 3}
    assert all(r["data"]["judgment"]["parsed"].isupper() for r in records(out, "idea"))
    assert json.loads((out / "results.json").read_text())["rejudged"]["steps"] == {"grade": 3, "idea": 3}


def test_a_changed_lambda_parser_is_refused_when_its_unit_is_met(
    bench: Path, server: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "run"
    assert run_cli(flags(server, out), capsys)[0] == 0

    def _grade_core(text: str) -> int:
        return int(text.strip()) * 10

    changed_in_package(monkeypatch, _grade_core)
    n = len(server.requests)
    code, _, err = run_cli(flags(server, out), capsys)
    assert code == 1 and len(server.requests) == n
    assert "grade w" in err and "parser provbench_pkg.ProvBench.execute.<locals>.grade.<locals>.<lambda> changed" in err  # noqa: E501
    assert "--rejudge-changed" in err

    code, stdout, err = run_cli(flags(server, out, "--rejudge-changed"), capsys)
    assert code == 0, err
    assert asked(server, n) == {"idea": 0, "grade": 0}  # re-parsed from the cache
    assert all(r["data"]["judgment"]["parsed"] % 10 == 0 for r in records(out, "grade"))
    assert "3 unit(s) re-judged" in stdout


def test_force_starts_a_new_run_when_a_template_changed(
    bench: Path, server: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert run_cli(flags(server, out), capsys)[0] == 0
    edit(bench / "prompts" / "provbench_grade.j2", "this idea", "the idea")
    code, _, err = run_cli(flags(server, out, "--force"), capsys)
    assert code == 0, err
    [old] = list((out / "superseded").iterdir())
    assert (old / "records" / "grade.jsonl").is_file()
    assert all("rejudged_from" not in r["data"] for r in records(out, "grade"))


def test_a_run_recorded_before_produced_by_resumes_unchanged(
    bench: Path, server: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert run_cli(flags(server, out), capsys)[0] == 0
    # make it a run of the version before: no produced_by in config.json or in any record
    config = json.loads((out / "config.json").read_text())
    del config["produced_by"]
    (out / "config.json").write_text(json.dumps(config))
    for path in (out / "records").glob("*.jsonl"):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            del row["data"]["produced_by"]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    edit(bench / "prompts" / "provbench_grade.j2", "this idea", "the idea")
    n = len(server.requests)
    code, _, err = run_cli(flags(server, out), capsys)
    assert code == 0, err
    assert len(server.requests) == n  # every unit reused, as before
    assert all("produced_by" not in r["data"] for r in records(out, "grade"))
    # from now on its templates are recorded: a further edit is refused
    assert "provbench_grade" in json.loads((out / "config.json").read_text())["produced_by"]["templates"]
    edit(bench / "prompts" / "provbench_grade.j2", "the idea", "that idea")
    code, _, err = run_cli(flags(server, out), capsys)
    assert code == 1 and "provbench_grade" in err


def test_batch_mode_refuses_and_rejudges_through_the_batch_api(
    bench: Path, server: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")
    out = tmp_path / "run"
    batch = ("--batch", "--batch-poll", "0.01")
    code, _, err = run_cli(flags(server, out, *batch), capsys)
    assert code == 0, err
    assert len(server.batches) == 2  # one per phase
    edit(bench / "prompts" / "provbench_grade.j2", "this idea", "the idea")
    code, _, err = run_cli(flags(server, out, *batch), capsys)
    assert code == 1 and "provbench_grade" in err and len(server.batches) == 2
    code, stdout, err = run_cli(flags(server, out, *batch, "--rejudge-changed"), capsys)
    assert code == 0, err
    results = json.loads((out / "results.json").read_text())
    assert results["rejudged"]["steps"] == {"grade": 3} and "3 unit(s) re-judged" in stdout
    assert results["batch"]["submitted"] == 3  # the three grades, through one batch
    assert len(server.batches) == 3


@pytest.mark.ray
def test_ray_workers_leave_changed_units_to_the_driver(
    bench: Path, server: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ray = pytest.importorskip("ray")
    from ideaharness.runs.ray_runner import ray_init

    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")
    ray_init(None, num_cpus=2)  # its workers' PYTHONPATH holds the package's folder
    try:
        out = tmp_path / "run"
        ray_flags = ("--runner", "ray")
        code, _, err = run_cli(flags(server, out, *ray_flags), capsys)
        assert code == 0, err
        edit(bench / "prompts" / "provbench_grade.j2", "this idea", "the idea")
        code, _, err = run_cli(flags(server, out, *ray_flags), capsys)
        assert code == 1 and "provbench_grade" in err
        n = len(server.requests)
        code, stdout, err = run_cli(flags(server, out, *ray_flags, "--rejudge-changed"), capsys)
        assert code == 0, err
        results = json.loads((out / "results.json").read_text())
        assert results["status"] == "complete" and not results["failed_units"]
        assert results["rejudged"]["steps"] == {"grade": 3} and "3 unit(s) re-judged" in stdout
        assert asked(server, n) == {"idea": 0, "grade": 3}
    finally:
        ray.shutdown()
