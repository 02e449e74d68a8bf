"""Section-aware reference filter: which references a paper cites in its Introduction / Background /
Related Work, from full text with section annotations.

Two full-text formats are read into one :class:`SectionedPaper`:

* S2ORC records of the S2AG ``s2orc`` dataset (Lo et al., ACL 2020; GROBID-derived): the body is
  one string, ``content.annotations`` holds JSON-encoded span lists ``sectionheader`` (with
  ``attributes.n`` = section number), ``bibref`` (``attributes.ref_id``) and ``bibentry``
  (``attributes.id``, ``matched_paper_id`` = S2 corpus id). A citation belongs to the last
  numbered header before it; sub-sections (``2.1``) roll up to their top-level section (``2``).
* unarXive records (Saier & Färber 2020; 2022 format): ``body_text`` paragraphs with
  ``section`` / ``sec_number`` / ``sec_type`` and ``cite_spans`` -> ``bib_entries``.

Headings are mapped to categories by :data:`SECTION_PATTERNS`; a citation counts for a category
when either its top-level section or its own (sub)section heading maps there. When no full text
exists, :func:`background_references` falls back to Semantic Scholar citation intents
(``background``), which carry no section names.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ideaharness.data.matching import match_title, normalise_title
from ideaharness.errors import DataError
from ideaharness.jsonl import iter_jsonl
from ideaharness.schema import Reference

#: Regexes (on lower-cased headings, numbering stripped) -> category, first match wins.
SECTION_PATTERNS: tuple[tuple[str, str], ...] = (
    (
        "related_work",
        r"related\s+works?|prior\s+works?|previous\s+works?|literature\s+(review|survey)"
        r"|state\s+of\s+the\s+art",
    ),
    ("background", r"\bbackground\b|\bmotivation\b"),
    ("introduction", r"\bintroduction\b|^intro\b"),
    ("preliminaries", r"preliminar|notation"),
    ("method", r"\bmethod|approach|model\b|framework|architecture"),
    ("experiments", r"experiment|evaluation|results?\b|study\b"),
    ("discussion", r"discussion|limitation|future\s+work"),
    ("conclusion", r"conclusion|summary"),
)
DEFAULT_CATEGORIES: frozenset[str] = frozenset({"introduction", "background", "related_work"})


def section_category(heading: str | None) -> str | None:
    """Category of a section heading (``"2 RELATED WORK"`` -> ``related_work``), or None."""
    if not heading:
        return None
    text = re.sub(r"^\s*(?:\d+(?:\.\d+)*\.?|[IVXivx]+\.)\s*", "", heading).strip().lower()
    for category, pattern in SECTION_PATTERNS:
        if re.search(pattern, text):
            return category
    return None


class BibEntry(BaseModel):
    """One bibliography entry: ``raw`` text, ``title`` when annotated, ids when linked
    (keys as in :attr:`Paper.external_ids`: DOI, ArXiv, CorpusId, OpenAlex)."""

    id: str
    raw: str = ""
    title: str | None = None
    ids: dict[str, str] = Field(default_factory=dict)


class CiteMention(BaseModel):
    """One in-text citation: the bib entry and where it sits."""

    bib_id: str
    section: str | None = None
    subsection: str | None = None

    def categories(self) -> set[str]:
        """Categories of the top-level section and of the own (sub)section heading."""
        return {c for c in (section_category(self.section), section_category(self.subsection)) if c}


class SectionedPaper(BaseModel):
    """Full text reduced to what the filter needs: citations with their sections, and the bibliography."""

    id: str
    source: Literal["s2orc", "unarxive"]
    external_ids: dict[str, str] = Field(default_factory=dict)
    title: str | None = None
    sections: list[str] = Field(default_factory=list)
    mentions: list[CiteMention] = Field(default_factory=list)
    bib: dict[str, BibEntry] = Field(default_factory=dict)

    def cited_in(self, categories: Iterable[str] = DEFAULT_CATEGORIES) -> dict[str, list[str]]:
        """Bib ids cited in sections of the given categories -> the section headings where cited."""
        wanted = set(categories)
        out: dict[str, list[str]] = {}
        for m in self.mentions:
            if m.categories() & wanted:
                heads = out.setdefault(m.bib_id, [])
                for h in (m.section, m.subsection):
                    if h and h not in heads:
                        heads.append(h)
        return out

    def mention_counts(self) -> Counter[str]:
        """Number of in-text citations of each bib id (the whole text)."""
        return Counter(m.bib_id for m in self.mentions)


def _spans(annotations: dict[str, Any], name: str) -> list[dict[str, Any]]:
    value = annotations.get(name)
    if not value:
        return []
    return json.loads(value) if isinstance(value, str) else list(value)


def from_s2orc(record: dict[str, Any]) -> SectionedPaper:
    """Read one S2AG ``s2orc`` record (annotations as JSON strings).

    Raises:
        KeyError / ValueError: not an s2orc record.
    """
    content = record["content"]
    text: str = content.get("text") or ""
    ann = content.get("annotations") or {}
    headers = sorted(_spans(ann, "sectionheader"), key=lambda s: int(s["start"]))
    # Numbered headers only: unnumbered ones are figure captions and the like.
    numbered = [
        (
            int(h["start"]),
            str((h.get("attributes") or {}).get("n")),
            text[int(h["start"]) : int(h["end"])].strip(),
        )
        for h in headers
        if (h.get("attributes") or {}).get("n")
    ]
    top_names = {n: name for _, n, name in numbered if "." not in n}
    bib_titles = [(int(t["start"]), text[int(t["start"]) : int(t["end"])]) for t in _spans(ann, "bibtitle")]
    bib: dict[str, BibEntry] = {}
    for entry in _spans(ann, "bibentry"):
        attrs = entry.get("attributes") or {}
        start, end = int(entry["start"]), int(entry["end"])
        ids: dict[str, str] = {}
        if attrs.get("matched_paper_id"):
            ids["CorpusId"] = str(attrs["matched_paper_id"])
        doi = str(attrs.get("doi") or "")
        if doi.lower().startswith("arxiv:"):
            ids["ArXiv"] = doi.split(":", 1)[1]
        elif doi:
            ids["DOI"] = doi
        title = next((t for s, t in bib_titles if start <= s < end), None)
        bib[str(attrs["id"])] = BibEntry(id=str(attrs["id"]), raw=text[start:end], title=title, ids=ids)
    mentions = []
    for ref in sorted(_spans(ann, "bibref"), key=lambda s: int(s["start"])):
        rid = (ref.get("attributes") or {}).get("ref_id")
        if not rid:
            continue
        pos = int(ref["start"])
        current = [h for h in numbered if h[0] <= pos]
        if not current:
            mentions.append(CiteMention(bib_id=str(rid)))
            continue
        _, number, name = current[-1]
        top = top_names.get(number.split(".")[0], name)
        mentions.append(CiteMention(bib_id=str(rid), section=top, subsection=name if top != name else None))
    external = {k: str(v) for k, v in (record.get("externalids") or {}).items() if v}
    external_ids = {
        {
            "arxiv": "ArXiv",
            "doi": "DOI",
            "pubmed": "PubMed",
            "mag": "MAG",
            "acl": "ACL",
            "pubmedcentral": "PubMedCentral",
            "dblp": "DBLP",
        }.get(k, k): v
        for k, v in external.items()
    }
    external_ids["CorpusId"] = str(record.get("corpusid"))
    title_spans = _spans(ann, "title")
    title = text[int(title_spans[0]["start"]) : int(title_spans[0]["end"])].strip() if title_spans else None
    return SectionedPaper(
        id=external_ids.get("ArXiv") or f"CorpusId:{record.get('corpusid')}",
        source="s2orc",
        external_ids=external_ids,
        title=title,
        sections=[name for _, n, name in numbered if "." not in n],
        mentions=mentions,
        bib=bib,
    )


def from_unarxive(record: dict[str, Any]) -> SectionedPaper:
    """Read one unarXive (2022 format) record.

    Sub-sections roll up to the last ``sec_type == "section"`` paragraph's heading, or to the
    section whose number is the first component of a dotted ``sec_number`` (``2.0.0.1`` -> 2).
    """
    bib: dict[str, BibEntry] = {}
    for bid, entry in (record.get("bib_entries") or {}).items():
        raw_ids = entry.get("ids") or {}
        ids = {}
        if raw_ids.get("doi"):
            ids["DOI"] = raw_ids["doi"]
        arxiv = raw_ids.get("arxiv_id") or next(iter(entry.get("contained_arXiv_ids") or []), None)
        if arxiv:
            ids["ArXiv"] = arxiv if isinstance(arxiv, str) else str(arxiv.get("id", ""))
        if raw_ids.get("open_alex_id"):
            ids["OpenAlex"] = raw_ids["open_alex_id"].rstrip("/").rsplit("/", 1)[-1]
        bib[bid] = BibEntry(
            id=bid, raw=entry.get("bib_entry_raw") or "", ids={k: v for k, v in ids.items() if v}
        )
    mentions = []
    sections: list[str] = []
    numbers: dict[str, str] = {}
    top: str | None = None
    top_number: str | None = None
    for para in record.get("body_text") or []:
        name = para.get("section") or None
        number = str(para.get("sec_number") or "")
        if para.get("sec_type") == "section":
            top, top_number = name, number
            if name and name not in sections:
                sections.append(name)
                numbers.setdefault(number, name)
        elif "." in number and number.split(".")[0] != top_number:
            first = number.split(".")[0]
            top, top_number = numbers.get(first, name), first
        elif top is None:
            top = name
        sub = name if name != top else None
        for span in para.get("cite_spans") or []:
            if span.get("ref_id") in bib:
                mentions.append(CiteMention(bib_id=span["ref_id"], section=top, subsection=sub))
    meta = record.get("metadata") or {}
    external = {"ArXiv": str(record.get("paper_id"))}
    if meta.get("doi"):
        external["DOI"] = meta["doi"]
    return SectionedPaper(
        id=str(record.get("paper_id")),
        source="unarxive",
        external_ids=external,
        title=" ".join(str(meta.get("title") or "").split()) or None,
        sections=sections,
        mentions=mentions,
        bib=bib,
    )


def load_fulltext(path: str | Path) -> Iterator[SectionedPaper]:
    """Read s2orc or unarXive records from a ``.jsonl`` / ``.jsonl.gz`` file (format per line).

    Raises:
        DataError: a line is not JSON or is neither format (names file and line).
    """
    path = Path(path)
    for row, record in iter_jsonl(path):
        content = record.get("content") if isinstance(record, dict) else None
        if isinstance(content, dict) and "annotations" in content:
            yield from_s2orc(record)
        elif isinstance(record, dict) and "body_text" in record and "bib_entries" in record:
            yield from_unarxive(record)
        else:
            raise DataError(path, f"line {row}: neither an s2orc nor an unarXive record")


def match_bib_entry(entry: BibEntry, references: Sequence[Reference]) -> int | None:
    """Index of the reference a bib entry denotes: shared id (DOI, ArXiv, CorpusId, OpenAlex,
    case-insensitive), else its annotated title via :func:`match_title`, else a reference title
    (>= 4 words) contained in the raw entry text. None when nothing matches."""
    wanted = {(k, v.lower()) for k, v in entry.ids.items()}
    for i, ref in enumerate(references):
        if wanted & {(k, str(v).lower()) for k, v in ref.external_ids.items()}:
            return i
    titles = [r.title for r in references]
    if entry.title:
        hit = match_title(entry.title, titles)
        if hit.index is not None:
            return hit.index
    raw = f" {normalise_title(entry.raw)} "
    for i, title in enumerate(titles):
        norm = normalise_title(title)
        if len(norm.split()) >= 4 and f" {norm} " in raw:
            return i
    return None


class FilterResult(BaseModel):
    """Kept references and how they were chosen (``method`` = ``sections`` or ``intents``)."""

    kept: list[Reference]
    method: Literal["sections", "intents"]
    unmatched_bib_ids: list[str] = Field(default_factory=list)


def background_references(
    references: Sequence[Reference],
    fulltext: SectionedPaper | None = None,
    *,
    categories: Iterable[str] = DEFAULT_CATEGORIES,
    fallback_intents: Iterable[str] = ("background",),
) -> FilterResult:
    """References cited in Introduction / Background / Related Work.

    With ``fulltext``: bib entries cited in sections of ``categories`` are matched to
    ``references`` (:func:`match_bib_entry`); kept references get ``sections`` filled, in the
    order of ``references``. Without: references whose S2 ``intents`` include any of
    ``fallback_intents`` (S2 intents carry no section names; this is a proxy).
    """
    if fulltext is None:
        wanted = set(fallback_intents)
        return FilterResult(kept=[r for r in references if wanted & set(r.intents)], method="intents")
    cited = fulltext.cited_in(categories)
    where: dict[int, list[str]] = {}
    unmatched = []
    for bib_id, heads in cited.items():
        entry = fulltext.bib.get(bib_id)
        index = match_bib_entry(entry, references) if entry else None
        if index is None:
            unmatched.append(bib_id)
            continue
        for h in heads:
            if h not in where.setdefault(index, []):
                where[index].append(h)
    kept = [references[i].model_copy(update={"sections": where[i]}) for i in sorted(where)]
    return FilterResult(kept=kept, method="sections", unmatched_bib_ids=unmatched)
