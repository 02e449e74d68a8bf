"""``ideaharness data validate`` and ``data build`` through the real CLI entry point."""

from __future__ import annotations

import json

import pytest

from ideaharness.cli import main
from ideaharness.data.validate import validate_dataset
from ideaharness.schema import Instance, Paper, Reference
from ideaharness.testing.s2_emulator import corpus_from_recordings
from ideaharness.testing.scholarly_replay import ReplayServer

from .conftest import RAW, S2_REC, need


def _inst(i, doi=None, domain=None, n_refs=3, abstract="An abstract.", title="A title"):
    return Instance(
        id=f"x/{i}",
        dataset="x",
        domain=domain,
        target=Paper(id=str(i), title=title, abstract=abstract, external_ids={"DOI": doi} if doi else {}),
        references=[Reference(id=f"r{i}{k}", title=f"Ref {k}") for k in range(n_refs)],
    )


def _write(path, instances, extra_lines=()):
    path.write_text("".join(i.model_dump_json() + "\n" for i in instances) + "".join(extra_lines))
    return path


def test_clean_dataset_passes(tmp_path, capsys):
    path = _write(tmp_path / "instances.jsonl", [_inst(1, "10.1/a", "bio"), _inst(2, "10.1/b", "chem")])
    report = validate_dataset(tmp_path)
    assert report.ok and report.counts["instances"] == 2 and report.counts["references"] == 6
    main(["data", "validate", str(path)])  # returns normally: exit 0
    assert "instances 2" in capsys.readouterr().out


def test_problems_are_found_and_exit_nonzero(tmp_path, capsys):
    bad = [
        _inst(1, "10.1/SAME", "Health & Medicine"),
        _inst(2, "10.1/same", "Genetics"),  # same DOI (case-insensitive) in two disciplines
        _inst(3, n_refs=1, abstract=""),  # too few references, empty abstract (warnings)
        _inst(3),  # duplicate id
        _inst(4, title="see /home/alice/data/paper.pdf"),  # absolute local path
        _inst(5, abstract="config api_key=abcd1234efgh5678ijkl"),  # secret
        _inst(6, abstract="token sk-" + "proj-AbCdEfGhIjKlMnOpQrStUv123"),  # a fake secret
        _inst(7, abstract="URLs like https://example.org/data/x and and/or are fine"),
    ]
    path = _write(tmp_path / "d.jsonl", bad, ["{not json\n"])
    report = validate_dataset(path)
    messages = [(i.level, i.where, i.message) for i in report.issues]
    errors = [m for m in messages if m[0] == "error"]
    assert any("duplicate instance id" in m for _, _, m in errors)
    assert any("absolute local path" in m and "line 5" in w for _, w, m in errors)
    assert sum("looks like a secret" in m for _, _, m in errors) == 2
    assert any("not JSON" in m and w == "line 9" for _, w, m in errors)
    assert not any("line 8" in w for _, w, _ in messages)  # the clean URL line raised nothing
    warnings = [m for m in messages if m[0] == "warning"]
    assert any("1 references (< 3)" in m for _, _, m in warnings)
    assert any("target.abstract" in w for _, w, _ in warnings)
    # the same DOI in two domains is how the real ResearchBench release is shaped: run accepts it
    assert any("DOI 10.1/same" == w and "2 domains" in m for _, w, m in warnings)
    with pytest.raises(SystemExit) as exc:
        main(["data", "validate", str(path)])
    assert exc.value.code == 1
    with pytest.raises(SystemExit) as exc:
        main(["data", "validate", str(tmp_path / "missing")])
    assert exc.value.code == 1  # one-line user error


def test_cli_build_ideabench_against_replay_server_then_validate(tmp_path, capsys):
    need(S2_REC / "Paper.json")
    emulator = corpus_from_recordings(RAW, seed=0)
    out = tmp_path / "ib"
    with ReplayServer() as server:
        emulator.mount(server)
        main(
            [
                "data",
                "build",
                "ideabench",
                "--out",
                str(out),
                "--year",
                "2023",
                "--venue",
                "arXiv.org",
                "--field-of-study",
                "Computer Science",
                "--max-targets",
                "3",
                "--min-reference-citations",
                "1",
                "--base-url",
                server.base_url,
                "--min-interval",
                "0",
            ]
        )
    result = json.loads(capsys.readouterr().out)
    assert result["instances"] >= 1 and (out / "target_papers.csv").exists()
    report = validate_dataset(out, min_references=3)
    assert report.ok, report.errors
