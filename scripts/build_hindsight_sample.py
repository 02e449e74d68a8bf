#!/usr/bin/env python3
"""Build the bundled HindSight sample (``src/ideaharness/benchmarks/hindsight/data/sample/``) from
recorded real Semantic Scholar responses, offline.

The records are the 1,014 papers of ``s2-api-recordings/Paper.json`` (the citations and references
of Turing 1950 as the Semantic Scholar Graph API returned them; danielnsilva/semanticscholar
``tests/data`` @ 73c7726, MIT; the data ODC-BY 1.0, see the folder's SOURCE.md), served on
127.0.0.1 by the S2 emulator (``ideaharness.testing.s2_emulator``: its relevance search ranks by the
query words a title and abstract share, not by S2's ranker). The topics below are searched by
``ideaharness.data.builders.hindsight.build_hindsight``, exactly what ``ideaharness data build
hindsight`` runs, with the cutoff T = 2022-11-30 (the day ChatGPT was released) and the default
30-month window. The topics file keeps, of each paper's ``extra``, only ``fieldsOfStudy``.

    python scripts/build_hindsight_sample.py [--raw tests/data/recorded] [--out DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import gzip
import json
import shutil
import tempfile
from pathlib import Path

from ideaharness.data.builders.hindsight import HindsightSettings, TopicSpec, build_hindsight
from ideaharness.scholarly import SemanticScholar
from ideaharness.testing.s2_emulator import corpus_from_recordings
from ideaharness.testing.scholarly_replay import ReplayServer

ROOT = Path(__file__).resolve().parents[1]
CUTOFF = dt.date(2022, 11, 30)
AS_OF = dt.date(2024, 12, 1)
"""The day the recorded citation counts are taken to be from: the start of the recording period the
recordings' SOURCE.md states (Dec 2024 - Aug 2025); the exact day of Paper.json is not recorded."""
TOPICS = [
    ("chatbots", "Chatbots and conversational agents", "chatbot chatbots conversational agents dialogue"),
    ("llm", "Large language models", "large language models"),
    ("turing-test", "The Turing test and evaluating machine intelligence", "turing test imitation game"),
    ("consciousness", "Machine consciousness", "consciousness conscious machines"),
    ("education", "Artificial intelligence in education", "education students teaching learning"),
    ("health", "Artificial intelligence in healthcare and medicine", "healthcare medical medicine clinical"),
    ("robots", "Social robots and human-robot interaction", "robots robot human-robot interaction"),
    ("ethics", "Ethics of artificial intelligence", "ethics ethical moral responsibility"),
]


def _slim(paper: dict) -> dict:
    extra = paper.get("extra") or {}
    return {**paper, "extra": {k: extra[k] for k in ("fieldsOfStudy",) if extra.get(k)}}


async def build(raw: Path, out: Path) -> dict:
    emulator = corpus_from_recordings(raw, seed=0)
    settings = HindsightSettings(
        topics=[TopicSpec(id=f"{key}@{CUTOFF}", topic=text, query=query, cutoff=CUTOFF,
                          field="Computer Science") for key, text, query in TOPICS],
        n_literature=15, n_future=40, as_of=AS_OF)
    with tempfile.TemporaryDirectory() as tmp, ReplayServer() as server:
        emulator.mount(server)
        async with SemanticScholar(base_url=server.base_url, api_key="", min_interval_s=0.0,
                                   max_retries=0) as client:
            result = await build_hindsight(Path(tmp), settings, {"s2": client})
        text = (Path(tmp) / "topics.jsonl").read_text(encoding="utf-8")
        rows = [json.loads(line) for line in text.splitlines()]
        manifest = json.loads((Path(tmp) / "manifest.json").read_text(encoding="utf-8"))
    for row in rows:
        row["literature"] = [_slim(p) for p in row["literature"]]
        row["future"] = [_slim(p) for p in row["future"]]
    out.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    with gzip.GzipFile(out / "topics.jsonl.gz", "wb", mtime=0) as fh:  # mtime 0: the same bytes every build
        fh.write(text.encode("utf-8"))
    manifest.pop("http", None)
    for key in ("created", "updated"):
        manifest.pop(key, None)
    manifest["source"] = "s2-api-recordings/Paper.json served by ideaharness.testing.s2_emulator"
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n",
                                       encoding="utf-8")
    for name in ("LICENSE",):
        shutil.copy(raw / "s2-api-recordings" / name, out / "LICENSE.recordings")
    return result.counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw", type=Path, default=ROOT / "tests" / "data" / "recorded")
    parser.add_argument("--out", type=Path,
                        default=ROOT / "src" / "ideaharness" / "benchmarks" / "hindsight" / "data" / "sample")
    args = parser.parse_args()
    counts = asyncio.run(build(args.raw, args.out))
    print(json.dumps(counts, indent=2))


if __name__ == "__main__":
    main()
