"""ResearchBench discipline spreadsheets (and the TOMATO-Chem sheet) -> :class:`Instance`.

ResearchBench (Liu, Yang et al. 2025, arXiv 2503.21248) ships one ``.xlsx`` per discipline
(sheet ``Sheet1``, 26 columns, :data:`RESEARCHBENCH_COLUMNS`); TOMATO-Chem (MOOSE-Chem, Yang et
al., ICLR 2025) ships ``chem_research_2024.xlsx`` whose sheet ``Overall`` has the first 19 of
them (:data:`TOMATO_COLUMNS`). The published code reads both by column position; we read by
header name (any order, header whitespace stripped), so a reordered sheet loads identically.

Cell rules:

* empty markers ``""``, ``NA``, ``N/A``, ``nan``, ``None`` (case-insensitive) and empty cells mean
  "absent";
* leading model chatter ("Certainly! Here's a concise survey ...:") is stripped from text cells
  by :func:`strip_chatter` (a conservative rule; see there);
* ``No`` may have gaps but must be unique; inspirations 2 and 3 are optional;
* a required column missing from the header, or an empty required cell, is a ``DataError``
  naming the file, the spreadsheet row (1-based, header = row 1) and the column;
* a formula without a cached value (a workbook saved by a program that does not compute
  formulas) is reported as such: an error in a required cell, a ``DataWarning`` elsewhere (the
  cell reads as empty and is listed in ``extra["formulas_without_value"]``);
* columns outside :data:`RESEARCHBENCH_COLUMNS` are kept in ``extra["other_columns"]``.

Field mapping (also used for TOMATO-Chem): ``Title``/``Publisher``/``Public Date``/``doi``/
``abstract`` -> target paper; ``Background Question`` -> research_question; ``Background Little
Survey`` -> background_survey; inspiration k title + relation -> ``references[k-1]`` (abstract
unknown here); ``Main hypothesis`` -> ground_truth.hypothesis and .idea; ``fine grained
hypothesis``; ``experiments details`` (else "Experiments to Verify ...") -> experiment_plan;
``Note`` -> key_points; everything else -> ``extra`` (unknown columns under ``other_columns``).
"""

from __future__ import annotations

import datetime as dt
import re
import warnings
from pathlib import Path
from typing import Any, NamedTuple

from ideaharness.errors import DataError, DataWarning
from ideaharness.schema import GroundTruth, Instance, Paper, Reference

RESEARCHBENCH_COLUMNS: tuple[str, ...] = (
    "No",
    "Title",
    "Public Date",
    "Publisher",
    "Background Little Survey",
    "Background Little Survey (strict)",
    "Background Question",
    "Background Question (strict)",
    "Main Inspiration",
    "Inspiration paper 1 title",
    "Relation between the main inspiration and the inspiration paper 1",
    "Inspiration paper 2 title",
    "Relation between the main inspiration and the inspiration paper 2",
    "Inspiration paper 3 title",
    "Relation between the main inspiration and the inspiration paper 3",
    "Main hypothesis",
    "Experiments to Verify the Research Hypothesis:",
    "Reasoning Process",
    "Note",
    "doi",
    "abstract",
    "experiments details",
    "fine grained hypothesis",
    "sufficiency tag",
    "distance tag",
    "inf tag",
)
"""The 26 ResearchBench column names, in the published order."""

TOMATO_COLUMNS: tuple[str, ...] = RESEARCHBENCH_COLUMNS[:19]
"""The 19 columns of TOMATO-Chem's ``Overall`` sheet; all of them must be present in any sheet."""

REQUIRED_COLUMNS: tuple[str, ...] = TOMATO_COLUMNS
_KNOWN_COLUMNS = frozenset(RESEARCHBENCH_COLUMNS)
REQUIRED_CELLS: tuple[str, ...] = (
    "No",
    "Title",
    "Background Little Survey",
    "Background Question",
    "Inspiration paper 1 title",
    "Main hypothesis",
)
"""Columns whose cell may not be empty in any data row."""

EMPTY_MARKERS = frozenset({"", "na", "n/a", "nan", "none"})

_INTERJECTION = r"(?:certainly|sure|of course|absolutely)"
_PRESENTER = r"(?:here(?:'|\u2019)s|here is|here are|below is|below are|the following is|the following are)"
_CHATTER_PATTERNS = (
    # "Certainly! Here's a concise background survey of 'A: B':" ending its first line
    re.compile(rf"^\s*{_INTERJECTION}\b[!.,]?\s*{_PRESENTER}\b[^\n]{{0,300}}:[ \t]*\n", re.IGNORECASE),
    # "Certainly! Here's the survey: Prior work ..." (text follows on the same line)
    re.compile(rf"^\s*{_INTERJECTION}\b[!.,]?\s*{_PRESENTER}\b[^\n:]{{0,300}}:[ \t]*", re.IGNORECASE),
    # "Here is the background survey ...:" alone on its first line
    re.compile(
        r"^\s*(?:here(?:'|\u2019)s|here is|here are|below is|below are)\b[^\n:]{0,300}:[ \t]*\n",
        re.IGNORECASE,
    ),
    # "Certainly!" alone on its first line
    re.compile(rf"^\s*{_INTERJECTION}[!.]?[ \t]*\n", re.IGNORECASE),
)


def strip_chatter(text: str) -> str:
    """Remove one leading line of LLM chatter from an extracted text cell.

    Conservative rule (ResearchBench cells were LLM-extracted; 475/678 surveys start with e.g.
    "Certainly! Here's a concise background survey ...:"). A prefix is removed only when it is

    1. an interjection (Certainly/Sure/Of course/Absolutely) followed by a presenter phrase
       (Here's/Here is/Below is/The following is ...) up to the colon that ends the first line,
       or else up to the first colon of that line, or
    2. a presenter phrase starting the text whose first line ends with a colon, or
    3. an interjection alone on the first line.

    Text that starts otherwise (e.g. "Background Survey Summary", "Here, we show ...") is kept
    as is. If stripping would leave nothing, the text is kept.

    Returns:
        The text without the prefix, leading whitespace removed.
    """
    out = text
    for pattern in _CHATTER_PATTERNS:
        m = pattern.match(out)
        if m and out[m.end() :].strip():
            out = out[m.end() :]
    return out.lstrip() if out is not text else text


class _Sheet(NamedTuple):
    path: Path
    columns: dict[str, int]
    rows: list[tuple[int, tuple[Any, ...]]]
    formulas: dict[tuple[int, int], str]
    """(spreadsheet row, column index) -> formula text, for cells holding a formula without a cached value."""


def _cell_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return None if text.lower() in EMPTY_MARKERS else text


def _has_formulas(path: Path) -> bool:
    """Whether any worksheet of the workbook holds a formula (``<f>`` element), without parsing it."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                if name.startswith("xl/worksheets/") and name.endswith(".xml"):
                    data = archive.read(name)
                    if b"<f>" in data or b"<f " in data or b"<f/>" in data:
                        return True
    except (OSError, zipfile.BadZipFile):
        return False
    return False


def _uncached_formulas(path: Path, title: str, cached: list[tuple[Any, ...]]) -> dict[tuple[int, int], str]:
    """Cells whose formula has no cached value: openpyxl reads them as empty with ``data_only``.

    A workbook written by a program that does not compute formulas (pandas/openpyxl scripts, some
    converters) stores only the formula text; Excel and LibreOffice store the value beside it.
    """
    import openpyxl

    wb = openpyxl.load_workbook(path, read_only=True, data_only=False)
    try:
        found: dict[tuple[int, int], str] = {}
        for i, row in enumerate(wb[title].iter_rows(values_only=True), start=1):
            values = cached[i - 1] if i - 1 < len(cached) else ()
            for j, formula in enumerate(row):
                text = formula if isinstance(formula, str) else getattr(formula, "text", None)
                if (isinstance(text, str) and text.startswith("=")
                        and (j >= len(values) or values[j] is None)):
                    found[(i, j)] = text
        return found
    finally:
        wb.close()


def _read_sheet(path: Path, sheet: str | None) -> _Sheet:
    import openpyxl  # heavy; imported on use

    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except FileNotFoundError as exc:
        raise DataError(path, "file not found") from exc
    except Exception as exc:  # openpyxl raises zipfile/KeyError/InvalidFileException variants
        raise DataError(path, f"not a readable .xlsx workbook ({type(exc).__name__}: {exc})") from exc
    try:
        if sheet is None:
            ws = wb.worksheets[0]
        elif sheet in wb.sheetnames:
            ws = wb[sheet]
        else:
            raise DataError(path, f"no sheet {sheet!r}; sheets are {wb.sheetnames}")
        all_rows = [tuple(r) for r in ws.iter_rows(values_only=True)]
        title = ws.title
    finally:
        wb.close()
    if not all_rows:
        raise DataError(path, "empty sheet: no header row")
    columns: dict[str, int] = {}
    for j, name in enumerate(all_rows[0]):
        if name is None or not str(name).strip():
            continue
        key = " ".join(str(name).split())
        if key in columns:
            raise DataError(path, f"row 1: column {key!r} appears twice")
        columns[key] = j
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise DataError(path, f"missing required column(s): {', '.join(repr(c) for c in missing)}")
    formulas = _uncached_formulas(path, title, all_rows) if _has_formulas(path) else {}
    with_formula = {i for i, _ in formulas}
    rows = [(i, r) for i, r in enumerate(all_rows[1:], start=2)
            if i in with_formula or any(_cell_text(v) is not None for v in r)]
    return _Sheet(path, columns, rows, formulas)


def _formula_note(formula: str) -> str:
    shown = formula if len(formula) <= 60 else formula[:57] + "..."
    return (
        f"the cell holds a formula ({shown}) without a cached value; open and save the file in "
        "Excel or LibreOffice (which compute it), or export the values"
    )


_DATE_RE = re.compile(r"^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")


def _parse_date(value: Any, path: Path, row: int) -> tuple[dt.date | None, int | None]:
    if value is None:
        return None, None
    if isinstance(value, dt.datetime):
        return value.date(), value.year
    if isinstance(value, dt.date):
        return value, value.year
    text = _cell_text(value)
    if text is None:
        return None, None
    m = _DATE_RE.match(text)
    try:
        if m:
            day = dt.date(int(m[1]), int(m[2]), int(m[3]))
            return day, day.year
        if re.fullmatch(r"\d{4}", text):
            return None, int(text)
    except ValueError:
        pass
    raise DataError(path, f"row {row}, field 'Public Date': cannot read date {text!r} (use YYYY/MM/DD)")


def normalise_doi(doi: str) -> str:
    """Lowercase a DOI and drop ``https://doi.org/`` / ``doi:`` prefixes and whitespace."""
    text = doi.strip().lower()
    text = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", "", text)
    return text.strip()


def _row_instance(
    sheet: _Sheet, row: int, values: tuple[Any, ...], dataset: str, discipline: str | None, domain: str | None
) -> Instance:
    path = sheet.path
    stripped: list[str] = []

    def raw(col: str) -> Any:
        j = sheet.columns.get(col)
        return values[j] if j is not None and j < len(values) else None

    def text(col: str) -> str | None:
        value = _cell_text(raw(col))
        if value is not None and col not in ("No", "Title", "doi"):
            cleaned = strip_chatter(value)
            if cleaned != value:
                stripped.append(col)
            value = cleaned
        return value

    for col in REQUIRED_CELLS:
        if text(col) is None:
            formula = sheet.formulas.get((row, sheet.columns[col]))
            if formula is not None:
                raise DataError(path, f"row {row}, field {col!r}: {_formula_note(formula)}")
            raise DataError(path, f"row {row}, field {col!r}: empty required cell")
    stripped.clear()
    number = text("No")
    assert number is not None  # checked above
    inst_id = f"{dataset}/{discipline}/{number}" if discipline else f"{dataset}/{number}"
    date, year = _parse_date(raw("Public Date"), path, row)
    doi = text("doi")
    references: list[Reference] = []
    orphans: list[int] = []
    for k in (1, 2, 3):
        title = text(f"Inspiration paper {k} title")
        relation = text(f"Relation between the main inspiration and the inspiration paper {k}")
        if title is None:
            if relation is not None:  # kept, not guessed into a reference
                orphans.append(k)
            continue
        references.append(
            Reference(id=f"{inst_id}/insp{k}", title=title, relation=relation, extra={"inspiration_index": k})
        )
    hypothesis = text("Main hypothesis")
    extra: dict[str, Any] = {
        "source_file": path.name,
        "row": row,
        "No": number,
    }
    if discipline:
        extra["discipline"] = discipline
    for key, col in (
        ("research_question_strict", "Background Question (strict)"),
        ("background_survey_strict", "Background Little Survey (strict)"),
        ("main_inspiration", "Main Inspiration"),
        ("experiments_to_verify", "Experiments to Verify the Research Hypothesis:"),
        ("reasoning_process", "Reasoning Process"),
        ("sufficiency_tag", "sufficiency tag"),
        ("distance_tag", "distance tag"),
        ("inf_tag", "inf tag"),
    ):
        value = text(col)
        if value is not None:
            extra[key] = value
    experiments = text("experiments details") or extra.get("experiments_to_verify")
    target = Paper(
        id=normalise_doi(doi) if doi else inst_id,
        title=text("Title") or "",
        abstract=text("abstract"),
        year=year,
        publication_date=date,
        venue=text("Publisher"),
        external_ids={"DOI": doi} if doi else {},
    )
    instance = Instance(
        id=inst_id,
        dataset=dataset,
        target=target,
        references=references,
        research_question=text("Background Question"),
        background_survey=text("Background Little Survey"),
        ground_truth=GroundTruth(
            idea=hypothesis,
            hypothesis=hypothesis,
            fine_grained_hypothesis=text("fine grained hypothesis"),
            experiment_plan=experiments,
            key_points=text("Note"),
        ),
        domain=domain if domain is not None else discipline,
        extra=extra,
    )
    other = {col: value for col, j in sheet.columns.items() if col not in _KNOWN_COLUMNS
             and (value := _cell_text(values[j] if j < len(values) else None)) is not None}
    if other:
        instance.extra["other_columns"] = other
    uncached = [col for col, j in sheet.columns.items() if (row, j) in sheet.formulas]
    if uncached:
        instance.extra["formulas_without_value"] = uncached
    if orphans:
        instance.extra["relations_without_title"] = orphans
    if stripped:
        instance.extra["chatter_stripped"] = sorted(set(stripped))
    return instance


def load_researchbench_sheet(
    path: str | Path,
    discipline: str | None = None,
    sheet: str | None = "Sheet1",
    *,
    dataset: str = "researchbench",
    domain: str | None = None,
) -> list[Instance]:
    """Load one ResearchBench discipline sheet (or the TOMATO-Chem ``Overall`` sheet).

    Args:
        path: the ``.xlsx`` file.
        discipline: discipline name (e.g. the file stem "Chemistry"); goes into ids
            (``f"{dataset}/{discipline}/{No}"``, else ``f"{dataset}/{No}"``), ``extra`` and
            the default ``domain``.
        sheet: sheet name; None = the first sheet.
        dataset: the Instance ``dataset`` value and id prefix.
        domain: Instance ``domain`` (default: ``discipline``).

    Returns:
        One Instance per non-empty data row, in sheet order.

    Raises:
        DataError: unreadable workbook, unknown sheet, missing required column(s) (all named), an
            empty required cell, an unreadable date or a duplicate ``No`` — each naming the file,
            the spreadsheet row and the column; a sheet with no data row.
    """
    path = Path(path)
    data = _read_sheet(path, sheet)
    instances: list[Instance] = []
    seen: dict[str, int] = {}
    for row, values in data.rows:
        inst = _row_instance(data, row, values, dataset, discipline, domain)
        number = inst.extra["No"]
        if number in seen:
            raise DataError(path, f"row {row}, field 'No': {number!r} already used in row {seen[number]}")
        seen[number] = row
        instances.append(inst)
    if not instances:
        raise DataError(path, "no data rows: a header row and nothing under it")
    if data.formulas:
        (row, j), formula = min(data.formulas.items())
        column = next((c for c, k in data.columns.items() if k == j), f"column {j + 1}")
        warnings.warn(
            f"{path}: row {row}, field {column!r} and {len(data.formulas) - 1} other cell(s): "
            f"{_formula_note(formula)}; these cells are read as empty (listed per instance in "
            "extra['formulas_without_value'])",
            DataWarning,
            stacklevel=2,
        )
    return instances


class ResearchBenchDir(NamedTuple):
    """Result of :func:`load_researchbench_dir`.

    ``duplicate_dois`` maps each normalised DOI found in more than one discipline to the
    disciplines (file stems) where it appears, in load order.
    """

    instances: list[Instance]
    duplicate_dois: dict[str, list[str]]


def load_researchbench_dir(path: str | Path, dedupe: bool = False) -> ResearchBenchDir:
    """Load every ``*.xlsx`` discipline file of a ResearchBench ``dataset/`` folder.

    The discipline is the file stem; files load in name order. The published release has 678
    rows but 539 distinct DOIs: a paper can appear in 2-3 disciplines with separately extracted
    fields. Those DOIs are returned; with ``dedupe=True`` only the first occurrence (in file
    order) of each DOI is kept. Rows without a DOI are never deduplicated.

    Returns:
        ``ResearchBenchDir(instances, duplicate_dois)``.

    Raises:
        DataError: if the folder has no ``.xlsx`` file, or any sheet is bad (see
            :func:`load_researchbench_sheet`).
    """
    folder = Path(path)
    files = sorted(p for p in folder.glob("*.xlsx") if not p.name.startswith("~$"))
    if not files:
        raise DataError(folder, "no .xlsx discipline files in this folder")
    instances: list[Instance] = []
    where: dict[str, list[str]] = {}
    for file in files:
        for inst in load_researchbench_sheet(file, discipline=file.stem):
            doi = inst.target.external_ids.get("DOI")
            if doi:
                key = normalise_doi(doi)
                seen_in = where.setdefault(key, [])
                first = not seen_in
                if file.stem not in seen_in:
                    seen_in.append(file.stem)
                if dedupe and not first:
                    continue
            instances.append(inst)
    duplicates = {doi: ds for doi, ds in where.items() if len(ds) > 1}
    return ResearchBenchDir(instances, duplicates)
