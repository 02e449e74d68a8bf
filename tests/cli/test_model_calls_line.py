"""The demo's "model calls this run" line counts every role's client once (issue: it counted the
generator only, so calls of a rewriter on its own client were left out), and names a role that
shares another's client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ideaharness.cli.common import model_calls_line
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli
from tests.ideabench.conftest import ideabench_responder


def test_the_line_sums_every_client_once_and_names_a_shared_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    respond = ideabench_responder()
    with OpenAICompatServer(lambda body: respond(body["messages"])) as server:
        out = tmp_path / "run"
        args = ["run", "ideabench", "--generator", "openai/m", "--judge", "openai/m",
                "--rewriter", "openai/r", "--base-url", server.base_url, "--limit", "1", "--no-progress",
                "--out", str(out)]
        code, _, err = run_cli(args, capsys)
        assert code in (0, 3), err
        models = [request.body["model"] for request in server.requests]
        n_main, n_rewriter = models.count("m"), models.count("r")
    assert n_main > 0 and n_rewriter > 0
    results = json.loads((out / "results.json").read_text())
    line = model_calls_line(results)
    assert line.startswith(f"model calls this run: {n_main + n_rewriter} (generator {n_main}, ")
    assert f"rewriter {n_rewriter}" in line and "judge shares generator's client" in line
    assert line.endswith("(cache hits: 0)")
