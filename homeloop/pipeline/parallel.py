"""Partitioned work on Dask: a local cluster by default, or an existing one.

Stages hand a list of work items (plan keys, home ids) and a function over a
partition of them; results come back in partition order, whatever order the
workers finish in, so outputs do not depend on scheduling.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import signal
import sys
import threading
import uuid
from typing import Any, Callable, Iterator, Sequence, TypeVar

from homeloop.core.errors import HomeLoopError

T = TypeVar("T")
R = TypeVar("R")

#: Seconds to wait for a Dask scheduler to answer before giving up.
CONNECT_TIMEOUT_S = 10
#: Items per partition: large enough that scheduling costs little next to the
#: work (a partition of plans takes seconds), small enough to balance 2+ workers.
DEFAULT_PARTITION_SIZE = 100

#: Set before our local cluster's workers start (None: not set). Dask starts workers with
#: ``MALLOC_TRIM_THRESHOLD_=65536``, so freed memory goes back to the system at once; but a
#: fixed trim threshold also stops glibc raising its mmap threshold, so each array over
#: 128 KiB is mapped afresh and faulted in page by page: many times the page faults and
#: system CPU, for the same outputs and about the same peak memory (docs/pipeline.md, "Where
#: the work runs").
WORKER_ENVIRONMENT = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


@contextlib.contextmanager
def dask_client(address: str | None = None, *, workers: int | None = None) -> Iterator[Any]:
    """A Dask client: connected to ``address``, or to a new loopback LocalCluster.

    ``workers=1`` without an address runs everything in this process (no client).
    """
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")
    import dask
    from distributed import Client, LocalCluster

    if address:
        try:
            _reach_tcp(address)
            client = Client(address, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as exc:
            raise HomeLoopError(
                f"no Dask scheduler answers at {address} ({exc.__class__.__name__}); start one "
                "(`dask scheduler` and `dask worker ADDRESS`) or leave out --dask-address to use a local cluster"
            ) from None
        try:
            yield client
        finally:
            client.close()
        return
    n = workers or default_workers()
    if n <= 1:
        yield None
        return
    with sigint_ignored(), dask.config.set(WORKER_ENVIRONMENT):
        # Worker processes keep an ignored SIGINT: Ctrl-C in a terminal signals the
        # whole process group, and the build, not each worker, decides how to stop.
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
        )
    client = Client(cluster)
    try:
        yield client
    except KeyboardInterrupt:
        client.close()
        stop_workers_now(cluster)
        raise
    finally:
        if client.status == "running":
            stop_heartbeats(client)
            client.run(exit_without_teardown, on_error="ignore")
        client.close()
        cluster.close()


def stop_heartbeats(client: Any) -> None:
    """Stop each worker's heartbeat before the cluster closes. A heartbeat in flight
    while the scheduler retires its worker fails, and distributed logs that with a
    traceback on the build's output, though nothing is wrong. A worker that already
    died has no heartbeat to stop."""

    def stop(dask_worker: Any) -> None:
        dask_worker.periodic_callbacks["heartbeat"].stop()

    client.run(stop, on_error="ignore")


def exit_without_teardown() -> None:
    """Make this worker process, when it exits, run its exit handlers and then end at once,
    without the interpreter's teardown of every module and object. Closing the cluster
    waits for that teardown, the longer the more the worker holds (docs/pipeline.md, "Where
    the work runs"). Arranged only for our own
    local cluster's workers once their work is done and gathered: they hold no open output
    (every file is written to a temporary name and renamed), so the teardown frees memory
    and nothing else. The process's exit code is then 0 whatever it would have been."""

    def finish() -> None:
        atexit.unregister(finish)
        atexit._run_exitfuncs()  # the handlers registered before this one, newest first
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    atexit.register(finish)


def stop_workers_now(cluster: Any) -> None:
    """Kill the worker processes of our own local cluster, for a build stopped by
    Ctrl-C: a worker in the middle of a partition would otherwise be waited for
    (seconds), and its unfinished writes are temporary files the rerun removes."""
    for nanny in list(cluster.workers.values()):
        pid = getattr(nanny, "pid", None)
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT while child processes are started, so that they inherit it
    ignored (an ignored signal stays ignored across exec). Only the main thread
    may change signal handlers; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _reach_tcp(address: str) -> None:
    """Open and close a TCP connection to a ``tcp://`` scheduler address: a port
    nobody listens on fails at once, where the Dask client would retry until
    its timeout. Other schemes are left to the client."""
    import socket

    from distributed.comm.addressing import parse_address, parse_host_port

    scheme, location = parse_address(address)
    if scheme != "tcp":
        return
    host, port = parse_host_port(location)
    with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
        pass


def partitions(items: Sequence[T], size: int = DEFAULT_PARTITION_SIZE, slots: int = 1) -> list[list[T]]:
    """``items`` in partitions of ``size``, the last ones shrinking to each of ``slots`` workers'
    share of the items left (:func:`next_partition_size`), so that the workers finish together
    rather than one running the last full partition alone."""
    parts, start = [], 0
    while start < len(items):
        end = start + next_partition_size(max(1, size), len(items) - start, slots)
        parts.append(list(items[start:end]))
        start = end
    return parts


#: Allocations between the garbage collector's youngest-generation passes while a partition runs
#: (Python's default is 700). A partition makes and drops many small objects (geometries, models)
#: beside long-lived ones (the catalog, the plans): at the default, the collector walks those again
#: and again, and finds nothing to free among them.
PARTITION_GC_THRESHOLD = 50_000


@contextlib.contextmanager
def partition_collector() -> Iterator[None]:
    """The garbage collector as a partition runs with it: passes less often, and what the process
    held before (modules, the catalog, what earlier partitions kept) left out of the oldest
    generation's passes, which otherwise walk all of it to free the few cycles a partition drops
    (``gc.freeze``). The process's settings are restored after."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(PARTITION_GC_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def run_partition(fn: Callable[..., list[R]], part: Sequence[T], *args: Any) -> list[R]:
    """``fn(part, *args)`` with the collector set for a partition (:func:`partition_collector`)."""
    with partition_collector():
        return fn(part, *args)


def _submit(client: Any, fn: Callable[..., list[R]], part: list[T], args: tuple[Any, ...]) -> Any:
    """``run_partition(fn, part, *args)`` as a Dask task, keyed after ``fn`` (Dask's dashboard and
    task prefixes show the stage's work, not the wrapper)."""
    return client.submit(run_partition, fn, part, *args, key=f"{fn.__name__}-{uuid.uuid4().hex}")


def map_partitions(
    fn: Callable[..., list[R]],
    items: Sequence[T],
    *args: Any,
    client: Any = None,
    partition_size: int = DEFAULT_PARTITION_SIZE,
    progress: Callable[[int], None] | None = None,
) -> list[R]:
    """``fn(partition, *args)`` over partitions of ``items`` (:func:`partitions`, shared out near
    the end among the client's workers); results flattened in item order."""
    parts = partitions(items, partition_size, _slots(client))
    results: list[list[R] | None] = [None] * len(parts)
    if client is None:
        for i, part in enumerate(parts):
            results[i] = run_partition(fn, part, *args)
            if progress:
                progress(len(part))
    else:
        from distributed import as_completed

        futures = [_submit(client, fn, part, args) for part in parts]
        index = {f.key: i for i, f in enumerate(futures)}
        for future in as_completed(futures):
            i = index[future.key]
            results[i] = future.result()
            if progress:
                progress(len(parts[i]))
    return [r for part in results for r in (part or [])]


def map_partitions_until(
    fn: Callable[..., list[R]],
    items: Sequence[T],
    *args: Any,
    wanted: Callable[[R], bool],
    count: int,
    client: Any = None,
    partition_size: int = DEFAULT_PARTITION_SIZE,
    progress: Callable[[int], None] | None = None,
) -> list[R]:
    """``fn`` over partitions of ``items``, in order, until ``count`` results are ``wanted``.

    Partitions are handed out as results come back, no further ahead than would
    give ``count`` wanted results if every item in flight were wanted, and no larger
    than each worker's share of those still short (:func:`next_partition_size`): so
    work stops past the last item needed only where items in flight are not wanted,
    every worker has work to the end, and every partition handed out has finished when
    this returns (none writes files afterwards). The results are those of a prefix of
    the items, in item order; ``progress`` gets the number wanted, up to ``count``."""
    tally = _Tally(wanted, count, progress)
    if client is None:
        results: list[R] = []
        cursor = 0
        while cursor < len(items) and tally.short > 0:
            size = next_partition_size(partition_size, tally.short, slots=1)
            part_results = run_partition(fn, list(items[cursor : cursor + size]), *args)
            cursor += size
            results += part_results
            tally.take(part_results)
        return results
    return _until_on_dask(fn, items, args, tally, client, partition_size)


class _Tally:
    """The wanted results found so far, reported to ``progress`` up to ``count``."""

    def __init__(self, wanted: Callable[[Any], bool], count: int, progress: Callable[[int], None] | None) -> None:
        self.wanted, self.count, self.progress, self.found = wanted, count, progress, 0

    @property
    def short(self) -> int:
        return self.count - self.found

    def take(self, part_results: list[Any]) -> None:
        got = sum(1 for r in part_results if self.wanted(r))
        if self.progress and self.short > 0:
            self.progress(min(got, self.short))
        self.found += got


def _until_on_dask(fn: Callable[..., list[R]], items: Sequence[T], args: tuple[Any, ...], tally: _Tally,
                   client: Any, partition_size: int) -> list[R]:
    """:func:`map_partitions_until` on a Dask cluster: partitions handed out as results come back."""
    from distributed import as_completed

    slots = _slots(client)
    done: dict[int, list[R]] = {}
    pending = as_completed()
    in_flight: dict[str, tuple[int, int]] = {}  # future key -> (partition number, its size)
    cursor = 0  # items handed out

    def submit_while_short() -> None:
        nonlocal cursor
        ahead = sum(size for _, size in in_flight.values())
        while cursor < len(items) and tally.short - ahead > 0:
            size = next_partition_size(partition_size, tally.short - ahead, slots)
            future = _submit(client, fn, list(items[cursor : cursor + size]), args)
            in_flight[future.key] = (len(done) + len(in_flight), size)
            pending.add(future)
            ahead += size
            cursor += size

    submit_while_short()
    for future in pending:
        i, _ = in_flight.pop(future.key)
        done[i] = future.result()
        tally.take(done[i])
        submit_while_short()
    return [r for i in range(len(done)) for r in done[i]]


def _slots(client: Any) -> int:
    """Partitions that run at once: the client's worker threads, or 1 without a client."""
    return 1 if client is None else max(1, sum(client.nthreads().values()))


def next_partition_size(partition_size: int, short: int, slots: int) -> int:
    """Items in the next partition when ``short`` items (or wanted results) are still to be handed
    out over ``slots`` workers: the full size while many are short, then each worker's share, so
    that near the end every worker has a part of what is left instead of one partition holding it
    all: workers wait less, and the homes stage furnishes fewer plans past the homes it needs."""
    return max(1, min(partition_size, -(-short // slots)))
