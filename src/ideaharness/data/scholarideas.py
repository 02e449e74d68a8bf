"""ScholarIdeas research plans (ScholarEval, Moussa et al. 2025; MIT): loader.

Layout of the released folder (skai-research/ScholarEval, ``ScholarIdeas/``)::

    ScholarIdeas/<domain>_<n>/<domain>_<n>.txt     Markdown plan: "# title", "## Problem",
                                                    "## Method", "## Experiment Design"
    ScholarIdeas/<domain>_<n>/<domain>_<n>.jsonl   expert rubrics, one per line
    ScholarIdeas/<domain>_<n>/cutoff.txt           ISO date, the literature cut-off

LigBench uses these plans as real ideas to formalise and score; :meth:`ScholarIdea.to_idea`
turns one into a :class:`ideaharness.schema.Idea`. The package ships the whole release (118 plans,
MIT, with its SOURCE.md and licence) in ``ideaharness/data/bundled/scholarideas/``:
:func:`bundled_root`.
"""

from __future__ import annotations

import datetime as dt
import re
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from ideaharness.errors import DataError, ParseError
from ideaharness.jsonl import iter_jsonl_models
from ideaharness.llm.parsing import check_text
from ideaharness.schema import Idea, Provenance, read_date
from ideaharness.textio import read_text

SECTIONS = ("Problem", "Method", "Experiment Design")

_HEADING = re.compile(r"^##\s+(.+?)\s*$", re.MULTILINE)
_TITLE = re.compile(r"^#\s+(?:Research Plan:\s*)?(.+?)\s*$", re.MULTILINE)


def bundled_root() -> Path:
    """The ScholarIdeas release shipped with the package (a folder holding ``ScholarIdeas/``)."""
    return Path(str(resources.files("ideaharness.data").joinpath("bundled", "scholarideas")))


class Rubric(BaseModel):
    """One expert rubric statement about a plan."""

    statement: str
    type: Literal["strength", "weakness"]
    axis: Literal["soundness", "contribution"]
    severity: Literal["major", "minor"]


class ScholarIdea(BaseModel):
    """One ScholarIdeas plan: sections by name, rubrics and cut-off date."""

    id: str
    domain: str
    title: str
    problem: str
    method: str
    experiment_design: str
    text: str
    rubrics: list[Rubric]
    cutoff: dt.date | None

    def to_idea(self) -> Idea:
        """The plan as an :class:`Idea` (full Markdown as ``text``; sections as fields)."""
        return Idea(
            id=self.id, instance_id=self.id, title=self.title, text=self.text,
            motivation=self.problem, experiment_plan=self.experiment_design,
            provenance=Provenance(generator="scholarideas", model=None),
        )


def parse_plan(text: str, *, path: object = "<text>") -> dict[str, str]:
    """Split a plan's Markdown into ``title``, ``problem``, ``method``, ``experiment_design``.

    Raises:
        DataError: a required ``## Problem`` / ``## Method`` / ``## Experiment Design`` is missing,
            or holds no real text (empty, whitespace, zero-width characters, punctuation).
    """
    title_match = _TITLE.search(text)
    parts = _HEADING.split(text)
    sections = {name.strip(): body.strip() for name, body in zip(parts[1::2], parts[2::2], strict=True)}
    out = {"title": title_match.group(1) if title_match else ""}
    for name in SECTIONS:
        if name not in sections:
            raise DataError(path, f"field '## {name}': section missing")
        try:
            check_text(sections[name], f"field '## {name}'", min_words=3)
        except ParseError as exc:
            raise DataError(path, str(exc)) from None
        out[name.lower().replace(" ", "_")] = sections[name]
    return out


def load_plan(folder: str | Path) -> ScholarIdea:
    """Read one ``<domain>_<n>`` folder (plan, rubrics, cutoff).

    Raises:
        DataError: missing plan file, bad section layout, bad rubric row or cut-off date.
    """
    root = Path(folder)
    name = root.name
    plan_path = root / f"{name}.txt"
    if not plan_path.is_file():
        raise DataError(plan_path, "plan file missing")
    text = read_text(plan_path)
    fields = parse_plan(text, path=plan_path)
    rubrics: list[Rubric] = []
    rubric_path = root / f"{name}.jsonl"
    if rubric_path.is_file():
        rubrics += [rubric for _, rubric in iter_jsonl_models(rubric_path, Rubric)]
    cutoff: dt.date | None = None
    cutoff_path = root / "cutoff.txt"
    if cutoff_path.is_file():
        raw = read_text(cutoff_path).strip()
        try:
            cutoff = read_date(raw)
        except ValueError as exc:
            raise DataError(cutoff_path, f"row 1: {exc}") from None
    return ScholarIdea(id=name, domain=name.rsplit("_", 1)[0], title=fields["title"] or name,
                       problem=fields["problem"], method=fields["method"],
                       experiment_design=fields["experiment_design"], text=text,
                       rubrics=rubrics, cutoff=cutoff)


def load_scholarideas(root: str | Path, *, domains: tuple[str, ...] | None = None,
                      limit: int | None = None) -> list[ScholarIdea]:
    """All plans under ``root`` (the dataset folder or its ``ScholarIdeas/`` subfolder).

    Plans are ordered by domain then number (``ai_2`` before ``ai_10``); ``domains`` filters
    (``ai``, ``neuro``, ``biochem``, ``eco``); ``limit`` keeps the first n.

    Raises:
        DataError: ``root`` holds no plan folders, or any plan is malformed.
    """
    base = Path(root)
    if (base / "ScholarIdeas").is_dir():
        base = base / "ScholarIdeas"
    if not base.is_dir():
        raise DataError(base, "no such directory")
    folders = [p for p in base.iterdir() if p.is_dir() and (p / f"{p.name}.txt").is_file()]
    if not folders:
        raise DataError(base, "no ScholarIdeas plan folders (<domain>_<n>/<domain>_<n>.txt) found")

    def order(p: Path) -> tuple[str, int]:
        dom, _, num = p.name.rpartition("_")
        return (dom, int(num) if num.isdigit() else 0)

    ideas = [load_plan(p) for p in sorted(folders, key=order)]
    if domains:
        ideas = [i for i in ideas if i.domain in domains]
    return ideas[:limit] if limit is not None else ideas


def scholarideas_files(root: str | Path) -> list[Path]:
    """The files :func:`load_scholarideas` reads under ``root`` (plans, rubrics, cut-off dates)."""
    base = Path(root)
    if (base / "ScholarIdeas").is_dir():
        base = base / "ScholarIdeas"
    if not base.is_dir():
        return []
    return sorted(f for p in base.iterdir() if p.is_dir()
                  for f in (p / f"{p.name}.txt", p / f"{p.name}.jsonl", p / "cutoff.txt") if f.is_file())
