"""Embeddings reused, not recomputed (issue 22, part 3), with the real shipped MiniLM: BERTScore from
stored token embeddings equals the bert-score library; sentence embeddings equal
sentence-transformers; a second system scored on the same targets embeds no target again."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ideaharness
from ideaharness.data.registry import write_instances_jsonl
from ideaharness.data.tomato import load_tomato_chem
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.embedding_store import EmbeddingRuntime
from ideaharness.metrics.embeddings import embed, model_path
from ideaharness.metrics.similarity import BertScorer, length_batches
from tests.ideabench.conftest import ideabench_responder


def _abstracts(n: int) -> list[str]:
    """Distinct real abstracts (~1,000 characters) of TOMATO-Chem's inspiration papers."""
    texts = dict.fromkeys(r.abstract for i in load_tomato_chem() for r in i.references if r.abstract)
    found = [t for t in texts if t]
    assert len(found) >= n
    return found[:n]


@pytest.fixture(scope="module")
def pairs() -> tuple[list[str], list[str]]:
    refs = _abstracts(14)
    long = " ".join(_abstracts(6))  # about 6,000 characters: cut at 512 tokens by the tokenizer
    cands = [
        refs[1][: len(refs[1]) // 2] + " We propose to test this at scale.",
        "A hydrogel whose thermopower rises with the salt concentration.",
        long,
        "x",
        ".",
        "   surrounded by spaces   ",
        "Thermogalvanic cells: ΔS ≈ 1.4 mV·K⁻¹, Fe²⁺/Fe³⁺ — naïve café 漢字 😀 test",
        refs[0],  # identical to a reference
        refs[3][::-1],
        "Idea 1: measure the Seebeck coefficient of doped PVA gels between 20 and 60 °C.",
        long[:2500],
        refs[5],
        "salt",
        "Ultrastrong, flexible thermogalvanic armor with a Carnot-relative efficiency over 8%",
    ]
    references = [*refs[:13], long]  # a reference past 512 tokens too
    return cands, references


@pytest.fixture(scope="module")
def library_f1(pairs: tuple[list[str], list[str]]) -> list[float]:
    from bert_score import score

    _, _, f1 = score(pairs[0], pairs[1], model_type=model_path(), num_layers=5, lang="en")
    return [float(x) for x in f1.tolist()]


def test_bertscore_from_the_store_equals_bert_score(tmp_path: Path, pairs: tuple[list[str], list[str]],
                                                    library_f1: list[float]) -> None:
    cands, refs = pairs
    store = tmp_path / "embeddings.sqlite"
    cold = BertScorer(runtime=EmbeddingRuntime(store_path=store))
    assert cold.f1(cands, refs) == pytest.approx(library_f1, abs=1e-6)
    assert cold.counts["references"].model_dump() == {"embedded": len(set(refs)), "reused": 0}
    assert cold.counts["candidates"].embedded == len(set(cands) - set(refs))

    warm = BertScorer(runtime=EmbeddingRuntime(store_path=store))  # a second run, same store
    assert warm.f1(cands, refs) == pytest.approx(library_f1, abs=1e-6)
    # references come from the store; candidates (new with every system) are never stored
    assert warm.counts["references"].model_dump() == {"embedded": 0, "reused": len(set(refs))}
    assert warm.counts["candidates"].embedded == len(set(cands) - set(refs))
    assert len(warm.runtime.store or []) == len(set(refs))

    for runtime in (EmbeddingRuntime(store_path=tmp_path / "other.sqlite"), EmbeddingRuntime(cache=False)):
        prepared = BertScorer(runtime=runtime)
        prepared.prepare(refs, cands)  # one pass over all texts, as IdeaBench's similarity phase does
        computed = prepared.runtime.counts[prepared.label].embedded
        assert computed == len(set(refs) | set(cands))
        assert prepared.f1(cands, refs) == pytest.approx(library_f1, abs=1e-6)
        assert prepared.runtime.counts[prepared.label].embedded == computed  # nothing embedded twice
        assert prepared.counts["references"].model_dump() == {"embedded": len(set(refs)), "reused": 0}
        assert not prepared._prepared  # what prepare held in memory is released once scored

    fresh = BertScorer(runtime=EmbeddingRuntime(cache=False))  # no store at all
    assert fresh.f1(cands, refs) == pytest.approx(library_f1, abs=1e-6)
    assert fresh.runtime.store_path is None

    # a second system: new candidates against the same references embeds no reference again
    second = BertScorer(runtime=EmbeddingRuntime(store_path=store))
    new = [f"Another system's idea {i}: {c[:200]}" for i, c in enumerate(cands)]
    second.f1(new, refs)
    assert second.counts["references"].model_dump() == {"embedded": 0, "reused": len(set(refs))}
    assert second.counts["candidates"].embedded == len(set(new))
    report = second.embedding_report()
    assert report["references"] == {"embedded": 0, "reused": len(set(refs))}
    assert report["store"] == str(store) and report["device"] == "cpu"


def test_empty_texts_score_zero_as_bert_score_documents(tmp_path: Path) -> None:
    # bert-score sets P and R of a [CLS] [SEP]-only text to 0 (its sent_encode no longer takes ""
    # under transformers 5, so the library cannot be asked directly)
    scorer = BertScorer(runtime=EmbeddingRuntime(store_path=tmp_path / "e.sqlite"))
    p, r, f = scorer.score(["", "   ", "a real idea"], ["a reference", "another", ""])
    assert f == [0.0, 0.0, 0.0] and p == [0.0, 0.0, 0.0] and r == [0.0, 0.0, 0.0]


def test_sentence_embeddings_from_the_store_equal_sentence_transformers(tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    texts = [*_abstracts(20), "x", "Thermogalvanic ΔS ≈ 1.4 mV·K⁻¹ 漢字 😀", "", " ".join(_abstracts(4))]
    expected = SentenceTransformer(model_path(), device="cpu").encode(texts, normalize_embeddings=True)
    first = EmbeddingRuntime(store_path=tmp_path / "e.sqlite")
    got = embed(texts[:12], runtime=first)  # half now, all later: stored and fresh rows mixed
    assert np.abs(got - expected[:12]).max() < 1e-6
    again = EmbeddingRuntime(store_path=tmp_path / "e.sqlite")
    got = embed(texts, runtime=again)
    assert got.dtype == np.float32 and got.shape == expected.shape
    assert np.abs(got - expected).max() < 1e-6
    counts = again.counts["sentence all-MiniLM-L6-v2"].model_dump()
    assert counts == {"embedded": len(texts) - 12, "reused": 12}


def _data(tmp_path: Path, n: int = 4) -> Path:
    """n TOMATO-Chem instances whose targets carry a real abstract (an inspiration's abstract)."""
    instances = []
    for inst in load_tomato_chem()[:n]:
        abstract = next(r.abstract for r in inst.references if r.abstract)
        target = inst.target.model_copy(update={"abstract": abstract})
        instances.append(inst.model_copy(update={"target": target}))
    path = tmp_path / "data.jsonl"
    write_instances_jsonl(instances, path)
    return path


def test_a_second_generator_on_the_same_targets_embeds_no_target_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    data = _data(tmp_path)
    judge = ScriptedModel(ideabench_responder())
    first_gen = ScriptedModel(ideabench_responder(), model="scripted/first")
    other = "Idea {i} from another generator: ionic liquids in {{x_i}} raise the Seebeck coefficient"
    second_gen = ScriptedModel(ideabench_responder(ideas_text=other), model="scripted/second")
    common = {"judge": judge, "data": str(data), "indicators": ["novelty"], "progress": False}

    first = ideaharness.run("ideabench", generator=first_gen, out=tmp_path / "a", **common)
    assert first["similarity_embeddings"]["references"] == {"embedded": 4, "reused": 0}
    second = ideaharness.run("ideabench", generator=second_gen, out=tmp_path / "b", **common)
    block = second["similarity_embeddings"]
    assert block["references"] == {"embedded": 0, "reused": 4}  # every target abstract reused
    assert block["candidates"]["embedded"] > 0 and block["device"] == "cpu"

    fresh = ideaharness.run("ideabench", generator=second_gen, out=tmp_path / "c",
                            no_embedding_cache=True, **common)
    assert fresh["similarity_embeddings"]["references"] == {"embedded": 4, "reused": 0}
    assert fresh["similarity_embeddings"]["store"] is None

    def f1(out: Path) -> list[float]:
        lines = (out / "records" / "similarity_low.jsonl").read_text().splitlines()
        rows = sorted((json.loads(line) for line in lines), key=lambda r: r["instance_id"])
        return [x for row in rows for x in row["data"]["f1"]]

    assert f1(tmp_path / "b") == pytest.approx(f1(tmp_path / "c"), abs=1e-6)
    assert f1(tmp_path / "a") != pytest.approx(f1(tmp_path / "b"), abs=1e-3)  # other ideas, other scores


@given(lengths=st.lists(st.integers(0, 600), max_size=300), max_tokens=st.integers(1, 10_000),
       max_texts=st.integers(1, 80))
def test_length_batches_cover_every_text_once_within_the_limits(lengths: list[int], max_tokens: int,
                                                                max_texts: int) -> None:
    batches = length_batches(lengths, max_tokens, max_texts)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    flat = [lengths[i] for b in batches for i in b]
    assert flat == sorted(lengths, reverse=True)  # longest first: the first of a batch is its longest
    for b in batches:
        assert 1 <= len(b) <= max_texts
        assert len(b) == 1 or len(b) * lengths[b[0]] <= max_tokens
