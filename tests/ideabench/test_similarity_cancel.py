"""IdeaBench's BERTScore phase leaves the event loop free: a run cancelled (Ctrl-C, SIGTERM) during
similarity stops within the batch in progress, keeps the batches recorded, and a re-run resumes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import ideaharness
from ideaharness.benchmarks.ideabench import run as ideabench_run
from ideaharness.llm.scripted import ScriptedModel
from tests.ideabench.conftest import ideabench_responder

N = 12


def _similarity(out: Path) -> dict[str, dict]:
    path = out / "records" / "similarity_low.jsonl"
    if not path.exists():
        return {}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {r["instance_id"]: r["data"] for r in rows}


def test_a_run_cancelled_during_similarity_stops_within_the_batch_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(ideabench_run, "SIMILARITY_BATCH", 1)  # one instance per batch
    model = ScriptedModel(ideabench_responder())
    out = tmp_path / "run"

    async def cancel_during_similarity() -> int:
        task = asyncio.create_task(ideaharness.arun("ideabench", generator=model, judge=model, limit=N,
                                                    out=out, progress=False, indicators=["novelty"]))
        while not task.done() and not _similarity(out):  # runs only while the loop is free
            await asyncio.sleep(0.005)
        assert not task.done(), "the run ended before the watcher saw a similarity record"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return len(_similarity(out))

    recorded = asyncio.run(cancel_during_similarity())
    assert 1 <= recorded < N, f"{recorded} of {N} similarity records: the phase was not stopped"
    kept = _similarity(out)
    generated = (out / "records" / "generate_low.jsonl").read_text()
    results = ideaharness.run("ideabench", generator=model, judge=model, limit=N, out=out, progress=False,
                              indicators=["novelty"])
    done = _similarity(out)
    assert len(done) == N and all(done[i] == kept[i] for i in kept)  # resumed, nothing recomputed
    assert (out / "records" / "generate_low.jsonl").read_text() == generated  # no idea asked again
    assert results["scenarios"]["low"]["similarity"]["n"] == N
