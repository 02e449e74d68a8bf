"""``python -m ideaharness`` = the ``ideaharness`` command."""

from ideaharness.cli import main

main()
