"""MLR-Bench (Chen et al. 2025, arXiv 2505.19955), idea and proposal stages: research ideas and
proposals for 201 ML workshop calls, reviewed by LLM judges on the published rubric.

Protocol per task (published code chchenhui/mlrbench, stepwise evaluation):

1. idea (step ``idea``): the generator reads the workshop call (``data/tasks/<id>.md``) and writes
   one idea of at most 200 words with a title, motivation and main idea
   (``mlrbench/agent/idea_generator.py``);
2. proposal (step ``proposal``, ``--stage proposal``, the default): the generator develops that
   idea into a proposal of about 2,000 words (title, introduction, methodology, expected outcomes
   and impact; ``proposal_generator.py``). The published pipeline also feeds a literature review
   (``lit_review.py``), which is not run here;
3. reviews (steps ``review/idea``, ``review/proposal``): each judge (``--judge``, ``--also-judge``)
   scores the text, given the call (and, for a proposal, the idea), on 1-10 per dimension: idea —
   consistency, clarity, novelty, feasibility, significance and an overall assessment
   (``mlrbench/evals/review_idea.py``); proposal — the same and soundness (``review_proposal.py``).
   The reply's final JSON score object is read strictly (:func:`.parsers.parse_review`);
4. scores (:mod:`.scores`): per task the judges' mean of each dimension; the headline per stage
   and dimension is the mean over tasks with its 95% interval (a bounded-mean score interval:
   docs/statistics.md).

Any idea-generation system can be the generator (:mod:`.contract`: the idea and proposal tasks it
answers): ``--ideas FILE`` scores a file's ideas and proposals (MLR-Bench's own JSON Lines of
``task_id``, ``idea``, ``proposal``, ``model``, or the contract's), ``--ideas published:<model>``
a bundled published model's ideas, ``--generator cmd:...`` / ``http://...`` a live system. The
prompts are ours (``prompts/mlrbench_*.j2``), not the published wording. Every step is a record in
the run directory; a re-run resumes. Parse failures are counted and never scored. Run it with
``ideaharness run mlrbench`` or ``ideaharness.run("mlrbench", ...)``.
"""

from ideaharness.benchmarks.mlrbench.config import MLRBenchConfig
from ideaharness.benchmarks.mlrbench.contract import CONTRACT, MLRBenchAnswer
from ideaharness.benchmarks.mlrbench.parsers import DIMENSIONS, parse_idea, parse_proposal, parse_review
from ideaharness.benchmarks.mlrbench.run import MLRBench
from ideaharness.benchmarks.mlrbench.tasks import TASK_COUNT, Task, bundled_tasks, select_tasks

__all__ = [
    "DIMENSIONS",
    "TASK_COUNT",
    "CONTRACT",
    "MLRBench",
    "MLRBenchAnswer",
    "MLRBenchConfig",
    "Task",
    "bundled_tasks",
    "parse_idea",
    "parse_proposal",
    "parse_review",
    "select_tasks",
]
