"""The rendered prompt of every judgment is kept once per prompt hash in ``<run>/prompts.jsonl``:
crash-safe and resumable as the records, free of known secrets, and read back exactly."""

from __future__ import annotations

import asyncio
import json
import secrets
from pathlib import Path

import pytest

from ideaharness.llm.judge import prompt_hash
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.runner.steps import StepRunner
from ideaharness.runs.store import PROMPTS_FILE, RunStore, prompt_text, read_prompts

MESSAGES = [{"role": "system", "content": "You rate ideas."},
            {"role": "user", "content": "Rate: <b>an idea</b> & \u2028 {braces} done"}]


def _lines(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / PROMPTS_FILE).read_text().splitlines() if line]


def test_a_prompt_is_kept_once_and_read_back_exactly(tmp_path: Path) -> None:
    h = prompt_hash(MESSAGES)
    with RunStore(tmp_path / "run", {"b": 1}) as store:
        store.put_prompt(h, MESSAGES)
        store.put_prompt(h, MESSAGES)

        async def many() -> None:
            await asyncio.gather(*(store.aput_prompt(h, MESSAGES) for _ in range(5)),
                                 *(store.aput_prompt(f"other{i}", MESSAGES[:1]) for i in range(3)))

        asyncio.run(many())
        assert store.prompt(h) == MESSAGES and store.prompt("nope") is None
        store.put_prompt("s" * 16, [{"role": "user", "content": "lone \ud800 surrogate"}])
    lines = _lines(tmp_path / "run")
    assert [e["prompt_hash"] for e in lines] == [h, "other0", "other1", "other2", "s" * 16]
    lone = [{"role": "user", "content": "lone \ud800 surrogate"}]
    assert read_prompts(tmp_path / "run") == {h: MESSAGES, **{f"other{i}": MESSAGES[:1] for i in range(3)},
                                              "s" * 16: lone}
    assert read_prompts(tmp_path / "run", {h}) == {h: MESSAGES}
    assert read_prompts(tmp_path / "empty") == {}
    # resume: a new process knows what is kept and does not write it again
    with RunStore(tmp_path / "run", {"b": 1}) as store:
        store.put_prompt(h, MESSAGES)
        assert store.prompt(h) == MESSAGES
    assert len(_lines(tmp_path / "run")) == 5


def test_a_torn_prompt_line_is_cut_off_and_the_next_one_reads(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore(run, {"b": 1}) as store:
        store.put_prompt("a" * 16, MESSAGES)
    with (run / PROMPTS_FILE).open("a") as fh:
        fh.write('{"prompt_hash": "bbbb", "messa')  # a crash mid-write
    assert set(read_prompts(run)) == {"a" * 16}  # a reader skips the fragment
    with RunStore(run, {"b": 1}) as store:
        store.put_prompt("c" * 16, MESSAGES[:1])
        assert store.prompt("a" * 16) == MESSAGES and store.prompt("c" * 16) == MESSAGES[:1]
    assert read_prompts(run) == {"a" * 16: MESSAGES, "c" * 16: MESSAGES[:1]}
    assert "messa" in (run / "prompts.torn").read_text()


def test_no_known_secret_reaches_the_prompt_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-" + secrets.token_hex(12)  # key-shaped, made per run: no key in the source
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    leaky = [{"role": "user", "content": f"my key is {secret}, rate this"}]
    with RunStore(tmp_path / "run", {"b": 1}) as store:
        store.put_prompt(prompt_hash(leaky), leaky)
    text = (tmp_path / "run" / PROMPTS_FILE).read_text()
    assert secret not in text and "[REDACTED]" in text


def test_force_moves_the_prompts_with_the_run(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run", {"b": 1}) as store:
        store.put_prompt("a" * 16, MESSAGES)
    with RunStore(tmp_path / "run", {"b": 2}, force=True) as store:
        assert store.prompt("a" * 16) is None
    assert not (tmp_path / "run" / PROMPTS_FILE).exists()
    assert len(list((tmp_path / "run" / "superseded").glob(f"*/{PROMPTS_FILE}"))) == 1


def test_judge_step_keeps_the_sent_messages_once_for_a_panel(tmp_path: Path) -> None:
    """Two judges asked the same prompt, and a reply that only parses at the second attempt: three
    records' judgments name one kept prompt, the messages the models received."""
    seen: list[list[dict]] = []

    def replier(name: str, first_bad: bool = False):
        def reply(messages: list[dict]) -> str:
            seen.append([dict(m) for m in messages])
            return "no" if first_bad and len(seen) == 1 else "7"
        return ScriptedModel(reply, model=name)

    with RunStore(tmp_path / "run", {"b": 1}) as store:
        steps = StepRunner(store, max_attempts=2, progress=False)

        async def go() -> None:
            for name, bad in (("j1", True), ("j2", False)):
                await steps.judge_step("rate", "i1", name, replier(name, bad), list(MESSAGES), _number)
            await steps.judge_step("rate", "i2", "j1", replier("j1"), [MESSAGES[1]], _number)

        asyncio.run(go())
        hashes = [d["judgment"]["prompt_hash"] for _, _, d in store.records("rate")]
    kept = read_prompts(tmp_path / "run")
    assert len(hashes) == 3 and len(set(hashes)) == 2 and set(kept) == set(hashes)
    assert len(_lines(tmp_path / "run")) == 2
    for messages in seen:
        assert kept[prompt_hash(messages)] == messages
    assert prompt_text(kept[hashes[0]]).startswith("[system]\nYou rate ideas.\n\n[user]\nRate: <b>")


def _number(text: str) -> int:
    if not text.strip().isdigit():
        raise ValueError("not a number")
    return int(text)


# ----------------------------------------------------------------------------- a record with its prompt


def _writes(monkeypatch: pytest.MonkeyPatch, fail: str | None = None) -> list[str]:
    """Record the files each group writes, in order; ``fail``: the file name whose write fails
    as on a full disk."""
    import errno

    from ideaharness.runs import store as store_module

    written: list[str] = []
    real = store_module.append_lines

    def append_lines(path: Path, lines: list[str]) -> None:
        if Path(path).name == fail:
            from ideaharness.errors import storage_error

            raise storage_error(path, OSError(errno.ENOSPC, "No space left on device"))
        written.append(Path(path).name)
        real(path, lines)

    monkeypatch.setattr(store_module, "append_lines", append_lines)
    return written


def test_a_record_and_its_prompt_share_a_group_prompts_first(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    written = _writes(monkeypatch)
    h = prompt_hash(MESSAGES)
    with RunStore(tmp_path / "run", {"b": 1}) as store:

        async def many() -> None:
            rates = [store.aput("rate", f"i{i}", {"n": i}, prompt=(h, MESSAGES)) for i in range(8)]
            await asyncio.gather(*rates, store.aput("rank", "i0", {"n": 0}, prompt=("other", MESSAGES[:1])))

        asyncio.run(many())
        assert store.prompt(h) == MESSAGES and store.prompt("other") == MESSAGES[:1]
        assert len(store.records("rate")) == 8
    assert written == [PROMPTS_FILE, "rate.jsonl", "rank.jsonl"]  # one group: prompts, then records
    assert [e["prompt_hash"] for e in _lines(tmp_path / "run")] == [h, "other"]  # each kept once


def test_a_prompt_that_cannot_be_written_keeps_its_record_off_disk(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from ideaharness.errors import StorageError

    _writes(monkeypatch, fail=PROMPTS_FILE)
    with RunStore(tmp_path / "run", {"b": 1}) as store:
        with pytest.raises(StorageError, match="no space left"):
            asyncio.run(store.aput("rate", "i0", {"n": 0}, prompt=(prompt_hash(MESSAGES), MESSAGES)))
        assert not store.has("rate", "i0") and store.prompt(prompt_hash(MESSAGES)) is None
        monkeypatch.undo()  # space freed: the same unit is written, with its prompt
        asyncio.run(store.aput("rate", "i0", {"n": 0}, prompt=(prompt_hash(MESSAGES), MESSAGES)))
    with RunStore(tmp_path / "run", {"b": 1}) as store:
        assert store.get("rate", "i0") == {"n": 0} and store.prompt(prompt_hash(MESSAGES)) == MESSAGES


def test_a_record_waits_for_its_prompt_written_by_an_earlier_group(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The prompt is in a group being written when the record comes: the record waits for it (and
    is not written when that group fails)."""
    import threading

    from ideaharness.errors import StorageError
    from ideaharness.runs import store as store_module

    gate, started = threading.Event(), threading.Event()
    real = store_module._append_files

    def slow_then_full(files: list) -> list:
        started.set()
        assert gate.wait(60)
        if any(path.name == PROMPTS_FILE for path, _ in files):
            return [StorageError("prompts.jsonl: no space left on the device")] * len(files)
        return real(files)

    monkeypatch.setattr(store_module, "_append_files", slow_then_full)
    h = prompt_hash(MESSAGES)
    with RunStore(tmp_path / "run", {"b": 1}) as store:

        async def main() -> None:
            first = asyncio.create_task(store.aput_prompt(h, MESSAGES))
            await asyncio.to_thread(started.wait, 60)  # its group is being written
            second = asyncio.create_task(store.aput("rate", "i0", {"n": 0}, prompt=(h, MESSAGES)))
            await asyncio.sleep(0.05)
            assert not second.done()
            gate.set()
            for task in (first, second):
                with pytest.raises(StorageError):
                    await task

        asyncio.run(main())
        assert not store.has("rate", "i0")


def test_commit_delay_groups_records_of_units_in_flight_and_drain_cuts_it_short(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the last record queued says ``siblings`` other units are still working, its group
    waits for them (up to the commit delay) and they share one write and fsync; siblings=0 is
    written at once; drain never waits for the delay. The delay is made huge, so a wait that is
    not cut short would hang the test."""
    from ideaharness.runs import store as store_module

    monkeypatch.setattr(store_module, "COMMIT_DELAY_S", 600.0)
    written = _writes(monkeypatch)
    h = prompt_hash(MESSAGES)
    with RunStore(tmp_path / "run", {"b": 1}) as store:

        async def spaced(n: int) -> None:
            async def one(i: int) -> None:
                await asyncio.sleep(0.002 * i)  # units finishing a few ms apart
                await store.aput("rate", f"i{i}", {"n": i}, prompt=(h, MESSAGES),
                                 siblings=n - 1 - i)  # the units still working

            await asyncio.gather(*(one(i) for i in range(n)))

        asyncio.run(spaced(6))
        assert written == [PROMPTS_FILE, "rate.jsonl"]  # one group: one write (and fsync) per file
        asyncio.run(store.aput("rate", "alone", {"n": 0}))  # siblings=0: at once
        assert written[-1] == "rate.jsonl" and len(written) == 3

        async def waiting_then_drained() -> None:
            task = asyncio.create_task(store.aput("rate", "w", {"n": 1}, siblings=3))
            await asyncio.sleep(0.05)
            assert not task.done()  # waiting for its siblings' records
            await store.drain()  # cuts the wait short
            await task

        asyncio.run(waiting_then_drained())
        assert len(store.records("rate")) == 8


def test_judge_steps_in_flight_share_one_group_and_a_lone_one_is_written_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """judge_step tells the store how many units still ask their model: units answered a few ms
    apart by a real loopback server record in one group; a unit alone is written at once (with a
    huge commit delay, a wait would hang)."""
    from ideaharness.llm import get_llm
    from ideaharness.runs import store as store_module
    from ideaharness.testing.openai_server import OpenAICompatServer

    monkeypatch.setattr(store_module, "COMMIT_DELAY_S", 600.0)
    written = _writes(monkeypatch)
    with OpenAICompatServer(responder=lambda body: "7") as server, \
            RunStore(tmp_path / "run", {"b": 1}) as store:
        llm = get_llm("openai/m", base_url=server.base_url, use_cache=False, max_concurrency=8, max_retries=0)
        runner = StepRunner(store, progress=False)

        async def main() -> None:
            await runner.judge_step("rate", "alone", "", llm, MESSAGES, int, max_tokens=4)
            assert written == [PROMPTS_FILE, "rate.jsonl"]
            units = [[{"role": "user", "content": f"rate idea {i}"}] for i in range(6)]
            await asyncio.gather(*(runner.judge_step("rate", f"i{i}", "", llm, units[i], int, max_tokens=4)
                                   for i in range(6)))
            assert written[2:] == [PROMPTS_FILE, "rate.jsonl"]  # the six units: one group
            await llm.aclose()

        asyncio.run(main())
        assert len(store.records("rate")) == 7 and runner._asking == 0
