"""Where the tests find the project's real recorded data: bundled in the repository.

``tests/data/recorded/`` holds the recorded API responses and the small real data sets the tests read
(each folder with its SOURCE.md and licence; tests/data/recorded/README.md lists what was copied and
what was cut), laid out like the project's larger ``shared/data/raw`` folder, so a fresh clone anywhere
runs every test. ``SHARED_RAW`` (``shared/`` beside the checkout) is only an optional larger source for
scripts and benchmarks; no test needs it. The ScholarIdeas plans and the Si et al. reviews ship inside
the package (``ideaharness/data/bundled/``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RAW = REPO / "tests" / "data" / "recorded"
SHARED_RAW = REPO.parent / "shared" / "data" / "raw"


def need(path: Path) -> Path:
    """``path`` if it exists; otherwise the test fails naming the missing recording (never skips)."""
    if not path.exists():
        pytest.fail(f"recorded data not found: {path} (bundled under tests/data/recorded/)")
    return path
