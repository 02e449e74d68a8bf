"""On-disk response cache for the scholarly clients (SQLite, one file, safe to share).

The key is the SHA-256 of the canonical JSON of ``{method, url, params, body}`` where ``url`` and
``params`` have every secret parameter removed; request headers (where API keys travel) are never
part of the key and never stored. Only successful (2xx) and 404 responses are stored.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ideaharness.errors import is_disk_full, storage_error

DEFAULT_SECRET_PARAMS: tuple[str, ...] = ("api_key", "apikey", "key", "token_secret", "password")


def strip_secrets(url: str, secret_params: Iterable[str] = DEFAULT_SECRET_PARAMS) -> str:
    """``url`` with every query parameter named in ``secret_params`` removed (case-insensitive)."""
    secrets = {s.lower() for s in secret_params}
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() not in secrets]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))


def cache_key(
    method: str,
    url: str,
    params: Mapping[str, Any] | None = None,
    body: Any = None,
    secret_params: Iterable[str] = DEFAULT_SECRET_PARAMS,
) -> str:
    """Hex SHA-256 identifying one request, independent of headers and secret parameters."""
    secrets = {s.lower() for s in secret_params}
    clean_params = sorted(
        (str(k), str(v)) for k, v in (params or {}).items() if v is not None and k.lower() not in secrets
    )
    payload = {
        "method": method.upper(),
        "url": strip_secrets(url, secrets),
        "params": clean_params,
        "body": body,
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """SQLite store ``key -> (status, body text)``.

    Args:
        path: database file (parent folders are created); ``":memory:"`` for a throw-away cache.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, url TEXT NOT NULL, "
                "status INTEGER NOT NULL, body TEXT NOT NULL, created TEXT NOT NULL)"
            )
            self._db.commit()
        except OSError as exc:
            raise storage_error(self.path, exc) from exc
        except sqlite3.OperationalError as exc:
            if is_disk_full(exc):
                raise storage_error(self.path, exc) from exc
            raise

    def get(self, key: str) -> tuple[int, str] | None:
        """``(status, body)`` stored under ``key``, or None."""
        row = self._db.execute("SELECT status, body FROM responses WHERE key = ?", (key,)).fetchone()
        return (int(row[0]), str(row[1])) if row else None

    def put(self, key: str, url: str, status: int, body: str) -> None:
        """Store one response (``url`` must already be free of secrets)."""
        created = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, url, status, body, created) VALUES (?, ?, ?, ?, ?)",
                (key, url, status, body, created),
            )
            self._db.commit()
        except sqlite3.OperationalError as exc:
            if is_disk_full(exc):  # SQLite rolled the insert back: one line, nothing half-written
                self._db.rollback()
                raise storage_error(self.path, exc) from exc
            raise

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        self._db.close()
