"""compare: leaderboards with bootstrap CIs and paired differences from saved runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ideaharness.analysis.compare import MIN_PAIRED_N, compare_runs, settings_mismatch
from ideaharness.analysis.load import JUDGMENT_COLUMNS, SCORE_COLUMNS, RunData
from ideaharness.cli import main
from ideaharness.cli.analysis import comparison_tables
from ideaharness.errors import UserError
from ideaharness.metrics.aggregate import MIN_INTERVAL_N
from tests.analysis.saved_runs import results_of


def test_ideabench_leaderboard_and_paired_difference(runs: dict[str, Path]) -> None:
    result = compare_runs([runs["ideabench_b"], runs["ideabench_a"]], n_resamples=500)
    assert [s["label"] for s in result["systems"]] == ["gen-weak", "gen-strong"]
    novelty = result["metrics"]["ideabench.insight_score[low/novelty]"]
    # the strong generator's ideas always outrank the target (Insight 1), the weak one's never (0)
    board = {b["system"]: b for b in novelty["leaderboard"]}
    assert board["gen-strong"]["rank"] == 1 and board["gen-strong"]["mean"] == 1.0
    assert board["gen-weak"]["mean"] == 0.0 and board["gen-strong"]["n"] == 6
    assert (
        board["gen-strong"]["mean"]
        == results_of(runs["ideabench_a"])["scenarios"]["low"]["insight"]["novelty"]["insight_score"]
    )
    (pair,) = novelty["paired"]
    assert (pair["a"], pair["b"], pair["n_shared"]) == ("gen-strong", "gen-weak", 6)
    # 6 shared instances, every difference +1: exact p = 2/2^6, but below the minimum n no mark
    assert pair["mean_diff"] == 1.0 and pair["ci95"] == [1.0, 1.0] and pair["exact"]
    assert pair["p_value"] == pytest.approx(2 / 64) and not pair["significant"]
    assert pair["verdict"] == "n too small (6 < 10)" and pair["p_holm"] is None
    overlap = result["metrics"]["ideabench.overlap[low]"]["paired"][0]
    assert overlap["mean_diff"] == 0.0 and not overlap["significant"]  # the same rating for both


def test_researchbench_leaderboard_and_paired_difference(runs: dict[str, Path]) -> None:
    result = compare_runs([runs["researchbench_a"], runs["researchbench_b"]], n_resamples=500)
    score = result["metrics"]["researchbench.matched_score[one_step]"]
    board = {b["system"]: b for b in score["leaderboard"]}
    assert board["gen-strong"]["mean"] == 4.0 and board["gen-weak"]["mean"] == 1.0
    # fewer than MIN_INTERVAL_N papers: no interval (was the zero-width [4.0, 4.0]; issue 32 item 7)
    assert board["gen-strong"]["n"] < MIN_INTERVAL_N and board["gen-strong"]["ci95"] is None
    assert board["gen-strong"]["ci_why"] == f"n too small for an interval (n < {MIN_INTERVAL_N})"
    table = next(t for t in comparison_tables(result) if t.title.startswith("researchbench.matched_score"))
    row = next(r for r in table.rows if r[1] == "gen-strong")
    assert row[table.columns.index("95% CI")] == board["gen-strong"]["ci_why"]  # said where the CI goes
    reported = results_of(runs["researchbench_b"])["composition"]["overall"]["one_step"]["mean_matched_score"]
    assert board["gen-weak"]["mean"] == reported
    (pair,) = score["paired"]
    assert pair["mean_diff"] == 3.0 and pair["n_shared"] == 2 and not pair["significant"]
    assert pair["p_value"] == pytest.approx(0.5) and pair["verdict"] == "n too small (2 < 10)"
    rank = result["metrics"]["researchbench.rank_score"]["paired"][0]
    assert rank["mean_diff"] == 0.0 and not rank["significant"]  # the same judge, the same gold
    assert result["reliability"]["gen-strong"]["parse_failure_rate"] == 0.0
    # the run's degenerate-judge warnings (the reliability block's own list) reach the leaderboard
    for run, system in ((runs["researchbench_a"], "gen-strong"), (runs["researchbench_b"], "gen-weak")):
        warned = results_of(run)["reliability"]["warnings"]
        assert warned and result["reliability"][system]["reliability_warnings"] == warned


def test_differing_settings_are_refused_with_their_names(runs: dict[str, Path], tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(runs["ideabench_a"], other)
    config = json.loads((other / "config.json").read_text())
    config.update(seed=7, judge="another/judge")
    (other / "config.json").write_text(json.dumps(config))
    with pytest.raises(UserError, match=r"differ in settings that change results \(judge, seed\)"):
        compare_runs([runs["ideabench_b"], other])
    result = compare_runs([runs["ideabench_b"], other], allow_mismatch=True, n_resamples=200)
    assert result["settings_mismatch"] == ["judge", "seed"]
    with pytest.raises(UserError, match="different benchmarks"):
        compare_runs([runs["ideabench_a"], runs["researchbench_a"]])
    with pytest.raises(UserError, match="at least 2 systems"):
        compare_runs([runs["ideabench_a"]])


def test_system_settings_and_input_paths_may_differ() -> None:
    a = {"generator": "x", "seed": 0, "data": "/a/d.jsonl", "input_sha256": {"--data": {"/a/d.jsonl": "h1"}}}
    b = {"generator": "y", "seed": 0, "data": "/b/d.jsonl", "input_sha256": {"--data": {"/b/d.jsonl": "h1"}}}
    assert settings_mismatch([a, b]) == []
    c = {**b, "input_sha256": {"--data": {"/b/d.jsonl": "h2"}}}
    assert settings_mismatch([a, c]) == ["input_sha256[--data]"]


def test_compare_cli_table_json_and_html(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "cmp.html"
    main(
        [
            "compare",
            str(runs["ideabench_a"]),
            str(runs["ideabench_b"]),
            "--html",
            str(page),
            "--resamples",
            "200",
        ]
    )
    out = capsys.readouterr().out
    assert "ideabench.insight_score[low/novelty]" in out and "gen-strong" in out
    assert "n too small (6 < 10)" in out
    assert "yes *" not in out and "p (Holm)" in out and "n shared" in out
    html = page.read_text()
    assert (
        "Per-instance differences" in html
        and 'id="ih-data"' in html
        and "http" not in html.split("<body>")[1]
    )
    assert "n too small (6 &lt; 10)" in html and "<th>p (Holm)</th>" in html and "yes</span>" not in html
    main(["compare", str(runs["researchbench_a"]), str(runs["researchbench_b"]), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["benchmark"] == "researchbench" and data["method"]["unit"].startswith("instance")
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(runs["ideabench_a"]), str(runs["aiideabench"])])
    assert exc.value.code == 1 and "different benchmarks" in capsys.readouterr().err


def _run(system: str, values: dict[str, dict[str, float]], benchmark: str = "ideabench",
         results: dict | None = None) -> RunData:
    """A loaded run of one system from per-instance values ``{metric: {instance: value}}``."""
    rows = [{"benchmark": benchmark, "run_id": system, "system": system, "instance_id": k, "pair_key": k,
             "metric": m, "group": "", "value": v, "weight": 1.0, "reason": None}
            for m, per in values.items() for k, v in per.items()]
    return RunData(path=Path(system), run_id=system, benchmark=benchmark, system=system,
                   config={"benchmark": benchmark}, results=results or {},
                   scores=pd.DataFrame(rows, columns=SCORE_COLUMNS),
                   judgments=pd.DataFrame([], columns=JUDGMENT_COLUMNS))


def test_three_shared_instances_are_never_significant() -> None:
    """Issue 18, item 2: insight/low/feasibility differing by -1/3 on each of 3 shared instances
    (paired bootstrap interval [-0.333, -0.333]) was marked "yes *"; now: no mark, n too small,
    and the exact permutation p (2/8) beside the interval."""
    a = _run("a", {"insight/low/feasibility": {"i1": 0.0, "i2": 1 / 3, "i3": 1 / 3}})
    b = _run("b", {"insight/low/feasibility": {"i1": 1 / 3, "i2": 2 / 3, "i3": 2 / 3}})
    result = compare_runs([a, b], n_resamples=500)
    (pair,) = result["metrics"]["insight/low/feasibility"]["paired"]
    assert pair["ci95"] == pytest.approx([1 / 3, 1 / 3]) and pair["n_shared"] == 3
    assert pair["p_value"] == pytest.approx(0.25) and pair["exact"]
    assert not pair["significant"] and pair["verdict"] == "n too small (3 < 10)"
    assert result["method"]["min_n"] == MIN_PAIRED_N == 10 and result["method"]["family_size"] == 0
    board = result["metrics"]["insight/low/feasibility"]["leaderboard"]
    assert [(b["system"], b["n"]) for b in board] == [("b", 3), ("a", 3)]  # n beside every mean
    table = comparison_tables(result)[1]
    assert table.rows[1][table.columns.index("significant")] == "n too small (3 < 10)"
    assert "n" in table.columns


def test_holm_family_is_every_metric_and_pair_with_enough_instances() -> None:
    """12 shared instances: a clear difference stays significant after Holm over the 3 metric x
    pair comparisons of the family; a difference on 2 of 12 instances does not; a metric with 4
    shared instances is outside the family (no mark)."""
    ids = [f"i{k:02d}" for k in range(12)]
    a = _run("a", {"m/clear": {k: 1.0 for k in ids}, "m/weak": {k: float(k in ("i00", "i01")) for k in ids},
                   "m/tiny": {k: 1.0 for k in ids[:4]}, "m/null": {k: float(int(k[1:]) % 2) for k in ids}})
    b = _run("b", {"m/clear": {k: 0.0 for k in ids}, "m/weak": {k: 0.0 for k in ids},
                   "m/tiny": {k: 0.0 for k in ids[:4]},
                   "m/null": {k: float(int(k[1:]) % 3 == 0) for k in ids}})
    result = compare_runs([a, b], n_resamples=200)
    pairs = {m: block["paired"][0] for m, block in result["metrics"].items()}
    assert result["method"]["family_size"] == 3
    raw = [pairs[m]["p_value"] for m in ("m/clear", "m/null", "m/weak")]
    from ideaharness.metrics.stats import holm_adjust

    assert [pairs[m]["p_holm"] for m in ("m/clear", "m/null", "m/weak")] == pytest.approx(holm_adjust(raw))
    assert pairs["m/clear"]["p_value"] == pytest.approx(2 / 4096) and pairs["m/clear"]["significant"]
    assert pairs["m/clear"]["verdict"] == "significant"
    assert pairs["m/weak"]["p_value"] == pytest.approx(0.5) and not pairs["m/weak"]["significant"]
    assert pairs["m/weak"]["verdict"] == "not significant"
    assert pairs["m/tiny"]["p_holm"] is None and pairs["m/tiny"]["verdict"] == "n too small (4 < 10)"
    assert compare_runs([a, b], n_resamples=200, min_n=4)["method"]["family_size"] == 4


def test_a_comparison_does_not_depend_on_the_order_of_the_rows() -> None:
    """Issue 18, item 18: intervals computed from data order and from record order differed; the
    leaderboard and the paired figures are the same for any order of a run's rows."""
    rng = np.random.default_rng(4)
    values_a = {f"i{k}": float(v) for k, v in enumerate(rng.integers(0, 4, 14) / 3)}
    values_b = {f"i{k}": float(v) for k, v in enumerate(rng.integers(0, 4, 14) / 3)}
    a, b = _run("a", {"insight/low/novelty": values_a}), _run("b", {"insight/low/novelty": values_b})
    first = compare_runs([a, b], n_resamples=300)
    for _ in range(3):
        a.scores = a.scores.sample(frac=1.0, random_state=int(rng.integers(1000))).reset_index(drop=True)
        b.scores = b.scores.sample(frac=1.0, random_state=int(rng.integers(1000))).reset_index(drop=True)
        again = compare_runs([a, b], n_resamples=300)
        assert again["metrics"] == first["metrics"]


def test_a_second_score_for_one_instance_is_refused() -> None:
    a = _run("a", {"overlap/low": {"i1": 7.0}})
    a.scores = pd.concat([a.scores, a.scores], ignore_index=True)
    with pytest.raises(UserError, match="two overlap/low scores for i1"):
        compare_runs([a, _run("b", {"overlap/low": {"i1": 5.0}})])


def test_liveideabench_flexibility_and_average_in_the_leaderboard() -> None:
    """The published leaderboard's Flexibility (30th percentile over keywords of the keyword's mean
    of its dimensions) and Average (mean of the dimensions and flexibility), from the keyword
    rows, with n = keywords with every dimension and a paired test over shared keywords."""
    from ideaharness.benchmarks.liveideabench.metrics import flexibility, leaderboard_average

    rng = np.random.default_rng(8)
    dims = ("originality", "feasibility", "clarity", "fluency")
    keywords = [f"kw{k}" for k in range(7)]

    def values(shift: float) -> dict[str, dict[str, float]]:
        return {d: {k: float(rng.integers(3, 9)) + shift for k in keywords} for d in dims}

    va, vb = values(1.0), values(0.0)
    del va["fluency"]["kw6"]  # one keyword without fluency: not in flexibility, still in the means
    for v in (va, vb):  # each keyword's flexibility score: its mean of the dimensions, when complete
        v["flexibility"] = {k: float(np.mean([v[d][k] for d in dims])) for k in keywords
                            if all(k in v[d] for d in dims)}
    results = {"protocol": "v2"}
    a = _run("a", {f"liveideabench.{m}": per for m, per in va.items()}, "liveideabench", results)
    b = _run("b", {f"liveideabench.{m}": per for m, per in vb.items()}, "liveideabench", results)
    result = compare_runs([a, b], n_resamples=200)
    flex = {e["system"]: e for e in result["metrics"]["liveideabench.flexibility"]["leaderboard"]}
    avg = {e["system"]: e for e in result["metrics"]["liveideabench.average"]["leaderboard"]}
    complete = [k for k in keywords if all(k in va[d] for d in dims)]
    want_flex = flexibility([float(np.mean([va[d][k] for d in dims])) for k in complete])
    assert flex["a"]["mean"] == pytest.approx(want_flex) and flex["a"]["n"] == 6
    assert flex["b"]["n"] == 6 and flex["b"]["own_n"] == 7  # ranked on the 6 keywords both have complete
    want_avg = leaderboard_average([float(np.mean(list(va[d].values()))) for d in dims] + [want_flex])
    assert avg["a"]["own_mean"] == pytest.approx(want_avg)  # over its own keywords; mean: the shared ones
    assert flex["a"]["ci95"] is not None and flex["a"]["ci95"][0] <= want_flex <= flex["a"]["ci95"][1]
    (pair,) = result["metrics"]["liveideabench.flexibility"]["paired"]
    assert pair["n_shared"] == 6 and pair["p_value"] is not None and pair["verdict"].startswith("n too small")
    assert "30th percentile" in result["metrics"]["liveideabench.flexibility"]["statistic"]
    titles = [t.title for t in comparison_tables(result)]
    assert any(t.startswith("liveideabench.flexibility (30th percentile") for t in titles)


def test_compare_intervals_are_the_runs_own_intervals(runs: dict[str, Path]) -> None:
    """With the run's resamples and seed, compare's interval of a mean is the one results.json
    reports in its headline (one interval rule, issue 32 item 7: the bounded-mean score interval
    for these bounded metrics): rows in record order and instances in data order give the same
    interval."""
    results = results_of(runs["ideabench_a"])
    boot = results["bootstrap"]
    assert boot["order"].startswith("values sorted")
    result = compare_runs([runs["ideabench_a"], runs["ideabench_b"]], n_resamples=boot["n_resamples"],
                          seed=boot["seed"])
    headline = {(m["metric"], m["group"]): m for m in results["metrics"]}
    for metric, name in (("ideabench.bertscore_f1[low]", "ideabench.bertscore_f1"),
                         ("ideabench.overlap[low]", "ideabench.overlap")):
        reported = headline[(name, "low")]["ci"]
        board = {b["system"]: b for b in result["metrics"][metric]["leaderboard"]}
        assert reported is not None and board["gen-strong"]["n"] == headline[(name, "low")]["n"] >= 5
        assert board["gen-strong"]["ci95"] == list(reported), metric


def test_the_cli_default_minimum_is_the_documented_one() -> None:
    import inspect

    from ideaharness.cli.analysis import compare

    assert inspect.signature(compare).parameters["min_n"].default == MIN_PAIRED_N


def test_compare_html_shows_a_system_without_a_value_unranked(runs: dict[str, Path]) -> None:
    """A system with no value for a metric is listed unranked ("–"), in the page as in the console
    (fresh-user finding: ``compare --html`` raised jinja2's UndefinedError on its missing rank)."""
    from ideaharness.analysis.compare import compare_runs
    from ideaharness.analysis.load import load_run
    from ideaharness.report.viewer import render_compare

    comparison = compare_runs([load_run(runs["ideabench_a"]), load_run(runs["ideabench_b"])], n_resamples=50)
    metric, block = next(iter(comparison["metrics"].items()))
    unscored = {**block["leaderboard"][-1], "mean": None, "ci95": None}
    unscored.pop("rank", None)
    block["leaderboard"] = [*block["leaderboard"][:-1], unscored]
    page = render_compare(comparison)
    assert metric in page and unscored["system"] in page
