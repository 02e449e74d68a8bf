"""IdeaBench CLI."""
