"""CLI commands of this part (registered on import)."""
