"""The data sets shipped inside the package are complete, unmodified copies of their releases."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from ideaharness.data.scholarideas import bundled_root, load_scholarideas

BUNDLED = Path(__file__).resolve().parents[1] / "src" / "ideaharness" / "data" / "bundled"
SI2024 = BUNDLED / "si2024-ideation-human-study"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_scholarideas_bundled_matches_release_checksums() -> None:
    root = bundled_root()
    assert root == BUNDLED / "scholarideas"
    sums = (root / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    assert len(sums) == 354
    for line in sums:
        digest, name = line.split(maxsplit=1)
        assert _sha256(root / "ScholarIdeas" / name.lstrip("*")) == digest, name
    assert (root / "LICENSE.upstream").read_text(encoding="utf-8").startswith("MIT License")
    ideas = load_scholarideas(root)
    assert len(ideas) == 118
    assert sum(len(i.rubrics) for i in ideas) == 1076


def test_si2024_bundled_matches_source_table() -> None:
    """Every file listed in SOURCE.md is there with the recorded sha256; the review counts match."""
    rows = re.findall(r"^\| (\S+) \| [^|]+ \| [\d,]+ \| ([0-9a-f]{64}) \|$",
                      (SI2024 / "SOURCE.md").read_text(encoding="utf-8"), re.MULTILINE)
    assert len(rows) == 4
    for name, digest in rows:
        assert _sha256(SI2024 / name) == digest, name
    ideation = json.loads((SI2024 / "reviews_ideation" / "data_points_all_anonymized.json").read_bytes())
    execution = json.loads((SI2024 / "reviews_execution" / "data_points_all_execution.json").read_bytes())
    assert len(ideation["overall_score"]) == 337
    assert len(execution["overall_score"]) == 181


PACKAGE = BUNDLED.parents[1]


def test_liveideabench_keywords_live_in_the_benchmark_folder() -> None:
    from ideaharness.benchmarks.liveideabench.keywords import bundled_keywords
    from ideaharness.runs.inputs import file_label

    folder = PACKAGE / "benchmarks" / "liveideabench" / "data"
    digest = _sha256(folder / "keywords.csv")
    assert f"sha256: {digest}  keywords.csv" in (folder / "SOURCE.md").read_text(encoding="utf-8")
    assert (folder / "LICENSE.upstream").read_text(encoding="utf-8").startswith("MIT License")
    assert len(bundled_keywords()) == 1180
    assert file_label(folder / "keywords.csv") == "benchmarks/liveideabench/data/keywords.csv"
    assert file_label(BUNDLED / "tomato_chem.jsonl") == "bundled/tomato_chem.jsonl"
    # the shared folder keeps only data more than one benchmark or the reliability block reads
    assert sorted(p.name for p in BUNDLED.iterdir() if p.is_dir()) == [
        "scholarideas", "si2024-ideation-human-study"]


def test_every_benchmark_prompt_and_data_file_is_package_data() -> None:
    """Each file in ``benchmarks/<name>/prompts/`` and ``benchmarks/<name>/data/`` matches a
    ``[tool.setuptools.package-data]`` pattern (so a built wheel ships it)."""
    import tomllib

    patterns = tomllib.loads((PACKAGE.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["setuptools"]["package-data"]["ideaharness"]
    shipped = {p for pattern in patterns for p in PACKAGE.glob(pattern) if p.is_file()}
    owned = {p for sub in ("prompts", "data") for p in PACKAGE.glob(f"benchmarks/*/{sub}/**/*")
             if p.is_file() and "__pycache__" not in p.parts}
    assert owned, "no benchmark folder has prompts/ or data/"
    assert owned <= shipped, sorted(str(p.relative_to(PACKAGE)) for p in owned - shipped)
