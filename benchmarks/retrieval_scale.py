"""Hybrid retrieval at corpus scale: exact full-sort fusion vs top-K fusion vs top-K + IVF index.

For each corpus size n (default 10k, 100k, 1M) a child process builds a synthetic corpus —
384-d unit vectors (clustered around 1,000 topics, like real abstracts; ``--uniform`` for plain
random vectors, the worst case for any ANN index) and documents of 40 Zipf-distributed tokens
from a 30k vocabulary — indexes it with :class:`ideaharness.retrieval.HybridIndex` and measures:

* build time (BM25 index; IVF index separately), and the process's peak RSS;
* per-query latency of the exact fusion (both rankings fully sorted, the old code path), of the
  top-K fusion (``candidates=K``, numpy ``argpartition`` + bm25s scores) and, when faiss is
  installed, of the top-K fusion with the IVF index for the dense ranker;
* top-10 agreement of each fast mode with the exact fusion (|top10 ∩ exact top10| / 10, mean over
  the queries measured with the exact path).

Prints ms/query against the goal (< 50 ms/query at 1M on a 2-core machine) as a ratio.

Usage: python benchmarks/retrieval_scale.py [--sizes 10000 100000 1000000] [--queries 50]
       [--exact-queries 10] [--candidates 1000] [--nprobe 32] [--uniform]
Heavy (about 3 GB RAM and a few minutes at 1M): run under ``flock /tmp/ideaharness-model.lock``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

GOAL_MS = 50.0
DIM = 384
VOCAB = 30_000
DOC_TOKENS = 40


def synthetic_corpus(n: int, *, uniform: bool, seed: int = 0) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, VOCAB + 1)
    p = 1.0 / ranks
    p /= p.sum()
    tokens = rng.choice(VOCAB, size=(n, DOC_TOKENS), p=p)
    texts = [" ".join(f"w{t}" for t in row) for row in tokens]
    vectors = np.empty((n, DIM), dtype=np.float32)
    centers = rng.standard_normal((1000, DIM)).astype(np.float32)
    for start in range(0, n, 100_000):  # in blocks: float64 temporaries of 1M x 384 would be 3 GB
        m = min(100_000, n - start)
        block = rng.standard_normal((m, DIM), dtype=np.float32)
        if not uniform:
            block = centers[rng.integers(1000, size=m)] + 0.6 * block
        vectors[start:start + m] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return texts, vectors


def one_size(n: int, args: argparse.Namespace) -> dict[str, object]:
    from ideaharness.retrieval import HybridIndex, IVFIndex
    from ideaharness.retrieval.ann import faiss_available

    texts, vectors = synthetic_corpus(n, uniform=args.uniform)
    rng = np.random.default_rng(1)
    picks = rng.integers(n, size=args.queries)
    queries = [(" ".join(texts[i].split()[:6]),
                (v := vectors[i] + 0.3 * rng.standard_normal(DIM).astype(np.float32)) / np.linalg.norm(v))
               for i in picks]
    ids = [f"d{i}" for i in range(n)]
    start = time.perf_counter()
    index = HybridIndex(ids, texts, vectors, candidates=args.candidates, ann="off")
    build_s = time.perf_counter() - start
    del texts

    def run(mode_candidates: int | None, ann: object, count: int) -> tuple[float, list[list[int]]]:
        index.candidates, index.ann = mode_candidates, ann
        tops, start = [], time.perf_counter()
        for text, q in queries[:count]:
            tops.append([h.index for h in index.search(text, 10, query_embedding=q)])
        return (time.perf_counter() - start) / count * 1000, tops

    exact_ms, exact_tops = run(None, None, args.exact_queries)
    modes = {"exact": {"ms": exact_ms, "agreement": 1.0}}
    ms, tops = run(args.candidates, None, args.queries)
    modes[f"top{args.candidates}"] = {"ms": ms, "agreement": agreement(tops, exact_tops)}
    ivf_build_s = None
    if faiss_available() and n >= 10_000:
        start = time.perf_counter()
        ivf = IVFIndex(vectors, nprobe=args.nprobe)
        ivf_build_s = time.perf_counter() - start
        ms, tops = run(args.candidates, ivf, args.queries)
        modes[f"top{args.candidates}+ivf"] = {"ms": ms, "agreement": agreement(tops, exact_tops)}
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"n": n, "build_s": build_s, "ivf_build_s": ivf_build_s, "peak_rss_mb": rss_mb, "modes": modes}


def agreement(tops: list[list[int]], exact: list[list[int]]) -> float:
    return float(np.mean([len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(tops, exact, strict=False)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=50, help="queries timed per fast mode")
    parser.add_argument("--exact-queries", type=int, default=10, help="queries timed with the exact fusion")
    parser.add_argument("--candidates", type=int, default=1000, help="K: documents per ranker in the fusion")
    parser.add_argument("--nprobe", type=int, default=32, help="IVF cells scanned per query")
    parser.add_argument("--uniform", action="store_true", help="plain random unit vectors (no topics)")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_size(args.one, args)))
        return
    kind = "uniform" if args.uniform else "clustered"
    print(f"hybrid retrieval, {kind} {DIM}-d vectors, K={args.candidates}, nprobe={args.nprobe}; "
          f"goal < {GOAL_MS:g} ms/query at 1M; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'n':>9} {'mode':>14} {'ms/query':>9} {'x goal':>7} {'top10 agr':>9} {'build s':>8} "
          f"{'peak RSS MB':>11}")
    for n in args.sizes:
        child = [sys.executable, __file__, "--one", str(n), "--queries", str(args.queries),
                 "--exact-queries", str(args.exact_queries), "--candidates", str(args.candidates),
                 "--nprobe", str(args.nprobe)] + (["--uniform"] if args.uniform else [])
        done = subprocess.run(child, check=True, capture_output=True, text=True)
        out = json.loads(done.stdout.splitlines()[-1])
        for mode, m in out["modes"].items():
            build = out["ivf_build_s"] if mode.endswith("ivf") else out["build_s"]
            print(f"{n:>9} {mode:>14} {m['ms']:>9.1f} {m['ms'] / GOAL_MS:>7.2f} {m['agreement']:>9.2f} "
                  f"{build:>8.1f} {out['peak_rss_mb']:>11.0f}")


if __name__ == "__main__":
    main()
