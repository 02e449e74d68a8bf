"""``python -m ideaharness.cli`` = the ``ideaharness`` command."""

from ideaharness.cli import main

main()
