"""Build the bundled TOMATO-Chem data shipped in src/ideaharness/data/bundled/.

Reads MOOSE-Chem's chem_research_2024.xlsx (sheet ``Overall``) through the shared ResearchBench
spreadsheet loader, matches every inspiration title to Inspiration_Corpus_1000.json (exact ->
normalised -> fuzzy >= threshold, never below), prints the match counts and any unmatched or
fuzzy title, checks the titles against the 150 and 300 corpora too, and writes:

  bundled/tomato_chem.jsonl            one Instance a line
  bundled/Inspiration_Corpus_{150,300,1000}.json   byte-identical copies
  bundled/NOTICE                       MOOSE-Chem MIT notice, source commit, sha256 of each file

Usage:  .venv/bin/python scripts/build_bundled_tomato.py [--raw-dir DIR] [--out DIR] [--threshold 0.9]
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import sys
from pathlib import Path

from ideaharness.data.corpus import load_corpus_file
from ideaharness.data.matching import DEFAULT_TITLE_THRESHOLD, match_title
from ideaharness.data.tomato import (
    BUNDLED_FILE,
    CORPUS_SIZES,
    convert_tomato,
    corpus_file_name,
    write_instances_jsonl,
)

REPO = Path(__file__).resolve().parents[1]
DEFAULT_RAW = REPO.parent / "shared" / "data" / "raw" / "moose-chem"
DEFAULT_OUT = REPO / "src" / "ideaharness" / "data" / "bundled"

MIT_TEXT = """MIT License

Copyright (c) 2025 Zonglin Yang

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def source_commit(raw_dir: Path) -> str:
    text = (raw_dir / "PROVENANCE.md").read_text(encoding="utf-8")
    m = re.search(r"commit ([0-9a-f]{40})", text)
    if not m:
        sys.exit(f"error: {raw_dir / 'PROVENANCE.md'}: no 40-hex source commit found")
    return m.group(1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw-dir", type=Path, default=DEFAULT_RAW)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--threshold", type=float, default=DEFAULT_TITLE_THRESHOLD)
    args = ap.parse_args(argv)
    raw: Path = args.raw_dir
    out: Path = args.out
    xlsx = raw / "chem_research_2024.xlsx"

    instances, report = convert_tomato(xlsx, raw / corpus_file_name(1000), threshold=args.threshold)
    c = report.counts
    print(
        f"{len(instances)} papers, {sum(c.values())} inspirations matched to {report.corpus} "
        f"(threshold {report.threshold}): exact {c['exact']}, normalised {c['normalised']}, "
        f"fuzzy {c['fuzzy']}, unmatched {c['none']}"
    )
    for inst_id, title, corpus_title, sim in report.fuzzy:
        print(f"  fuzzy {sim:.3f} {inst_id}: {title!r} -> {corpus_title!r}")
    for inst_id, title in report.unmatched:
        print(f"  unmatched {inst_id}: {title!r}")

    annotated = [r.extra["annotated_title"] for inst in instances for r in inst.references]
    for size in CORPUS_SIZES:
        titles = [p.title for p in load_corpus_file(raw / corpus_file_name(size))]
        found = sum(match_title(t, titles, threshold=args.threshold).index is not None for t in annotated)
        print(
            f"  {corpus_file_name(size)}: {len(titles)} papers, holds {found}/{len(annotated)} inspirations"
        )

    out.mkdir(parents=True, exist_ok=True)
    write_instances_jsonl(instances, out / BUNDLED_FILE)
    rows = [f"  {sha256(out / BUNDLED_FILE)}  {BUNDLED_FILE} (converted)"]
    for size in CORPUS_SIZES:
        name = corpus_file_name(size)
        shutil.copyfile(raw / name, out / name)
        rows.append(f"  {sha256(out / name)}  {name} (copy of Data/{name})")
    notice = [
        "Data in this folder comes from MOOSE-Chem / TOMATO-Chem (Yang et al., ICLR 2025),",
        f"github.com/ZonglinY/MOOSE-Chem, commit {source_commit(raw)}, folder Data/.",
        "tomato_chem.jsonl is converted by scripts/build_bundled_tomato.py from sheet 'Overall' of",
        "Data/chem_research_2024.xlsx plus abstracts from Data/Inspiration_Corpus_1000.json;",
        "the Inspiration_Corpus_*.json files are unmodified copies. It is redistributed under the",
        "MIT licence of MOOSE-Chem, reproduced below.",
        "",
        "sha256 of the files here:",
        *rows,
        "",
        MIT_TEXT,
    ]
    (out / "NOTICE").write_text("\n".join(notice), encoding="utf-8")
    print(f"wrote {out / BUNDLED_FILE}, {len(CORPUS_SIZES)} corpora and NOTICE to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
