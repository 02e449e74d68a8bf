"""Shared fixtures: recorded real responses served by a real local HTTP server."""

from __future__ import annotations

from tests.shared_data import RAW, need  # noqa: F401  (re-exported to the tests)

S2_REC = RAW / "s2-api-recordings"
ARXIV_REC = RAW / "arxiv-api-recordings"
S2ORC = RAW / "s2ag-samples" / "s2orc" / "s2orc-sample.jsonl.gz"
UNARXIVE = RAW / "unarxive-sample" / "arXiv_src_2212_086.subset.jsonl.gz"

FAST = {"max_retries": 3, "backoff_base_s": 0.01, "backoff_max_s": 0.05, "min_interval_s": 0.0}


