"""``--consistency-sample`` re-asks in every benchmark that has judgments showing items in an
order (issue 19, item 2): each registered benchmark, run through the CLI against a real loopback
OpenAI-compatible server with its registry fixture's replies, with ``--consistency-sample 1`` and
``--batch``, records re-asks of its position-ordered steps (never scored; every answer through
the Batch API, none synchronously), and its reliability block counts their position consistency.
A benchmark without such judgments declares ``consistency_sample = False``: the flag is refused
with one line, and by default shown as not applicable."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from ideaharness.errors import UserError
from ideaharness.runner import Benchmark
from ideaharness.runner.arguments import resolve
from ideaharness.runner.registry import benchmarks
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli
from tests.runner.registry_support import fixture_for

SECRET = f"reask-test-key-{uuid.uuid4().hex}"


def _records(out: Path) -> list[tuple[str, str, dict[str, Any]]]:
    rows = []
    for path in sorted((out / "records").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            rows.append((rec["step"], rec["key"], rec["data"]))
    return rows


@pytest.mark.parametrize("name", sorted(benchmarks()))
def test_every_position_ordered_benchmark_reasks_through_the_batch_api(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    bench = benchmarks()[name]
    fixture = fixture_for(name)
    assert bool(fixture.reask_steps) == bench.consistency_sample, \
        f"{name}: registry fixture reask_steps and the class's consistency_sample disagree"
    has_generator = any(f in bench.config_class.model_fields for f in ("generator", "generators"))
    out = tmp_path / "run"
    with OpenAICompatServer(fixture.reply) as server:
        models = ["--generator", "openai/gen"] if has_generator else []
        code, _, err = run_cli(["run", name, *fixture.data_args(tmp_path), *fixture.extra_args, *models,
                             "--judge", "openai/judge", "--base-url", server.base_url, "--limit", "1",
                             "--consistency-sample", "1",
                             *(["--batch", "--batch-poll", "0.01"] if fixture.batch else []),
                             "--timeout", "20", "--no-progress", "--out", str(out)], capsys)
        if not bench.consistency_sample:
            assert code == 1 and "--consistency-sample 1: not used by" in err and len(err.splitlines()) == 1
            return
        assert code in (0, 3), err
        if fixture.batch:
            assert server.requests == [], "a call went out synchronously: the re-asks were not batched"
            assert server.batches
    records = _records(out)
    results = json.loads((out / "results.json").read_text())
    assert results["settings"]["execution"]["consistency_sample"] == 1.0
    assert results["settings"]["execution"]["consistency_sample_applies"] is True
    blocks = results["reliability"]["metrics"]
    for step in fixture.reask_steps:
        originals = [k for s, k, d in records if s == step and not k.endswith("#reask")
                     and d.get("judgment", {}).get("parse_ok")]
        reasks = {k for s, k, _ in records if s == step and k.endswith("#reask")}
        assert originals, f"{name}: no parsed {step} judgment to re-ask"
        assert reasks == {f"{k}#reask" for k in originals}, f"{name}: {step}: F = 1 re-asks every one"
        shown = {k: d["judgment"]["positions"] for s, k, d in records if s == step}
        for key in originals:  # the same items, every one moved (items are named by their source
            again = shown[f"{key}#reask"]  # label; IMCQ shows two own-inspiration options: a label
            assert sorted(again) == sorted(shown[key])  # held twice is checked by the others)
            unique = [label for label in shown[key] if shown[key].count(label) == 1]
            assert unique and again != shown[key]
            assert all(again.index(label) != shown[key].index(label) for label in unique)
        judged = [b for m, b in blocks.items() if m == step or m.startswith(f"{step}[")]
        assert judged, f"{name}: {step} is not in the reliability block"
        parsed = [j for b in judged for j in b["judges"].values() if j["parsed"] > j["reask_judgments"]]
        assert parsed, f"{name}: no parsed {step} judgment in the reliability block"
        for judge in parsed:  # every view of a parsed, re-asked question is paired with its re-ask
            assert judge["reask_judgments"] >= 1
            assert judge["consistency"] is not None and judge["consistency"]["n_pairs"] >= 1


class _Config(BaseModel):
    seed: int = 0


class _NoOrder(Benchmark):
    name = "no-order"
    config_class = _Config
    consistency_sample = False


def test_a_benchmark_without_ordered_judgments_refuses_the_flag_and_shows_it_not_applicable() -> None:
    with pytest.raises(UserError, match=r"^--consistency-sample 0.2: not used by no-order, which has no "):
        resolve(_NoOrder, consistency_sample=0.2)
    options = resolve(_NoOrder).options  # the default: not applicable, silently, and saying so
    assert options.consistency_sample == 0.0
    assert options.consistency_sample_applies == ("not applicable: no-order has no judgment that shows "
                                                  "items in an order")
    assert resolve(_NoOrder, consistency_sample=0).options.consistency_sample == 0.0  # 0 is harmless
    ordered = resolve(benchmarks()["ideabench"], consistency_sample=0.2).options
    assert ordered.consistency_sample == 0.2 and ordered.consistency_sample_applies is True
