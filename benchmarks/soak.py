"""Soak: all four benchmarks through a fault-injecting loopback endpoint, compared with a clean run.

A deterministic loopback model (:class:`ideaharness.testing.openai_server.OpenAICompatServer` with
:func:`soak_reply`, which answers every step's prompt with a well-formed reply that depends only on
the prompt) serves each benchmark twice through the real CLI:

* clean: no faults; must finish in one run (exit 0);
* faulty: ``--fault-rate`` (30 %) of requests get a 429, a 500, a hang past ``--timeout``, a
  garbled reply text or a body that is not JSON (:class:`~ideaharness.testing.openai_server.Faults`);
  the same command is re-run until it exits 0 (complete), as a user would.

Printed per benchmark (goals in brackets):

* runs: CLI runs the faulty run needed to finish [1], with their exit statuses;
* lost: records of the clean run missing from the finished faulty run [0];
* coerced: records whose parsed value (or parse status) differs from the clean run [0];
* dup lines: record lines written twice for one unit [0];
* faults: faults served, by kind; wall: seconds.

Usage: python benchmarks/soak.py [--fault-rate 0.3] [--seed 0] [--only ideabench ...] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ideaharness.testing.openai_server import Faults, OpenAICompatServer

ROOT = Path(__file__).resolve().parents[1]
LIGBENCH_CORPUS = ROOT / "tests" / "ligbench" / "fixtures" / "pairiq_mini.jsonl"
MAX_RUNS = 30
COMMON = ["--generator", "openai/soak", "--judge", "openai/soak", "--timeout", "1", "--max-retries", "6"]
WORDS = ("ionic gel redox couple thermopower membrane catalyst lattice dopant solvent interface "
         "polymer electrode spectroscopy diffusion crystal").split()


# ----------------------------------------------------------------------------- the model


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def _phrase(seed: int, n: int = 4) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _hypothesis(seed: int) -> str:
    return (f"We hypothesise that combining {_phrase(seed)} with {_phrase(seed + 1)} raises the measured "
            f"response, because the {_phrase(seed + 2, 2)} couples to the {_phrase(seed + 3, 2)}; a "
            "controlled experiment varying one factor at a time would test it.")


DATA_BLOCK = re.compile(r"<([a-z][a-z0-9_]*)>\n.*?\n</\1>", re.S)


def soak_reply(body: dict[str, Any]) -> str:
    """A well-formed reply to any step of the four benchmarks, a function of the prompt only.

    The step is recognised from the instructions (the prompt without its delimited data), so a
    paper or model text that happens to quote another step's wording cannot change the step.
    """
    full = body["messages"][-1]["content"]
    h = _h(full)
    user = DATA_BLOCK.sub("", full)
    # IdeaBench
    if m := re.search(r"holding exactly (\d+) ideas", user):
        return json.dumps({"ideas": [{"title": f"Idea {i}: {_phrase(h + i, 3)}", "idea": _hypothesis(h + i)}
                                     for i in range(int(m.group(1)))]})
    if "Rate how much the generated idea overlaps" in user:
        return json.dumps({"rating": 1 + h % 10, "explanation": "They share the central mechanism."})
    if "Rank the following" in user and (m := re.search(r"exactly once \(([A-Z, ]+)\)", user)):
        labels = m.group(1).split(", ")
        random.Random(h).shuffle(labels)
        return json.dumps({"ranking": labels, "rationale": "ordered by the stated indicator"})
    if 'Begin with "Hypothesis:"' in user:
        return "Hypothesis: " + _hypothesis(h)
    # AI Idea Bench
    if '"experiment_plan"' in user and '"topic"' in user and '"motivation"' in user:
        return json.dumps({"topic": f"The topic of this paper is {_phrase(h, 3)}.",
                           "motivation": f"Prior work on {_phrase(h, 2)} misses {_phrase(h + 1, 2)}.",
                           "experiment_plan": f"Prepare samples: {_phrase(h, 3)}\n"
                                              f"Measure: {_phrase(h + 1, 3)}"})
    if "Propose one new research idea on this topic" in user:
        return json.dumps({"title": _phrase(h, 3), "motivation": _hypothesis(h),
                           "experiment_plan": f"Step 1: {_phrase(h, 3)}\nStep 2: {_phrase(h + 1, 3)}"})
    if "closest in content" in user:
        return json.dumps({"closest_option": "ABCD"[h % 4], "explanation": "closest aims"})
    if "Rate how similar" in user:
        return json.dumps({"rating": 1 + h % 5, "explanation": "partly the same approach"})
    if "how well the motivation" in user:
        return json.dumps({"motivation_alignment": 1 + h % 5, "experiment_plan_alignment": 1 + (h // 5) % 5,
                           "comments": "addresses the topic"})
    # ResearchBench
    if "candidate inspiration papers" in user:
        titles = re.findall(r"Candidate \d+:\n<title>\n(.+?)\n</title>", full)
        keep = int(re.search(r"Select the (\d+) candidates", user).group(1))  # type: ignore[union-attr]
        random.Random(h).shuffle(titles)
        return "\n\n".join(f"Title: {t}\nReason: it transfers to the question." for t in titles[:keep])
    if "Matched score:" in user:
        return f"Matched score: {h % 6}\nReason: some key points are covered."
    if "Selection of research hypothesis candidate" in user:
        return (f"**Analysis**: one is more specific.\n**Selection of research hypothesis candidate**: "
                f"candidate {1 + h % 2}")
    if "Critique:" in user:
        return f"Critique: it is vague about {_phrase(h, 2)}.\nHypothesis: {_hypothesis(h)}"
    if "Hypothesis: <" in user:
        return f"Hypothesis: {_hypothesis(h)}\nReasoning: the inspirations supply the mechanism."
    # LigBench
    if "Write the idea in Markdown" in user:
        return (f"## Problem\n{_hypothesis(h)}\n## Method\n{_phrase(h + 1, 6)}\n"
                f"## Experiment Design\n{_phrase(h + 2, 6)}")
    if "Restate the research idea below in four parts" in user:
        return json.dumps({"main_target": _phrase(h, 5), "core_breakthrough": _phrase(h + 1, 6),
                           "innovative_methods": f"1. {_phrase(h + 2, 3)}\n2. {_phrase(h + 3, 3)}",
                           "experimental_design": f"1. {_phrase(h + 4, 3)}\n2. {_phrase(h + 5, 3)}"})
    if "Now score this new idea" in user:
        return json.dumps({k: round(1 + (h >> i) % 40 / 10, 1)
                           for i, k in enumerate(("rating", "contribution", "soundness", "novelty"))})
    if '"soundness"' in user and '"contribution"' in user:
        values = (0, 0.5, 1)
        keys = ("rating", "soundness", "contribution")
        return json.dumps({k: values[(h >> i) % 3] for i, k in enumerate(keys)})
    return "UNKNOWN PROMPT " + user[:80]


# ----------------------------------------------------------------------------- the runs


def commands(url: str, work: Path) -> dict[str, list[str]]:
    topics = work / "topics.txt"
    topics.write_text("Sample-efficient reinforcement learning\nLearning on graphs\n", encoding="utf-8")
    corpus = work / "corpus" / "pairiq_mini.jsonl"
    if not corpus.exists():
        corpus.parent.mkdir(parents=True)
        shutil.copy(LIGBENCH_CORPUS, corpus)
    base = [*COMMON, "--base-url", url]
    return {
        "ideabench": ["run", "ideabench", *base, "--limit", "6", "--scenario", "low", "--scenario", "high"],
        "aiideabench": ["run", "aiideabench", *base, "--limit", "4", "--metric", "imcq", "--metric", "i2i",
                        "--metric", "i2t"],
        "researchbench": ["run", "researchbench", *base, "--limit", "2", "--corpus-size", "150",
                          "--n-mutations", "1", "--n-refine", "1", "--n-negatives", "2"],
        "ligbench": ["run", "ligbench", *base, "--corpus", str(corpus), "--topics", str(topics),
                     "--max-comparisons", "3", "--min-comparisons", "2"],
    }


def run_cli(args: list[str], out: Path, cache: Path) -> int:
    env = {**os.environ, "IDEAHARNESS_CACHE_DIR": str(cache)}
    env.pop("OPENAI_API_KEY", None)
    with (out.parent / f"{out.name}.log").open("a", encoding="utf-8") as log:
        cli = [sys.executable, "-c", "from ideaharness.cli import main; main()"]
        proc = subprocess.run([*cli, *args, "--out", str(out)],
                              env=env, stdout=log, stderr=subprocess.STDOUT, timeout=900, check=False)
    return proc.returncode


def load_records(run_dir: Path) -> tuple[dict[tuple[str, str, str], Any], int]:
    """Records by (step, instance, key), and the number of duplicate lines."""
    records: dict[tuple[str, str, str], Any] = {}
    lines: Counter[tuple[str, str, str]] = Counter()
    for path in sorted((run_dir / "records").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            key = (rec["step"], rec["instance_id"], rec["key"])
            lines[key] += 1
            records[key] = rec["data"]
    return records, sum(n - 1 for n in lines.values())


def essence(data: Any) -> Any:
    """What must not change with faults: a judgment's parse status and parsed value, and the rest of
    the record (attempts, raw text, errors and usage may differ)."""
    if isinstance(data, dict) and "judgment" in data:
        rest = {k: v for k, v in data.items() if k not in ("judgment", "prompt_truncations")}
        return {"parse_ok": data["judgment"]["parse_ok"], "parsed": data["judgment"]["parsed"], **rest}
    return data


def compare(clean: Path, faulty: Path) -> dict[str, Any]:
    a, _ = load_records(clean)
    b, dup = load_records(faulty)
    both = sorted(set(a) & set(b))
    differing = [k for k in both if json.dumps(essence(a[k]), sort_keys=True) != json.dumps(essence(b[k]),
                                                                                            sort_keys=True)]
    failed_parse = [k for k in differing if isinstance(b[k], dict) and "judgment" in b[k]
                    and a[k]["judgment"]["parse_ok"] and not b[k]["judgment"]["parse_ok"]]
    return {"clean_records": len(a), "lost": len(set(a) - set(b)), "extra": len(set(b) - set(a)),
            "coerced": len(differing) - len(failed_parse), "parse_failures_from_faults": len(failed_parse),
            "duplicate_lines": dup, "coerced_examples": [list(k) for k in differing[:3]]}


def soak(name: str, args: list[str], work: Path, rate: float, seed: int) -> dict[str, Any]:
    clean_out, faulty_out = work / f"{name}-clean", work / f"{name}-faulty"
    with OpenAICompatServer(soak_reply) as clean:
        argv = [clean.base_url if a == "URL" else a for a in args]
        clean_code = run_cli(argv, clean_out, work / f"cache-{name}-clean")
        unknown = sum("UNKNOWN PROMPT" in soak_reply(r.body) for r in clean.requests)
    if clean_code != 0:
        raise SystemExit(f"{name}: the fault-free run exited {clean_code} (see {clean_out}.log)")
    faults = Faults(rate=rate, seed=seed, hang_s=3.0)
    codes: list[int] = []
    start = time.monotonic()
    with OpenAICompatServer(soak_reply, faults=faults) as faulty:
        argv = [faulty.base_url if a == "URL" else a for a in args]
        while len(codes) < MAX_RUNS:
            codes.append(run_cli(argv, faulty_out, work / f"cache-{name}-faulty"))
            if codes[-1] == 0:
                break
        served = dict(faulty.fault_counts)
        requests = len(faulty.requests)
    return {"benchmark": name, "clean_exit": clean_code, "unknown_prompts": unknown, "runs": len(codes),
            "exit_codes": codes, "requests": requests, "faults": served,
            "wall_s": round(time.monotonic() - start, 1), **compare(clean_out, faulty_out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fault-rate", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="*", default=None, help="benchmarks to soak (default all four)")
    parser.add_argument("--keep", type=Path, default=None, help="keep run directories and logs here")
    ns = parser.parse_args()
    work = ns.keep or Path(tempfile.mkdtemp(prefix="soak-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, args in commands("URL", work).items():
        if ns.only and name not in ns.only:
            continue
        row = soak(name, args, work, ns.fault_rate, ns.seed)
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(f"\nfault rate {ns.fault_rate:.0%}, seed {ns.seed}; logs and run directories in {work}")
    header = f"{'benchmark':<14}{'runs [1]':>9}{'lost [0]':>10}{'coerced [0]':>13}{'dup lines [0]':>15}" \
             f"{'parse fail':>12}{'requests':>10}  faults served"
    print(header)
    for r in rows:
        faults = ", ".join(f"{k} {v}" for k, v in sorted(r["faults"].items()))
        print(f"{r['benchmark']:<14}{r['runs']:>9}{r['lost']:>10}{r['coerced']:>13}{r['duplicate_lines']:>15}"
              f"{r['parse_failures_from_faults']:>12}{r['requests']:>10}  {faults}")
    if ns.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
