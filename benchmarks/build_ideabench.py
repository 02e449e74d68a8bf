"""Build a 20-target IdeaBench dataset against the local S2 replay server; print requests and wall time.

The server (a real HTTP server on 127.0.0.1) emulates the S2 Graph API over the recorded real
records in shared/data/raw (see ideaharness.testing.s2_emulator). Runs:
  1. cold build (empty cache),
  2. interrupted build (server fails after half the requests) + resumed build,
  3. warm re-run of the finished build (must send 0 requests).
Prints request counts, wall times and the projected wall time at S2's 1 request/s with a key.

Usage: python benchmarks/build_ideabench.py [--raw ../shared/data/raw] [--targets 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from ideaharness.data.builders.ideabench import IdeaBenchSettings, build_ideabench
from ideaharness.scholarly import ScholarlyError, SemanticScholar
from ideaharness.testing.s2_emulator import corpus_from_recordings
from ideaharness.testing.scholarly_replay import ReplayServer


async def _build(server: ReplayServer, out: Path, settings: IdeaBenchSettings) -> tuple[float, int, int]:
    start = time.perf_counter()
    async with SemanticScholar(
        base_url=server.base_url, api_key="", cache_dir=out / "cache", min_interval_s=0.0, max_retries=0
    ) as client:
        await build_ideabench(out, settings, client)
        return time.perf_counter() - start, client.stats.requests, client.stats.cache_hits


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "raw"))
    parser.add_argument("--targets", type=int, default=20, help="targets in total (split over 2 strategies)")
    args = parser.parse_args()
    emulator = corpus_from_recordings(args.raw, seed=0, bulk_page_size=100)
    half = args.targets // 2
    settings = IdeaBenchSettings(
        year=2023,
        top_venues=["arXiv.org"],
        fields_of_study=["Computer Science"],
        min_citations_other=5,
        max_targets=half,
        min_reference_citations=1,
    )
    with tempfile.TemporaryDirectory() as tmp:
        cold = Path(tmp) / "cold"
        with ReplayServer() as server:
            emulator.mount(server)
            wall, sent, hits = await _build(server, cold, settings)
            served = server.requests
        manifest = json.loads((cold / "manifest.json").read_text())
        counts = manifest["counts"]
        print(
            f"cold build: {counts['targets']} targets ({counts['targets_by_strategy']}), "
            f"{counts['references_raw']} references fetched -> {counts['instances']} instances, "
            f"{counts['references_kept']} references kept"
        )
        print(
            f"cold build: {sent} requests (server saw {served}), {hits} cache hits, wall {wall:.2f} s, "
            f"{1000 * wall / max(sent, 1):.1f} ms/request"
        )
        print(f"projected at S2's 1 request/s (1.05 s spacing): {sent * 1.05:.0f} s")

        resumed = Path(tmp) / "resumed"
        with ReplayServer() as server:
            emulator.mount(server)
            server.fail_after = served // 2
            start = time.perf_counter()
            try:
                await _build(server, resumed, settings)
            except ScholarlyError:
                pass
            first = server.requests
            server.fail_after = None
            wall2, sent2, hits2 = await _build(server, resumed, settings)
            wall2 = time.perf_counter() - start
            keys_ok_first = {k for k, s in server.log[:first] if s == 200}
            repeated = sum(1 for k, _ in server.log[first:] if k in keys_ok_first)
        same = all(
            (resumed / n).read_bytes() == (cold / n).read_bytes()
            for n in ("instances.jsonl", "target_papers.csv", "filtered_references.csv")
        )
        print(
            f"interrupted after {first} requests (1 failed) + resume: {sent2} more requests, "
            f"{hits2} cache hits, {repeated} successful requests repeated, total wall {wall2:.2f} s, "
            f"identical output: {same}"
        )

        with ReplayServer() as server:
            emulator.mount(server)
            wall3, sent3, hits3 = await _build(server, cold, settings)
        print(f"warm re-run: {sent3} requests, {hits3} cache hits, wall {wall3:.2f} s")


if __name__ == "__main__":
    asyncio.run(main())
