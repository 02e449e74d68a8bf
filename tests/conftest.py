"""Session fixtures shared by several test folders."""

from tests.analysis.saved_runs import runs  # noqa: F401  (real runs of every benchmark, made once)
