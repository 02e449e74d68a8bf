"""The embedded model's runtime: how llama-cpp-python is built, and what the installed build does.

llama-cpp-python exists on PyPI as an sdist only and is compiled on the user's machine. Its
default build targets the build machine's own CPU (``GGML_NATIVE=ON``, i.e. ``-march=native``).
On a CPU with AMX (Intel Sapphire Rapids and later) that compiles ggml's AMX matrix-multiply
path, which crashes on Q4_K models (ggml-org/llama.cpp#20824, "segfault in
ggml_backend_amx_mul_mat"; on some virtual machines an illegal instruction instead), and a
native build is wrong for any other machine the folder is copied to.

:data:`PORTABLE_CMAKE_ARGS` builds for any x86-64 CPU with AVX2 instead: AVX, AVX2, FMA, F16C and
BMI2 on; every AVX-512 and AMX variant off (so the AMX code is not compiled at all, whatever CPU
builds it); no runtime-dispatched backend variants (``GGML_CPU_ALL_VARIANTS`` would include the
AMX one); no multimodal library (``LLAVA_BUILD=OFF``, about 3 minutes saved). That is the
installed package. Where the building CPU has AVX-512, ``scripts/install_llama.py`` also builds
:data:`AVX512_CMAKE_ARGS` (the same with AVX-512 F/VBMI/VNNI/BF16 on, AMX still off: prompt
processing ~1.5x faster) and keeps its libraries beside the package (:func:`variant_dir`); a
model process loads them (``LLAMA_CPP_LIB_PATH``) only when the CPU it runs on has every
extension they use (:func:`select_lib_dir`), and falls back to the portable libraries if they
fail to start. ``benchmarks/local_tokens.py`` measures both against other builds.
"""

from __future__ import annotations

import re
import shlex
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

LLAMA_CPP_VERSION = "0.3.36"
"""The llama-cpp-python release the ``local`` extra pins."""

PORTABLE_CMAKE_ARGS = " ".join([
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON", "-DGGML_BMI2=ON",
    "-DGGML_AVX_VNNI=OFF", "-DGGML_AVX512=OFF", "-DGGML_AVX512_VBMI=OFF", "-DGGML_AVX512_VNNI=OFF",
    "-DGGML_AVX512_BF16=OFF", "-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF",
    "-DGGML_BACKEND_DL=OFF", "-DGGML_CPU_ALL_VARIANTS=OFF",
    "-DLLAVA_BUILD=OFF",
])
"""CMake flags of the portable build (see the module docstring for why each)."""

_AVX2_ONLY = ("-DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF "
              "-DGGML_AVX512_BF16=OFF")
AVX512_CMAKE_ARGS = PORTABLE_CMAKE_ARGS.replace(
    _AVX2_ONLY, "-DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON")
"""CMake flags of the AVX-512 variant: the portable build plus AVX-512 F/CD/VL/DQ/BW, VBMI, VNNI and
BF16; AMX off."""

AVX512_CPU_FLAGS = ("avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw", "avx512vbmi",
                    "avx512_vnni", "avx512_bf16")
"""``/proc/cpuinfo`` flags a CPU needs to run the AVX-512 variant."""

VARIANT = "avx512"

FORBIDDEN_FEATURES = ("AMX_INT8", "AMX_BF16", "AMX_TILE", "AMX")
"""Build features that must read 0 in the installed runtime's system info."""


def rebuild_command() -> str:
    """The one command that rebuilds and reinstalls the portable runtime into this interpreter,
    for messages: ``make rebuild-llama`` does the same from a clone."""
    return (f"CMAKE_ARGS={shlex.quote(PORTABLE_CMAKE_ARGS)} {shlex.quote(sys.executable)} -m pip install "
            f"--force-reinstall --no-deps --no-cache-dir --no-binary llama-cpp-python "
            f"llama-cpp-python=={LLAMA_CPP_VERSION}")


REBUILD_HINT = "rebuild the portable runtime: `make rebuild-llama` in a clone, or see `ideaharness doctor`"


def build_features(system_info: str) -> dict[str, bool]:
    """The ``NAME = 0|1`` flags of llama.cpp's system info (``llama_print_system_info()``).

    Args:
        system_info: e.g. ``"CPU : SSE3 = 1 | AVX2 = 1 | AMX_INT8 = 0 | ..."``.

    Returns:
        ``{"SSE3": True, "AVX2": True, "AMX_INT8": False, ...}``; a flag printed more than once
        (one backend each) is True when any says 1.
    """
    features: dict[str, bool] = {}
    for name, value in re.findall(r"([A-Z][A-Z0-9_]*)\s*=\s*(\d+)", system_info):
        features[name] = features.get(name, False) or value != "0"
    return features


def forbidden_present(features: dict[str, bool]) -> list[str]:
    """Which of :data:`FORBIDDEN_FEATURES` the build has (empty for a portable build)."""
    return [name for name in FORBIDDEN_FEATURES if features.get(name)]


def cpu_flags() -> set[str]:
    """The CPU's feature flags from ``/proc/cpuinfo`` (empty where there is none)."""
    from pathlib import Path

    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


def variant_dir() -> Path:
    """Where ``scripts/install_llama.py`` puts the AVX-512 variant's libraries:
    ``<sys.prefix>/lib/ideaharness-llama/avx512`` (beside, not inside, the llama_cpp package)."""
    from pathlib import Path

    return Path(sys.prefix) / "lib" / "ideaharness-llama" / VARIANT


def select_lib_dir() -> Path | None:
    """The library folder a model process should load: the AVX-512 variant when it is installed
    and this CPU has every flag of :data:`AVX512_CPU_FLAGS`, else None (the package's own,
    portable libraries). A ``LLAMA_CPP_LIB_PATH`` set by the user is left alone (None)."""
    import os

    folder = variant_dir()
    if os.environ.get("LLAMA_CPP_LIB_PATH") or not (folder / "libllama.so").exists():
        return None
    return folder if set(AVX512_CPU_FLAGS) <= cpu_flags() else None


BUILD_MARKER = "ideaharness-llama-build.json"
"""Written into ``sys.prefix`` by ``scripts/install_llama.py``: the flags the installed wheel was
built with (the wheel itself does not record them)."""


def build_record() -> dict[str, str] | None:
    """What ``scripts/install_llama.py`` recorded about the installed build, or None when the
    runtime was installed some other way (or the record is unreadable)."""
    import json
    from pathlib import Path

    try:
        data = json.loads((Path(sys.prefix) / BUILD_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


PROBE = (
    "import json, llama_cpp; info = llama_cpp.llama_print_system_info(); "
    "print(json.dumps({'version': llama_cpp.__version__, "
    "'system_info': info.decode() if isinstance(info, bytes) else str(info), "
    "'path': llama_cpp.__file__}))"
)
"""Run by ``python -c`` in a child: the installed runtime's version, system info and location."""


def probe_runtime(timeout_s: float = 60.0, lib_dir: Path | None = None) -> dict[str, object]:
    """Import llama-cpp-python in a child process and read its build (a crash there is reported,
    not suffered).

    Args:
        lib_dir: load the libraries of this folder (``LLAMA_CPP_LIB_PATH``) instead of the
            package's own.

    Returns:
        ``{"ok": True, "version", "system_info", "features": {NAME: bool}, "path"}``, or
        ``{"ok": False, "error": str}`` (not installed, or the child died: the signal is named).
    """
    import json
    import os
    import subprocess

    env = {**os.environ, **({"LLAMA_CPP_LIB_PATH": str(lib_dir)} if lib_dir else {})}
    try:
        proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                              timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"importing llama_cpp took over {timeout_s:.0f} s"}
    if proc.returncode != 0:
        from ideaharness.llm.local import describe_exit

        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        if "ModuleNotFoundError" in proc.stderr and "llama_cpp" in proc.stderr:
            return {"ok": False, "missing": True, "error": "llama-cpp-python is not installed"}
        return {"ok": False, "error": f"importing llama_cpp ended with {describe_exit(proc.returncode)}"
                                      + (f": {lines[-1].strip()}" if lines else "")}
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    data["features"] = build_features(str(data.get("system_info", "")))
    data["ok"] = True
    return dict(data)
