"""BERTScore with stored embeddings vs the old path vs a bare forward pass, in one process.

Texts: ``--targets`` target abstracts (TOMATO-Chem's 116 distinct inspiration abstracts, ~1,100
characters, then seeded recombinations of their sentences to reach the count) and ``--ideas`` ideas
per target (~400 characters, recombined sentences: distinct per system), scored in calls of
``--call-targets`` targets as IdeaBench does (16 targets x 3 ideas = 48 pairs per call). Rows:

* floor: a bare forward pass of the same model (bert-score's ``get_model``, cut at the layer) over
  the distinct texts of system A's scoring, tokenised and batched by length as the new path batches
  them, nothing else (measured first and last; the faster of the two);
* old path: ``bert_score.BERTScorer.score`` per call, as ideaharness called it before (embeds every
  distinct text of every call; the same target again in each call that has it);
* new, no store: :class:`~ideaharness.metrics.similarity.BertScorer` with ``--no-embedding-cache``
  (each call embeds its texts, batched by length);
* new, cold: an empty store (system A: every text embedded once, the targets kept); as
  IdeaBench's similarity phase does, the phase's texts are first embedded in one pass
  (:meth:`~ideaharness.metrics.similarity.BertScorer.prepare`), then scored call by call;
* new, warm references: a second system (new ideas, the same targets, a new scorer on the same
  store): only the ideas are embedded;
* new, system A again (a re-scored run in a new run directory): the targets come from the store,
  the ideas are embedded again (ideas are not stored: a resumed run keeps its recorded scores).

Each row: distinct texts embedded, wall seconds, pairs/s and pairs/s relative to the floor
(the floor's pairs are system A's). Model loads are done before the clock starts. Also printed:
the largest |F1 new - F1 old| over all pairs, and the store's size on disk.

Usage: flock /tmp/ideaharness-model.lock python benchmarks/embedding_reuse.py [--targets 200]
       [--ideas 3] [--call-targets 16] [--rounds 2]
"""

from __future__ import annotations

import argparse
import random
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

SENTENCE = re.compile(r"(?<=[.!?])\s+")


def corpus(n_targets: int, n_ideas: int, seed: int = 0
           ) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """(targets, system A's ideas per target, system B's ideas per target), all distinct."""
    from ideaharness.data.tomato import load_tomato_chem

    real = [t for t in dict.fromkeys(r.abstract for i in load_tomato_chem() for r in i.references
                                     if r.abstract) if t]
    sentences = [s for text in real for s in SENTENCE.split(text) if len(s) > 40]
    rng = random.Random(seed)

    def recombined(chars: int, prefix: str) -> str:
        out = prefix
        while len(out) < chars:
            out += " " + rng.choice(sentences)
        return out

    targets = real[:n_targets] + [recombined(1100, f"Synthetic abstract {i}.")
                                  for i in range(n_targets - len(real))]
    ideas_a = [[recombined(400, f"Idea {k} (system A, target {i}):") for k in range(n_ideas)]
               for i in range(n_targets)]
    ideas_b = [[recombined(400, f"Idea {k} (system B, target {i}):") for k in range(n_ideas)]
               for i in range(n_targets)]
    return targets, ideas_a, ideas_b


def calls(targets: Sequence[str], ideas: Sequence[Sequence[str]], per_call: int
          ) -> list[tuple[list[str], list[str]]]:
    """(candidates, references) per call: ``per_call`` targets with all their ideas."""
    out = []
    for start in range(0, len(targets), per_call):
        cands = [idea for i in range(start, min(start + per_call, len(targets))) for idea in ideas[i]]
        refs = [targets[i] for i in range(start, min(start + per_call, len(targets))) for _ in ideas[i]]
        out.append((cands, refs))
    return out


def timed(fn: Callable[[], list[float]]) -> tuple[float, list[float]]:
    start = time.perf_counter()
    values = fn()
    return time.perf_counter() - start, values


def floor_pass(texts: list[str], path: str, layers: int) -> float:
    """Seconds for tokenising and one forward pass over ``texts``, batched by length as the new path
    batches (:func:`~ideaharness.metrics.similarity.length_batches`)."""
    import torch
    from bert_score.utils import bert_encode, padding

    from ideaharness.metrics.similarity import _model, _tokenizer, encode_text, length_batches

    tokenizer, model = _tokenizer(path), _model(path, layers, "cpu")
    start = time.perf_counter()
    ids = [encode_text(tokenizer, t) for t in texts]
    for rows in length_batches([len(x) for x in ids]):
        padded, _, mask = padding([ids[i] for i in rows], tokenizer.pad_token_id, dtype=torch.long)
        bert_encode(model, padded, attention_mask=mask)
    return time.perf_counter() - start


def one_round(args: argparse.Namespace, store_dir: Path) -> None:
    from bert_score import BERTScorer

    from ideaharness.metrics.embedding_store import EmbeddingRuntime
    from ideaharness.metrics.embeddings import model_path
    from ideaharness.metrics.similarity import BertScorer

    targets, ideas_a, ideas_b = corpus(args.targets, args.ideas)
    calls_a, calls_b = calls(targets, ideas_a, args.call_targets), calls(targets, ideas_b, args.call_targets)
    n_pairs = sum(len(c) for c, _ in calls_a)
    distinct_a = list(dict.fromkeys([t for c, r in calls_a for t in (*r, *c)]))
    path = model_path()
    store = store_dir / "embeddings.sqlite"

    old = BERTScorer(model_type=path, num_layers=5, lang="en")
    BertScorer(runtime=EmbeddingRuntime(cache=False)).f1(["warm up"], ["the model loads"])  # load once

    def old_path() -> list[float]:
        return [float(x) for c, r in calls_a for x in old.score(c, r, verbose=False)[2].tolist()]

    def new_path(scorer: BertScorer, work: list[tuple[list[str], list[str]]]) -> Callable[[], list[float]]:
        def run() -> list[float]:  # as IdeaBench's similarity phase: prepare all, then score per call
            scorer.prepare([t for _, r in work for t in r], [t for c, _ in work for t in c])
            return [x for c, r in work for x in scorer.f1(c, r)]

        return run

    floor_first = floor_pass(distinct_a, path, 5)
    rows: list[tuple[str, int | str, float, int]] = []
    old_s, old_f1 = timed(old_path)
    per_call = sum(len(set(c) | set(r)) for c, r in calls_a)
    rows.append(("old path: bert_score per call", per_call, old_s, n_pairs))
    results = {}
    scorers = {
        "new, no store": (BertScorer(runtime=EmbeddingRuntime(cache=False)), calls_a),
        "new, cold store (system A)": (BertScorer(runtime=EmbeddingRuntime(store_path=store)), calls_a),
        "new, warm references (system B)": (BertScorer(runtime=EmbeddingRuntime(store_path=store)), calls_b),
        "new, system A again": (BertScorer(runtime=EmbeddingRuntime(store_path=store)), calls_a),
    }
    for name, (scorer, work) in scorers.items():
        seconds, values = timed(new_path(scorer, work))
        results[name] = values
        embedded = scorer.counts["references"].embedded + scorer.counts["candidates"].embedded
        detail = (f"{embedded} (targets {scorer.counts['references'].embedded}, "
                  f"ideas {scorer.counts['candidates'].embedded})")
        rows.append((name, detail, seconds, sum(len(c) for c, _ in work)))
    floor_last = floor_pass(distinct_a, path, 5)
    floor_s = min(floor_first, floor_last)  # the first pass also pays one-off kernel set-up
    rows.insert(0, (f"floor: bare forward pass (min of {floor_first:.1f}, {floor_last:.1f} s)",
                    len(distinct_a), floor_s, n_pairs))

    print(f"\n{args.targets} targets x {args.ideas} ideas = {n_pairs} pairs, calls of {args.call_targets} "
          f"targets; all-MiniLM-L6-v2 layer 5 on CPU")
    print(f"{'path':48} {'texts embedded':>30} {'seconds':>8} {'pairs/s':>8} {'x floor':>8}")
    floor_rate = n_pairs / floor_s
    for name, embedded, seconds, pairs in rows:
        rate = pairs / seconds
        print(f"{name:48} {embedded!s:>30} {seconds:8.2f} {rate:8.1f} {rate / floor_rate:8.2f}")
    for name in ("new, no store", "new, cold store (system A)", "new, system A again"):
        diff = max(abs(a - b) for a, b in zip(results[name], old_f1, strict=True))
        print(f"max |F1 - old F1| ({name}): {diff:.2e}")
    size = sum(p.stat().st_size for p in store_dir.iterdir())
    stored = len(set(distinct_a) | {c for cs, _ in calls_b for c in cs})
    print(f"store on disk: {size / 2**20:.1f} MiB for {stored} texts "
          f"({size / 1024 / stored:.0f} KiB per text)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--targets", type=int, default=200)
    parser.add_argument("--ideas", type=int, default=3)
    parser.add_argument("--call-targets", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    import torch

    from ideaharness.metrics.embeddings import quiet_transformers

    quiet_transformers()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for round_no in range(1, args.rounds + 1):
        print(f"\n== round {round_no}")
        with tempfile.TemporaryDirectory() as tmp:
            one_round(args, Path(tmp))


if __name__ == "__main__":
    main()
