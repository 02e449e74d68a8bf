"""ideaharness: benchmarks for research-idea generation over one vocabulary."""

__version__ = "0.1.0"
