"""Scholarly API clients: Semantic Scholar, OpenAlex, arXiv, OpenReview (async, cached, polite).

All share :class:`ScholarlyHTTP` (per-host rate limit, backoff honouring Retry-After, on-disk
response cache without secrets) and take an injectable ``base_url`` so tests and offline runs
point them at a local replay server (:class:`ideaharness.testing.scholarly_replay.ReplayServer`).
"""

from ideaharness.scholarly.arxiv import ArXiv, ArxivPage, parse_atom
from ideaharness.scholarly.errors import (
    BadRequest,
    ConfigError,
    Forbidden,
    NotFound,
    RateLimited,
    ScholarlyError,
    ServerError,
)
from ideaharness.scholarly.http import HTTPStats, ScholarlyHTTP
from ideaharness.scholarly.openalex import OpenAlex
from ideaharness.scholarly.openreview import REVIEW_FORMS, OpenReview, Review, ReviewForm, Submission
from ideaharness.scholarly.s2 import SemanticScholar

__all__ = [
    "REVIEW_FORMS",
    "ArXiv",
    "ArxivPage",
    "BadRequest",
    "ConfigError",
    "Forbidden",
    "HTTPStats",
    "NotFound",
    "OpenAlex",
    "OpenReview",
    "RateLimited",
    "Review",
    "ReviewForm",
    "ScholarlyError",
    "ScholarlyHTTP",
    "SemanticScholar",
    "ServerError",
    "Submission",
    "parse_atom",
]
