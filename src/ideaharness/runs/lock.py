"""One process per run directory: an exclusive lock (``filelock``) plus a note of who holds it.

Two processes resuming the same run directory at once would both make every remaining call and
append duplicate records. :class:`RunLock` takes ``DIR/.run.lock`` without waiting; the holder
writes its pid, host and start time to ``DIR/.run.lock.json`` so a refused process can say who
holds the directory. The operating system drops the lock when its process ends, even by kill -9,
so a crashed run never blocks the next one.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import time
from pathlib import Path

from filelock import FileLock, Timeout

from ideaharness.errors import UserError
from ideaharness.fileio import atomic_write_text

LOCK_FILE = ".run.lock"
HOLDER_FILE = ".run.lock.json"


class RunLock:
    """Exclusive, non-blocking lock of a run directory.

    Args:
        directory: the run directory (must exist).
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self._lock = FileLock(self.directory / LOCK_FILE, timeout=0)
        self._held = False

    def acquire(self) -> None:
        """Take the lock and record this process as its holder.

        Raises:
            UserError: another process holds the directory (names its pid, host and start time).
        """
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise UserError(
                f"{self.directory}: in use by {self.holder()}; wait for that run to finish or stop it, "
                "then run the same command again (one process per run directory)"
            ) from None
        except OSError as exc:
            reason = exc.strerror or exc
            raise UserError(f"{self.directory}: cannot lock the run directory ({reason})") from None
        self._held = True
        started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        atomic_write_text(
            self.directory / HOLDER_FILE,
            json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": started}),
        )

    def holder(self, wait_s: float = 2.0) -> str:
        """Who holds the lock, in words (from the holder note; "another process" without one).

        The holder writes its note just after taking the lock, so a missing note is awaited for up
        to ``wait_s`` seconds.
        """
        deadline = time.monotonic() + wait_s
        while True:
            try:
                info = json.loads((self.directory / HOLDER_FILE).read_text(encoding="utf-8"))
                pid, host, started = info["pid"], info["host"], info["started"]
                break
            except FileNotFoundError:
                if time.monotonic() >= deadline:
                    return "another process"
                time.sleep(0.05)
            except (OSError, ValueError, KeyError, TypeError):
                return "another process"
        same = " (this process)" if pid == os.getpid() and host == socket.gethostname() else ""
        return f"process {pid}{same} on {host}, started {started}"

    def release(self) -> None:
        """Drop the lock (and the holder note); does nothing when not held."""
        if not self._held:
            return
        self._held = False
        (self.directory / HOLDER_FILE).unlink(missing_ok=True)
        self._lock.release()
