"""Dataset builders against the S2 emulator (recorded real records) on a real local HTTP server."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ideaharness.data.builders.ideabench import IdeaBenchSettings, build_ideabench
from ideaharness.data.ideabench_csv import load_ideabench
from ideaharness.errors import UserError
from ideaharness.scholarly import BadRequest, SemanticScholar
from ideaharness.testing.s2_emulator import corpus_from_recordings
from ideaharness.testing.scholarly_replay import ReplayServer

from .conftest import FAST, RAW, S2_REC, need

SETTINGS = IdeaBenchSettings(
    year=2023,
    top_venues=["arXiv.org"],
    fields_of_study=["Computer Science"],
    max_targets=6,
    min_reference_citations=1,
)


@pytest.fixture(scope="module")
def emulator():
    need(S2_REC / "Paper.json")
    return corpus_from_recordings(RAW, seed=0, bulk_page_size=50)


async def _build(server, out, settings=SETTINGS):
    async with SemanticScholar(
        base_url=server.base_url, api_key="", cache_dir=out / "cache", **FAST
    ) as client:
        return await build_ideabench(out, settings, client)


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines()


async def test_ideabench_build_writes_original_csvs_and_instances(tmp_path, emulator):
    with ReplayServer() as server:
        emulator.mount(server)
        result = await _build(server, tmp_path)
    counts = result.counts
    assert counts["targets_by_strategy"]["1"] == 6 and counts["instances"] == result.instances > 0
    instances = [json.loads(line) for line in _lines(tmp_path / "instances.jsonl")]
    assert len(instances) == result.instances
    assert len({i["id"] for i in instances}) == len(instances)
    # every kept reference passed IdeaBench's filter: abstract, >= 1 citation, background intent
    for inst in instances:
        assert len(inst["references"]) >= 3
        for ref in inst["references"]:
            assert ref["abstract"] and ref["citation_count"] >= 1
            assert set(ref["intents"]) - {"methodology", "result"}
    loaded = load_ideabench(tmp_path / "target_papers.csv", tmp_path / "filtered_references.csv")
    assert sorted(i.id for i in loaded) == sorted(i["id"] for i in instances)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["builder"] == "ideabench" and manifest["counts"]["instances"] == result.instances
    assert manifest["library_version"] and manifest["settings"]["year"] == 2023


async def test_interrupted_build_resumes_without_duplicates_or_repeated_requests(tmp_path, emulator):
    clean = tmp_path / "clean"
    with ReplayServer() as server:
        emulator.mount(server)
        await _build(server, clean)
        total_requests = server.requests
    assert total_requests > 8

    resumed = tmp_path / "resumed"
    with ReplayServer() as server:
        emulator.mount(server)
        server.fail_after = total_requests // 2  # the service starts failing mid-build
        with pytest.raises(BadRequest):
            await _build(server, resumed)
        first = list(server.log)
        ok_keys = {key for key, status in first if status == 200}
        failed = [key for key, status in first if status != 200]
        assert len(failed) == 1 and ok_keys
        server.fail_after = None
        await _build(server, resumed)
        second = server.log[len(first) :]
    # no request that succeeded before the interruption was sent again
    assert not ok_keys & {key for key, _ in second}
    assert Counter(key for key, _ in server.log if key not in failed).most_common(1)[0][1] == 1
    assert len(first) - 1 + len(second) == total_requests
    for name in ("instances.jsonl", "target_papers.csv", "filtered_references.csv", "raw_references.csv"):
        assert (resumed / name).read_bytes() == (clean / name).read_bytes(), name
    targets = [json.loads(x) for x in _lines(resumed / "targets.state.jsonl")]
    ids = [t["paper"]["id"] for t in targets if t["kind"] == "target"]
    assert len(ids) == len(set(ids))
    refs = [json.loads(x)["target_id"] for x in _lines(resumed / "references.state.jsonl")]
    assert len(refs) == len(set(refs)) == len(ids)
    assert json.loads((resumed / "manifest.json").read_text())["runs"] == 1

    # a third run over the finished build sends nothing at all
    with ReplayServer() as server:
        emulator.mount(server)
        await _build(server, resumed)
        assert server.requests == 0


async def test_resume_with_other_settings_is_refused(tmp_path, emulator):
    with ReplayServer() as server:
        emulator.mount(server)
        await _build(server, tmp_path)
        with pytest.raises(UserError, match="max_targets"):
            await _build(server, tmp_path, SETTINGS.model_copy(update={"max_targets": 7}))


async def test_aiideabench_top5_inspirations_and_cutoff(tmp_path, emulator):
    from ideaharness.data.builders.aiideabench import AIIdeaBenchSettings, build_aiideabench

    pool = list(emulator.papers.values())
    late = [p for p in pool if (p.get("publicationDate") or "") > "2023-10-03"][:2]
    early = [p for p in pool if "2022" <= (p.get("publicationDate") or "0") < "2023-10-03"][:1]
    targets = [late[0]["title"], late[1]["paperId"], early[0]["paperId"], "No Such Paper Title At All"]
    settings = AIIdeaBenchSettings(targets=targets)
    with ReplayServer() as server:
        emulator.mount(server)
        async with SemanticScholar(
            base_url=server.base_url, api_key="", cache_dir=tmp_path / "cache", **FAST
        ) as client:
            result = await build_aiideabench(tmp_path, settings, client)
    assert result.counts["dropped"] == {"not_found": 1, "before_cutoff": 1, "unknown_date": 0, "duplicate": 0}
    instances = [json.loads(x) for x in _lines(tmp_path / "instances.jsonl")]
    assert [i["target"]["id"] for i in instances] == [late[0]["paperId"], late[1]["paperId"]]
    for inst in instances:
        edges = emulator.references[inst["target"]["id"]]
        # hand rule: most contexts first, earlier edge first on ties, zero-context edges never
        ranked = sorted(range(len(edges)), key=lambda i: (-len(edges[i]["contexts"]), i))
        expected = [edges[i]["citedPaper"]["paperId"] for i in ranked if edges[i]["contexts"]][:5]
        assert [r["id"] for r in inst["references"]] == expected
        assert inst["extra"]["inspiration_method"] == "s2_contexts"
        assert inst["knowledge_cutoff"] == inst["target"]["publication_date"]


async def test_pairiq_build_projects_and_debiases(tmp_path, monkeypatch):
    from ideaharness.data.builders.pairiq import PairIQSettings, build_pairiq
    from ideaharness.data.pairiq import load_pairiq
    from ideaharness.scholarly import OpenReview

    def note(venue, i, ratings, decision):
        replies = [
            {
                "id": f"r{i}{k}",
                "invitations": [f"{venue}/Submission{i}/-/Official_Review"],
                "content": {
                    "rating": {"value": f"{r}: text"},
                    "soundness": {"value": "3 good"},
                    "contribution": {"value": 2},
                },
            }
            for k, r in enumerate(ratings)
        ]
        replies.append(
            {
                "id": f"d{i}",
                "invitations": [f"{venue}/Submission{i}/-/Decision"],
                "content": {"decision": {"value": decision}},
            }
        )
        return {
            "id": f"{venue[:4]}{i}",
            "number": i,
            "content": {
                "title": {"value": f"Paper {i}"},
                "abstract": {"value": "abs"},
                "keywords": {"value": ["k"]},
            },
            "details": {"replies": replies},
        }

    iclr, neurips = "ICLR.cc/2024/Conference", "NeurIPS.cc/2024/Conference"
    with ReplayServer() as server:
        server.add_json("POST", "/login", {"token": "T"}, body={"id": "u", "password": "p"})
        for venue, notes in (
            (iclr, [note(iclr, 1, [6, 8], "Accept (poster)"), note(iclr, 2, [3, 1], "Reject")]),
            (neurips, [note(neurips, 3, [7], "Accept (spotlight)")]),
        ):
            server.add_json(
                "GET",
                "/notes",
                {"notes": notes, "count": len(notes)},
                query={
                    "invitation": f"{venue}/-/Submission",
                    "details": "replies",
                    "offset": 0,
                    "limit": 1000,
                },
            )
        async with OpenReview(base_url=server.base_url, username="u", password="p", **FAST) as client:
            result = await build_pairiq(tmp_path, PairIQSettings(venues=[iclr, neurips]), client)
    assert result.counts["records"] == 3
    records = {r.title: r for r in load_pairiq(tmp_path / "pairiq.jsonl")}
    # ICLR rating mean 7 -> (7-1)*5/9; sub-scores 1-4: soundness 3 -> 10/3, contribution 2 -> 5/3
    assert records["Paper 1"].rating == pytest.approx(30 / 9)
    assert records["Paper 1"].soundness == pytest.approx(10 / 3)
    assert records["Paper 1"].contribution == pytest.approx(5 / 3)
    assert records["Paper 2"].rating == pytest.approx(5 / 9) and records["Paper 2"].label == "reject"
    assert records["Paper 3"].label == "accept-spotlight"
    # debiasing: ŝ = s - μ_venue + μ_all with μ over the built records
    mu_iclr, mu_all = (30 / 9 + 5 / 9) / 2, (30 / 9 + 5 / 9 + 30 / 9) / 3
    assert records["Paper 1"].debiased["rating"] == pytest.approx(30 / 9 - mu_iclr + mu_all)
    assert records["Paper 3"].debiased["rating"] == pytest.approx(30 / 9 - 30 / 9 + mu_all)


def _citesee_emulator():
    """An emulated S2 holding CiteSee (arXiv 2302.07302) with one reference per bib entry that has
    an S2 CorpusId; every edge has intent 'methodology' only, so the intent filter keeps none."""
    from ideaharness.data.sections import load_fulltext
    from ideaharness.testing.s2_emulator import S2Emulator

    from .conftest import S2ORC

    paper = {p.id: p for p in load_fulltext(need(S2ORC))}["2302.07302"]
    target = {
        "paperId": "citesee",
        "title": "CiteSee",
        "abstract": "Citations in context.",
        "year": 2023,
        "publicationDate": "2023-02-14",
        "venue": "CHI",
        "citationCount": 30,
        "publicationTypes": ["Conference"],
        "externalIds": {"ArXiv": "2302.07302"},
    }
    edges = [
        {
            "contexts": [],
            "intents": ["methodology"],
            "isInfluential": False,
            "citedPaper": {
                "paperId": f"p{b.ids['CorpusId']}",
                "title": b.title or b.raw[:80],
                "abstract": "An abstract.",
                "citationCount": 10,
                "externalIds": {"CorpusId": int(b.ids["CorpusId"])},
            },
        }
        for b in paper.bib.values()
        if "CorpusId" in b.ids
    ]
    return paper, S2Emulator([target], {"citesee": edges})


async def test_ideabench_section_aware_filter_from_fulltext(tmp_path):
    from .conftest import S2ORC

    paper, emulator = _citesee_emulator()
    settings = IdeaBenchSettings(
        year=2023,
        top_venues=["CHI"],
        fields_of_study=["Nothing"],
        max_targets=5,
        min_reference_citations=1,
        fulltext=str(S2ORC),
    )
    with ReplayServer() as server:
        emulator.mount(server)
        result = await _build(server, tmp_path, settings)
    assert result.counts["filter_kinds"] == {"relevance": 0, "sections": 1}
    inst = json.loads(_lines(tmp_path / "instances.jsonl")[0])
    expected = {
        f"p{paper.bib[b].ids['CorpusId']}" for b in paper.cited_in() if "CorpusId" in paper.bib[b].ids
    }
    assert {r["id"] for r in inst["references"]} == expected and len(expected) > 20
    assert all(r["sections"] for r in inst["references"])
    # without full text the same references all fail IdeaBench's intent rule
    out2 = tmp_path / "nofulltext"
    with ReplayServer() as server:
        emulator.mount(server)
        result = await _build(server, out2, settings.model_copy(update={"fulltext": None}))
    assert result.instances == 0


async def test_aiideabench_inspirations_from_fulltext_mention_counts(tmp_path):
    import datetime as dt

    from ideaharness.data.builders.aiideabench import AIIdeaBenchSettings, build_aiideabench

    from .conftest import S2ORC

    paper, emulator = _citesee_emulator()
    settings = AIIdeaBenchSettings(
        targets=["ARXIV:2302.07302"], cutoff=dt.date(2023, 1, 1), fulltext=str(S2ORC)
    )
    with ReplayServer() as server:
        emulator.mount(server)
        async with SemanticScholar(base_url=server.base_url, api_key="", **FAST) as client:
            await build_aiideabench(tmp_path, settings, client)
    inst = json.loads(_lines(tmp_path / "instances.jsonl")[0])
    refs = inst["references"]
    assert inst["extra"]["inspiration_method"] == "fulltext"
    # In-text mention counts in the CiteSee text: b33 8; b11, b47, b26 5 each; b25, b5 4 each.
    assert [r["extra"]["mention_count"] for r in refs] == [8, 5, 5, 5, 4]
    bibs = [r["extra"]["bib_id"] for r in refs]
    assert bibs[0] == "b33" and set(bibs[1:4]) == {"b11", "b47", "b26"} and bibs[4] in {"b25", "b5"}
    assert refs[0]["id"] == "p45050847"  # matched to the S2 reference by CorpusId
