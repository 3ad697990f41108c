"""The runner: resume keeps finished episodes; no agent takes over another's records."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import platform
import sys

import pytest

from homeloop.bench import runner
from homeloop.bench.records import read_records
from homeloop.core.allocator import keep_large_blocks
from homeloop.core.errors import HomeLoopError


def test_a_rerun_keeps_finished_episodes_and_another_agent_needs_its_own_folder(house_file, tmp_path):
    specs = runner.plan({"house": house_file}, ["fall_false_alarm"], "unitree_g1_d_ultimate", [0, 1],
                        runner.Flags(images=False))
    out = tmp_path / "run"
    first = runner.run(specs, "do-nothing", out)
    assert sorted(s["id"] for s in first) == sorted(s.id for s in specs)
    assert runner.run(specs, "do-nothing", out) == []  # everything recorded: nothing runs again
    assert len(read_records([out]).records) == len(specs)
    with pytest.raises(HomeLoopError, match="holds the episodes of do-nothing, flags no-images"):
        runner.run(specs, "over-reactor", out)
    other = runner.plan({"house": house_file}, ["person_down_emergency"], "unitree_g1_d_ultimate", [0], runner.Flags(images=False))
    with pytest.raises(HomeLoopError, match="holds the episodes of do-nothing"):
        runner.run(other, "over-reactor", out)  # other episodes too: a run folder belongs to one agent
    (out / "run.json").unlink()  # a folder from before run.json named its owner: its records still do
    with pytest.raises(HomeLoopError, match="is recorded by do-nothing"):
        runner.run(specs, "over-reactor", out)


def test_a_pool_plays_each_home_and_task_s_seeds_in_one_worker_and_writes_what_one_process_writes(house_file, tmp_path):
    """Workers take a home and task's seeds together, one after another (what the seeds share is kept
    from the one before); the records are the ones a single process writes, byte for byte."""
    tasks = ["fall_false_alarm", "smoke_sensor_fault"]
    specs = runner.plan({"house": house_file}, tasks, "unitree_g1_d_ultimate", [0, 1], runner.Flags(images=False))
    groups = runner._seed_groups(list(reversed(specs)))
    assert [[(s.task, s.seed) for s in g] for g in groups] == [[(t, 1), (t, 0)] for t in reversed(tasks)]
    runner.run(specs, "scripted", tmp_path / "one")
    pooled = runner.run(specs, "scripted", tmp_path / "pool", workers=2)
    assert sorted(s["id"] for s in pooled) == sorted(s.id for s in specs)
    for spec in specs:
        one, pool = (tmp_path / d / "episodes" / f"{spec.id}.json" for d in ("one", "pool"))
        assert one.read_bytes() == pool.read_bytes(), spec.id


def test_a_run_s_workers_keep_the_memory_they_free_where_the_c_library_is_glibc():
    """A run's pool workers raise glibc's mmap threshold and keep the heap's free top
    (homeloop/core/allocator.py): glibc takes both settings (it refuses a threshold over its ceiling);
    under another C library nothing changes and the call says so. Tried in a process of its own, as
    the setting is the process's."""
    with cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        took = pool.submit(keep_large_blocks).result()
    assert took == (sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc")
