"""Build (once per flag set) and install llama-cpp-python, the embedded model's runtime.

llama-cpp-python ships on PyPI as an sdist only, so it is compiled here. pip's own wheel cache is
keyed on the sdist, not on ``CMAKE_ARGS``: a wheel once built for one CPU would be reused with any
flags. This script keeps its own wheel cache keyed on (version, flags, Python tag) instead::

    python scripts/install_llama.py [--rebuild] [--version V] [--cmake-args "..."]

builds ``llama_cpp_python-<version>-*.whl`` with ``pip wheel --no-cache-dir`` into
``$IDEAHARNESS_WHEELS_DIR`` (default ``~/.cache/ideaharness/wheels``) ``/<version>-<key>/`` unless a
wheel is already there, then installs it with ``--no-deps --force-reinstall`` into the running
interpreter. The version and flags default to ``LLAMA_CPP_VERSION`` and ``PORTABLE_CMAKE_ARGS`` of
``src/ideaharness/llm/runtime.py`` (read from the file: the package need not be installed yet).
Where this CPU has AVX-512, the ``AVX512_CMAKE_ARGS`` variant (AMX still off) is built the same way
and its libraries unpacked into ``<sys.prefix>/lib/ideaharness-llama/avx512``; model processes use
them only on CPUs that have those extensions (``runtime.select_lib_dir``). ``--cmake-args`` builds
another variant (``benchmarks/local_tokens.py`` does) and ``--target DIR`` installs it into a
folder. ``--rebuild`` discards the cached wheels of these keys first. Exit status 0 on success, the
failing pip's status otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path
from typing import Any

PACKAGE = "llama-cpp-python"
MARKER = "ideaharness-llama-build.json"  # in sys.prefix; read by ideaharness.llm.runtime


RUNTIME = Path(__file__).resolve().parent.parent / "src" / "ideaharness" / "llm" / "runtime.py"


def _runtime() -> Any:
    """``src/ideaharness/llm/runtime.py`` loaded from its file (it imports only the standard library)."""
    spec = importlib.util.spec_from_file_location("_ideaharness_runtime", RUNTIME)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_key(version: str, cmake_args: str) -> str:
    """12 hex digits of sha256 over the version, the flags (order kept) and the interpreter tag."""
    tag = f"{sys.implementation.cache_tag}-{sysconfig.get_platform()}"
    text = "\n".join([version, " ".join(cmake_args.split()), tag])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def wheels_dir() -> Path:
    env = os.environ.get("IDEAHARNESS_WHEELS_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "ideaharness" / "wheels"


def pip(*args: str, env: dict[str, str] | None = None) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True, env=env)


def wheel_for(version: str, cmake_args: str, rebuild: bool) -> Path:
    """The cached wheel of (version, flags), built first when there is none (or ``rebuild``)."""
    key = build_key(version, cmake_args)
    folder = wheels_dir() / f"{version}-{key}"
    if rebuild and folder.exists():
        shutil.rmtree(folder)
    wheels = sorted(folder.glob("llama_cpp_python-*.whl")) if folder.is_dir() else []
    if wheels:
        print(f"{PACKAGE}=={version}: reusing the wheel built with these flags ({folder})", flush=True)
        return wheels[-1]
    print(f"building {PACKAGE}=={version} (flags key {key}; about 6 minutes on 2 cores)", flush=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=".build-") as tmp:
        env = {**os.environ, "CMAKE_ARGS": cmake_args, "FORCE_CMAKE": "1"}
        pip("wheel", "--no-deps", "--no-cache-dir", "--no-binary", PACKAGE,
            "--wheel-dir", tmp, f"{PACKAGE}=={version}", env=env)
        (Path(tmp) / "CMAKE_ARGS").write_text(cmake_args + "\n")
        os.chmod(tmp, 0o755)
        os.replace(tmp, folder)  # a killed build leaves no half-filled key folder
        os.makedirs(tmp)  # for TemporaryDirectory's clean-up
    return sorted(folder.glob("llama_cpp_python-*.whl"))[-1]


def install_variant(wheel: Path, folder: Path) -> None:
    """Unpack the shared libraries of ``wheel`` (``llama_cpp/lib/*``) into ``folder``, replacing
    what was there (a temporary folder renamed into place)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith("llama_cpp/lib/") and not name.endswith("/"):
                (tmp / Path(name).name).write_bytes(archive.read(name))
    os.chmod(tmp, 0o755)
    if folder.exists():
        shutil.rmtree(folder)
    os.replace(tmp, folder)


def main() -> int:
    runtime = _runtime()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=runtime.LLAMA_CPP_VERSION)
    parser.add_argument("--cmake-args", default=runtime.PORTABLE_CMAKE_ARGS)
    parser.add_argument("--target", help="install into this folder (pip --target) instead of the interpreter")
    parser.add_argument("--rebuild", action="store_true", help="discard the cached wheels of these flags")
    parser.add_argument("--no-variant", action="store_true",
                        help="do not build the AVX-512 variant (built only where this CPU has AVX-512)")
    args = parser.parse_args()
    try:
        wheel = wheel_for(args.version, args.cmake_args, args.rebuild)
        if args.target:
            pip("install", "--no-deps", "--no-cache-dir", "--upgrade", "--target", args.target, str(wheel))
            return 0
        pip("install", "--no-deps", "--force-reinstall", "--no-cache-dir", str(wheel))
        record: dict[str, Any] = {"version": args.version, "cmake_args": args.cmake_args,
                                  "key": build_key(args.version, args.cmake_args), "wheel": str(wheel)}
        variant = Path(sys.prefix) / "lib" / "ideaharness-llama" / runtime.VARIANT
        wanted = set(runtime.AVX512_CPU_FLAGS) <= runtime.cpu_flags()
        if wanted and not args.no_variant and args.cmake_args == runtime.PORTABLE_CMAKE_ARGS:
            install_variant(wheel_for(args.version, runtime.AVX512_CMAKE_ARGS, args.rebuild), variant)
            record["variant"] = {"name": runtime.VARIANT, "cmake_args": runtime.AVX512_CMAKE_ARGS,
                                 "dir": str(variant)}
        elif variant.exists():
            shutil.rmtree(variant)
        # what `ideaharness doctor` prints as this environment's build (the wheel carries no flags)
        (Path(sys.prefix) / MARKER).write_text(json.dumps(record, indent=1) + "\n")
    except subprocess.CalledProcessError as exc:
        print(f"install_llama: pip failed with exit status {exc.returncode}", file=sys.stderr)
        return exc.returncode or 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
