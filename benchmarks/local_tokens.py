"""Tokens per second of the embedded models under builds of llama-cpp-python and thread counts.

Builds (once each, cached by ``scripts/install_llama.py`` under its flag key) and installs into
temporary folders:

* ``portable``: :data:`ideaharness.llm.runtime.PORTABLE_CMAKE_ARGS` (what ``make`` installs);
* ``native``: the old Makefile build, ``-DLLAVA_BUILD=OFF`` with llama.cpp's defaults, i.e.
  ``-march=native`` (on a CPU with AMX it takes the AMX path and may crash: reported as such);
* ``native-no-amx``: :data:`~ideaharness.llm.runtime.AVX512_CMAKE_ARGS`, AVX-512 on and AMX off:
  the variant model processes load on CPUs with AVX-512 (``make`` builds it on such machines),
  and "native where native works" on an AMX machine.

Each (build, model, threads) runs in its own child process: load, one warm-up, then ``--reps``
generations of a ~330-token prompt; prefill tok/s from a 1-token generation, decode tok/s from
the extra tokens of a ``--tokens`` generation. ``--busy K`` repeats the thread sweep with K
busy-looping processes competing for the CPUs (the "busy machine" case). Prints each figure and
its ratio to the baseline build measured in the same run (``--baseline``, default
``native-no-amx``; falls back to the first build that ran).

Usage: python benchmarks/local_tokens.py [--builds portable,native,native-no-amx]
       [--models qwen2.5-coder-0.5b,qwen2.5-coder-1.5b] [--threads 1,2] [--busy 2]
Run alone on the machine (CPU-heavy); builds take ~6 minutes each the first time.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ideaharness.llm.cache import default_models_dir  # noqa: E402
from ideaharness.llm.local import LOCAL_MODELS, describe_exit, model_path  # noqa: E402
from ideaharness.llm.runtime import AVX512_CMAKE_ARGS, PORTABLE_CMAKE_ARGS, build_features  # noqa: E402

BUILDS = {
    "portable": PORTABLE_CMAKE_ARGS,
    "native": "-DLLAVA_BUILD=OFF",
    "native-no-amx": AVX512_CMAKE_ARGS,
}

CHILD = r"""
import json, sys, time
from llama_cpp import Llama
import llama_cpp
path, prompt = sys.argv[1], sys.argv[5]
threads, tokens, reps = (int(a) for a in sys.argv[2:5])
t0 = time.monotonic()
llm = Llama(model_path=path, n_ctx=2048, n_threads=threads, n_threads_batch=threads, verbose=False)
load = time.monotonic() - t0
msgs = [{"role": "user", "content": prompt}]
def gen(n):
    llm.reset()
    t = time.monotonic()
    out = llm.create_chat_completion(messages=msgs, max_tokens=n, temperature=0.0, seed=0)
    return time.monotonic() - t, out["usage"]
gen(4)
prefill, decode = [], []
for _ in range(reps):
    t1, u1 = gen(1)
    tn, un = gen(tokens)
    prefill.append(u1["prompt_tokens"] / t1)
    extra = un["completion_tokens"] - 1
    if extra > 0:
        decode.append(extra / max(tn - t1, 1e-9))
info = llama_cpp.llama_print_system_info()
print(json.dumps({"load_s": load, "prefill": sorted(prefill)[len(prefill) // 2],
                  "decode": sorted(decode)[len(decode) // 2] if decode else None,
                  "system_info": info.decode() if isinstance(info, bytes) else str(info)}))
"""

PROMPT = ("You are a chemist. Background: " + " ".join(
    "Heterogeneous catalysts for CO2 reduction combine metal sites with porous supports; selectivity "
    "depends on the binding energy of intermediates, the local pH and mass transport.".split() * 9)
          + " Propose three research ideas as a JSON list with keys title and idea.")


def install(build: str, target: Path) -> None:
    script = ROOT / "scripts" / "install_llama.py"
    subprocess.run([sys.executable, str(script), f"--cmake-args={BUILDS[build]}",
                    "--target", str(target)], check=True, stdout=subprocess.DEVNULL)


def spin(stop_at: float) -> None:
    while time.monotonic() < stop_at:
        pass


def measure(site: Path, model: str, threads: int, tokens: int, reps: int, busy: int) -> dict[str, object]:
    path = model_path(LOCAL_MODELS[model], default_models_dir())
    if path is None:
        return {"error": f"weights not fetched (ideaharness models fetch {model})"}
    env = {**os.environ, "PYTHONPATH": str(site)}
    hogs = [multiprocessing.Process(target=spin, args=(time.monotonic() + 900,)) for _ in range(busy)]
    for hog in hogs:
        hog.start()
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, str(path), str(threads), str(tokens), str(reps),
                               PROMPT], capture_output=True, text=True, env=env, timeout=900)
    except subprocess.TimeoutExpired:
        return {"error": "no result in 900 s"}
    finally:
        for hog in hogs:
            hog.terminate()
            hog.join()
    if proc.returncode != 0:
        return {"error": f"crashed: {describe_exit(proc.returncode)}"}
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", default="portable,native,native-no-amx")
    parser.add_argument("--models", default="qwen2.5-coder-0.5b,qwen2.5-coder-1.5b")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--tokens", type=int, default=65)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--busy", type=int, default=0, help="also measure with this many busy processes")
    parser.add_argument("--baseline", default="native-no-amx")
    args = parser.parse_args()
    builds = args.builds.split(",")
    rows: list[tuple[str, str, int, int, dict[str, object]]] = []
    with tempfile.TemporaryDirectory(prefix="ih-llama-builds-") as tmp:
        for build in builds:
            site = Path(tmp) / build
            install(build, site)
            for model in args.models.split(","):
                for busy in sorted({0, args.busy}):
                    for threads in (int(t) for t in args.threads.split(",")):
                        result = measure(site, model, threads, args.tokens, args.reps, busy)
                        rows.append((build, model, threads, busy, result))
                        features = build_features(str(result.get("system_info", "")))
                        has_amx = any(k.startswith("AMX") and v for k, v in features.items())
                        amx = "AMX" if has_amx else "no AMX"
                        print(f"{build:14} {model:20} threads={threads} busy={busy}: "
                              + (str(result["error"]) if "error" in result else
                                 f"decode {result['decode']:.1f} tok/s, "
                                 f"prefill {result['prefill']:.0f} tok/s, "
                                 f"load {result['load_s']:.1f} s ({amx})"), flush=True)
    ran = any(r[0] == args.baseline and "error" not in r[4] for r in rows)
    base_name = args.baseline if ran else builds[0]
    base = {(m, t, b): r for n, m, t, b, r in rows if n == base_name and "error" not in r}
    print(f"\nratios to {base_name} (same model, threads and load), decode / prefill:")
    for build, model, threads, busy, result in rows:
        ref = base.get((model, threads, busy))
        if build == base_name or ref is None or "error" in result or not result.get("decode"):
            continue
        print(f"{build:14} {model:20} threads={threads} busy={busy}: "
              f"{result['decode'] / ref['decode']:.2f} / {result['prefill'] / ref['prefill']:.2f}")  # type: ignore[operator]
    return 0


if __name__ == "__main__":
    sys.exit(main())
