"""HindSight's parts on their own: the reply parsers (property tests), the window and horizon
arithmetic, the impact normalisation, Spearman's rho (a published worked example) and its topic
bootstrap, the match decision rule, the key phrases and the idea contract."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ideaharness.benchmarks.hindsight.aggregate import pair_verdict
from ideaharness.benchmarks.hindsight.contract import CONTRACT, from_row, generation_task
from ideaharness.benchmarks.hindsight.impact import (
    ALL_FIELDS,
    citations_per_year,
    field_baselines,
    normalised_impact,
    spearman,
    spearman_check,
    venue_tier,
)
from ideaharness.benchmarks.hindsight.parsers import parse_idea, parse_match, parse_review
from ideaharness.benchmarks.hindsight.search import key_phrases, text_sha
from ideaharness.benchmarks.hindsight.topics import add_months, parse_horizon, window_end, window_place
from ideaharness.errors import ParseError
from ideaharness.schema import Paper

PROSE = ("Large language models could be evaluated by letting people chat with them and with humans, then "
         "asking which partner was the machine; we run such a game at scale and compare the answers.")
WRAPS = st.sampled_from(["{}", "```json\n{}\n```", "My verdict:\n{}", "{}\n"])


# ----------------------------------------------------------------------------- parsers

@settings(max_examples=60, deadline=None)
@given(verdict=st.sampled_from(["yes", "YES", "Yes", "no", "No", "match", "no match", "No  Match", True,
                                False]), wrap=WRAPS, reason=st.text(max_size=40))
def test_a_match_verdict_reads_yes_or_no(verdict: object, wrap: str, reason: str) -> None:
    text = wrap.format(json.dumps({"reason": reason, "match": verdict}))
    expected = verdict if isinstance(verdict, bool) else str(verdict).lower().split()[0] in ("yes", "match")
    assert parse_match(text) is expected


@settings(max_examples=60, deadline=None)
@given(value=st.one_of(st.sampled_from(["maybe", "partly", "", "y", "1"]), st.integers(), st.none()),
       wrap=WRAPS)
def test_any_other_verdict_is_a_parse_failure_never_a_match(value: object, wrap: str) -> None:
    with pytest.raises(ParseError):
        parse_match(wrap.format(json.dumps({"match": value})))


@given(text=st.text(max_size=200))
def test_a_reply_without_a_verdict_object_never_parses(text: str) -> None:
    if '"match"' in text.lower():
        return
    with pytest.raises(ParseError):
        parse_match(text)


@settings(max_examples=60, deadline=None)
@given(novelty=st.integers(1, 10), quality=st.integers(1, 10), wrap=WRAPS)
def test_a_review_reads_both_scores(novelty: int, quality: int, wrap: str) -> None:
    text = wrap.format(json.dumps({"reason": "fine", "novelty": novelty, "quality": quality}))
    assert parse_review(text) == {"novelty": novelty, "quality": quality}


@pytest.mark.parametrize("scores", [{"novelty": 0, "quality": 5}, {"novelty": 11, "quality": 5},
                                    {"novelty": 7.5, "quality": 5}, {"novelty": 7}, {"quality": "high"}])
def test_a_review_off_the_scale_or_missing_a_score_is_refused(scores: dict[str, object]) -> None:
    with pytest.raises(ParseError):
        parse_review(json.dumps(scores))


@settings(max_examples=40, deadline=None)
@given(title=st.one_of(st.none(), st.text(min_size=1, max_size=40).filter(str.strip)), wrap=WRAPS,
       phrases=st.lists(st.sampled_from(["turing test", "chatbot evaluation", "human judges", "  scale "]),
                        max_size=4))
def test_a_generated_idea_round_trips(title: str | None, wrap: str, phrases: list[str]) -> None:
    reply = wrap.format(json.dumps({"title": title, "idea": PROSE, "key_phrases": phrases}))
    parsed = parse_idea(reply)
    assert parsed["idea"] == PROSE
    assert parsed["title"] == (" ".join(title.split()) if title else None)
    unique = list(dict.fromkeys(" ".join(p.split()) for p in phrases))
    assert parsed["key_phrases"] == (unique or None)


@pytest.mark.parametrize("reply", ['{"idea": "Too short to be an idea."}', '{"title": "only a title"}',
                                   '{"idea": "I\'m sorry, but I cannot propose a research idea on this topic '
                                   'because it is outside what I can help with today, sorry."}',
                                   "no json at all", '{"idea": 5}'])
def test_a_reply_that_is_no_idea_is_refused(reply: str) -> None:
    with pytest.raises(ParseError):
        parse_idea(reply)


# ----------------------------------------------------------------------------- window

@pytest.mark.parametrize(("day", "months", "expected"), [
    (dt.date(2022, 11, 30), 30, dt.date(2025, 5, 30)), (dt.date(2022, 8, 31), 6, dt.date(2023, 2, 28)),
    (dt.date(2023, 12, 31), 2, dt.date(2024, 2, 29)), (dt.date(2020, 1, 15), 0, dt.date(2020, 1, 15))])
def test_months_are_calendar_months(day: dt.date, months: int, expected: dt.date) -> None:
    assert add_months(day, months) == expected


@pytest.mark.parametrize(("text", "months"), [("30m", 30), ("30", 30), (30, 30), ("2y", 24),
                                              ("30 months", 30), (" 1 year ", 12)])
def test_horizons_read_months_or_years(text: str | int, months: int) -> None:
    assert parse_horizon(text) == months


@pytest.mark.parametrize("text", ["0m", "-3", "soon", "3w", ""])
def test_other_horizons_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="horizon"):
        parse_horizon(text)


def _dated(day: str | None = None, year: int | None = None) -> Paper:
    return Paper(id="p", title="t", publication_date=dt.date.fromisoformat(day) if day else None, year=year)


@pytest.mark.parametrize(("paper", "place"), [
    (_dated("2022-11-30"), "before"), (_dated("2022-12-01"), "in"), (_dated("2025-05-30"), "in"),
    (_dated("2025-05-31"), "after"), (_dated(year=2022), "undated"), (_dated(year=2023), "in"),
    (_dated(year=2025), "undated"), (_dated(year=2026), "after"), (_dated(year=2021), "before"),
    (_dated(), "undated")])
def test_a_paper_is_placed_against_the_window(paper: Paper, place: str) -> None:
    cutoff = dt.date(2022, 11, 30)
    assert window_place(paper, cutoff, window_end(cutoff, 30)) == place


# ----------------------------------------------------------------------------- impact

def _paper(cites: int | None, day: str = "2023-06-01", field: str | None = "Computer Science",
           venue: str | None = None) -> Paper:
    return Paper(id=f"p{cites}-{day}", title="t", publication_date=dt.date.fromisoformat(day),
                 citation_count=cites, venue=venue, extra={"fieldsOfStudy": [field]} if field else {})


def test_citations_per_year_count_the_first_year_whole() -> None:
    as_of = dt.date(2024, 6, 1)
    assert citations_per_year(_paper(30, "2023-05-01"), as_of) == pytest.approx(30 / (397 / 365.25))
    assert citations_per_year(_paper(30, "2024-03-01"), as_of) == 30.0  # 92 days: one year
    assert citations_per_year(_paper(None), as_of) is None


def test_impact_is_citations_per_year_over_the_field_median() -> None:
    as_of = dt.date(2025, 6, 1)  # every paper 731 days old: rates 10, 20, 40, 80 over AGE years
    age = 731 / 365.25
    pool = [_paper(c, "2023-06-01") for c in (10, 20, 40, 80)] + [_paper(2, "2023-06-01", field="Biology")]
    baselines = field_baselines(pool, as_of)
    assert baselines["Computer Science"] == pytest.approx(30 / age)  # median of 10, 20, 40, 80 a paper
    assert "Biology" not in baselines and baselines[ALL_FIELDS] == pytest.approx(20 / age)
    info = normalised_impact(_paper(80, "2023-06-01"), as_of, baselines)
    assert info["impact"] == pytest.approx(40 / 15) and info["baseline_field"] == "Computer Science"
    other = normalised_impact(_paper(2, "2023-06-01", field="Biology"), as_of, baselines)
    assert other["baseline_field"] == ALL_FIELDS and other["impact"] == pytest.approx(0.1)
    missing = normalised_impact(_paper(None), as_of, baselines)
    assert missing["impact"] is None and "no citation count" in missing["why"]


def test_a_pool_mostly_not_cited_yet_falls_back_on_the_mean() -> None:
    as_of = dt.date(2025, 6, 1)
    pool = [_paper(c, "2023-06-01") for c in (0, 0, 0, 8)]
    assert field_baselines(pool, as_of)["Computer Science"] == pytest.approx(2 / (731 / 365.25))
    assert normalised_impact(_paper(5), as_of, field_baselines([_paper(0)] * 3, as_of))["impact"] is None


def test_venue_tiers() -> None:
    assert venue_tier(_paper(1, venue="Neural Information Processing Systems")) == "top"
    assert venue_tier(_paper(1, venue="  nature ")) == "top"
    assert venue_tier(_paper(1, venue="arXiv.org")) == "other"
    assert venue_tier(_paper(1, venue="")) == "unknown"


def test_spearman_matches_the_published_worked_example() -> None:
    """Wikipedia, "Spearman's rank correlation coefficient", example: IQ against hours of television
    a week of ten people, rho = -29/165 = -0.175757..."""
    iq = [106, 100, 86, 101, 99, 103, 97, 113, 112, 110]
    tv = [7, 27, 2, 50, 28, 29, 20, 12, 6, 17]
    assert spearman(iq, tv) == pytest.approx(-29 / 165, abs=1e-12)
    assert spearman([1, 2, 3], [3, 3, 3]) is None and spearman([1, 2], [2, 1]) is None


def test_the_check_resamples_topics_and_says_why_it_has_no_value() -> None:
    rows = [(f"t{i % 4}", float(i % 10), float((i * 7) % 11)) for i in range(24)]
    a = spearman_check(rows, n_resamples=300, seed=1)
    assert a["rho"] == pytest.approx(spearman([r[1] for r in rows], [r[2] for r in rows]))
    assert a["ci"] is not None and a["ci"][0] <= a["rho"] <= a["ci"][1] and a["n_topics"] == 4
    assert spearman_check(rows, n_resamples=300, seed=1) == a
    flat = spearman_check([(t, s, 0.0) for t, s, _ in rows])
    assert flat["rho"] is None and flat["why"] == "every idea has the same realised impact"


# ----------------------------------------------------------------------------- decisions, queries

@pytest.mark.parametrize(("verdicts", "decision"), [
    ([True, True], "match"), ([True], "match"), ([True, False], "no"), ([False, None], "no"),
    ([True, None], "undecided"), ([None, None], "undecided"), ([], "undecided")])
def test_a_pair_is_a_match_only_when_every_order_says_so(verdicts: list[bool | None], decision: str) -> None:
    assert pair_verdict(verdicts) == decision


def test_key_phrases_are_the_idea_s_own_else_its_title_and_frequent_words() -> None:
    assert key_phrases({"idea": PROSE, "title": "T", "key_phrases": ["a", "b", "c", "d"]}) == ["a", "b", "c"]
    assert key_phrases({"idea": PROSE, "title": "Turing games", "key_phrases": None}) == [
        "Turing games", "large language models evaluated"]


def test_the_contract_parses_an_answer_as_a_reply() -> None:
    task = generation_task("llm", 1, inputs={"topic": "LLMs", "cutoff": "2022-11-30", "literature": []},
                           seed=3)
    answer = {"instance_id": "llm", "title": "A game", "idea": PROSE, "key_phrases": ["turing test"]}
    assert CONTRACT.parse(json.dumps(answer), task) == parse_idea(json.dumps(answer))
    with pytest.raises(ParseError, match="sample_index"):
        CONTRACT.parse(json.dumps({**answer, "sample_index": 0}), task)
    with pytest.raises(ParseError, match="'idea'"):
        CONTRACT.parse(json.dumps({**answer, "idea": "short"}), task)
    row = {"instance_id": "llm", "abstract": PROSE, "keywords": ["x"], "title": " t "}
    assert from_row(row, task) == {"idea": PROSE, "title": "t", "key_phrases": ["x"]}


@pytest.mark.parametrize(("line", "where"), [
    ('{"id": "t", "topic": "LLMs", "cutoff": "2022-13-01"}', "line 1, field 'cutoff'"),
    ('{"id": " ", "topic": "LLMs", "cutoff": "2022-11-30"}', "line 1, field 'id'"),
    ('{"id": "t", "topic": "LLMs"}', "line 1, field 'cutoff'"),
    ('{"id": "t", "topic": "LLMs", "cutoff": "2022-11-30", "futrue": []}', "line 1, field 'futrue'"),
    ('["not a topic"]', "line 1: expected a JSON object (a topic)"),
    ('{"id": "t", "topic": "LLMs", "cutoff": "2022-11-30", "window_end": "2022-11-30"}',
     "line 1, field 'window_end'"),
    ('{"id": "t", "topic": "LLMs", "cutoff": "2022-11-30", "window_end": "2021-01-01"}',
     "line 1, field 'window_end'"),
])
def test_a_bad_topics_file_is_one_line_naming_file_line_and_field(
        line: str, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ideaharness.cli import main

    path = tmp_path / "topics.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(["run", "hindsight", "--data", str(path), "--generator", "scripted/echo", "--judge",
              "scripted/echo", "--no-progress", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 1 and str(path) in err and where in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_two_topics_with_one_id_are_refused(tmp_path: Path) -> None:
    from ideaharness.benchmarks.hindsight.topics import load_topics
    from ideaharness.errors import DataError

    row = json.dumps({"id": "t", "topic": "LLMs", "cutoff": "2022-11-30"})
    path = tmp_path / "topics.jsonl"
    path.write_text(f"{row}\n{row}\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 2, field 'id': 't' repeats line 1"):
        load_topics(str(path))


def test_an_idea_holding_a_lone_surrogate_still_gets_its_text_hash() -> None:
    """A model's JSON reply may escape half a surrogate pair; the parsed idea keeps it, and the
    candidates record's hash of the idea must not crash the phase on it."""
    reply = json.dumps({"title": "t", "idea": PROSE + " \ud800"})
    parsed = parse_idea(reply)
    assert "\ud800" in parsed["idea"]
    assert text_sha(parsed["idea"]) != text_sha(PROSE) and len(text_sha(parsed["idea"])) == 64
