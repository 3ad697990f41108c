"""A requests-per-minute limit shared by every worker of a run (docs/agents.md).

A token bucket whose state (tokens left, when last counted) lives in a small
JSON file, read and rewritten under an exclusive file lock (``filelock``, the
operating system's lock, on ``<file>.lock`` beside it). A file, rather than a
multiprocessing Manager, because the run's workers are spawned processes that
receive their agent options by pickling: a path travels as plain data (and is
recorded in ``run.json`` as such), needs no server process to outlive, and
also shares the limit between separate ``homeloop bench run`` commands
pointed at the same run folder, on any OS.

The bucket holds one token (:data:`BURST`): requests are spaced evenly,
``60 / per_minute`` seconds apart, which keeps within a provider's per-minute
limit and its finer-grained smoothing alike. A request that finds the bucket
empty reserves the next token (the count goes below zero) and sleeps until
it is due, outside the lock, so waiting workers queue in arrival order.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from filelock import FileLock

#: Tokens the bucket holds when full: how many requests may go out back to back.
BURST = 1.0


class RateLimiter:
    """``acquire()`` blocks until a request may be sent (see the module docstring)."""

    def __init__(self, per_minute: float, path: str | os.PathLike[str] | None = None, *,
                 clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep):
        if not per_minute > 0:
            raise ValueError(f"a rate limit must be more than 0 requests per minute, got {per_minute}")
        self.rate = per_minute / 60.0  # tokens per second
        self.path = Path(path) if path is not None else None
        self._file_lock = FileLock(f"{self.path}.lock") if self.path is not None else None
        self.clock, self.sleep = clock, sleep
        self._local: dict[str, Any] = {"tokens": BURST, "at": None}
        self._thread_lock = threading.Lock()

    def acquire(self) -> float:
        """Wait for a token; returns the seconds waited."""
        wait = self._reserve()
        if wait > 0:
            self.sleep(wait)
        return wait

    def _reserve(self) -> float:
        with self._thread_lock:
            if self.path is None or self._file_lock is None:
                self._local, wait = self._take(self._local)
                return wait
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._file_lock, open(self.path, "a+", encoding="utf-8") as fh:
                fh.seek(0)
                state, wait = self._take(_parse(fh.read()))
                fh.seek(0)
                fh.truncate()
                fh.write(json.dumps(state))
                return wait

    def _take(self, state: dict[str, Any]) -> tuple[dict[str, Any], float]:
        now = self.clock()
        last = state.get("at")
        tokens = float(state.get("tokens", BURST))
        if last is not None:
            tokens = min(BURST, tokens + max(now - float(last), 0.0) * self.rate)
        tokens -= 1.0
        return {"tokens": tokens, "at": now}, max(-tokens / self.rate, 0.0)


def _parse(text: str) -> dict[str, Any]:
    try:
        state = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return {}  # a torn or foreign file: start with a full bucket
    return state if isinstance(state, dict) else {}
