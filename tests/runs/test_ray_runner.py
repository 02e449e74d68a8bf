"""The Ray runner on a local Ray instance (2 CPUs): same records as a local run, and a worker
killed mid-run is retried by Ray without duplicate records."""

from __future__ import annotations

import json
import os
from pathlib import Path
from statistics import mean

import pytest

from ideaharness.benchmarks.ideabench.run import parse_ideas, parse_overlap
from ideaharness.data.registry import load_instances
from ideaharness.llm.judge import prompt_hash
from ideaharness.prompts import render
from ideaharness.runs.ray_runner import ModelSpec, WorkerContext, run_phase_local, run_phase_ray
from ideaharness.runs.store import RunStore, read_prompts
from ideaharness.schema import Instance
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.ideabench.conftest import ideabench_responder

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray

N_IDEAS = 3


async def generate_and_rate(ctx: WorkerContext, inst: Instance) -> None:
    """IdeaBench's generation and overlap steps for one target paper (its prompts and parsers)."""
    refs = [{"title": r.title, "abstract": r.abstract} for r in inst.references[:3]]
    messages = render("ideabench_generate", domain=inst.domain or "scientific", references=refs,
                      n_ideas=N_IDEAS)
    record = await ctx.steps.judge_step("generate", inst.id, "", ctx.models["generator"], messages,
                                        lambda text: parse_ideas(text, N_IDEAS), max_tokens=800)
    if record and record["judgment"]["parse_ok"]:
        idea = record["judgment"]["parsed"][0]["idea"]
        messages = render("ideabench_overlap", idea=idea, target=inst.target.abstract)
        await ctx.steps.judge_step("overlap", inst.id, "", ctx.models["judge"], messages, parse_overlap,
                                   max_tokens=300)


def dies_once(marker: Path):
    """The unit function, but the first worker to finish an instance exits its process (once)."""

    async def unit(ctx: WorkerContext, inst: Instance) -> None:
        await generate_and_rate(ctx, inst)
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            os._exit(1)

    return unit


def _records(run: Path) -> list[dict]:
    rows = []
    for path in sorted((run / "records").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            row.pop("created")  # a timing
            rows.append(row)
    return sorted(rows, key=lambda r: (r["step"], r["instance_id"], r["key"]))


def _results(store: RunStore) -> dict:
    overlaps = [d["judgment"] for _, _, d in store.records("overlap")]
    ratings = [j["parsed"]["rating"] for j in overlaps if j["parse_ok"]]
    return {"generated": len(store.records("generate")), "overlap_mean": mean(ratings), "rated": len(ratings)}


@pytest.fixture(scope="module")
def local_ray():
    from ideaharness.runs.ray_runner import ray_init

    ray_init(None, num_cpus=2)
    yield
    ray.shutdown()


@pytest.fixture
def server():
    respond = ideabench_responder()
    with OpenAICompatServer(lambda body: respond(body["messages"])) as srv:
        yield srv


def _specs(server: OpenAICompatServer, cache: Path) -> dict[str, ModelSpec]:
    spec = ModelSpec(model="openai/fake", base_url=server.base_url, cache_path=str(cache))
    return {"generator": spec, "judge": spec}


def test_a_ray_run_writes_the_records_of_a_local_run(tmp_path: Path, server, local_ray) -> None:
    instances = load_instances("tomato-chem")[:4]
    specs = _specs(server, tmp_path / "a.sqlite")
    with RunStore(tmp_path / "local", {"bench": "t"}) as store:
        local = run_phase_local(generate_and_rate, instances, store, models=specs)
        local_results = _results(store)
    calls_local = len(server.requests)
    specs = _specs(server, tmp_path / "b.sqlite")
    with RunStore(tmp_path / "ray", {"bench": "t"}) as store:
        remote = run_phase_ray(generate_and_rate, instances, store, models=specs,
                               item_id=lambda inst: inst.id, chunk_size=2)
        ray_results = _results(store)
    assert _records(tmp_path / "ray") == _records(tmp_path / "local")
    assert len(_records(tmp_path / "local")) == 8
    assert ray_results == local_results
    assert remote.records_written == local.records_written == 8
    assert remote.failures == local.failures == []
    assert remote.stats["generator"]["calls"] == local.stats["generator"]["calls"] == 4  # summed over workers
    # the same prompts as the local run; identical prompts of two instances (the overlap prompt here)
    # may both be asked when two workers miss the shared cache at the same moment
    bodies = [json.dumps(r.body, sort_keys=True) for r in server.requests]
    assert set(bodies[calls_local:]) == set(bodies[:calls_local])
    assert calls_local <= len(bodies) - calls_local <= len(_records(tmp_path / "local"))
    calls_ray = len(bodies)
    # every judgment's rendered prompt came back from its worker: prompts.jsonl as in the local run,
    # one line per distinct prompt hash, each holding the messages the server received
    kept = read_prompts(tmp_path / "ray")
    assert kept == read_prompts(tmp_path / "local") and kept
    assert {r["data"]["judgment"]["prompt_hash"] for r in _records(tmp_path / "ray")} == set(kept)
    assert len((tmp_path / "ray" / "prompts.jsonl").read_text().splitlines()) == len(kept)
    for request in server.requests[calls_local:]:
        assert kept[prompt_hash(request.body["messages"])] == request.body["messages"]
    # resuming through Ray: everything is recorded, nothing is asked or written again
    with RunStore(tmp_path / "ray", {"bench": "t"}) as store:
        again = run_phase_ray(generate_and_rate, instances, store, models=specs, item_id=lambda inst: inst.id,
                              chunk_size=2)
    assert again.records_written == 0 and len(server.requests) == calls_ray


def test_a_killed_worker_is_retried_without_duplicate_records(tmp_path: Path, server, local_ray) -> None:
    instances = load_instances("tomato-chem")[:4]
    marker = tmp_path / "killed"
    specs = _specs(server, tmp_path / "c.sqlite")
    with RunStore(tmp_path / "ray", {"bench": "t"}) as store:
        # one task: the worker dies after its first instance, Ray runs the task again
        outcome = run_phase_ray(dies_once(marker), instances, store, models=specs,
                                item_id=lambda inst: inst.id, chunk_size=4, max_retries=1)
    assert marker.exists()  # a worker did die mid-run
    rows = _records(tmp_path / "ray")
    keys = [(r["step"], r["instance_id"], r["key"]) for r in rows]
    assert len(keys) == len(set(keys)) == 8  # every unit once
    assert outcome.records_written == 8
    # the calls made before the death were answered from the shared cache on the retry
    bodies = [json.dumps(r.body, sort_keys=True) for r in server.requests]
    assert len(bodies) == len(set(bodies)) > 0
