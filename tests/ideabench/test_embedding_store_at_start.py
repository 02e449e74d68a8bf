"""A damaged embedding store ends an IdeaBench run at its start: before any model call is spent."""

from __future__ import annotations

from pathlib import Path

import pytest

from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli
from tests.ideabench.registry_fixtures import reply


def test_a_damaged_embedding_store_stops_the_run_before_any_model_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    store = tmp_path / "cache" / "embeddings.sqlite"
    store.write_bytes(b"not an SQLite file " * 500)
    out = tmp_path / "run"
    with OpenAICompatServer(reply) as server:
        code, stdout, err = run_cli(["run", "ideabench", "--data", "tomato-chem", "--limit", "1",
                                     "--generator", "openai/gen", "--judge", "openai/judge",
                                     "--base-url", server.base_url, "--no-progress", "--out", str(out)],
                                    capsys)
        assert not server.requests, "model calls were spent before the store was checked"
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1 and len(lines) == 1, err
    assert str(store) in lines[0] and "not a usable embedding store" in lines[0]
    assert "warning" not in err and "Traceback" not in err + stdout
    assert not (out / "results.json").exists()  # setup never ran: nothing of the run to report
