"""LiveIdeaBench with a system as the generator (issue 20): ``--ideas FILE`` (the idea contract), a
``cmd:`` agent giving the same answers, missing, degenerate and extra instances, no v2 fallback and
no judge left out for a system, the contract's rules against the reply parser's, and ``tasks
export`` showing what the prompt was rendered from. No generating model: the judge is scripted."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import ideaharness
from ideaharness.benchmarks.liveideabench.contract import CONTRACT
from ideaharness.benchmarks.liveideabench.parsers import parse_idea
from ideaharness.cli import main
from ideaharness.errors import ParseError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.prompts import render
from ideaharness.seeding import derive_seed
from ideaharness.systems import GenerationTask
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.liveideabench.registry_fixtures import reply

KEYWORDS = ["meteorology", "stars", "volcano", "enzyme", "glacier"]  # 5: flexibility has a value
JUDGE = "scripted/judge-a"


def idea(keyword: str, k: int) -> str:
    # "Idea on <keyword>:" is what the scripted critic scores by (tests/liveideabench/registry_fixtures.py)
    return (f"Idea on {keyword}: in variant {k}, measure how {keyword} data improves forecasts using "
            f"{('sparse', 'dense')[k % 2]} sensor networks.")


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def answers(tmp_path: Path, keywords: list[str] = KEYWORDS) -> Path:
    return write_jsonl(tmp_path / "ideas.jsonl",
                       [{"instance_id": kw, "idea": idea(kw, k)} for kw in keywords for k in range(2)])


def run(out: Path, keywords: list[str] = KEYWORDS, **kwargs: Any) -> dict[str, Any]:
    judge = ScriptedModel(lambda messages: reply({"messages": messages}), model=JUDGE)
    return ideaharness.run("liveideabench", judge=[JUDGE], keyword=keywords, out=out, progress=False,
                           models={f"judge:{JUDGE}": judge}, bootstrap_resamples=50, **kwargs)


def scores(out: Path) -> list[tuple[Any, ...]]:
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines() if line.strip()]
    return sorted((r["metric"], r["group"], r["instance_id"], r["value"], r.get("reason")) for r in rows)


def records(out: Path, step: str) -> list[dict[str, Any]]:
    path = out / "records" / f"{step}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


AGENT = '''
import json, sys
task = json.load(sys.stdin)
rows = [json.loads(line) for line in open(sys.argv[1])]
mine = [r for r in rows if r["instance_id"] == task["instance_id"]]
assert set(task["inputs"]) == {"keyword", "protocol"}
print(json.dumps({"instance_id": task["instance_id"], "idea": mine[task["sample_index"]]["idea"],
                  "sample_index": task["sample_index"]}))
'''


def test_ideas_file_runs_and_scores_and_a_cmd_agent_scores_the_same(tmp_path: Path) -> None:
    file = answers(tmp_path)
    results = run(tmp_path / "file", ideas=str(file))
    assert results["status"] == "complete", (results.get("failed_units"), results.get("not_computed"))
    c = results["counts"]
    assert c["ideas"] == 10 and c["idea_parse_failures"] == 0 and c["critiques"] == 10
    assert results["scores"]["flexibility"]["value"] is not None
    assert results["generator"] == "ideas"  # the system's name (the file's stem)
    assert results["judge_exclusion"]["rule"] == "system" and results["judges"] == [JUDGE]
    source = results["idea_sources"][0]
    assert source["kind"] == "ideas-file" and source["answers"]["extra_instances"] == []
    recs = records(tmp_path / "file", "idea")
    assert len(recs) == 10 and all(r["data"]["system_task"] for r in recs)
    first = next(r for r in recs if r["instance_id"] == "stars" and r["key"] == "1")
    assert first["data"]["judgment"]["parsed"] == parse_idea(idea("stars", 1))

    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    via_cmd = run(tmp_path / "cmd", generator=f"cmd:{sys.executable} {agent} {file}")
    assert via_cmd["status"] == "complete", via_cmd.get("failed_units")
    assert via_cmd["generator"] == "agent.py" and via_cmd["idea_sources"][0]["kind"] == "command"
    assert scores(tmp_path / "cmd") == scores(tmp_path / "file")
    assert any(value is not None for _, _, _, value, _ in scores(tmp_path / "file"))


def test_a_missing_idea_is_a_failed_unit_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    rows = [{"instance_id": kw, "idea": idea(kw, k)} for kw in KEYWORDS for k in range(2)
            if (kw, k) != ("volcano", 1)]
    file = write_jsonl(tmp_path / "ideas.jsonl", rows)
    out = tmp_path / "run"
    with OpenAICompatServer(reply) as server:
        with pytest.raises(SystemExit) as exc:
            main(["run", "liveideabench", *[a for kw in KEYWORDS for a in ("--keyword", kw)],
                  "--ideas", str(file), "--judge", "openai/judge", "--judge-base-url", server.base_url,
                  "--no-progress", "--bootstrap-resamples", "50", "--out", str(out)])
    assert exc.value.code == 3, capsys.readouterr().err
    results = json.loads((out / "results.json").read_text())
    failed = [(u["step"], u["instance_id"], u["key"]) for u in results["failed_units"]]
    assert failed == [("idea", "volcano", "1")]
    assert "volcano" in results["failed_units"][0]["error"]
    assert results["idea_sources"][0]["answers"]["missing"] == ["volcano"]
    assert results["counts"]["ideas"] == 9
    # the keyword's other idea is judged; the missing one has no critique and no fluency pair
    assert not [r for r in records(out, "critique") if r["instance_id"] == "volcano" and
                r["key"].startswith("1/")]
    assert not [r for r in records(out, "fluency") if r["instance_id"] == "volcano"]


def test_a_degenerate_idea_is_an_unparsed_unit_naming_file_line_and_field_never_a_fallback(
        tmp_path: Path) -> None:
    rows = [{"instance_id": kw, "idea": idea(kw, k)} for kw in KEYWORDS for k in range(2)]
    rows[3]["idea"] = "measure how stars data improves forecasts using sparse"  # line 4: cut off
    file = write_jsonl(tmp_path / "ideas.jsonl", rows)
    results = run(tmp_path / "run", ideas=str(file))
    unparsed = [(u["step"], u["instance_id"], u["key"], u["error"]) for u in results["unparsed_units"]]
    assert [u[:3] for u in unparsed] == [("idea", "stars", "1")]
    error = unparsed[0][3]
    assert f"{file.name} line 4" in error and "field 'idea'" in error and "not complete prose" in error, error
    assert results["counts"]["idea_parse_failures"] == 1 and results["counts"]["fallback_used"] == 0
    assert records(tmp_path / "run", "idea_fallback") == []  # a system is never sent the v2 fallback


def test_an_extra_instance_is_reported_and_ignored(tmp_path: Path) -> None:
    file = answers(tmp_path, [*KEYWORDS, "not a keyword of the run"])
    results = run(tmp_path / "run", ideas=str(file))
    assert results["status"] == "complete", results.get("failed_units")
    assert results["idea_sources"][0]["answers"]["extra_instances"] == ["not a keyword of the run"]
    assert not [s for s in scores(tmp_path / "run") if s[2] == "not a keyword of the run"]


def task(k: int = 0) -> GenerationTask:
    return GenerationTask("liveideabench", "idea", "stars", key=str(k), sample_index=k,
                          inputs={"keyword": "stars", "protocol": "v2"})


@pytest.mark.parametrize("text", [
    "",
    "Stars shine.",  # under IDEA_MIN_WORDS
    "I'm sorry, but I cannot propose a research idea about stars today.",
    "measure how stars data improves forecasts.",  # opens mid-sentence
    "Measure how stellar spectra improve distance estimates using sparse",  # cut off
    "\u200b ... !! ...",
])
def test_the_contract_refuses_what_the_reply_parser_refuses(text: str) -> None:
    with pytest.raises(ParseError):
        parse_idea(text)
    with pytest.raises(ParseError, match=r"^answer of liveideabench/idea/stars/0, field 'idea': "):
        CONTRACT.parse(json.dumps({"instance_id": "stars", "idea": text}), task())


def test_the_contract_accepts_what_the_reply_parser_accepts_with_the_same_value() -> None:
    text = "  Measure how stellar\nspectra improve distance\testimates using sparse surveys.  "
    assert CONTRACT.parse(json.dumps({"instance_id": "stars", "idea": text}), task()) == parse_idea(text)
    with pytest.raises(ParseError, match="field 'sample_index'"):
        CONTRACT.parse(json.dumps({"instance_id": "stars", "idea": text, "sample_index": 1}), task(0))
    with pytest.raises(ParseError, match="field 'instance_id'"):
        CONTRACT.parse(json.dumps({"instance_id": "volcano", "idea": text}), task())
    # a converted row: its idea, else its text, else its fields composed
    assert CONTRACT.from_row({"instance_id": "stars", "text": text, "title": "T"}, task()) == {
        "idea": text.strip(), "title": "T"}
    assert CONTRACT.from_row({"instance_id": "stars", "hypothesis": "Stars vary.", "method": "Watch them."},
                             task()) == {"idea": "Stars vary.\n\nWatch them."}


def _export(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> list[dict[str, Any]]:
    out = tmp_path / "tasks.jsonl"
    with pytest.raises(SystemExit) as exc:
        main(["tasks", "export", "liveideabench", "--keyword", "stars", "--keyword", "volcano", *flags,
              "--out", str(out)])
        raise SystemExit(0)
    assert exc.value.code in (0, None), capsys.readouterr().err
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.parametrize("flags", [(), ("--protocol", "v1", "--seed", "7", "--ideas-per-keyword", "3"),
                                   ("--parity",)])
def test_exported_inputs_are_what_the_prompt_was_rendered_from(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...]) -> None:
    tasks = _export(tmp_path, capsys, *flags)
    protocol = "v1" if "v1" in flags else "v2"
    seed = 7 if "7" in flags else 0
    n = 3 if "3" in flags else 2
    assert [(t["instance_id"], t["key"]) for t in tasks] == [
        (kw, str(k)) for kw in ("stars", "volcano") for k in range(n)]
    for t in tasks:
        k = int(t["key"])
        assert t["step"] == "idea" and t["sample_index"] == k and t["contract"] == CONTRACT.schema_id
        assert t["inputs"] == {"keyword": t["instance_id"], "protocol": protocol}
        assert t["seed"] == derive_seed(seed, t["instance_id"], k) % 2**31
        assert t["prompt"] == list(render("liveideabench_idea", keyword=t["inputs"]["keyword"],
                                          protocol=protocol, fallback=False, parity="--parity" in flags))
    # the model path was rendered from the same inputs, and seeded the same: its recorded prompts are
    # the tasks' prompts, its calls' seeds the tasks' seeds
    gen = SeedRecording()
    judge = ScriptedModel(lambda messages: reply({"messages": messages}), model=JUDGE)
    config: dict[str, Any] = {"protocol": protocol, "seed": seed, "ideas_per_keyword": n,
                              "parity": "--parity" in flags}
    ideaharness.run("liveideabench", generator="scripted/gen", judge=[JUDGE], keyword=["stars", "volcano"],
                    out=tmp_path / "model", progress=False, bootstrap_resamples=50,
                    models={"generator": gen, f"judge:{JUDGE}": judge}, **config)
    prompts = [json.loads(line) for line in (tmp_path / "model" / "prompts.jsonl").read_text().splitlines()]
    assert all(t["prompt"] in [p.get("messages") for p in prompts] for t in tasks)
    assert sorted(gen.seeds) == sorted((t["inputs"]["keyword"], t["seed"]) for t in tasks)


def _keyword(messages: list[dict[str, str]]) -> str:
    found = re.search(r"<keyword>\n(.*?)\n</keyword>", messages[-1]["content"], re.S)
    if found:
        return found.group(1)
    return next(kw for kw in ("stars", "volcano") if kw in messages[-1]["content"])  # --parity: no tags


class SeedRecording(ScriptedModel):
    """A scripted generator that keeps the keyword and seed of every call."""

    def __init__(self) -> None:
        super().__init__(lambda messages: idea(_keyword(messages), 0), model="scripted/gen")
        self.seeds: list[tuple[str, int | None]] = []

    async def chat(self, messages: Any, **sampling: Any) -> Any:
        self.seeds.append((_keyword(messages), sampling.get("seed")))
        return await super().chat(messages, **sampling)
