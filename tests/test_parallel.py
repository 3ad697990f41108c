"""Partitioned work (homeloop.pipeline.parallel) in this process: results in item order, and a
partition runs with fewer collector passes without changing the process's own settings."""

from __future__ import annotations

import gc

import pytest

from homeloop.pipeline.parallel import (
    PARTITION_GC_THRESHOLD,
    dask_client,
    map_partitions,
    run_partition,
    stop_heartbeats,
)


def _thresholds_seen(part: list[int]) -> list[tuple[int, int]]:
    return [(item, gc.get_threshold()[0]) for item in part]


def test_partitions_come_back_in_item_order_whatever_their_size():
    items = list(range(23))
    for size in (1, 5, 23, 100):
        seen = []
        out = map_partitions(_thresholds_seen, items, partition_size=size, progress=seen.append)
        assert [item for item, _ in out] == items
        assert sum(seen) == len(items)


def test_a_partition_runs_with_the_higher_threshold_and_the_process_keeps_its_own():
    before = gc.get_threshold()
    out = map_partitions(_thresholds_seen, [1, 2, 3], partition_size=2)
    assert {threshold for _, threshold in out} == {PARTITION_GC_THRESHOLD}
    assert gc.get_threshold() == before


def test_a_failing_partition_still_restores_the_threshold():
    before = gc.get_threshold()

    def fails(part):
        raise ValueError("bad plan")

    with pytest.raises(ValueError, match="bad plan"):
        run_partition(fails, [1])
    assert gc.get_threshold() == before


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
