"""Dataset builders (``ideaharness data build ideabench|aiideabench|pairiq|hindsight``): resumable, with a
manifest."""

from ideaharness.data.builders.aiideabench import AIIdeaBenchSettings, build_aiideabench
from ideaharness.data.builders.common import Manifest
from ideaharness.data.builders.hindsight import HindsightSettings, TopicSpec, build_hindsight
from ideaharness.data.builders.ideabench import BuildResult, IdeaBenchSettings, build_ideabench
from ideaharness.data.builders.pairiq import PairIQSettings, build_pairiq

__all__ = [
    "AIIdeaBenchSettings",
    "BuildResult",
    "HindsightSettings",
    "IdeaBenchSettings",
    "Manifest",
    "PairIQSettings",
    "TopicSpec",
    "build_aiideabench",
    "build_hindsight",
    "build_ideabench",
    "build_pairiq",
]
