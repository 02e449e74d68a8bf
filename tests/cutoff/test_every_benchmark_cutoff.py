"""The knowledge cutoff over the whole registry: every registered benchmark declares how it reaches
the literature (``Benchmark.literature``); one that reaches any has a cutoff test (a test marked
``@covers(name)`` in ``tests/<package>/test_*cutoff*.py``, :mod:`tests.cutoff.support`), one that
reaches none says so; and a run of each on its registry sample (``tests/<package>/registry_fixtures.py``)
with ``--cutoff`` against loopback model servers records a leakage block whose check finds 0 leaks,
the same as ``ideaharness check leakage`` on the saved run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ideaharness.cutoff import NO_LITERATURE
from ideaharness.runner.registry import benchmarks
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli
from tests.cutoff.support import discover
from tests.runner.registry_support import fixture_for

NAMES = sorted(benchmarks())


def test_the_registry_has_benchmarks_and_the_cutoff_tests_are_found() -> None:
    assert NAMES, "the benchmark registry is empty"
    covered = discover()
    assert covered, "no test marked @covers(...) was found in tests/<package>/test_*cutoff*.py"
    unknown = sorted(set(covered) - set(NAMES))
    assert not unknown, f"cutoff tests for benchmarks that are not registered: {unknown}"


@pytest.mark.parametrize("name", NAMES)
def test_each_benchmark_declares_its_literature_and_has_a_cutoff_test(name: str) -> None:
    literature = benchmarks()[name].literature
    assert literature is not NO_LITERATURE, (
        f"{name}: declares nothing about literature; set Benchmark.literature = LiteratureAccess(...) "
        "(sources it reads, or note='no literature access: ...')")
    assert literature.note, f"{name}: LiteratureAccess.note must say how the cutoff applies"
    if literature.has_access:
        assert discover().get(name), (
            f"{name} reaches literature ({', '.join(literature.sources)}) but no test in "
            f"tests/<package>/test_*cutoff*.py is marked @covers({name!r})")
        assert literature.prompt_steps, f"{name}: no prompt step declared for the leakage check"
        assert set(literature.future_sources) <= set(literature.sources)
        if literature.references_source is not None:
            assert literature.references_source in literature.sources


@pytest.fixture
def no_endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No key or endpoint from the environment; a response cache of the test's own."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    yield


@pytest.mark.parametrize("name", NAMES)
def test_the_leakage_check_reports_zero_on_the_registry_sample(
    name: str, no_endpoint: None, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    fixture = fixture_for(name)
    bench = benchmarks()[name]
    has_generator = any(f in bench.config_class.model_fields for f in ("generator", "generators"))
    with OpenAICompatServer(fixture.reply) as server:
        out = tmp_path / "run"
        args = ["run", name, *fixture.data_args(tmp_path), *fixture.extra_args, "--judge", "openai/judge",
                "--base-url", server.base_url, "--cutoff", "2024-01-01", "--limit", "2", "--max-retries", "0",
                "--no-progress", "--consistency-sample", "0", "--out", str(out)]
        if has_generator:
            args += ["--generator", "openai/gen"]
        code, _, err = run_cli(args, capsys)
    assert code in (0, 3), err
    results: dict[str, Any] = json.loads((out / "results.json").read_text())
    block = results["leakage"]
    assert block["run_cutoff"] == "2024-01-01"
    assert block["access"] == ("literature" if bench.literature.has_access else "none")
    assert block["instances"]["with_cutoff"] == results["selection"]["selected"]
    assert block["instances"]["latest"] <= "2024-01-01"
    assert block["check"]["leaks"] == 0, block["check"]["examples"]
    if bench.literature.has_access:
        assert block["check"]["accesses_checked"] > 0
        assert set(block["excluded"]) <= set(bench.literature.sources)
    assert {m["role"] for m in block["models"]} == set(results["settings"]["models"])
    assert "Knowledge cutoff and leakage" in (out / "report.html").read_text()
    code, _, err = run_cli(["check", "leakage", str(out), "--json"], capsys)
    assert code == 0, err
