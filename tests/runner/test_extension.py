"""A benchmark and a model provider added from outside the project: through the decorators in a
temporary package, and through entry points (a real installed-distribution layout, in a
subprocess); both run from the CLI and the Python API without editing any project file."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ideaharness
from ideaharness.cli.app import run_app
from ideaharness.runner import registry
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli
from tests.runner.toy_source import TOY_MODULE

SRC = Path(__file__).parents[2] / "src"


def echo(body: dict[str, Any]) -> str:
    return body["messages"][-1]["content"]


@pytest.fixture(autouse=True)
def _registered_metrics() -> Iterator[None]:
    """The toy benchmarks register metrics (``toybench.echo_rate``, ...); drop them afterwards, or a
    later test's own ``toybench`` would be expected to produce them (``expected_metrics``)."""
    before = dict(registry._METRICS)
    yield
    registry._METRICS.clear()
    registry._METRICS.update(before)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def toy_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``toy_decorated``: the toy benchmark registered with ``@register_benchmark("toybench")``."""
    folder = tmp_path / "site"
    folder.mkdir()
    source = TOY_MODULE.format(name="toybench").replace(
        "class Toy(Benchmark):", "@register_benchmark('toybench')\nclass Toy(Benchmark):"
    ).replace("from ideaharness.runner import Benchmark,",
              "from ideaharness.runner import register_benchmark, Benchmark,")
    (folder / "toy_decorated.py").write_text(source)
    monkeypatch.syspath_prepend(str(folder))
    importlib.import_module("toy_decorated")
    yield "toybench"
    registry._BENCHMARKS.pop("toybench", None)
    run_app.registered_commands[:] = [c for c in run_app.registered_commands if c.name != "toybench"]
    sys.modules.pop("toy_decorated", None)


def test_a_decorated_benchmark_runs_from_the_cli_and_the_api(
    env: None, toy_package: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAICompatServer(echo) as server:
        code, out, err = run_cli(["run", toy_package, "--items", "3", "--base-url", server.base_url,
                                  "--no-progress", "--out", str(tmp_path / "cli")], capsys)
        assert code == 0, err
        assert "Toy" in out and "report:" in out
        results = json.loads((tmp_path / "cli" / "results.json").read_text())
        assert results["echoed"] == 3 and results["status"] == "complete"
        assert results["benchmark"] == "toybench"
        [metric] = results["metrics"]
        assert {k: metric[k] for k in ("metric", "group", "value", "ci", "n")} == {
            "metric": "toybench.echo_rate", "group": "", "value": 1.0, "ci": None, "n": 3}
        assert "Headline metrics" in (tmp_path / "cli" / "report.html").read_text()
        api = ideaharness.run(toy_package, items=2, base_url=server.base_url, progress=False,
                              out=tmp_path / "api")
        assert api["echoed"] == 2
        assert len(server.requests) == 3  # the API's 2 items were answered from the cache
        code, out, _ = run_cli(["run", toy_package, "--help"], capsys)
        assert code == 0 and "--items" in out and "Items in the toy data." in out


async def test_arun_in_a_running_loop(env: None, toy_package: str, tmp_path: Path) -> None:
    """``await ideaharness.arun(...)`` is the notebook form (``run`` would refuse here)."""
    with OpenAICompatServer(echo) as server:
        results = await ideaharness.arun(toy_package, items=2, base_url=server.base_url, progress=False,
                                         out=tmp_path / "nb")
    assert results["echoed"] == 2


def test_a_provider_registered_by_decorator_is_a_generator(
    env: None, toy_package: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ideaharness.llm import providers
    from ideaharness.llm.openai_provider import OpenAIProvider

    with OpenAICompatServer(echo) as server:
        @providers.register_provider("myprov")
        def myprov(name: str, settings: providers.ProviderSettings) -> Any:
            return OpenAIProvider(name, base_url=server.base_url, api_key="local",
                                  timeout_s=settings.timeout_s,
                                  label=f"myprov/{name}")

        try:
            code, _, err = run_cli(["run", toy_package, "--generator", "myprov/x", "--items", "2",
                                    "--no-progress", "--out", str(tmp_path / "p")], capsys)
            assert code == 0, err
            assert [r.body["model"] for r in server.requests] == ["x", "x"]
            code, _, err = run_cli(["run", toy_package, "--generator", "myprov/x", "--base-url",
                                    server.base_url,
                                    "--out", str(tmp_path / "q")], capsys)
            assert code == 1 and "--base-url applies to" in err  # myprov takes no endpoint flag
        finally:
            providers._PROVIDERS.pop("myprov", None)


def write_distribution(folder: Path) -> None:
    """An installed distribution ``toyplugin`` with a benchmark (its prompt template in the
    package's own ``prompts/`` folder) and a provider entry point."""
    (folder / "toyplugin" / "prompts").mkdir(parents=True)
    (folder / "toyplugin" / "prompts" / "toyep_echo.j2").write_text(
        "### system\n{{ DATA_NOTICE }}\n### user\nRepeat the word in {{ text | data('word') }}\n")
    (folder / "toyplugin" / "__init__.py").write_text(TOY_MODULE.format(name="toyep") + '''

def _messages(self, item):
    from ideaharness.prompts import render
    return render("toyep_echo", text=item.text)


Toy.messages = _messages

def provider(name, settings):
    import os
    from ideaharness.llm.openai_provider import OpenAIProvider
    return OpenAIProvider(name, base_url=os.environ["TOY_URL"], api_key="local", timeout_s=settings.timeout_s,
                          label=f"epprov/{name}")
''')
    info = folder / "toyplugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toyplugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[ideaharness.benchmarks]\ntoyep = toyplugin:Toy\n\n"
        "[ideaharness.providers]\nepprov = toyplugin:provider\n"
    )


def test_entry_points_add_a_benchmark_and_a_provider(env: None, tmp_path: Path) -> None:
    site = tmp_path / "site-ep"
    write_distribution(site)
    with OpenAICompatServer(echo) as server:
        environ = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{site}", "TOY_URL": server.base_url}
        done = subprocess.run(
            [sys.executable, "-m", "ideaharness.cli", "run", "toyep", "--generator", "epprov/y", "--items",
             "2",
             "--no-progress", "--out", str(tmp_path / "ep")],
            env=environ, capture_output=True, text=True, timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert [r.body["model"] for r in server.requests] == ["y", "y"]
        assert all(r.body["messages"][-1]["content"].startswith("Repeat the word in <word>\nword")
                   for r in server.requests)
    assert json.loads((tmp_path / "ep" / "results.json").read_text())["echoed"] == 2
