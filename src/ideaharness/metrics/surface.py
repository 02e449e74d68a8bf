"""Surface features that let a judge tell a reference text from generated ones by form alone.

A blind comparison (a ranking of generated ideas with the target paper's idea among them, a
pairwise choice between a generated idea and a reference paper, multiple-choice options) is blind
only if the reference cannot be recognised by its form. Published ground truths carry cues that
generated ideas lack: a leading "The hypothesis is that ...", a self-reference ("this paper",
"the study", "the authors"), quoted measured results ("13-fold (from -1.61 mV/K to -21.5 mV/K)"),
claims of findings ("the results validate this hypothesis"), or simply another length.
:func:`surface_report` measures, per feature, how often it occurs in each group and how well the
feature alone separates the groups; :func:`measured_results`, :func:`result_claims`,
:func:`self_references` and :func:`reference_lead` are the detectors, reused by the rewrite step
that normalises references (:mod:`ideaharness.benchmarks._blinding`).

Separation is a balanced accuracy in [0.5, 1]: 0.5 = the feature carries no information about the
group, 1 = it alone tells every reference from every generated text. For numeric features it is
max(AUC, 1 - AUC) with AUC = P(value of a random reference > value of a random generated text)
+ P(equal)/2 (the Mann-Whitney U statistic divided by n_ref * n_gen); for a binary feature this is
the balanced accuracy of "reference iff the feature is present". The leading phrase is categorical:
its separation is the balanced accuracy of a leave-one-out majority vote over the texts sharing
the same first two words (a phrase no other text has gives no information, credit 1/2).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

SEPARATION_WARNING = 0.75
"""A feature whose separation reaches this value is reported as letting a judge tell the groups apart."""

_NUMBER = r"(?:(?<=[\s(\[{~≈<>=,;:/])|^)[-−+~>≤≥<≈]*\d[\d,]*(?:\.\d+)?"
_UNITS = (
    r"%|‰|-?fold\b|[x×](?![\w-])|times\b|°\s?[CF]\b|K\b|kelvin\b|"
    r"[mkMGTnμµ]?(?:V|W|A|Pa|Hz|J|eV|Ω|S)(?![\w])|"
    r"(?:mV|μV|µV)\s?/\s?K|[mμµn]?M\b|mol\b|mmol\b|wt\s?%|vol\s?%|ppm\b|ppb\b|"
    r"[kmμµn]?m(?:[²³23])?(?![\w])|Å|cm(?:[²³23])?(?![\w])|L\b|mL\b|μL\b|µL\b|"
    r"[kmμµ]?g(?![\w])|"
    r"s\b|ms\b|ns\b|ps\b|fs\b|μs\b|µs\b|min\b|h\b|hrs?\b|hours?\b|days?\b|weeks?\b|cycles?\b|"
    r"dB\b|mAh\b|Wh\b|kWh\b|points?\b|pp\b|BLEU\b|FID\b|accuracy\b"
)
_MEASURED = re.compile(rf"{_NUMBER}\s?(?:{_UNITS})", re.IGNORECASE)
_MEASURED_CASED = re.compile(rf"{_NUMBER}\s?(?:{_UNITS})")
_SELF_REFERENCE = re.compile(
    r"\b(?:(?:this|the|our|present|current)\s+(?:paper|article|manuscript|publication)"
    r"|(?:this|our|present|current)\s+(?:study|work|research|report)"
    r"|the\s+study(?!\s+of\b)|the\s+work(?!\s+(?:of|function)\b)"
    r"|the\s+authors?|herein|in\s+this\s+(?:paper|study|work|article))\b(?!s)",
    re.IGNORECASE,
)
_REFERENCE_LEAD = re.compile(
    r"^\W*(?:(?:the|our|this)\s+(?:\w+\s+){0,2}hypothes[ie]s\b|hypothes[ie]s\s*:"
    r"|(?:in\s+)?(?:this|the|our)\s+(?:paper|study|work|article|research)\b|herein\b"
    r"|we\s+(?:report|show|demonstrate|found)\b)",
    re.IGNORECASE,
)
_RESULT_CLAIM = re.compile(
    r"\b(?:(?:experimental\s+)?(?:results?|findings?|experiments?|measurements?|data)\s+(?:clearly\s+)?"
    r"(?:show|shows|showed|shown|demonstrate[sd]?|validate[sd]?|confirm(?:s|ed)?|reveal(?:s|ed)?"
    r"|indicate[sd]?|prove[sd]?)"
    r"|(?:was|were|has\s+been|have\s+been)\s+(?:experimentally\s+)?(?:found|shown|demonstrated|confirmed"
    r"|validated|proven|observed|achieved)"
    r"|(?:validat|confirm|prov)\w*\s+(?:this|the)\s+hypothesis"
    r"|we\s+(?:found|showed|demonstrated|observed|achieved))\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[\w'’-]+")


def word_count(text: str) -> int:
    """Number of whitespace-separated words."""
    return len(text.split())


def leading_phrase(text: str, words: int = 2) -> str:
    """The first ``words`` words, lower-cased, punctuation dropped ("" for a text without words)."""
    return " ".join(w.lower() for w in _WORD.findall(text)[:words])


def measured_results(text: str) -> list[str]:
    """Quantities with a unit, percentages, fold changes and "N times" comparisons in ``text``.

    A number counts only when it stands alone (after a space, a bracket or a comparison sign), so
    chemical formulas and names (``K3Fe(CN)6``, ``1,4-dicarbonyl``, ``3D``, ``ZEO-5``) do not.
    Single-letter units are matched case-sensitively ("5 K", "2 M"; not "5 k-means").

    Returns:
        The matched spans, in order (empty when the text quotes no measured value).
    """
    return [text[a:b].strip() for a, b in _measured_spans(text)]


def _measured_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    for match in _MEASURED.finditer(text):
        span = match.group(0)
        unit = span.lstrip("-−+~>≤≥<≈0123456789,. ")
        if len(unit) == 1 and unit.isalpha() and not _MEASURED_CASED.fullmatch(span):
            continue
        spans.append(match.span())
    return spans


def without_measured_results(text: str) -> str:
    """``text`` with every span of :func:`measured_results` removed (and the brackets and
    separators left empty by it): what a rewrite may keep of a finished study's text.

    Returns:
        The text, whitespace collapsed; unchanged when it quotes no measured value.
    """
    spans = _measured_spans(text)
    if not spans:
        return text
    out, last = [], 0
    for a, b in spans:
        while b < len(text) and not text[b].isspace() and text[b] not in ",;)]":  # the rest of a unit
            b += 1
        out.append(text[last:a])
        last = b
    out.append(text[last:])
    cleaned = "".join(out)
    cleaned = re.sub(r"\(\s*(?:(?:to|from|and|or|vs\.?|of|at|by)\s*|[-–,;/~]\s*)*\)", "", cleaned)
    cleaned = re.sub(r"\s+([,;.:)])", r"\1", cleaned)
    cleaned = re.sub(r"\(\s+", "(", cleaned)
    return " ".join(cleaned.split())


def result_claims(text: str) -> list[str]:
    """Statements that something was already shown ("the results validate", "was found",
    "confirming this hypothesis", "we demonstrated"): a finished study's voice, not a proposal's."""
    return [m.group(0) for m in _RESULT_CLAIM.finditer(text)]


def self_references(text: str) -> list[str]:
    """Phrases by which a text refers to itself as a publication ("this paper", "the study",
    "our work", "the authors", "herein"); "the study of", "the work function" do not count."""
    return [m.group(0) for m in _SELF_REFERENCE.finditer(text)]


def reference_lead(text: str) -> str | None:
    """The reference-style opening of ``text`` ("The hypothesis", "The main hypothesis of the
    paper", "Hypothesis:", "This study", "Herein", "We report"), or None."""
    match = _REFERENCE_LEAD.match(text)
    return match.group(0).strip() if match else None


def surface_features(text: str) -> dict[str, Any]:
    """The surface features of one text.

    Returns:
        ``{"words": int, "leading_phrase": str, "reference_lead": bool, "measured_results": int,
        "result_claims": int, "self_references": int}`` (counts of matches for the last three).
    """
    return {
        "words": word_count(text),
        "leading_phrase": leading_phrase(text),
        "reference_lead": reference_lead(text) is not None,
        "measured_results": len(measured_results(text)),
        "result_claims": len(result_claims(text)),
        "self_references": len(self_references(text)),
    }


def auc(reference_values: Sequence[float], generated_values: Sequence[float]) -> float | None:
    """P(reference value > generated value) + P(equal)/2 (Mann-Whitney U / (n_ref * n_gen)).

    Returns:
        A value in [0, 1] (0.5 = no separation); None when either group is empty.
    """
    if not reference_values or not generated_values:
        return None
    if len(set(reference_values) | set(generated_values)) == 1:
        return 0.5
    from scipy.stats import mannwhitneyu  # scipy.stats takes ~1 s to import

    u = mannwhitneyu(reference_values, generated_values, alternative="two-sided").statistic
    return float(u) / (len(reference_values) * len(generated_values))


def phrase_separation(reference_phrases: Sequence[str], generated_phrases: Sequence[str]) -> float | None:
    """Balanced accuracy of a leave-one-out majority vote on the leading phrase.

    Each text is classified by the other texts with the same phrase: "reference" when that phrase's
    share among the other references exceeds its share among the other generated texts,
    "generated" when lower, half credit on a tie (including a phrase no other text has).

    Returns:
        Balanced accuracy in [0, 1] (0.5 = chance); None when either group is empty.
    """
    n_ref, n_gen = len(reference_phrases), len(generated_phrases)
    if not n_ref or not n_gen:
        return None
    ref_counts, gen_counts = Counter(reference_phrases), Counter(generated_phrases)

    def credit(phrase: str, is_reference: bool) -> float:
        r = ref_counts[phrase] - is_reference
        g = gen_counts[phrase] - (not is_reference)
        r_rate = r / (n_ref - is_reference) if n_ref - is_reference else 0.0
        g_rate = g / (n_gen - (not is_reference)) if n_gen - (not is_reference) else 0.0
        if r_rate == g_rate:
            return 0.5
        return float((r_rate > g_rate) == is_reference)

    ref_acc = sum(credit(p, True) for p in reference_phrases) / n_ref
    gen_acc = sum(credit(p, False) for p in generated_phrases) / n_gen
    return (ref_acc + gen_acc) / 2


def _separation(value: float | None) -> float | None:
    return None if value is None else max(value, 1.0 - value)


def surface_report(references: Sequence[str], generated: Sequence[str], *, top: int = 3) -> dict[str, Any]:
    """How well surface features alone tell ``references`` from ``generated`` texts.

    Args:
        references: the reference texts as the judge sees them (ground truths, reference papers).
        generated: the generated (or distractor) texts shown beside them.
        top: how many of the most frequent leading phrases to list per group.

    Returns:
        ``{"n_references", "n_generated", "features": {name: {...}}, "leading_phrases":
        {"reference": [[phrase, count], ...], "generated": [...]}, "max_separation",
        "separating": [names with separation >= SEPARATION_WARNING]}``. Features: ``words``
        (``reference``/``generated`` = mean words), ``leading_phrase`` (share of each group opening
        with the references' most frequent phrase, named in ``phrase``), ``reference_lead``,
        ``measured_results``, ``result_claims``, ``self_references`` (share of texts with at least
        one, and the ``count`` of such texts). Every feature has ``separation`` in [0.5, 1] (None for an empty
        group); numeric features also ``auc`` (see the module docstring).
    """
    ref = [surface_features(t) for t in references]
    gen = [surface_features(t) for t in generated]
    features: dict[str, dict[str, Any]] = {}
    ref_words = [f["words"] for f in ref]
    gen_words = [f["words"] for f in gen]
    a = auc(ref_words, gen_words)
    features["words"] = {"reference": _mean(ref_words), "generated": _mean(gen_words), "auc": a,
                         "separation": _separation(a)}
    ref_phrases = [f["leading_phrase"] for f in ref]
    gen_phrases = [f["leading_phrase"] for f in gen]
    common = Counter(ref_phrases).most_common(1)
    phrase = common[0][0] if common else None
    features["leading_phrase"] = {
        "phrase": phrase,
        "reference": _share([p == phrase for p in ref_phrases]),
        "generated": _share([p == phrase for p in gen_phrases]),
        "separation": _separation(phrase_separation(ref_phrases, gen_phrases)),
    }
    for name in ("reference_lead", "measured_results", "result_claims", "self_references"):
        r = [float(f[name]) for f in ref]
        g = [float(f[name]) for f in gen]
        a = auc(r, g)
        features[name] = {
            "reference": _share([v > 0 for v in r]), "generated": _share([v > 0 for v in g]),
            "count": {"reference": sum(v > 0 for v in r), "generated": sum(v > 0 for v in g)},
            "auc": a, "separation": _separation(a),
        }
    separations = {k: v["separation"] for k, v in features.items() if v["separation"] is not None}
    return {
        "n_references": len(ref),
        "n_generated": len(gen),
        "features": features,
        "leading_phrases": {
            "reference": [list(x) for x in Counter(ref_phrases).most_common(top)],
            "generated": [list(x) for x in Counter(gen_phrases).most_common(top)],
        },
        "max_separation": max(separations.values()) if separations else None,
        "separating": sorted(k for k, v in separations.items() if v >= SEPARATION_WARNING),
    }


def surface_rows(label: str, report: dict[str, Any], before: dict[str, Any] | None = None) -> list[list[Any]]:
    """Table rows ``[label, feature, reference, generated, separation, separation before]`` of a
    :func:`surface_report` (``before``: the report on the unnormalised texts, if any)."""
    rows = []
    for name, f in report["features"].items():
        shown = f"{name} ({f['phrase']!r})" if name == "leading_phrase" and f.get("phrase") else name
        prior = before["features"][name]["separation"] if before else None
        rows.append([label, shown, f["reference"], f["generated"], f["separation"], prior])
    return rows


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None
