"""OpenReview API v2 client: venue submissions, decisions and official reviews.

Anonymous calls are refused by OpenReview (HTTP 403 ``ChallengeRequiredError`` since 2026), so
the client logs in once (``POST /login`` with ``OPENREVIEW_USERNAME`` / ``OPENREVIEW_PASSWORD``)
and sends the bearer token. Review content keys and scales differ by venue and year; they are
mapped through :data:`REVIEW_FORMS` and an unknown venue fails with :class:`ConfigError`.
Values are wrapped (``content["rating"]["value"]``) and may be ints or ``"6: marginally above"``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ideaharness.scholarly.base import ClientBase
from ideaharness.scholarly.errors import ConfigError


class ReviewForm(BaseModel):
    """Where a venue's review form keeps each score and on which scale.

    ``keys`` maps our names (rating, soundness, contribution, presentation, confidence) to the
    venue's content keys; ``scales`` gives (min, max) of each.
    """

    keys: dict[str, str]
    scales: dict[str, tuple[float, float]]


_ICLR_NEURIPS_2024 = ReviewForm(
    keys={
        "rating": "rating",
        "soundness": "soundness",
        "contribution": "contribution",
        "presentation": "presentation",
        "confidence": "confidence",
    },
    scales={
        "rating": (1, 10),
        "soundness": (1, 4),
        "contribution": (1, 4),
        "presentation": (1, 4),
        "confidence": (1, 5),
    },
)

#: Review forms by venue id (research note scholarly-and-scale.md §4, from venue scripts).
REVIEW_FORMS: dict[str, ReviewForm] = {
    "ICLR.cc/2024/Conference": _ICLR_NEURIPS_2024,
    "ICLR.cc/2025/Conference": _ICLR_NEURIPS_2024,
    "NeurIPS.cc/2024/Conference": _ICLR_NEURIPS_2024,
}

_LEADING_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)")


def parse_score(value: Any) -> float | None:
    """Score from an OpenReview content value: ``6``, ``"6"``, ``"6: marginally above ..."``.

    Returns None for missing / non-numeric values.
    """
    if isinstance(value, dict):
        value = value.get("value")
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    match = _LEADING_NUMBER.match(str(value))
    return float(match.group(1)) if match else None


def _value(content: dict[str, Any], key: str) -> Any:
    item = content.get(key)
    return item.get("value") if isinstance(item, dict) else item


class Review(BaseModel):
    """Scores of one official review, on the venue's own scales (None = not given)."""

    id: str
    rating: float | None = None
    soundness: float | None = None
    contribution: float | None = None
    presentation: float | None = None
    confidence: float | None = None


class Submission(BaseModel):
    """One submission with its decision and official reviews.

    ``decision`` is the raw decision text (e.g. ``"Accept (poster)"``); ``label`` the
    normalised PAIR-IQ style label (``accept-poster``, ``accept-spotlight``, ``accept-oral``,
    ``reject``, ``withdrawn``, ``desk-rejected``; None when unknown).
    """

    id: str
    number: int | None = None
    venue_id: str
    title: str
    abstract: str | None = None
    keywords: list[str] = Field(default_factory=list)
    primary_area: str | None = None
    decision: str | None = None
    label: str | None = None
    reviews: list[Review] = Field(default_factory=list)


def decision_label(
    decision: str | None, venue_text: str | None = None, venueid: str | None = None
) -> str | None:
    """Normalised label from a decision text, else from ``content.venue`` / ``content.venueid``."""
    for text in (decision, venue_text):
        if not text:
            continue
        low = text.lower()
        if "reject" in low and "desk" in low:
            return "desk-rejected"
        if "withdraw" in low:
            return "withdrawn"
        if "reject" in low:
            return "reject"
        for kind in ("oral", "spotlight", "poster"):
            if kind in low:
                return f"accept-{kind}"
        if "accept" in low:
            return "accept"
    if venueid:
        for suffix, label in (
            ("Desk_Rejected_Submission", "desk-rejected"),
            ("Withdrawn_Submission", "withdrawn"),
            ("Rejected_Submission", "reject"),
        ):
            if venueid.endswith(suffix):
                return label
    return None


def parse_submission(note: dict[str, Any], venue_id: str, form: ReviewForm) -> Submission:
    """A :class:`Submission` from an API-v2 note fetched with ``details=replies``."""
    content = note.get("content") or {}
    decision = None
    reviews = []
    for reply in (note.get("details") or {}).get("replies") or []:
        invitations = reply.get("invitations") or ([reply["invitation"]] if reply.get("invitation") else [])
        rc = reply.get("content") or {}
        if any(i.endswith("/-/Decision") for i in invitations):
            decision = _value(rc, "decision")
        elif any(i.endswith("/-/Official_Review") for i in invitations):
            reviews.append(
                Review(
                    id=str(reply.get("id")),
                    **{ours: parse_score(rc.get(theirs)) for ours, theirs in form.keys.items()},
                )
            )
    keywords = _value(content, "keywords") or []
    return Submission(
        id=str(note.get("id")),
        number=note.get("number"),
        venue_id=venue_id,
        title=_value(content, "title") or "",
        abstract=_value(content, "abstract"),
        keywords=[str(k) for k in keywords] if isinstance(keywords, list) else [str(keywords)],
        primary_area=_value(content, "primary_area"),
        decision=decision,
        label=decision_label(decision, _value(content, "venue"), _value(content, "venueid")),
        reviews=reviews,
    )


class OpenReview(ClientBase):
    """Async OpenReview API v2 client.

    Args:
        username, password: default env ``OPENREVIEW_USERNAME`` / ``OPENREVIEW_PASSWORD``.
        review_forms: venue id -> :class:`ReviewForm`, merged over :data:`REVIEW_FORMS`.
        min_interval_s: default 0.5 s between requests.
    """

    def __init__(
        self,
        base_url: str = "https://api2.openreview.net",
        username: str | None = None,
        password: str | None = None,
        cache_dir: str | Path | None = None,
        min_interval_s: float = 0.5,
        review_forms: dict[str, ReviewForm] | None = None,
        **http_options: Any,
    ) -> None:
        super().__init__(base_url, cache_dir=cache_dir, min_interval_s=min_interval_s, **http_options)
        self._username = username or os.environ.get("OPENREVIEW_USERNAME")
        self._password = password or os.environ.get("OPENREVIEW_PASSWORD")
        self.review_forms = {**REVIEW_FORMS, **(review_forms or {})}
        self._token: str | None = None

    def form(self, venue_id: str) -> ReviewForm:
        """The review form of a venue.

        Raises:
            ConfigError: no form is known for the venue.
        """
        try:
            return self.review_forms[venue_id]
        except KeyError:
            known = ", ".join(sorted(self.review_forms))
            raise ConfigError(
                f"no review form known for OpenReview venue {venue_id!r} (known: {known}); pass "
                "review_forms={venue: ReviewForm(keys=..., scales=...)} after reading the venue's "
                "Official_Review invitation"
            ) from None

    async def login(self) -> None:
        """Log in once and keep the bearer token (never cached, never written).

        Raises:
            ConfigError: username or password missing. Forbidden: wrong credentials.
        """
        if self._token:
            return
        if not self._username or not self._password:
            raise ConfigError(
                "OpenReview refuses anonymous API calls; set OPENREVIEW_USERNAME and "
                "OPENREVIEW_PASSWORD in the environment"
            )
        data = await self.http.post_json(
            f"{self.base_url}/login",
            json_body={"id": self._username, "password": self._password},
            use_cache=False,
        )
        self._token = data.get("token")
        if not self._token:
            raise ConfigError("OpenReview login returned no token")

    async def notes(self, **params: Any) -> list[dict[str, Any]]:
        """All notes matching ``params`` (``/notes``), paged by ``offset`` in pages of 1,000."""
        await self.login()
        headers = {"Authorization": f"Bearer {self._token}"}
        out: list[dict[str, Any]] = []
        offset = 0
        while True:
            page = await self.http.get_json(
                f"{self.base_url}/notes", params={**params, "offset": offset, "limit": 1000}, headers=headers
            )
            batch = page.get("notes") or []
            out.extend(batch)
            offset += len(batch)
            if not batch or len(batch) < 1000 or ("count" in page and offset >= int(page["count"])):
                return out

    async def submissions(self, venue_id: str, *, submission_name: str = "Submission") -> list[Submission]:
        """Every submission of a venue with decision and official reviews.

        Raises:
            ConfigError: unknown review form or missing credentials.
        """
        form = self.form(venue_id)
        notes = await self.notes(invitation=f"{venue_id}/-/{submission_name}", details="replies")
        return [parse_submission(n, venue_id, form) for n in notes]
