"""Partitioned work (homeloop.pipeline.parallel) in this process: results in item order, and a
partition runs with fewer collector passes without changing the process's own settings."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from homeloop.pipeline.parallel import (
    PARTITION_GC_THRESHOLD,
    dask_client,
    map_partitions,
    map_partitions_until,
    next_partition_size,
    partitions,
    run_partition,
    stop_heartbeats,
)


def _thresholds_seen(part: list[int]) -> list[tuple[int, int]]:
    return [(item, gc.get_threshold()[0], gc.get_freeze_count()) for item in part]


def test_partitions_come_back_in_item_order_whatever_their_size():
    items = list(range(23))
    for size in (1, 5, 23, 100):
        seen = []
        out = map_partitions(_thresholds_seen, items, partition_size=size, progress=seen.append)
        assert [item for item, *_ in out] == items
        assert sum(seen) == len(items)


def test_a_partition_runs_with_the_higher_threshold_and_the_process_keeps_its_own():
    before = gc.get_threshold()
    out = map_partitions(_thresholds_seen, [1, 2, 3], partition_size=2)
    assert {threshold for _, threshold, _ in out} == {PARTITION_GC_THRESHOLD}
    assert gc.get_threshold() == before


def test_a_partition_leaves_what_the_process_held_before_out_of_the_collectors_passes():
    held = [[n] for n in range(1000)]  # tracked objects made before the partition
    out = map_partitions(_thresholds_seen, [1, 2], partition_size=2)
    assert all(frozen >= len(held) for _, _, frozen in out)
    assert gc.get_freeze_count() == 0  # and given back to it after


def test_a_failing_partition_still_restores_the_threshold():
    before = gc.get_threshold()

    def fails(part):
        raise ValueError("bad plan")

    with pytest.raises(ValueError, match="bad plan"):
        run_partition(fails, [1])
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def _heartbeat_running(dask_worker) -> bool:
    return dask_worker.periodic_callbacks["heartbeat"].is_running()


def test_workers_stop_their_heartbeats_before_the_cluster_closes():
    """A heartbeat racing the scheduler's shutdown printed a traceback on a build
    that had succeeded; the cluster now closes with every heartbeat stopped."""
    with dask_client(workers=2) as client:
        assert set(client.run(_heartbeat_running).values()) == {True}
        stop_heartbeats(client)
        states = client.run(_heartbeat_running)
    assert len(states) == 2 and set(states.values()) == {False}


class _TeardownMark:
    """Writes ``path`` when the object is freed: kept in a module of its own, it is freed when
    the interpreter tears its modules down at exit (the functions it needs held from the start)."""

    def __init__(self, path: str):
        self.path, self._open, self._close, self._flags = path, os.open, os.close, os.O_CREAT | os.O_WRONLY

    def __del__(self):
        self._close(self._open(self.path, self._flags))


def _leave_exit_marks(folder: str) -> int:
    import atexit
    import sys
    import types

    pid = os.getpid()
    atexit.register(Path(folder, f"atexit-{pid}").write_text, "ran")
    module = sys.modules["homeloop_test_teardown_mark"] = types.ModuleType("homeloop_test_teardown_mark")
    module.mark = _TeardownMark(str(Path(folder, f"teardown-{pid}")))
    return pid


def test_a_plain_process_tears_its_modules_down_at_exit(tmp_path):
    """The control of the next test: the teardown mark is written when an interpreter tears down."""
    import subprocess
    import sys

    code = f"import sys; sys.path[:0] = {[str(Path(__file__).parent)]!r}; import test_parallel as t; " \
           f"print(t._leave_exit_marks({str(tmp_path)!r}))"
    pid = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert (tmp_path / f"atexit-{pid}").read_text() == "ran"
    assert (tmp_path / f"teardown-{pid}").exists()


def test_local_workers_run_their_exit_handlers_and_skip_the_teardown(tmp_path):
    """Closing the cluster waited seconds for each worker's interpreter to free everything it held;
    the workers now end right after their exit handlers, which still run."""
    with dask_client(workers=2) as client:
        pids = set(client.run(_leave_exit_marks, str(tmp_path)).values())
    assert len(pids) == 2
    for pid in pids:
        assert (tmp_path / f"atexit-{pid}").read_text() == "ran"
        assert not (tmp_path / f"teardown-{pid}").exists()


def _trim_threshold(dask_worker) -> str | None:
    return os.environ.get("MALLOC_TRIM_THRESHOLD_")


def test_local_workers_start_without_dasks_fixed_trim_threshold(monkeypatch):
    """Dask sets MALLOC_TRIM_THRESHOLD_ for its workers, which made every large array a
    fresh mapping (ten times the page faults); the build's own workers start without it."""
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    with dask_client(workers=2) as client:
        seen = client.run(_trim_threshold)
    assert len(seen) == 2 and set(seen.values()) == {None}
    assert "MALLOC_TRIM_THRESHOLD_" not in os.environ


def _mark_and_keep_odd(part: list[int], folder: str) -> list[tuple[int, bool]]:
    """A stand-in for a partition of plans: every item leaves a file, odd ones are kept."""
    for item in part:
        (Path(folder) / f"{item}.done").write_text("")
    return [(item, item % 2 == 1) for item in part]


@pytest.mark.parametrize("workers", [1, 2])
def test_work_stops_within_a_partition_past_the_items_needed(tmp_path, workers):
    items, size, count = list(range(200)), 5, 12
    seen: list[int] = []
    with dask_client(workers=workers) as client:
        out = map_partitions_until(_mark_and_keep_odd, items, str(tmp_path), wanted=lambda r: r[1],
                                   count=count, client=client, partition_size=size, progress=seen.append)
    # A prefix of the items, in order, holding at least the wanted results asked for.
    assert [item for item, *_ in out] == items[: len(out)]
    assert sum(kept for _, kept in out) >= count
    # Half the items are kept: the count is complete at item 2 * count - 1, in its partition.
    assert len(out) <= 2 * count + size
    # Every partition handed out had finished: its files are all there, and no others.
    assert sorted(int(p.stem) for p in tmp_path.glob("*.done")) == [item for item, *_ in out]
    assert sum(seen) == count


def _mark_partition_and_keep_all(part: list[int], folder: str) -> list[tuple[int, bool]]:
    (Path(folder) / f"part-{part[0]}-{len(part)}").write_text("")
    return [(item, True) for item in part]


@pytest.mark.parametrize("workers", [1, 2])
def test_near_the_end_each_worker_gets_a_share_of_what_is_still_needed(tmp_path, workers):
    """The homes stage's last partition used to hold all the homes still needed, one worker
    building them while the other waited; now what is short is shared out."""
    items, size, count = list(range(100)), 10, 12
    with dask_client(workers=workers) as client:
        out = map_partitions_until(_mark_partition_and_keep_all, items, str(tmp_path), wanted=lambda r: r[1],
                                   count=count, client=client, partition_size=size)
    # Every item is wanted, so no item past the last one needed is worked.
    assert [item for item, *_ in out] == items[:count]
    parts = sorted((int(p.name.split("-")[1]), int(p.name.split("-")[2])) for p in tmp_path.glob("part-*"))
    assert sum(n for _, n in parts) == count and max(n for _, n in parts) <= size
    # With two workers the 12 are shared out from the first hand-out, not 10 then 2.
    assert parts[0][1] == (size if workers == 1 else next_partition_size(size, count, 2))
    assert len(parts) >= 2


def test_a_partition_is_full_while_many_are_short_then_a_share_of_them():
    assert next_partition_size(25, 2100, 2) == 25
    assert next_partition_size(25, 30, 2) == 15
    assert next_partition_size(25, 3, 2) == 2
    assert next_partition_size(25, 0, 2) == 1
    assert next_partition_size(25, 7, 1) == 7


def test_partitions_are_full_then_shrink_to_each_workers_share_of_what_is_left():
    items = list(range(230))
    sizes = [len(p) for p in partitions(items, 50, slots=2)]
    assert sum(p for p in sizes) == len(items) and [x for p in partitions(items, 50, 2) for x in p] == items
    # 230 = 50 + 50 + 50 + 40 + 20 + 10 + 5 + 3 + 1 + 1: full partitions, then halves of what is left.
    assert sizes == [50, 50, 50, 40, 20, 10, 5, 3, 1, 1]
    assert [len(p) for p in partitions(items, 50)] == [50, 50, 50, 50, 30]  # one worker: as they come
    assert partitions([], 50, 2) == []


def test_two_workers_share_the_last_items_of_a_mapping(tmp_path):
    """The USD stage's last fixed partition ran alone; now the last items are shared out."""
    items = list(range(30))
    with dask_client(workers=2) as client:
        out = map_partitions(_mark_partition_and_keep_all, items, str(tmp_path), client=client, partition_size=10)
    assert [item for item, *_ in out] == items
    parts = sorted((int(p.name.split("-")[1]), int(p.name.split("-")[2])) for p in tmp_path.glob("part-*"))
    assert parts == [(0, 10), (10, 10), (20, 5), (25, 3), (28, 1), (29, 1)]


def test_all_items_are_worked_when_too_few_are_wanted():
    out = map_partitions_until(_thresholds_seen, [1, 2, 3, 4, 5], wanted=lambda r: r[0] == 5, count=3, partition_size=2)
    assert [item for item, *_ in out] == [1, 2, 3, 4, 5]
