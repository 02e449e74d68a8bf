"""Every generating benchmark measured three ways against the same system (issue 20, "Done when" 1):
the example agent (``examples/idea_agent/agent.py --deterministic``) answers

* offline: ``tasks export`` -> ``agent.py --answer tasks.jsonl > ideas.jsonl`` -> ``run --ideas``;
* as a command: ``run --generator cmd:"python agent.py --deterministic"``;
* as a service: ``agent.py --serve 0`` and ``run --generator http://127.0.0.1:PORT/ideas``;

and one loopback judge (each benchmark's registry fixture replies) judges. The three runs must
give identical scores (values, instance ids), from the same ideas (the parsed answers) and the
same judgments (the same judge prompts).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from ideaharness.systems import contracts
from tests.systems.conftest import (
    MIN_GENERATING,
    SYSTEM,
    ThreeWays,
    WayRun,
    comparable,
    generating_benchmarks,
)

KINDS = {"ideas": "ideas-file", "cmd": "command", "http": "http"}


def test_every_generating_benchmark_has_an_idea_contract() -> None:
    """The registry: at least :data:`MIN_GENERATING` benchmarks generate, and each has a contract
    (else a system cannot be measured on it, and the parametrised test below would skip it)."""
    generating = generating_benchmarks()
    assert len(generating) >= MIN_GENERATING, f"only {len(generating)} generating benchmarks: {generating}"
    missing = [name for name in generating if name not in contracts()]
    assert not missing, f"generating benchmarks without an idea contract: {missing}"
    assert set(contracts()) <= set(generating), "a contract for a benchmark that does not generate"


def _parsed_answers(run: WayRun) -> Counter[str]:
    """The system's parsed answers (what the benchmark scores), one JSON string each, counted."""
    return Counter(json.dumps([r.get("judgment", {}).get("parsed")], sort_keys=True)
                   for r in run.system_records())


def _system_block(run: WayRun) -> dict[str, Any]:
    """The generator's entry of ``results.json`` ``idea_sources`` (how the ideas were produced)."""
    sources = run.results.get("idea_sources")
    assert isinstance(sources, list), f"{run.way}: results.json has no idea_sources list: {sources!r}"
    generators = [s for s in sources if str(s.get("role", "")).startswith("generator")]
    assert generators, f"{run.way}: no generator in results['idea_sources']: {sources}"
    return dict(generators[0])


@pytest.mark.parametrize("name", generating_benchmarks())
def test_three_ways_give_identical_scores(
    name: str, three_ways: Callable[..., ThreeWays], capsys: pytest.CaptureFixture[str]
) -> None:
    assert name in contracts(), f"{name} generates but has no idea contract"
    ways = three_ways(name, capsys)
    assert ways.tasks.read_text(encoding="utf-8").strip(), f"{name}: tasks export wrote no task"
    for run in ways.runs:
        assert run.code in (0, 3), f"{name} {run.way}: exit {run.code}: {run.err[-1500:]}"
        results = run.results
        assert not results.get("failed_units"), f"{name} {run.way}: {results.get('failed_units')}"
        block = _system_block(run)
        assert block["kind"] == KINDS[run.way] and block["system"] == SYSTEM, block
        answers = block.get("answers", {})
        assert not answers.get("missing") and not answers.get("extra_instances"), answers
        records = run.system_records()
        assert records, f"{name} {run.way}: no answer of the system was recorded"
        unparsed = [r["judgment"].get("errors") for r in records if not r["judgment"].get("parse_ok")]
        assert not unparsed, f"{name} {run.way}: answers of the agent did not parse: {unparsed[:3]}"
    base = ways.cmd
    stderr = [r["judgment"].get("stderr") or "" for r in base.system_records()]
    assert all("idea_agent: " in e for e in stderr), f"{name}: cmd: stderr not recorded: {stderr[:2]}"
    assert any(s.get("value") is not None for s in base.scores), f"{name}: nothing scored"
    for other in (ways.ideas, ways.http):
        assert other.code == base.code, (other.way, other.code, base.code)
        assert comparable(other.scores) == comparable(base.scores), f"{name}: {other.way} scores differ"
        assert _parsed_answers(other) == _parsed_answers(base), f"{name}: {other.way} ideas differ"
    # the same judgments: the same judge prompts (an --ideas run may find the pre-generation
    # judgments, e.g. blinding rewrites, already made by its tasks export)
    asked = set(base.judge_prompts)
    assert asked, f"{name}: the judge was never asked"
    assert set(ways.http.judge_prompts) == asked, f"{name}: http judge prompts differ from cmd:"
    offline = set(ways.ideas.judge_prompts)
    assert offline <= asked <= offline | set(ways.export.judge_prompts), \
        f"{name}: --ideas judge prompts differ from cmd:"
