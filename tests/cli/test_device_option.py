"""``--device``: checked before the run reads data or creates its folder, on every benchmark."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from ideaharness.runner.registry import benchmarks
from tests.cli_support import run_cli
from tests.runner.registry_support import fixture_for

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a torch that sees no CUDA device")


def test_device_cuda_without_a_gpu_is_one_line_and_writes_nothing_on_every_benchmark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    checked = []
    for name, bench in sorted(benchmarks().items()):
        out = tmp_path / f"run-{name}"
        args = ["run", name, *fixture_for(name).data_args(tmp_path), "--judge", "openai/judge",
                "--base-url", "http://127.0.0.1:9/v1", "--device", "cuda", "--no-progress", "--out", str(out)]
        if any(f in bench.config_class.model_fields for f in ("generator", "generators")):
            args += ["--generator", "openai/gen"]
        code, stdout, err = run_cli(args, capsys)
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == 1, (name, err)
        assert len(lines) == 1 and "--device cuda" in lines[0], (name, err)
        assert "sees no CUDA device" in lines[0], (name, err)
        assert "warning" not in err and "Traceback" not in err + stdout, (name, err)
        assert not out.exists(), f"{name}: --device cuda refused but {out} was created"
        checked.append(name)
    assert checked, "no registered benchmark to run with --device"
