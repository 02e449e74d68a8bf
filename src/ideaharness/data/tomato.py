"""TOMATO-Chem, the bundled real dataset (MOOSE-Chem, Yang et al., ICLR 2025; MIT licence).

51 chemistry papers published in 2024 (Nature, Science, Nature Synthesis, ...), each annotated
with a background question and survey, up to three inspiration papers (title + how each relates
to the main inspiration), the main hypothesis and key-point notes. The inspiration papers'
abstracts come from the shipped inspiration corpora (lists of ``[title, abstract]``).

The package ships the converted data in ``ideaharness/data/bundled/`` (built by
``scripts/build_bundled_tomato.py`` with :func:`convert_tomato`) together with the corpora and
the MOOSE-Chem MIT notice (``bundled/NOTICE``).

Mapping (for IdeaBench's protocol and ResearchBench's tasks): target idea = main hypothesis;
references = inspiration papers with abstracts; key points = ``Note``; domain = chemistry.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ideaharness.data.corpus import load_corpus_file
from ideaharness.data.matching import DEFAULT_TITLE_THRESHOLD, match_title
from ideaharness.data.researchbench_xlsx import load_researchbench_sheet
from ideaharness.errors import DataError, UserError
from ideaharness.jsonl import iter_jsonl_models
from ideaharness.schema import Instance, Paper

DATASET = "tomato-chem"
TOMATO_SHEET = "Overall"
BUNDLED_FILE = "tomato_chem.jsonl"
CORPUS_SIZES: tuple[int, ...] = (150, 300, 1000)


def bundled_path(name: str) -> Path:
    """Path of a file in the package's ``data/bundled/`` folder (it may not exist)."""
    return Path(str(resources.files("ideaharness.data").joinpath("bundled", name)))


def corpus_file_name(size: int) -> str:
    """File name of the MOOSE-Chem inspiration corpus of ``size`` papers (150, 300 or 1000)."""
    if size not in CORPUS_SIZES:
        raise UserError(f"no bundled inspiration corpus of size {size}; choose one of {list(CORPUS_SIZES)}")
    return f"Inspiration_Corpus_{size}.json"


def load_inspiration_corpus(size: int = 150) -> list[Paper]:
    """The bundled MOOSE-Chem inspiration corpus as Papers (title + abstract, file order).

    Args:
        size: 150, 300 or 1000 papers. Paper ids are ``Inspiration_Corpus_<size>/<index>``. The
            1000 corpus repeats two titles; duplicates are kept so indices match the file.
            The corpora are not nested (27 titles of the 150 corpus are not in the 1000 one), but
            every TOMATO-Chem inspiration is in each of them.

    Raises:
        UserError: for another size; DataError if the bundled file is missing or damaged.
    """
    return load_corpus_file(bundled_path(corpus_file_name(size)))


def load_tomato_chem(path: str | Path | None = None) -> list[Instance]:
    """Load TOMATO-Chem: 51 Instances (dataset "tomato-chem", ids "tomato-chem/<No>").

    Each instance: target Paper (title, 2024 publication date and year, venue = publisher);
    research_question = Background Question; background_survey = Background Little Survey;
    references = inspiration papers 1-3 (title, abstract from the corpus when matched, relation
    to the main inspiration; ``extra`` has ``match_method``/``match_similarity``/``corpus_index``/
    ``annotated_title``); ground_truth.hypothesis = ground_truth.idea = Main hypothesis,
    key_points = Note; extra: reasoning_process, research_question_strict (14 papers),
    background_survey_strict, main_inspiration, experiments_to_verify, unmatched_inspirations.

    Args:
        path: a converted JSONL file; default the bundled one.

    Raises:
        DataError: if the file is missing or a line is not a valid Instance (line and field named).
    """
    file = Path(path) if path is not None else bundled_path(BUNDLED_FILE)
    if not file.is_file():
        raise DataError(file, "cannot read (no such file); rebuild with scripts/build_bundled_tomato.py")
    return [instance for _, instance in iter_jsonl_models(file, Instance)]


class MatchReport(BaseModel):
    """How the inspiration titles of a conversion were found in the corpus.

    ``counts`` maps exact / normalised / fuzzy / none to numbers of inspirations; ``unmatched``
    lists ``(instance id, title)`` of those left without abstract; ``fuzzy`` lists
    ``(instance id, annotated title, corpus title, similarity)`` for review.
    """

    threshold: float
    corpus: str
    counts: dict[str, int] = Field(default_factory=dict)
    unmatched: list[tuple[str, str]] = Field(default_factory=list)
    fuzzy: list[tuple[str, str, str, float]] = Field(default_factory=list)


def attach_corpus_abstracts(
    instances: Sequence[Instance],
    corpus: Sequence[Paper],
    threshold: float = DEFAULT_TITLE_THRESHOLD,
    corpus_name: str = "corpus",
) -> tuple[list[Instance], MatchReport]:
    """Find each inspiration title in ``corpus`` and copy the corpus paper's title and abstract.

    Matching is :func:`ideaharness.data.matching.match_title`: exact, then normalised title, then
    the best fuzzy match only if its similarity is >= ``threshold``. An inspiration with no match
    keeps its annotated title with ``abstract=None`` and is listed in the instance's
    ``extra["unmatched_inspirations"]`` — it is never attached to a different paper.

    Returns:
        New instances (inputs are not modified) and the :class:`MatchReport`.
    """
    titles = [p.title for p in corpus]
    counts: Counter[str] = Counter({"exact": 0, "normalised": 0, "fuzzy": 0, "none": 0})
    report = MatchReport(threshold=threshold, corpus=corpus_name)
    out: list[Instance] = []
    for inst in instances:
        new = inst.model_copy(deep=True)
        unmatched: list[str] = []
        for ref in new.references:
            m = match_title(ref.title, titles, threshold=threshold)
            counts[m.method] += 1
            info: dict[str, Any] = {
                "annotated_title": ref.title,
                "match_method": m.method,
                "match_similarity": round(m.similarity, 4),
                "corpus": corpus_name,
                "corpus_index": m.index,
            }
            if m.index is None:
                unmatched.append(ref.title)
                report.unmatched.append((new.id, ref.title))
                ref.abstract = None
            else:
                hit = corpus[m.index]
                if m.method == "fuzzy":
                    report.fuzzy.append((new.id, ref.title, hit.title, round(m.similarity, 4)))
                ref.title = hit.title
                ref.abstract = hit.abstract
            ref.extra.update(info)
        new.extra["unmatched_inspirations"] = unmatched
        out.append(new)
    report.counts = dict(counts)
    return out, report


def convert_tomato(
    xlsx_path: str | Path,
    corpus_path: str | Path,
    threshold: float = DEFAULT_TITLE_THRESHOLD,
    sheet: str = TOMATO_SHEET,
) -> tuple[list[Instance], MatchReport]:
    """Convert MOOSE-Chem's ``chem_research_2024.xlsx`` (sheet ``Overall``) into Instances.

    Reads the sheet by header name through
    :func:`ideaharness.data.researchbench_xlsx.load_researchbench_sheet` (dataset
    "tomato-chem", domain "chemistry"), then attaches abstracts from the corpus file
    (``[title, abstract]`` list) with :func:`attach_corpus_abstracts`.

    Raises:
        DataError: bad sheet or corpus file (see the loaders).
    """
    instances = load_researchbench_sheet(xlsx_path, sheet=sheet, dataset=DATASET, domain="chemistry")
    corpus = load_corpus_file(corpus_path)
    return attach_corpus_abstracts(instances, corpus, threshold=threshold, corpus_name=Path(corpus_path).name)


def write_instances_jsonl(instances: Sequence[Instance], path: str | Path) -> Path:
    """Write Instances as JSONL (one ``model_dump_json`` a line, UTF-8); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for inst in instances:
            fh.write(inst.model_dump_json() + "\n")
    return path
