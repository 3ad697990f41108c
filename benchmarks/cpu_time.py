"""CPU time for the benchmarks that run worker processes: on a machine others share, the wall time
counts their work too."""

from __future__ import annotations

import resource


def cpu_seconds() -> float:
    """User and system seconds of this process and of its finished child processes (a pool's workers,
    counted once the pool has ended)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
