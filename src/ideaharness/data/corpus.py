"""Literature corpora: candidate papers that retrieval tasks draw from.

Two on-disk formats are read:

* MOOSE-Chem inspiration corpora (``Inspiration_Corpus_{150,300,1000}.json``, Yang et al.,
  ICLR 2025): one JSON list of ``[title, abstract]`` pairs.
* ideaharness JSONL: one :class:`~ideaharness.schema.Paper` (``model_dump(mode="json")``) a line.

Both load into ``list[Paper]`` in file order; duplicates are kept as they are in the file (the
MOOSE-Chem 1000 corpus repeats two titles), so an index into the list is an index into the file.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ideaharness.errors import DataError
from ideaharness.jsonl import iter_jsonl_models, parse_json_document
from ideaharness.schema import Paper
from ideaharness.textio import read_text


def papers_from_pairs(pairs: object, path: str | Path, id_prefix: str) -> list[Paper]:
    """Turn a MOOSE-Chem ``[[title, abstract], ...]`` list into Papers.

    Args:
        pairs: the decoded JSON value; must be a list of 2-item lists of strings (abstract may be
            empty or null, which gives ``abstract=None``).
        path: the file the value came from (for error messages).
        id_prefix: paper ids become ``f"{id_prefix}/{i}"`` with ``i`` the 0-based list position.

    Returns:
        One Paper per pair, in order.

    Raises:
        DataError: if the value is not such a list, naming the entry index and the problem.
    """
    if not isinstance(pairs, list):
        raise DataError(path, f"expected a JSON list of [title, abstract] pairs, got {type(pairs).__name__}")
    papers: list[Paper] = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise DataError(path, f"entry {i}: expected [title, abstract], got {str(pair)[:80]!r}")
        title, abstract = pair
        if not isinstance(title, str) or not title.strip():
            raise DataError(path, f"entry {i}, field 'title': empty or not a string")
        if abstract is not None and not isinstance(abstract, str):
            raise DataError(path, f"entry {i}, field 'abstract': not a string")
        papers.append(
            Paper(
                id=f"{id_prefix}/{i}",
                title=title.strip(),
                abstract=abstract.strip() if abstract and abstract.strip() else None,
            )
        )
    return papers


def load_corpus_file(path: str | Path, id_prefix: str | None = None) -> list[Paper]:
    """Load a corpus file: a MOOSE-Chem ``[title, abstract]`` JSON list or a JSONL of Paper.

    The format is detected from the first non-blank character (``[`` = JSON list, ``{`` = JSONL).

    Args:
        path: the corpus file.
        id_prefix: for the ``[title, abstract]`` format, paper ids are ``f"{id_prefix}/{i}"``
            (default: the file stem, e.g. ``Inspiration_Corpus_150/0``). JSONL keeps its own ids.

    Returns:
        The papers in file order.

    Raises:
        DataError: missing or unreadable file, invalid JSON (with line number for JSONL), an
            entry that is not a paper, or no paper at all.
    """
    path = Path(path)
    try:
        text = read_text(path)
    except OSError as exc:
        raise DataError(path, f"cannot read corpus file: {exc.strerror or exc}") from exc
    head = text.lstrip()[:1]
    papers: list[Paper] | None = None
    if head == "[":
        papers = papers_from_pairs(parse_json_document(text, path), path, id_prefix or path.stem)
    elif head == "{":
        papers = list(_read_paper_jsonl(path, text))
    if papers:
        return papers
    if not head or papers is not None:
        raise DataError(path, "empty corpus file: no papers")
    raise DataError(path, "not a corpus: expected a JSON list of [title, abstract] or JSONL of papers")


def _read_paper_jsonl(path: Path, text: str) -> Iterable[Paper]:
    for _, paper in iter_jsonl_models(path, Paper, text=text):
        yield paper


def write_corpus_jsonl(papers: Iterable[Paper], path: str | Path) -> Path:
    """Write papers as ideaharness corpus JSONL (one ``Paper`` a line); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for paper in papers:
            fh.write(paper.model_dump_json() + "\n")
    return path
