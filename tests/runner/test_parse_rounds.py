"""A judgment whose reply did not parse is not a final answer: a re-run re-asks it with the next
samples (bounded, recorded), also when the failed reply is cached and there is no run directory to
remember it; the records file keeps one line per unit. Against a real loopback OpenAI-compatible
server and the real response cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ideaharness.errors import ParseError
from ideaharness.llm import get_llm
from ideaharness.runner.steps import MAX_PARSE_ROUNDS, StepRunner, unparsed_note
from ideaharness.runs.store import RunStore
from ideaharness.testing.openai_server import OpenAICompatServer

ATTEMPTS = 2


def parse_number(text: str) -> int:
    if not text.strip().isdigit():
        raise ParseError(f"expected a number, got {text[:30]!r}")
    return int(text)


class Judge:
    """A loopback endpoint whose replies are garbage until ``good`` is set."""

    def __init__(self) -> None:
        self.good = False
        self.server = OpenAICompatServer(self.reply)

    def reply(self, body: dict[str, Any]) -> str:
        return "42" if self.good else "I would rather not say."


@pytest.fixture
def judge() -> Any:
    j = Judge()
    with j.server:
        yield j


async def ask(run_dir: Path, url: str, cache: Path) -> tuple[dict[str, Any] | None, StepRunner]:
    """One run of the same command: open the store, ask the unit, close."""
    llm = get_llm("openai/judge", base_url=url, cache_path=cache, max_retries=0)
    with RunStore(run_dir, {"command": "test"}) as store:
        steps = StepRunner(store, max_attempts=ATTEMPTS, progress=False)
        record = await steps.judge_step("judge/score", "inst-1", "", llm,
                                        [{"role": "user", "content": "A number, please."}], parse_number)
        await store.drain()
    await llm.aclose()
    return record, steps


def lines(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / "records" / "judge_score.jsonl").read_text().splitlines()]


async def test_a_rerun_reasks_a_recorded_parse_failure_with_new_samples(judge: Judge, tmp_path: Path) -> None:
    run, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    record, steps = await ask(run, judge.server.base_url, cache)
    assert record is not None and record["judgment"]["parse_ok"] is False
    assert len(judge.server.requests) == ATTEMPTS
    [unit] = steps.outcome()["unparsed_units"]
    assert unit["final"] is False and unit["rounds"] == 1 and "expected a number" in unit["error"]
    assert "expected a number" in unparsed_note(list(steps.unparsed.values()))

    # the same command again: the failure is re-asked (new sample indices: new cache keys)
    record, steps = await ask(run, judge.server.base_url, cache)
    assert len(judge.server.requests) == 2 * ATTEMPTS
    assert record is not None and record["parse_rounds"] == 2 and len(record["earlier_judgments"]) == 1
    assert len(lines(run)) == 1  # one line per unit: the superseded one is dropped
    # re-asked rounds sample above greedy: the same greedy decoder would repeat the failure
    assert all(r.body["temperature"] >= 0.7 for r in judge.server.requests[ATTEMPTS:])

    # the endpoint answers well now: the third run succeeds and keeps the failed judgments
    judge.good = True
    record, steps = await ask(run, judge.server.base_url, cache)
    assert len(judge.server.requests) == 2 * ATTEMPTS + 1
    assert record is not None and record["judgment"]["parse_ok"] is True
    assert record["judgment"]["parsed"] == 42 and record["parse_rounds"] == 3
    assert [j["parse_ok"] for j in record["earlier_judgments"]] == [False, False]
    assert steps.outcome()["unparsed_units"] == []
    [line] = lines(run)
    assert line["data"]["judgment"]["parsed"] == 42
    # a parsed record is final: a fourth run makes no call
    await ask(run, judge.server.base_url, cache)
    assert len(judge.server.requests) == 2 * ATTEMPTS + 1


async def test_reasking_is_bounded_and_the_bound_is_stated(judge: Judge, tmp_path: Path) -> None:
    run, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    for n in range(1, MAX_PARSE_ROUNDS + 1):
        record, steps = await ask(run, judge.server.base_url, cache)
        assert len(judge.server.requests) == n * ATTEMPTS
    [unit] = steps.outcome()["unparsed_units"]
    assert unit["final"] is True and unit["rounds"] == MAX_PARSE_ROUNDS
    assert unit["attempts"] == MAX_PARSE_ROUNDS * ATTEMPTS
    assert "final" in unparsed_note(list(steps.unparsed.values()))
    record, steps = await ask(run, judge.server.base_url, cache)  # spent: no new call
    assert len(judge.server.requests) == MAX_PARSE_ROUNDS * ATTEMPTS
    assert record is not None and record["parse_rounds"] == MAX_PARSE_ROUNDS
    assert len(record["earlier_judgments"]) == MAX_PARSE_ROUNDS - 1 and len(lines(run)) == 1


async def test_a_cached_failure_without_a_run_directory_is_replayed_then_reasked(
    judge: Judge, tmp_path: Path
) -> None:
    """``score-idea`` without ``--out`` records into a fresh temporary folder each time: only the
    response cache remembers the failure. A round answered wholly from the cache is a replay, so
    the next round is asked in the same run."""
    cache = tmp_path / "cache.sqlite"
    record, _ = await ask(tmp_path / "first", judge.server.base_url, cache)
    assert record is not None and not record["judgment"]["parse_ok"]
    assert len(judge.server.requests) == ATTEMPTS
    record, steps = await ask(tmp_path / "second", judge.server.base_url, cache)
    assert len(judge.server.requests) == 2 * ATTEMPTS  # round 1 replayed from the cache, round 2 asked
    assert record is not None and record["parse_rounds"] == 2 and not record["judgment"]["parse_ok"]
    judge.good = True
    record, _ = await ask(tmp_path / "third", judge.server.base_url, cache)
    assert len(judge.server.requests) == 2 * ATTEMPTS + 1
    assert record is not None and record["judgment"]["parsed"] == 42 and record["parse_rounds"] == 3


async def test_a_unit_recorded_in_this_run_is_not_reasked_in_it(judge: Judge, tmp_path: Path) -> None:
    llm = get_llm("openai/judge", base_url=judge.server.base_url, cache_path=tmp_path / "c.sqlite",
                  max_retries=0)
    with RunStore(tmp_path / "run", {"command": "test"}) as store:
        steps = StepRunner(store, max_attempts=ATTEMPTS, progress=False)
        for _ in range(3):  # a phase replayed in one run (Ray's driver replay) asks nothing more
            await steps.judge_step("judge/score", "inst-1", "", llm,
                                   [{"role": "user", "content": "A number, please."}], parse_number)
    await llm.aclose()
    assert len(judge.server.requests) == ATTEMPTS


def test_store_replace_keeps_one_line_per_unit_also_after_a_crash(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore(run, {"command": "test"}) as store:
        store.put("s", "a", {"v": 1})
        store.put("s", "b", {"v": 2})
        store.replace("s", "a", {"v": 3})
        assert store.get("s", "a") == {"v": 3} and store.get("s", "b") == {"v": 2}
        store.compact()
        rows = [json.loads(x) for x in (run / "records" / "s.jsonl").read_text().splitlines()]
        assert [(r["instance_id"], r["data"]["v"]) for r in rows] == [("b", 2), ("a", 3)]
        assert store.get("s", "a") == {"v": 3} and store.get("s", "b") == {"v": 2}  # index moved too
    # a crash between an append and its compaction leaves two lines of one unit: the last wins,
    # and opening the store drops the other (an unreadable line stays as it was)
    with (run / "records" / "s.jsonl").open("a") as fh:
        fh.write("not json\n")
        fh.write(json.dumps({"step": "s", "instance_id": "b", "key": "", "data": {"v": 4}}) + "\n")
    with RunStore(run, {"command": "test"}) as store:
        assert store.get("s", "b") == {"v": 4}
        text = (run / "records" / "s.jsonl").read_text().splitlines()
        assert len(text) == 3 and "not json" in text
        assert not store.written_here("s", "b")
        store.put("s", "c", {"v": 5})
        assert store.written_here("s", "c")


async def test_reaskable_tells_a_benchmark_its_cached_derivation_is_stale(
    judge: Judge, tmp_path: Path
) -> None:
    run, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    await ask(run, judge.server.base_url, cache)
    with RunStore(run, {"command": "test"}) as store:
        steps = StepRunner(store, max_attempts=ATTEMPTS, progress=False)
        assert steps.reaskable("judge/score", "inst-1") and not steps.reaskable("judge/score", "other")
    judge.good = True
    await ask(run, judge.server.base_url, cache)
    with RunStore(run, {"command": "test"}) as store:
        assert not StepRunner(store, max_attempts=ATTEMPTS, progress=False).reaskable("judge/score", "inst-1")
