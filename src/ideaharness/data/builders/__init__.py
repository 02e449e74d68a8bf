"""Dataset builders (``ideaharness data build ideabench|aiideabench|pairiq``): resumable, with a manifest."""

from ideaharness.data.builders.aiideabench import AIIdeaBenchSettings, build_aiideabench
from ideaharness.data.builders.common import Manifest
from ideaharness.data.builders.ideabench import BuildResult, IdeaBenchSettings, build_ideabench
from ideaharness.data.builders.pairiq import PairIQSettings, build_pairiq

__all__ = [
    "AIIdeaBenchSettings",
    "BuildResult",
    "IdeaBenchSettings",
    "Manifest",
    "PairIQSettings",
    "build_aiideabench",
    "build_ideabench",
    "build_pairiq",
]
