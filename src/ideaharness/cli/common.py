"""Shared CLI commands: cache management."""

from __future__ import annotations
