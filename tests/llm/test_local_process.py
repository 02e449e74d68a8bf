"""The embedded model runs in a child process: a native crash costs one unit (exit 3) or stops the
run with one line (exit 1) when the model cannot start, never the run's process; the child never
outlives the run (SIGTERM, SIGKILL of the parent); the installed runtime has no AMX code path.

The runs are real (``ideaharness run liveideabench`` with the real 0.5B model, in a subprocess);
the crash is a real signal sent to the real model process."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ideaharness.llm.local import LOCAL_MODELS, WORKER_MODULE, crash_fix, describe_exit
from ideaharness.llm.runtime import build_features, forbidden_present, probe_runtime, variant_dir

MODEL = "local/qwen2.5-coder-0.5b"
KEYWORDS = ["electrocatalysis"]  # 2 ideas, 2 critiques, 2 fluency judgments: 6 short calls


def run_args(out: Path) -> list[str]:
    args = [sys.executable, "-m", "ideaharness.cli", "run", "liveideabench", "--generator", MODEL,
            "--judge", MODEL,
            "--allow-self-judging", "--judges-per-idea", "1", "--fluency-judges", "1", "--seed", "0",
            "--out", str(out), "--no-progress"]
    for keyword in KEYWORDS:
        args += ["--keyword", keyword]
    return args


def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "IDEAHARNESS_CACHE_DIR": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}


def children(pid: int) -> list[int]:
    """The model processes started by ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        if ppid == pid and WORKER_MODULE in cmdline:
            found.append(int(entry.name))
    return found


def state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return "gone"


def alive(pid: int) -> bool:
    return state(pid) not in ("gone", "Z")


def wait_for(predicate: Callable[[], object], timeout_s: float, what: str) -> object:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def generating(run: subprocess.Popen[str], out: Path, after_records: bool) -> int | None:
    """The model process's pid while it is decoding (running twice in a row, 50 ms apart), once
    the run has recorded something when ``after_records``."""
    if after_records and not any(p.stat().st_size for p in (out / "records").glob("*.jsonl")):
        return None
    for pid in children(run.pid):
        if state(pid) == "R":
            time.sleep(0.05)
            if state(pid) == "R":
                return pid
    return None


def signal_during_generation(
    tmp_path: Path, out: Path, *, after_records: bool, kill_model: int | None = None,
    signal_run: int | None = None,
) -> tuple[subprocess.Popen[str], int, str]:
    """Start the run, wait until its model process is generating (after a record when
    ``after_records``), send ``kill_model`` to the model process or ``signal_run`` to the run, and
    wait for the run to end; returns (the run, the model process's pid, the run's stderr)."""
    run = subprocess.Popen(run_args(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env(tmp_path))
    try:
        pid = wait_for(lambda: generating(run, out, after_records), 300, "a generation")
        assert isinstance(pid, int)
        if kill_model is not None:
            os.kill(pid, kill_model)
        if signal_run is not None:
            run.send_signal(signal_run)
        _, err = run.communicate(timeout=600)
    finally:
        run.kill()
    return run, pid, err


def test_exit_descriptions_name_the_signal_and_the_fix() -> None:
    assert describe_exit(-11) == "SIGSEGV (Segmentation fault)"
    assert describe_exit(-4).startswith("SIGILL") and describe_exit(1) == "exit status 1"
    assert "make rebuild-llama" in crash_fix(-11) and "make rebuild-llama" in crash_fix(-4)
    assert "memory" in crash_fix(-9)


AMX_INSTRUCTIONS = re.compile(r"\b(tdpb[su][su]d|tdpbf16ps|tdpfp16ps|tileloadd|tileloaddt1|tilestored"
                              r"|ldtilecfg|tilezero)\b")


def test_installed_runtime_has_no_amx_path() -> None:
    """Whatever CPU built it: the system info of the package's libraries and of the AVX-512
    variant lists no AMX feature, and no library holds an AMX instruction; the package's own
    libraries use no AVX-512 register either (they run on any x86-64 CPU with AVX2)."""
    probe = probe_runtime()
    assert probe["ok"], probe
    features = probe["features"]
    assert isinstance(features, dict) and features.get("AVX2"), probe["system_info"]
    assert not features.get("AVX512"), probe["system_info"]
    assert forbidden_present(features) == [], probe["system_info"]
    folders = [Path(str(probe["path"])).parent / "lib"]
    if (variant_dir() / "libllama.so").exists():
        variant = probe_runtime(lib_dir=variant_dir())
        assert variant["ok"], variant
        assert forbidden_present(variant["features"]) == [], variant["system_info"]  # type: ignore[arg-type]
        folders.append(variant_dir())
    if shutil.which("objdump") is None:
        pytest.skip("objdump (binutils) is not installed: the instruction scan needs it")
    for folder in folders:
        libraries = sorted(folder.glob("*.so*"))
        assert any("ggml" in p.name for p in libraries), f"no ggml library in {folder}"
        distinct = {hashlib.sha256(p.read_bytes()).hexdigest(): p for p in libraries}  # a wheel copies links
        for library in distinct.values():
            text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(library)], capture_output=True,
                                  text=True, check=True).stdout
            assert not AMX_INSTRUCTIONS.search(text), f"{library} has AMX instructions"
            if folder == folders[0]:
                assert "%zmm" not in text, f"{library} uses AVX-512 registers"


@pytest.mark.model
async def test_a_variant_that_does_not_load_falls_back_to_the_portable_libraries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ideaharness.llm import get_llm, local

    broken = tmp_path / "variant"
    broken.mkdir()
    (broken / "libllama.so").write_bytes(b"not a shared library")
    monkeypatch.setattr(local, "select_lib_dir", lambda: broken)
    monkeypatch.setattr(local, "_VARIANT_FAILED", [])
    monkeypatch.setattr(local, "_PROCESSES", {})
    llm = get_llm(MODEL, use_cache=False, n_ctx=512)
    reply = await llm.chat([{"role": "user", "content": "Say hi."}], max_tokens=2)
    assert reply.text.strip()
    process = llm.provider.process()  # type: ignore[attr-defined]
    assert process.runtime == "portable" and process.starts == 2
    assert len(local._VARIANT_FAILED) == 1 and "could not be loaded" in local._VARIANT_FAILED[0]
    local.stop_all()


def test_build_features_read_the_system_info() -> None:
    info = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 |"
    features = build_features(info)
    assert features["AVX2"] and features["AMX_INT8"] and "AVX512" not in features
    assert forbidden_present(features) == ["AMX_INT8"]
    assert forbidden_present(build_features("CPU : AVX2 = 1 | AVX512 = 0 |")) == []


def test_a_model_file_that_cannot_load_stops_the_run_with_one_line(tmp_path: Path) -> None:
    """Weights of the right size but no GGUF: the model cannot start, the run says so and exits 1."""
    spec = LOCAL_MODELS["qwen2.5-coder-0.5b"]
    models = tmp_path / "models"
    models.mkdir()
    with open(models / spec.filename, "wb") as f:  # sparse: no disk used
        f.truncate(spec.size_bytes)
    proc = subprocess.run(run_args(tmp_path / "run"), capture_output=True, text=True, timeout=300,
                          env={**env(tmp_path), "IDEAHARNESS_MODELS_DIR": str(models)})
    assert proc.returncode == 1, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, proc.stderr
    assert "local/qwen2.5-coder-0.5b: the model could not be loaded" in lines[0]
    assert "Traceback" not in proc.stderr


@pytest.mark.model
def test_a_model_process_killed_at_start_stops_the_run_with_exit_1(tmp_path: Path) -> None:
    run = subprocess.Popen(run_args(tmp_path / "run"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=env(tmp_path))
    killed: set[int] = set()
    try:
        # every start: the AVX-512 variant's, and the portable fallback's after it
        deadline = time.monotonic() + 300
        while run.poll() is None and time.monotonic() < deadline:
            for pid in set(children(run.pid)) - killed:
                os.kill(pid, signal.SIGSEGV)
                killed.add(pid)
            time.sleep(0.01)
        _, err = run.communicate(timeout=60)
    finally:
        run.kill()
    assert 1 <= len(killed) <= 2, killed
    assert run.returncode == 1, err
    line = next(ln for ln in err.splitlines() if ln.startswith("error:"))
    assert "local/qwen2.5-coder-0.5b: the model process died with SIGSEGV (Segmentation fault)" in line
    assert "make rebuild-llama" in line and "Traceback" not in err


@pytest.mark.model
def test_a_crash_mid_run_fails_one_unit_and_the_same_command_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run, pid, err = signal_during_generation(tmp_path, out, after_records=True, kill_model=signal.SIGSEGV)
    assert run.returncode == 3, err  # partial: the crashed unit failed, the rest ran on a new process
    assert "Traceback" not in err and not alive(pid)
    results = json.loads((out / "results.json").read_text())
    failed = results["failed_units"]
    assert results["status"] == "partial" and len(failed) == 1, failed
    assert "the model process died with SIGSEGV (Segmentation fault) during a request" in failed[0]["error"]
    assert "make rebuild-llama" in failed[0]["error"]
    before = {p.name: p.read_text() for p in (out / "records").glob("*.jsonl")}
    assert sum(len(text.splitlines()) for text in before.values()) >= 1

    again = subprocess.run(run_args(out), capture_output=True, text=True, timeout=600, env=env(tmp_path))
    # one keyword: flexibility (and so the average) needs five, so the resumed run is partial for that
    # alone (issue 18 item 3); the crashed unit itself is done
    assert again.returncode == 3, again.stderr
    resumed = json.loads((out / "results.json").read_text())
    assert resumed["failed_units"] == []
    assert {m["metric"] for m in resumed["not_computed"]["metrics"]} == {
        "liveideabench.flexibility", "liveideabench.average"}
    after = {p.name: p.read_text() for p in (out / "records").glob("*.jsonl")}
    for name, text in before.items():  # finished work kept as it was, not redone
        assert after[name].startswith(text), name
    new_records = sum(len(after[n].splitlines()) - len(before.get(n, "").splitlines()) for n in after)
    stats = resumed["llm_stats_this_process"]
    calls = sum(s["calls"] for s in stats.values() if s)  # a role sharing another's client is None
    assert new_records >= 1 and calls >= new_records, (new_records, stats)


@pytest.mark.model
def test_sigterm_during_a_generation_leaves_no_model_process(tmp_path: Path) -> None:
    run, pid, err = signal_during_generation(tmp_path, tmp_path / "run", after_records=False,
                                             signal_run=signal.SIGTERM)
    gone_at_exit = not alive(pid)
    assert run.returncode == 143, err
    assert "terminated (SIGTERM)" in err and "Traceback" not in err
    assert gone_at_exit, f"model process {pid} outlived the run ({state(pid)})"


@pytest.mark.model
def test_a_parent_killed_with_sigkill_takes_its_model_process_along(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import asyncio, sys
        from ideaharness.llm import get_llm
        llm = get_llm({MODEL!r}, use_cache=False, n_ctx=512)
        asyncio.run(llm.chat([{{"role": "user", "content": "Say hi."}}], max_tokens=2))
        print("ready", flush=True)
        sys.stdin.read()
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=env(tmp_path))
    try:
        assert parent.stdout is not None and parent.stdout.readline().strip() == "ready"
        (pid,) = children(parent.pid)
        parent.kill()
        parent.wait(timeout=10)
        wait_for(lambda: not alive(pid), 5, "the orphaned model process to exit")
    finally:
        parent.kill()
