"""Synthetic data and scripted replies for benchmarks/run_efficiency.py (made up: never a result).

* :func:`write_ideabench_instances`: IdeaBench targets (title + 160-word abstract) with five
  references each (100-word abstracts), as Instance JSONL;
* :func:`write_topics` and :func:`write_pairiq_corpus`: LigBench topics (one per line) and a
  PAIR-IQ-format reference corpus (venues, scores, the four-part analysis) of invented papers;
* :func:`reply`: the loopback server's answer to every prompt of both benchmarks, a function of
  the request body only (``python -m ideaharness.testing.fast_server --responder
  _run_efficiency_data:reply``). Generated ideas depend on the generator's model name and on the
  prompt, so another generator on the same targets writes other ideas.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ideaharness.schema import Instance, Paper, Reference


def _vocabulary(size: int = 3000) -> list[str]:
    """The ``size`` commonest words (letters only, 3+ characters, lower case) of the bundled
    Inspiration corpus's titles and abstracts: synthetic texts tokenize like scientific English."""
    from ideaharness.data.tomato import bundled_path

    corpus = json.loads(bundled_path("Inspiration_Corpus_1000.json").read_text(encoding="utf-8"))
    words = (w.lower() for entry in corpus for text in entry for w in re.findall(r"[A-Za-z]{3,}", text))
    counts = Counter(words)
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:size]]


WORDS = _vocabulary()
"""Vocabulary of the synthetic texts (real words in made-up order: never a result)."""
VENUES = [("ICLR", 2024), ("ICLR", 2025), ("NeurIPS", 2024)]
IDEA_WORDS = 80
"""Words of a generated idea (IdeaBench asks for a brief paragraph)."""


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, k=n))


def write_ideabench_instances(path: Path, n: int, seed: int = 0) -> Path:
    """``n`` IdeaBench instances: a target (title, 160-word abstract) and 5 references with
    100-word abstracts (no citation metadata: the reference filter keeps them all)."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            refs = [Reference(id=f"ref-{i}-{k}", title=f"Reference {i}.{k}", abstract=_text(rng, 100))
                    for k in range(5)]
            inst = Instance(id=f"inst-{i:06d}", dataset="synthetic", domain="synthetic science",
                            target=Paper(id=f"paper-{i}", title=f"Paper {i}", abstract=_text(rng, 160)),
                            references=refs)
            fh.write(inst.model_dump_json(exclude_none=True) + "\n")
    return path


def write_topics(path: Path, n: int) -> Path:
    """``n`` distinct LigBench topics, one per line."""
    path.write_text("".join(f"Synthetic topic {i}: {WORDS[i % len(WORDS)]} methods\n" for i in range(n)),
                    encoding="utf-8")
    return path


def write_pairiq_corpus(path: Path, n: int = 60, seed: int = 0) -> Path:
    """``n`` invented papers in LigBench's PAIR-IQ record format (scores on 0-5)."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            conference, year = VENUES[i % len(VENUES)]
            score = round(rng.uniform(1.5, 4.5), 1)
            record = {
                "title": f"Synthetic paper {i} on {_text(rng, 4)}", "url": f"https://example.org/SYNTH{i:04d}",
                "conference": conference, "year": year, "label": "accept-poster" if score > 3 else "reject",
                "abstract": _text(rng, 100), "keywords": ["synthetic"], "primary area": "synthetic",
                "rating": score, "contribute": score, "soundness": score, "novelty": "0",
                "analysis": {"main_target": _text(rng, 15), "core_breakthrough": _text(rng, 15),
                             "innovative_methods": f"1. {_text(rng, 8)}\n2. {_text(rng, 8)}",
                             "experimental_design": f"1. {_text(rng, 8)}\n2. {_text(rng, 8)}"},
            }
            fh.write(json.dumps(record) + "\n")
    return path


# ----------------------------------------------------------------------------- replies

_FIELD = re.compile(r'^- "(\w+)" \((\d+) to (\d+) words(?:, about (\d+))?\)', re.MULTILINE)
_LABELS = re.compile(r"exactly once \(([A-Z, ]+)\)")
_N_IDEAS = re.compile(r"holding exactly (\d+) ideas")


def _rng(body: dict[str, Any], user: str) -> random.Random:
    digest = hashlib.sha256(f"{body.get('model', '')}\x00{user}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _rewrite(user: str, rng: random.Random) -> str:
    """Every field the reference-rewrite prompt asks for, at its typical length."""
    out = {}
    for name, lo, hi, about in _FIELD.findall(user):
        out[name] = "we would test whether " + _text(rng, int(about) if about else (int(lo) + int(hi)) // 2)
    return json.dumps(out)


def reply(body: dict[str, Any]) -> str:
    """The reply to one chat completion request of an IdeaBench or LigBench run (see the module
    docstring); an unknown prompt gets a reply no parser accepts (counted by the run)."""
    user = str(body["messages"][-1]["content"])
    rng = _rng(body, user)
    if user.startswith("Rewrite the ") and "<reference>" in user:
        return _rewrite(user, rng)
    if "propose" in user and '"ideas"' in user:  # IdeaBench generation
        found = _N_IDEAS.search(user)
        n = int(found.group(1)) if found else 3
        ideas = [{"title": f"Idea {i}", "idea": "We hypothesise that " + _text(rng, IDEA_WORDS)}
                 for i in range(n)]
        return json.dumps({"ideas": ideas})
    if user.startswith("Below is the abstract"):
        return "Hypothesis: " + _text(rng, 60)
    if "Rate how much" in user:
        return json.dumps({"rating": rng.randint(1, 10), "explanation": "They share some of the mechanism."})
    labels = _LABELS.search(user)
    if "Rank the following" in user and labels:
        order = labels.group(1).split(", ")
        rng.shuffle(order)
        return json.dumps({"ranking": order, "rationale": "scripted"})
    if user.startswith("Propose one new research idea"):  # LigBench generation
        return (f"## Problem\n{_text(rng, 30)}\n## Method\n{_text(rng, 40)}\n"
                f"## Experiment Design\n{_text(rng, 30)}")
    if "Restate the research idea" in user:
        return json.dumps({"main_target": _text(rng, 15), "core_breakthrough": _text(rng, 15),
                           "innovative_methods": f"1. {_text(rng, 8)}\n2. {_text(rng, 8)}",
                           "experimental_design": f"1. {_text(rng, 8)}\n2. {_text(rng, 8)}"})
    if "score this new idea" in user:
        dims = ("rating", "contribution", "soundness", "novelty")
        return json.dumps({k: rng.choice([2, 3, 4]) for k in dims})
    if user.startswith("Compare Idea A and Idea B"):
        return json.dumps({k: rng.choice([0, 0.5, 1]) for k in ("rating", "soundness", "contribution")})
    return "unrecognised prompt"
