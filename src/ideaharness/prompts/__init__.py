"""Prompt templates as files, one per LLM step, rendered safely.

A template file ``<step>.j2`` holds one or more message blocks, each opened by a line
``### system`` or ``### user``. Values are inserted by Jinja2 as data: braces or Jinja syntax
inside paper or model text are never re-interpreted (IdeaBench's ``str.format`` bug), and an
undefined variable is an error, not an empty string.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2

from ideaharness.llm.types import Message

_BLOCK = re.compile(r"^### (system|user|assistant)\s*$", re.MULTILINE)


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("ideaharness", "prompts"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def template_source(step: str) -> str:
    """The raw text of the template for ``step`` (for hashing and documentation)."""
    return resources.files("ideaharness.prompts").joinpath(f"{step}.j2").read_text(encoding="utf-8")


def render(step: str, **variables: Any) -> list[Message]:
    """Render the template ``prompts/<step>.j2`` into chat messages.

    Raises:
        jinja2.TemplateNotFound: unknown step.
        jinja2.UndefinedError: a variable the template uses was not given.
    """
    text = _environment().get_template(f"{step}.j2").render(**variables)
    parts = _BLOCK.split(text)
    if len(parts) < 3:
        raise ValueError(f"prompt template {step}.j2 has no '### system' / '### user' block")
    messages: list[Message] = []
    for role, content in zip(parts[1::2], parts[2::2], strict=True):
        messages.append({"role": role, "content": content.strip()})
    return messages
