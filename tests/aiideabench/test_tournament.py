"""compare --judge: the AI Idea Bench competition between saved runs, judged incrementally.

The judge is a real OpenAI-compatible HTTP server on loopback; every model call it receives is
counted. Three systems write ideas tagged STRONG, MEDIUM and weak on the 3 fixture topics.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ideaharness.api import arun
from ideaharness.benchmarks.aiideabench import AIIdeaBenchConfig
from ideaharness.benchmarks.aiideabench.tournament import run_tournament
from ideaharness.cli import main
from ideaharness.errors import UserError
from ideaharness.llm import get_llm
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.llm.types import ChatModel
from ideaharness.metrics.tournament import Battle, bradley_terry_bootstrap, bradley_terry_topic_bootstrap
from ideaharness.runner.options import ExecutionOptions
from ideaharness.runs.store import read_prompts
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.aiideabench.test_aiib_pipeline import DATA, responder, toy_embed

TOPICS = 3
STRENGTH = {"STRONG": 3, "MEDIUM": 2}
UPSET_TOPIC = "semantic segmentation"
"""On this topic the judge prefers the weak idea over the STRONG one (so ratings stay finite)."""


def _strength(section: str) -> int:
    return next((v for tag, v in STRENGTH.items() if tag in section), 1)


def judge_reply(messages: list[dict[str, str]]) -> str:
    """Competition: the stronger tag wins in both orders (except the upset); else the AIIB script."""
    user = messages[-1]["content"]
    if "choose the better idea" not in user:
        return responder()(messages)
    first, second = user.index("Idea 0:"), user.index("Idea 1:")
    s0, s1 = _strength(user[first:second]), _strength(user[second:])
    if UPSET_TOPIC in user and {s0, s1} == {3, 1}:
        s0, s1 = -s0, -s1
    return json.dumps({"final_choice": 0 if s0 > s1 else 1})


def generator(tag: str) -> Callable[[list[dict[str, str]]], str]:
    base = responder("good" if tag == "STRONG" else "weak")
    return lambda messages: base(messages).replace("weak", tag).replace("STRONG", tag)


def make_run(
    out: Path, tag: str, *, compare: list[Path] | None = None, judge: ChatModel | None = None
) -> Path:
    """An AI Idea Bench run of the system ``gen-<tag>`` (I2T only; a scripted judge unless given)."""
    cfg = AIIdeaBenchConfig(
        data=DATA,
        generator=f"gen-{tag}",
        judge="openai/judge" if judge else "scripted/judge",
        n_ideas=1,
        metrics=["i2t"],
        bootstrap_resamples=50,
    )
    asyncio.run(
        arun("aiideabench", config=cfg, options=ExecutionOptions(out=out, limit=TOPICS, progress=False),
            compare=compare or [],
            generator=ScriptedModel(generator(tag), model=f"gen-{tag}"),
            judge=judge or ScriptedModel(responder(), model="scripted/judge"),
            embed_fn=toy_embed,
        )
    )
    return out


@pytest.fixture(scope="module")
def systems(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("aiib-systems")
    return {tag: make_run(root / tag, tag) for tag in ("STRONG", "weak", "MEDIUM")}


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAICompatServer]:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAICompatServer(lambda body: judge_reply(body["messages"])) as srv:
        yield srv


def compare_cli(runs: list[Path], server: OpenAICompatServer, tournament: Path, *extra: str) -> dict:
    args = [
        "compare",
        *map(str, runs),
        "--judge",
        "openai/judge",
        "--base-url",
        server.base_url,
        "--tournament-dir",
        str(tournament),
        "--resamples",
        "100",
        *extra,
    ]
    main(args)
    return json.loads((tournament / "results.json").read_text())


def test_adding_a_system_judges_only_its_new_pairs(
    systems: dict[str, Path], server: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tournament = tmp_path / "tournament"  # no response cache: every call not made is a verdict reused
    two = compare_cli([systems["STRONG"], systems["weak"]], server, tournament, "--no-cache")
    assert len(server.requests) == TOPICS * 1 * 2  # 1 pair per topic, both orders
    assert two["judged_now"] == 6 and two["pairs"] == 3 and two["inconsistent_pairs"] == 0
    bt = two["bradley_terry"]
    assert bt["gen-STRONG"]["rating"] == 1000.0 and bt["gen-weak"]["rating"] < 1000.0
    weak = bt["gen-weak"]
    assert weak["lower"] < weak["rating"] < weak["upper"]  # 2 wins, 1 loss over 3 resampled topics
    assert two["method"]["unit"].startswith("topic") and two["points"]["gen-STRONG"] == 3 * 7 * 2
    out = capsys.readouterr().out
    assert "Competition" in out and "gen-STRONG" in out and "Bradley" in out

    page = tmp_path / "cmp.html"
    three = compare_cli(
        [systems["STRONG"], systems["weak"], systems["MEDIUM"]],
        server,
        tournament,
        "--no-cache",
        "--html",
        str(page),
    )
    assert len(server.requests) == 6 + TOPICS * 2 * 2  # only MEDIUM's 2 pairs per topic, both orders
    assert three["judged_now"] == 12 and three["reused_tournament"] == 6 and three["judgments"] == 18
    assert three["rank"]["gen-STRONG"] == 1 and three["rank"]["gen-weak"] == 3
    ratings = {n: v["rating"] for n, v in three["bradley_terry"].items()}
    assert ratings["gen-STRONG"] > ratings["gen-MEDIUM"] > ratings["gen-weak"]
    html = page.read_text()
    assert "Competition (judge openai/judge)" in html and "resamples of topics" in html

    again = compare_cli(
        [systems["MEDIUM"], systems["weak"], systems["STRONG"]], server, tournament, "--no-cache"
    )
    assert len(server.requests) == 18  # re-run, systems in another order: no call
    assert again["judged_now"] == 0 and again["reused_tournament"] == 18
    assert again["bradley_terry_anchor"] == "gen-MEDIUM" and again["points"] == three["points"]


def test_response_cache_answers_a_lost_tournament_dir(
    systems: dict[str, Path], server: OpenAICompatServer, tmp_path: Path
) -> None:
    first = compare_cli([systems["STRONG"], systems["weak"]], server, tmp_path / "t1")
    shutil.rmtree(tmp_path / "t1")
    second = compare_cli([systems["STRONG"], systems["weak"]], server, tmp_path / "t1")
    assert len(server.requests) == 6 and second["judged_now"] == 6  # asked again, answered by the cache
    assert second["bradley_terry"] == first["bradley_terry"]


def test_verdicts_in_a_runs_records_are_reused(
    systems: dict[str, Path], server: OpenAICompatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = get_llm("openai/judge", base_url=server.base_url)
    run = make_run(tmp_path / "strong-vs-weak", "STRONG", compare=[systems["weak"]], judge=judge)
    competition = json.loads((run / "results.json").read_text())["competition"]
    assert competition["judgments"] == 6
    judged = len(server.requests)
    weak = tmp_path / "weak-same-judge"  # the weak system's run, judged by the same judge
    shutil.copytree(systems["weak"], weak)
    config = json.loads((weak / "config.json").read_text())
    (weak / "config.json").write_text(json.dumps({**config, "judge": "openai/judge"}))
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "fresh-cache"))  # no cached replies
    result = compare_cli([run, weak], server, tmp_path / "t")
    assert len(server.requests) == judged  # every verdict came from the run's records
    assert result["reused_run_records"] == 6 and result["judged_now"] == 0
    assert result["points"] == competition["points"]
    # the reused verdicts' prompts are kept in the tournament directory too, as the run kept them
    kept = read_prompts(tmp_path / "t")
    assert len(kept) == 6 and all(read_prompts(run)[h] == m for h, m in kept.items())


def test_refusals(systems: dict[str, Path], server: OpenAICompatServer, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="at least 2 systems"):
        run_tournament([systems["STRONG"]], judge_model=ScriptedModel(judge_reply, model="j"))
    tournament = tmp_path / "t"
    run_tournament(
        [systems["STRONG"], systems["weak"]],
        judge="j",
        tournament_dir=tournament,
        judge_model=ScriptedModel(judge_reply, model="j"),
        n_resamples=20,
    )
    with pytest.raises(UserError, match="config.json"):  # another judge in the same directory
        run_tournament(
            [systems["STRONG"], systems["weak"]],
            judge="k",
            tournament_dir=tournament,
            judge_model=ScriptedModel(judge_reply, model="k"),
        )
    parity = tmp_path / "parity"
    shutil.copytree(systems["weak"], parity)
    config = json.loads((parity / "config.json").read_text())
    (parity / "config.json").write_text(json.dumps({**config, "parity": True}))
    with pytest.raises(UserError, match="parity"):
        run_tournament(
            [parity, systems["STRONG"]],
            allow_mismatch=True,
            judge_model=ScriptedModel(judge_reply, model="j"),
            tournament_dir=tmp_path / "p",
        )


def test_topic_bootstrap_resamples_topics_not_battles() -> None:
    # 4 topics of 20 identical battles each: A wins every battle of 3 topics, loses all of the 4th.
    topics = {f"t{i}": [Battle(a="A", b="B", winner="b" if i == 3 else "a")] * 20 for i in range(4)}
    flat = [b for bs in topics.values() for b in bs]
    by_topic = bradley_terry_topic_bootstrap(topics, anchor="A", n_resamples=300, seed=1)["B"]
    by_battle = bradley_terry_bootstrap(flat, anchor="A", n_resamples=300, seed=1)["B"]
    assert by_topic.rating == pytest.approx(by_battle.rating)
    # 4 independent units, not 80: the topic interval is far wider
    assert by_topic.upper - by_topic.lower > 3 * (by_battle.upper - by_battle.lower)


def test_topic_bootstrap_does_not_depend_on_the_order_of_the_topics() -> None:
    """Issue 18 (item 18's kind): an interval must not change with the order units were read in."""
    by_topic = {
        f"t{i}": [Battle(a="x", b="y", winner="a" if i % 3 else "b"), Battle(a="y", b="z", winner="a"),
                  Battle(a="x", b="z", winner="tie" if i % 2 else "a")]
        for i in range(9)
    }
    first = bradley_terry_topic_bootstrap(by_topic, anchor="x", n_resamples=200, seed=3)
    reordered = dict(reversed(list(by_topic.items())))
    assert bradley_terry_topic_bootstrap(reordered, anchor="x", n_resamples=200, seed=3) == first
    assert first["y"].lower < first["y"].upper  # a real interval, not a point
