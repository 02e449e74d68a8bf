"""Per-instance scores of a saved run, one small reader per benchmark.

A benchmark declares its reader (:class:`ScoreReader`) as ``score_reader`` on its Benchmark class;
the built-in ones that do not are in :data:`SCORE_READERS`. Each reader takes the run's records,
``results.json`` and ``config.json`` and returns score rows
``{"system", "instance_id", "pair_key", "metric", "value"}``: the value one instance contributes to
the benchmark's headline mean, so the mean of a metric's rows equals the number in
``results.json`` (tested for every benchmark in ``tests/analysis/test_load.py``). A judgment that
never parsed contributes no row (never a 0). ``pair_key`` names the unit shared across systems
(the instance id; for LigBench the topic and sample of an idea), used to pair runs in ``compare``.

Sources of the per-instance values:

- IdeaBench: ``similarity/<s>`` best BERTScore F1, ``overlap/<s>`` the 1-10 rating, and
  ``insight/<s>/<indicator>`` = (r - 1) / n, the summand of the Insight Score (Guo et al. 2024,
  Eq. 1), all from the records.
- AI Idea Bench 2025: ``imcq/<c>`` S_M (Eq. 2), ``i2i/<c>`` and ``i2t/<c>`` the best idea's rating
  (Eq. 3-4), ``novelty/<c>/<key>`` and ``feasibility`` the mean over the instance's ideas, from
  the records.
- ResearchBench: from the ``per_instance`` block the benchmark derives from its records:
  ``retrieval/round<k>/hit_ratio``, ``composition/<method>/matched_score``, ``ranking/rank_score``.
- LigBench: the final Elo-style scores of each idea (``ideas`` block of results.json).
- LigBench judge accuracy: ``judge_accuracy/<dimension>`` 1/0 per held-out pair (``per_pair``).
- LiveIdeaBench declares its reader on its class (per-keyword rows; flexibility and the average
  as :class:`DerivedMetric`).

Extra calls are never rows: consistency re-asks (``#reask`` keys) are dropped before any reader
sees the records (:func:`instance_scores`); retries are attempts inside one judgment record; a
reader keys its rows by (instance, metric), one value each, and ``compare`` refuses a run that
gives two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ideaharness.metrics.choice import imcq_hit
from ideaharness.metrics.pairwise_ranking import PairResult, rank_score
from ideaharness.metrics.ranking import target_rank

Record = tuple[str, str, str, dict[str, Any]]
"""``(step, instance_id, key, data)`` of one record line."""
ScoreRow = dict[str, Any]

SCHOLARIDEAS_SYSTEM = "scholarideas (human-written plans)"  # as in benchmarks/ligbench/run.py


def run_system(config: dict[str, Any], results: dict[str, Any], run_dir: Path) -> str:
    """The system a one-system run evaluates: ``system``, the ideas file's stem, the generator, or
    (a run with no generator, e.g. judge accuracy) the judge; the directory name otherwise."""
    if config.get("system"):
        return str(config["system"])
    if config.get("ideas_file"):
        return Path(str(config["ideas_file"])).stem
    generator = results.get("generator") or config.get("generator")
    if generator:
        return str(generator)
    judge = config.get("judge")
    return str(judge) if isinstance(judge, str) and judge else run_dir.name


def _row(system: str, instance_id: str, metric: str, value: Any, pair_key: str | None = None) -> ScoreRow:
    return {
        "system": system,
        "instance_id": instance_id,
        "pair_key": pair_key or instance_id,
        "metric": metric,
        "value": float(value),
    }


def _judged(data: dict[str, Any] | None) -> dict[str, Any] | None:
    """The judgment of a record when it parsed, else None."""
    if not data or "judgment" not in data or not data["judgment"].get("parse_ok"):
        return None
    judgment: dict[str, Any] = data["judgment"]
    return judgment


def selected_records(records: list[Record], results: dict[str, Any]) -> list[Record]:
    """The records of the instances ``results.json`` covers (``selection.ids``; all records when it
    lists none): a run resumed with a smaller ``--limit`` or another ``--shard`` keeps the records
    of instances its headline no longer includes, and those must not become score rows."""
    ids = (results.get("selection") or {}).get("ids")
    if not isinstance(ids, list):
        return records
    keep = set(map(str, ids))
    return [r for r in records if r[1] in keep]


def ideabench_scores(
    records: list[Record], results: dict[str, Any], config: dict[str, Any], system: str
) -> list[ScoreRow]:
    """IdeaBench: similarity, overlap and Insight Score summands per instance and scenario."""
    n = int(results.get("n") or config.get("n_ideas") or 0)
    rows: list[ScoreRow] = []
    for step, instance_id, key, data in selected_records(records, results):
        if key:  # results.json reads the unit of key "" of each step (any other key is an extra call)
            continue
        kind, _, rest = step.partition("/")
        if kind == "similarity" and data.get("best_f1") is not None:
            rows.append(_row(system, instance_id, f"similarity/{rest}", data["best_f1"]))
        elif kind == "overlap" and (j := _judged(data)):
            rows.append(_row(system, instance_id, f"overlap/{rest}", j["parsed"]["rating"]))
        elif kind == "rank" and (j := _judged(data)) and n:
            rank = target_rank(j["parsed"], data["target_label"])
            rows.append(_row(system, instance_id, f"insight/{rest}", (rank - 1) / n))
    return rows


def aiideabench_scores(
    records: list[Record], results: dict[str, Any], config: dict[str, Any], system: str
) -> list[ScoreRow]:
    """AI Idea Bench 2025: IMCQ hit, best I2I/I2T rating, mean NA/FA per instance."""
    by_step: dict[str, list[Record]] = {}
    for rec in selected_records(records, results):
        by_step.setdefault(rec[0], []).append(rec)
    rows: list[ScoreRow] = []
    questions = {(i, k): d for _, i, k, d in by_step.get("imcq_question", [])}
    choices: dict[tuple[str, str], list[str | None]] = {}
    for _, inst, key, data in by_step.get("imcq", []):
        j = _judged(data)
        choices.setdefault((inst, key.split("/")[0]), []).append(j["parsed"] if j else None)
    for (inst, comp), picks in choices.items():
        question = questions.get((inst, comp))
        if question is None or "skipped" in question:
            continue
        hit = imcq_hit(picks, question["question"]["answer"])
        if hit is not None:
            rows.append(_row(system, inst, f"imcq/{comp}", hit))
    best: dict[tuple[str, str], float] = {}
    for step in ("i2i", "i2t"):
        for _, inst, key, data in by_step.get(step, []):
            if not (j := _judged(data)):
                continue
            parsed = j["parsed"]
            pairs = [(key.split("/")[0], parsed)] if step == "i2i" else list(parsed.items())
            for comp, value in pairs:
                name = f"{step}/{comp}"
                best[(inst, name)] = max(best.get((inst, name), float("-inf")), float(value))
    rows += [_row(system, inst, name, value) for (inst, name), value in best.items()]
    means: dict[tuple[str, str], list[float]] = {}
    for _, inst, _key, data in by_step.get("novelty", []):
        for comp, block in data.items():
            if isinstance(block, dict):
                for key in ("novelty", "novelty_bounded"):
                    if block.get(key) is not None:
                        means.setdefault((inst, f"novelty/{comp}/{key}"), []).append(block[key])
    for _, inst, _key, data in by_step.get("feasibility", []):
        if data.get("feasibility") is not None:
            means.setdefault((inst, "feasibility"), []).append(data["feasibility"])
    rows += [_row(system, inst, name, sum(v) / len(v)) for (inst, name), v in means.items()]
    return rows


def researchbench_scores(
    records: list[Record], results: dict[str, Any], config: dict[str, Any], system: str
) -> list[ScoreRow]:
    """ResearchBench: hit ratio per round, matched score per method, rank score per instance."""
    rows: list[ScoreRow] = []
    for inst, block in (results.get("per_instance") or {}).items():
        for rnd in (block.get("retrieval") or {}).get("rounds") or []:
            if rnd.get("hit_ratio") is not None:
                rows.append(_row(system, inst, f"retrieval/round{rnd['round']}/hit_ratio", rnd["hit_ratio"]))
        for method, entry in (block.get("composition") or {}).items():
            if isinstance(entry, dict) and entry.get("score") is not None:
                rows.append(_row(system, inst, f"composition/{method}/matched_score", entry["score"]))
        ranking = block.get("ranking") or {}
        if "pairs" in ranking:
            pairs = [PairResult.model_validate(p) for p in ranking["pairs"]]
            rs = rank_score(pairs, ranking["orders"])
            if rs is not None:
                rows.append(_row(system, inst, "ranking/rank_score", rs[2]))
    return rows


def ligbench_scores(
    records: list[Record], results: dict[str, Any], config: dict[str, Any], system: str
) -> list[ScoreRow]:
    """LigBench: the final scores of every scored idea; the system is named by the idea id."""
    rows: list[ScoreRow] = []
    for idea_id, idea in (results.get("ideas") or {}).items():
        if idea.get("status") != "scored" or not idea.get("scores"):
            continue
        owner, pair_key = ligbench_system(idea_id)
        for key, value in idea["scores"].items():
            if value is not None:
                rows.append(_row(owner, idea_id, key, value, pair_key))
    return rows


def ligbench_judge_scores(
    records: list[Record], results: dict[str, Any], config: dict[str, Any], system: str
) -> list[ScoreRow]:
    """LigBench judge accuracy: per held-out pair and dimension, 1 when the judge preferred the
    paper with the higher debiased score, else 0 (a tie is wrong; LigBench §5), from the
    ``per_pair`` block; the system is the judge under evaluation."""
    return [_row(system, pair_id, f"judge_accuracy/{dim}", value)
            for pair_id, dims in sorted((results.get("per_pair") or {}).items())
            for dim, value in sorted(dims.items())]


def ligbench_system(idea_id: str) -> tuple[str, str]:
    """(system, pair key) of a LigBench idea id ``<system>::t<topic>::<k>`` or ``scholarideas::<id>``."""
    owner, sep, rest = idea_id.partition("::")
    if not sep:
        return idea_id, idea_id
    return (SCHOLARIDEAS_SYSTEM if owner == "scholarideas" else owner), rest


class DerivedMetric(NamedTuple):
    """A model-level metric that is not a mean of per-instance rows (e.g. LiveIdeaBench's
    flexibility, a percentile over keywords), computed by ``compare`` from the rows of its inputs.

    Attributes:
        inputs: the score-row metrics it reads: the columns of its unit table.
        statistic: maps a (units, len(inputs)) float array, NaN where a unit lacks an input, to the
            metric's value, or None where it is not defined (too few units). Must equal the value
            ``results.json`` reports when given every unit of the run.
        description: what the statistic is, with its source (shown beside the leaderboard).
    """

    inputs: tuple[str, ...]
    statistic: Callable[[np.ndarray], float | None]
    description: str


ScoreFunction = Callable[[list[Record], dict[str, Any], dict[str, Any], str], list[ScoreRow]]
"""``(records, results, config, system) -> score rows`` of one run."""


class ScoreReader:
    """How the analysis layer (``load_run``, ``export``, ``compare``, the viewer) reads the saved runs
    of one benchmark. A benchmark declares its reader as the class attribute ``score_reader`` of its
    :class:`~ideaharness.runner.protocol.Benchmark` subclass (an instance of a subclass of this),
    so a new benchmark needs no edit here; without one its runs load with judgments and no scores.

    Attributes:
        free_settings: ``config.json`` keys that never change a per-instance score (e.g. the runs
            a run was compared with): ``compare`` ignores them when checking that runs match.
    """

    free_settings: frozenset[str] = frozenset()

    def scores(
        self, records: list[Record], results: dict[str, Any], config: dict[str, Any], system: str
    ) -> list[ScoreRow]:
        """Score rows ``{"system", "instance_id", "pair_key", "metric", "value"}`` of a run: the
        value each instance contributes to a headline mean (module docstring). A judgment that
        never parsed contributes no row. Default: none."""
        return []

    def reported(self, results: dict[str, Any], metric: str, system: str) -> float | None:
        """The headline value ``results.json`` reports for ``metric`` (a score-row metric name),
        which the rows of that metric re-aggregate to; None when absent.

        Raises:
            KeyError: a metric this benchmark does not produce.
        """
        raise KeyError(f"no reported value known for metric {metric!r}")

    def reported_n(self, results: dict[str, Any], metric: str, system: str) -> int | None:
        """The n ``results.json`` reports beside :meth:`reported` (the units the headline rests on),
        which must equal the number of rows of ``metric``; None when the benchmark does not say.

        Raises:
            KeyError: a metric this benchmark does not produce.
        """
        return None

    def record_system(self, instance_id: str, system: str) -> str:
        """The system a record of ``instance_id`` belongs to in a run of ``system`` (default: the
        run's one system; a benchmark whose runs hold several systems overrides it)."""
        return system

    def derived_metrics(self, results: dict[str, Any]) -> dict[str, DerivedMetric]:
        """Model-level metrics of a run with the settings of ``results`` that ``compare`` computes
        from the score rows (:class:`DerivedMetric`), by name; ``reported`` gives their
        results.json values. Default: none."""
        return {}


class _Builtin(ScoreReader):
    """A reader from a score function and reported-value and reported-n functions (the built-ins)."""

    def __init__(
        self,
        scores: ScoreFunction,
        reported: Callable[[dict[str, Any], list[str], str], Any],
        reported_n: Callable[[dict[str, Any], list[str], str], Any],
        free_settings: frozenset[str] = frozenset(),
    ) -> None:
        self._scores, self._reported, self._n = scores, reported, reported_n
        self.free_settings = free_settings

    def scores(
        self, records: list[Record], results: dict[str, Any], config: dict[str, Any], system: str
    ) -> list[ScoreRow]:
        return self._scores(records, results, config, system)

    def reported(self, results: dict[str, Any], metric: str, system: str) -> float | None:
        value = self._reported(results, metric.split("/"), system)
        return None if value is None else float(value)

    def reported_n(self, results: dict[str, Any], metric: str, system: str) -> int | None:
        n = self._n(results, metric.split("/"), system)
        return None if n is None else int(n)


def _ideabench_reported(results: dict[str, Any], parts: list[str], system: str) -> Any:
    block = results["scenarios"][parts[1]]
    return block["insight"][parts[2]]["insight_score"] if parts[0] == "insight" else block[parts[0]]["mean"]


def _ideabench_n(results: dict[str, Any], parts: list[str], system: str) -> Any:
    block = results["scenarios"][parts[1]]
    return block["insight"][parts[2]]["m"] if parts[0] == "insight" else block[parts[0]]["n"]


def _aiideabench_n(results: dict[str, Any], parts: list[str], system: str) -> Any:
    if parts[0] == "novelty":
        return results["novelty"][f"{parts[1]}/{parts[2]}"]["n"]
    if parts[0] == "feasibility":
        return results["feasibility"]["n"]
    return results[parts[0]][parts[1]]["n"]


def _researchbench_n(results: dict[str, Any], parts: list[str], system: str) -> Any:
    if parts[0] == "retrieval":
        return results["retrieval"]["overall"][int(parts[1].removeprefix("round")) - 1]["n"]
    if parts[0] == "composition":
        return results["composition"]["overall"][parts[1]]["scored"]
    return results["ranking"]["overall"]["rank_score_n"]


def _ligbench_n(results: dict[str, Any], parts: list[str], system: str) -> Any:
    return results["systems"][system]["scores"]["/".join(parts)]["n"]


def _ligbench_judge_n(results: dict[str, Any], parts: list[str], system: str) -> Any:
    _ligbench_judge_reported(results, parts, system)  # KeyError for an unknown metric
    return results["dimensions"][parts[1]]["n"]


def _aiideabench_reported(results: dict[str, Any], parts: list[str], system: str) -> Any:
    if parts[0] == "novelty":
        return results["novelty"][f"{parts[1]}/{parts[2]}"]["mean"]
    if parts[0] == "feasibility":
        return results["feasibility"]["mean"]
    return results[parts[0]][parts[1]]["mean"]


def _researchbench_reported(results: dict[str, Any], parts: list[str], system: str) -> Any:
    if parts[0] == "retrieval":
        return results["retrieval"]["overall"][int(parts[1].removeprefix("round")) - 1]["hit_ratio"]
    if parts[0] == "composition":
        return results["composition"]["overall"][parts[1]]["mean_matched_score"]
    return results["ranking"]["overall"]["rank_score"]


def _ligbench_judge_reported(results: dict[str, Any], parts: list[str], system: str) -> Any:
    if parts[0] != "judge_accuracy" or len(parts) != 2:
        raise KeyError(f"no reported value known for metric {'/'.join(parts)!r}")
    return results["dimensions"][parts[1]]["accuracy"]


def _ligbench_reported(results: dict[str, Any], parts: list[str], system: str) -> Any:
    return results["systems"][system]["scores"]["/".join(parts)]["mean"]


class _LigBenchReader(_Builtin):
    def record_system(self, instance_id: str, system: str) -> str:
        return ligbench_system(instance_id)[0]


SCORE_READERS: dict[str, ScoreReader] = {
    "ideabench": _Builtin(ideabench_scores, _ideabench_reported, _ideabench_n),
    "aiideabench": _Builtin(
        aiideabench_scores, _aiideabench_reported, _aiideabench_n, frozenset({"compare", "scholar_base_url"})
    ),
    "researchbench": _Builtin(researchbench_scores, _researchbench_reported, _researchbench_n),
    "ligbench": _LigBenchReader(ligbench_scores, _ligbench_reported, _ligbench_n),
    "ligbench-judge": _Builtin(  # the judge is the system under test: runs of different judges compare
        ligbench_judge_scores, _ligbench_judge_reported, _ligbench_judge_n, frozenset({"judge"})
    ),
}
"""Readers of the built-in benchmarks that declare none on their class, by name (``config.json``
``benchmark``): used when the
benchmark class declares no ``score_reader`` of its own."""


def score_reader(benchmark: str) -> ScoreReader | None:
    """The reader of ``benchmark``: its registered class's ``score_reader``, else the built-in one,
    else None (an unknown or unregistered benchmark: its judgments still load)."""
    from ideaharness.errors import UserError
    from ideaharness.runner.registry import get_benchmark

    try:
        declared = getattr(get_benchmark(benchmark), "score_reader", None)
    except UserError:
        declared = None
    return declared if declared is not None else SCORE_READERS.get(benchmark)


def instance_scores(
    benchmark: str, records: Iterable[Record], results: dict[str, Any], config: dict[str, Any], system: str
) -> list[ScoreRow]:
    """Score rows of a run; an unknown benchmark has none (its judgments still load).

    Consistency re-asks (keys ending in ``#reask``, :func:`~ideaharness.metrics.reliability.reask_key`)
    are extra calls that measure the judge, never scores: they are dropped here, before any
    benchmark's reader sees the records, so no reader can count one as a second value.
    """
    from ideaharness.metrics.reliability.sampling import original_key

    reader = score_reader(benchmark)
    scored = [record for record in records if not original_key(str(record[2]))[1]]
    return reader.scores(scored, results, config, system) if reader else []


def record_system(benchmark: str, instance_id: str, system: str) -> str:
    """The system a record (or failed unit) of ``instance_id`` belongs to in a run of ``system``."""
    reader = score_reader(benchmark)
    return reader.record_system(instance_id, system) if reader else system


def reported_value(results: dict[str, Any], benchmark: str, metric: str, system: str) -> float | None:
    """The headline number ``results.json`` reports for ``metric`` (named as in the score rows):
    the mean over instances that the rows of that metric re-aggregate to. None when absent.

    Raises:
        KeyError: a metric name this benchmark does not produce, or a benchmark without a reader.
    """
    reader = score_reader(benchmark)
    if reader is None:
        raise KeyError(f"no reported values known for benchmark {benchmark!r}")
    return reader.reported(results, metric, system)
