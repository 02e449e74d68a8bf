from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def corpus_path(tmp_path: Path) -> Path:
    """A private copy of the PAIR-IQ-format fixture, in a folder of its own."""
    target = tmp_path / "corpus" / "pairiq_mini.jsonl"
    target.parent.mkdir()
    shutil.copy(FIXTURES / "pairiq_mini.jsonl", target)
    return target


@pytest.fixture(scope="session")
def shared_corpus_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session-wide copy of the fixture."""
    target = tmp_path_factory.mktemp("corpus") / "pairiq_mini.jsonl"
    shutil.copy(FIXTURES / "pairiq_mini.jsonl", target)
    return target


@pytest.fixture(scope="session")
def shared_corpus(shared_corpus_path: Path):  # type: ignore[no-untyped-def]
    """One ReferenceCorpus over the session copy of the fixture."""
    from ideaharness.benchmarks.ligbench.corpus import ReferenceCorpus

    return ReferenceCorpus.load(shared_corpus_path)
