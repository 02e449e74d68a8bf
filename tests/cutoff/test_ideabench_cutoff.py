"""IdeaBench under the knowledge cutoff: a reference dated after an instance's cutoff is never shown
to the generator, the exclusion is counted, and the leakage check (which reads the recorded
prompts) finds such a reference when the filter is switched off."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ideaharness.benchmarks.ideabench import IdeaBench
from ideaharness.cutoff import LiteratureAccess
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli
from tests.cutoff.support import covers, cutoff_records, prompt_texts, request_texts, results
from tests.ideabench.conftest import ideabench_responder

OLD = "Salting out strengthens polyvinyl alcohol hydrogels in ionic baths"
NEW = "Thermogalvanic hydrogel armor with record Carnot-relative efficiency"
LATER = "Ionic thermoelectric gels harvesting low-grade body heat at scale"


def _instance(i: int, cutoff: str | None) -> dict[str, Any]:
    refs = [
        {"id": f"old{i}", "title": f"{OLD} {i}", "abstract": "Hofmeister salts toughen gels.",
         "publication_date": "2020-05-01", "year": 2020},
        {"id": f"new{i}", "title": f"{NEW} {i}", "abstract": "A gel converts heat to power.",
         "publication_date": "2024-03-01", "year": 2024},
        {"id": f"later{i}", "title": f"{LATER} {i}", "abstract": "Gels harvest body heat.", "year": 2025},
        {"id": f"undated{i}", "title": f"Undated note on gel mechanics {i}", "abstract": "Gel mechanics."},
    ]
    return {"id": f"inst{i}", "dataset": "cutoff-test", "domain": "materials chemistry",
            "target": {"id": f"t{i}", "title": f"Target paper on thermocells {i}",
                       "abstract": "We raise the thermopower of a hydrogel by salting it out.",
                       "publication_date": "2024-06-01", "year": 2024},
            "references": refs, "knowledge_cutoff": cutoff}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "instances.jsonl"
    rows = [_instance(0, "2023-12-31"), _instance(1, None)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[OpenAICompatServer, ...]]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    respond = ideabench_responder()
    with OpenAICompatServer(lambda b: respond(b["messages"])) as gen, \
            OpenAICompatServer(lambda b: respond(b["messages"])) as judge:
        yield gen, judge


def _args(data: Path, out: Path, gen: OpenAICompatServer, judge: OpenAICompatServer,
          *extra: str) -> list[str]:
    return ["run", "ideabench", "--data", str(data), "--generator", "openai/gen", "--judge", "openai/judge",
            "--base-url", gen.base_url, "--judge-base-url", judge.base_url, "--n-ideas", "2",
            "--k-references", "4", "--reference-filter", "none", "--indicator", "novelty",
            "--max-retries", "0", "--no-progress", "--consistency-sample", "0", "--out", str(out), *extra]


@covers("ideabench")
def test_a_reference_after_the_cutoff_never_reaches_the_generator(
    data: Path, servers: tuple[OpenAICompatServer, OpenAICompatServer], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gen, judge = servers
    out = tmp_path / "run"
    code, _, err = run_cli(_args(data, out, gen, judge, "--cutoff", "2024-01-31"), capsys)
    assert code in (0, 3), err
    generated = request_texts(gen.requests)
    assert generated, "the generator was asked nothing"
    # inst0: its own cutoff 2023-12-31 (stricter than --cutoff); inst1: --cutoff 2024-01-31
    for i in (0, 1):
        assert any(f"{OLD} {i}" in t for t in generated)  # what may be shown is shown
        assert not any(f"{NEW} {i}" in t or f"{LATER} {i}" in t for t in generated)
        assert not any(f"{NEW} {i}" in t or f"{LATER} {i}" in t for t in prompt_texts(out))
    assert any("Undated note on gel mechanics" in t for t in generated)  # undated: kept, counted
    records = {r["instance_id"]: r["data"] for r in cutoff_records(out)}
    assert records["inst0"]["cutoff"] == "2023-12-31" and records["inst1"]["cutoff"] == "2024-01-31"
    assert {w["id"] for w in records["inst0"]["excluded_works"]} == {"new0", "later0"}
    leakage = results(out)["leakage"]
    assert leakage["run_cutoff"] == "2024-01-31"
    assert leakage["excluded"]["references"] == {"kept": 4, "excluded": 4, "undated": 2}
    assert leakage["check"]["leaks"] == 0 and leakage["check"]["prompts_checked"] == 2
    assert leakage["check"]["titles_checked"] == 6  # 2 later references and the target, per instance
    code, _, err = run_cli(["check", "leakage", str(out), "--json"], capsys)
    assert code == 0, err


def test_the_leakage_check_finds_a_reference_shown_past_the_cutoff(
    data: Path, servers: tuple[OpenAICompatServer, OpenAICompatServer], tmp_path: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the filter switched off (no references source declared) the later references reach
    the generator's prompt; the check, reading only the run's records and prompts (each item's
    data record lists its works, whatever is filtered), reports them, and ``check leakage`` exits 4."""
    gen, judge = servers
    unfiltered = LiteratureAccess(sources=dict(IdeaBench.literature.sources),
                                  prompt_steps=IdeaBench.literature.prompt_steps, references_source=None)
    monkeypatch.setattr(IdeaBench, "literature", unfiltered)
    out = tmp_path / "leaky"
    code, _, err = run_cli(_args(data, out, gen, judge, "--cutoff", "2024-01-31"), capsys)
    assert code in (0, 3), err
    assert any(NEW in t for t in request_texts(gen.requests))
    check = results(out)["leakage"]["check"]
    assert check["leaks"] == 4  # two later references of each of the two instances
    assert {(e["kind"], e["instance_id"], e["work"]["id"]) for e in check["examples"]} == {
        ("prompt", "inst0", "new0"), ("prompt", "inst0", "later0"),
        ("prompt", "inst1", "new1"), ("prompt", "inst1", "later1")}
    assert any("reached a prompt or a search" in w for w in results(out)["leakage"]["warnings"])
    code, _, err = run_cli(["check", "leakage", str(out)], capsys)
    assert code == 4 and "4 work(s) dated after their instance's cutoff" in err
