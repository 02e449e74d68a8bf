"""The bundled MLR-Bench tasks: all 201, unchanged (their recorded hash), with licence and
provenance, shipped as package data; task selection and the --ideas reader."""

from __future__ import annotations

import hashlib
import re
from importlib import resources
from pathlib import Path

import pytest

from ideaharness.benchmarks.mlrbench import TASK_COUNT, bundled_tasks, select_tasks
from ideaharness.benchmarks.mlrbench.tasks import task_files, tasks_dir
from ideaharness.errors import UserError

DATA = Path(str(resources.files("ideaharness.benchmarks.mlrbench") / "data"))


def test_all_201_tasks_are_bundled_with_ids_venues_and_titles() -> None:
    tasks = bundled_tasks()
    assert len(tasks) == TASK_COUNT == 201
    assert len({t.id for t in tasks}) == 201 and [t.id for t in tasks] == sorted(t.id for t in tasks)
    assert all(re.fullmatch(r"(iclr|icml|neurips)20(23|24|25)", t.venue) for t in tasks)
    years = {y: sum(t.venue.endswith(y) for t in tasks) for y in ("2023", "2024", "2025")}
    assert years == {"2023": 73, "2024": 91, "2025": 37}  # upstream README's table
    assert all(t.title and t.text.strip() for t in tasks)
    bands = next(t for t in tasks if t.id == "iclr2023_bands")
    assert bands.title == "Backdoor Attacks and Defenses in Machine Learning"


def test_tasks_are_unchanged_against_the_hash_in_source_md() -> None:
    """SOURCE.md records sha256 of ``sha256sum tasks/*.md``; the files must still give it."""
    listing = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  tasks/{p.name}\n" for p in task_files())
    recorded = re.search(r"\b([0-9a-f]{64})\b", (DATA / "SOURCE.md").read_text()).group(1)
    assert hashlib.sha256(listing.encode()).hexdigest() == recorded


def test_licence_and_provenance_are_bundled() -> None:
    licence = (DATA / "LICENSE.upstream").read_text()
    assert licence.startswith("MIT License") and "Copyright (c) 2025 Hui Chen" in licence
    source = (DATA / "SOURCE.md").read_text()
    assert "chchenhui/mlrbench" in source and "806a20363bb65a7cdb205387b6840dac23e9a411" in source
    assert "2505.19955" in source and tasks_dir().is_dir()


def test_task_selection() -> None:
    assert [t.id for t in select_tasks(["iclr2023_dg", "iclr2023_bands", "iclr2023_dg"])] == [
        "iclr2023_bands", "iclr2023_dg"]
    with pytest.raises(UserError, match="did you mean 'iclr2023_bands'"):
        select_tasks(["iclr2023_band"])
