"""The ``scripted/`` provider: a dry run without a model, from the CLI and from a --config file.

``scripted/echo`` repeats the last message; ``scripted/<file>`` answers from reply rules
(``{"match": regex, "reply": ...}`` or a bare string). Rules match on the prompt, so replies do
not depend on the order requests arrive in; the file's hash is part of the cache key.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ideaharness.cli import main
from ideaharness.errors import UserError
from ideaharness.llm import get_llm
from ideaharness.llm.errors import LLMError
from ideaharness.llm.providers import provider_names, valid_model_forms
from ideaharness.llm.scripted import load_reply_rules

CRITIQUE = json.dumps({"match": "demanding scientific reviewer",
                       "reply": 'Fine.\n```json\n{"originality": %d, "feasibility": 5, "clarity": 7}\n```'})
FLUENCY = '{"match": "Good Scientific Ideas", "reply": "A"}'
IDEA = '"Measure how sparse station data improves precipitation forecasts with a learned interpolator."'
KEYWORDS = ["meteorology", "stars", "protein folding", "graph theory", "batteries"]


def write_rules(path: Path, originality: int) -> Path:
    path.write_text("# critique, fluency, then the idea for any other prompt\n"
                    + "\n".join([CRITIQUE % originality, FLUENCY, IDEA]) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def chat(model: str, text: str, **kw: object) -> str:
    llm = get_llm(model, max_retries=0, **kw)  # type: ignore[arg-type]
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": text}]
    return asyncio.run(llm.chat(messages)).text


def test_registered_and_named_in_the_valid_forms() -> None:
    assert "scripted" in provider_names()
    assert "scripted/echo" in valid_model_forms()


def test_echo_and_first_matching_rule(workdir: Path) -> None:
    assert chat("scripted/echo", "repeat me", use_cache=False) == "repeat me"
    (workdir / "r.jsonl").write_text('{"match": "^sys.*apple", "reply": "fruit"}\n"anything else"\n')
    assert chat("scripted/r.jsonl", "an apple", use_cache=False) == "fruit"  # system and user joined
    assert chat("scripted/r.jsonl", "a stone", use_cache=False) == "anything else"
    (workdir / "r.json").write_text(json.dumps([{"match": "stone", "reply": "rock"}]))
    assert chat("scripted/r.json", "a stone", use_cache=False) == "rock"


def test_a_prompt_no_rule_matches_fails_that_call(workdir: Path) -> None:
    (workdir / "r.jsonl").write_text('{"match": "apple", "reply": "fruit"}\n')
    with pytest.raises(LLMError, match="no rule matches the prompt starting 'a stone'"):
        chat("scripted/r.jsonl", "a stone", use_cache=False)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('"ok"\n{"reply": 3}\n', r"r.jsonl, line 2: a rule is a JSON string or"),
        ('"ok"\nnot json\n', r"r.jsonl, line 2: not JSON"),
        ('{"reply": "x", "match": "("}\n', r"line 1: 'match' '\(' is no regular expression"),
        ('{"reply": "x", "when": "y"}\n', r"line 1: a rule is"),
        ("# only a comment\n\n", r"no reply rules"),
    ],
)
def test_malformed_rules_are_one_line_naming_file_and_line(workdir: Path, content: str, message: str) -> None:
    (workdir / "r.jsonl").write_text(content)
    with pytest.raises(UserError, match=message):
        load_reply_rules("r.jsonl")


def test_missing_file_names_it(workdir: Path) -> None:
    with pytest.raises(UserError, match="scripted/nope.jsonl: no such file of replies"):
        get_llm("scripted/nope.jsonl")


def test_an_edited_file_is_not_answered_from_the_cache(workdir: Path) -> None:
    (workdir / "r.jsonl").write_text('"first"\n')
    assert chat("scripted/r.jsonl", "q") == "first"
    (workdir / "r.jsonl").write_text('"second"\n')
    assert chat("scripted/r.jsonl", "q") == "second"


def _metrics(run: Path) -> dict[str, float | None]:
    results = json.loads((run / "results.json").read_text())
    return {m["metric"]: m["value"] for m in results["metrics"] if not m.get("group")}


def test_cli_dry_run_from_flags(workdir: Path) -> None:
    write_rules(workdir / "replies.jsonl", originality=6)
    keywords = [a for k in KEYWORDS for a in ("--keyword", k)]
    main(["run", "liveideabench", *keywords, "--generator", "scripted/echo",
          "--judge", "scripted/replies.jsonl", "--out", "run", "--no-progress"])
    values = _metrics(workdir / "run")
    assert values["liveideabench.originality"] == 6.0 and values["liveideabench.clarity"] == 7.0
    assert values["liveideabench.feasibility"] == 5.0
    ideas = [json.loads(line) for line in (workdir / "run/records/idea.jsonl").read_text().splitlines()]
    assert len(ideas) == 2 * len(KEYWORDS)  # echo: each idea is its own prompt, naming its keyword
    for record in ideas:
        assert f"<keyword>\n{record['instance_id']}\n</keyword>" in record["data"]["judgment"]["raw_text"]


def test_cli_dry_run_from_a_config_file(workdir: Path) -> None:
    write_rules(workdir / "replies.jsonl", originality=8)
    (workdir / "dry.yaml").write_text(
        "generator: scripted/echo\njudges: [scripted/replies.jsonl]\n"
        "keywords: [" + ", ".join(KEYWORDS) + "]\n"
    )
    main(["run", "liveideabench", "--config", "dry.yaml", "--out", "run", "--no-progress"])
    config = json.loads((workdir / "run/config.json").read_text())
    assert config["judges"] == ["scripted/replies.jsonl"] and config["generator"] == "scripted/echo"
    assert _metrics(workdir / "run")["liveideabench.originality"] == 8.0
