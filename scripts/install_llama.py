"""Build (once per flag set) and install llama-cpp-python, the embedded model's runtime.

llama-cpp-python ships on PyPI as an sdist only, so it is compiled here. pip's own wheel cache is
keyed on the sdist, not on ``CMAKE_ARGS``: a wheel once built for one CPU would be reused with any
flags. This script keeps its own wheel cache keyed on (version, flags, Python tag) instead::

    python scripts/install_llama.py [--rebuild] [--version V] [--cmake-args "..."]

builds ``llama_cpp_python-<version>-*.whl`` with ``pip wheel --no-cache-dir`` into
``$IDEAHARNESS_WHEELS_DIR`` (default ``~/.cache/ideaharness/wheels``) ``/<version>-<key>/`` unless a
wheel is already there, then installs it with ``--no-deps --force-reinstall`` into the running
interpreter. The version and flags default to ``LLAMA_CPP_VERSION`` and ``PORTABLE_CMAKE_ARGS`` of
``src/ideaharness/llm/runtime.py`` (read from the file: the package need not be installed yet);
``--cmake-args`` builds another variant (``benchmarks/local_tokens.py`` does) and ``--target DIR``
installs it into a folder. ``--rebuild`` discards the cached wheel of this key first. Exit status 0
on success,
the failing pip's status otherwise.
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
from pathlib import Path

PACKAGE = "llama-cpp-python"
MARKER = "ideaharness-llama-build.json"  # in sys.prefix; read by ideaharness.llm.runtime


RUNTIME = Path(__file__).resolve().parent.parent / "src" / "ideaharness" / "llm" / "runtime.py"


def _runtime_defaults() -> tuple[str, str]:
    spec = importlib.util.spec_from_file_location("_ideaharness_runtime", RUNTIME)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.LLAMA_CPP_VERSION, module.PORTABLE_CMAKE_ARGS


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    version, cmake_args = _runtime_defaults()
    parser.add_argument("--version", default=version)
    parser.add_argument("--cmake-args", default=cmake_args)
    parser.add_argument("--target", help="install into this folder (pip --target) instead of the interpreter")
    parser.add_argument("--rebuild", action="store_true", help="discard the cached wheel of these flags")
    args = parser.parse_args()

    key = build_key(args.version, args.cmake_args)
    folder = wheels_dir() / f"{args.version}-{key}"
    if args.rebuild and folder.exists():
        shutil.rmtree(folder)
    wheels = sorted(folder.glob("llama_cpp_python-*.whl")) if folder.is_dir() else []
    try:
        if not wheels:
            print(f"building {PACKAGE}=={args.version} (flags key {key}, about 3 minutes)", flush=True)
            folder.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=folder.parent, prefix=".build-") as tmp:
                env = {**os.environ, "CMAKE_ARGS": args.cmake_args, "FORCE_CMAKE": "1"}
                pip("wheel", "--no-deps", "--no-cache-dir", "--no-binary", PACKAGE,
                    "--wheel-dir", tmp, f"{PACKAGE}=={args.version}", env=env)
                (Path(tmp) / "CMAKE_ARGS").write_text(args.cmake_args + "\n")
                os.chmod(tmp, 0o755)
                os.replace(tmp, folder)  # a killed build leaves no half-filled key folder
                os.makedirs(tmp)  # for TemporaryDirectory's clean-up
            wheels = sorted(folder.glob("llama_cpp_python-*.whl"))
        else:
            print(f"{PACKAGE}=={args.version}: reusing the wheel built with these flags ({folder})",
                  flush=True)
        if args.target:
            pip("install", "--no-deps", "--no-cache-dir", "--upgrade", "--target", args.target,
                str(wheels[-1]))
            return 0
        pip("install", "--no-deps", "--force-reinstall", "--no-cache-dir", str(wheels[-1]))
        # what `ideaharness doctor` prints as this environment's build (the wheel carries no flags)
        marker = Path(sys.prefix) / MARKER
        marker.write_text(json.dumps({"version": args.version, "cmake_args": args.cmake_args, "key": key,
                                      "wheel": str(wheels[-1])}, indent=1) + "\n")
    except subprocess.CalledProcessError as exc:
        print(f"install_llama: pip failed with exit status {exc.returncode}", file=sys.stderr)
        return exc.returncode or 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
