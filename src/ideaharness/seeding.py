"""Derived seeds: one run seed, a reproducible independent stream for every random choice."""

from __future__ import annotations

import hashlib

import numpy as np


def derive_seed(seed: int, *parts: object) -> int:
    """A 63-bit seed derived from the run seed and the parts naming the choice (sha256-based,
    stable across processes and Python versions, unlike ``hash``)."""
    text = ":".join([str(seed), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def rng_for(seed: int, *parts: object) -> np.random.Generator:
    """A numpy Generator for one named random choice of a run."""
    return np.random.default_rng(derive_seed(seed, *parts))
