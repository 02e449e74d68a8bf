"""Where the tests find the project's real recorded data (the shared/ folder beside the checkout).

Locally and in CI a copy of ``shared/`` lies beside the repository; tests that need its real
recordings fail (not skip) when it is missing, so a green run always means they ran.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RAW = REPO.parent / "shared" / "data" / "raw"


def need(path: Path) -> Path:
    """``path`` if it exists; otherwise the test fails naming the missing recording."""
    if not path.exists():
        pytest.fail(f"recorded data not found: {path} (expected shared/ beside the checkout)")
    return path
