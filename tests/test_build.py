"""The build as a user runs it: killed half-way and resumed, and on a Dask cluster
started on its own. Both must give the bytes of an uninterrupted in-process build."""

from __future__ import annotations

import json
import signal

import pytest

from build_fixtures import (
    BIN,
    partial_files,
    read_manifest,
    reference_build,
    run_cli,
    small_build_args,
    start_process,
    stop_process,
    subprocess_env,
    wait_for,
)

pytestmark = pytest.mark.slow

#: Outcome records to wait for before killing the build: some plans done, most not.
KILL_AFTER_OUTCOMES = 3


def outcome_records(out):
    folder = out / "homes" / ".outcomes"
    return sorted(folder.glob("[!.]*.json")) if folder.is_dir() else []


def test_build_killed_during_homes_resumes_to_the_same_outputs(tmp_path, tmp_path_factory):
    reference = reference_build(tmp_path_factory)
    env = subprocess_env(tmp_path_factory)
    out = tmp_path / "build"
    args = small_build_args(out, "--workers", "1")

    first = start_process(args, log=tmp_path / "first.log", env=env)
    try:
        wait_for(lambda: len(outcome_records(out)) >= KILL_AFTER_OUTCOMES, timeout=300,
                 what=f"{KILL_AFTER_OUTCOMES} outcome records in {out}/homes/.outcomes",
                 interval=0.05, alive=first, log=tmp_path / "first.log")
    finally:
        stop_process(first, first=signal.SIGKILL)
    assert not (out / "manifest.json").exists(), "the build finished before it could be interrupted"
    done_before = {p.name: p.stat().st_mtime_ns for p in outcome_records(out)}
    assert len(done_before) >= KILL_AFTER_OUTCOMES

    rerun = run_cli(args, env=env)
    assert rerun.returncode == 0, rerun.stdout[-4000:]
    assert "Traceback" not in rerun.stdout
    # The stages finished before the kill are not run again ...
    for stage in ("source", "ingest", "audit", "features", "select"):
        assert f"{stage}: unchanged, reused" in rerun.stdout, stage
    # ... and neither are the plans whose outcome was recorded.
    after = {p.name: p.stat().st_mtime_ns for p in outcome_records(out)}
    assert {name: after.get(name) for name in done_before} == done_before

    manifest = read_manifest(out)
    assert manifest["outputs"] == reference["outputs"]
    assert manifest["counts"] == reference["counts"]
    assert partial_files(out) == []


def test_build_on_a_separate_dask_cluster_matches_the_local_build(tmp_path, tmp_path_factory):
    reference = reference_build(tmp_path_factory)
    env = subprocess_env(tmp_path_factory)
    scheduler_file = tmp_path / "scheduler.json"
    scheduler = start_process(
        [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0",
         "--scheduler-file", str(scheduler_file)],
        log=tmp_path / "scheduler.log", env=env, cwd=tmp_path,
    )
    worker = None
    try:
        wait_for(lambda: scheduler_file.is_file() and scheduler_file.stat().st_size > 0, timeout=120,
                 what="the Dask scheduler file", alive=scheduler, log=tmp_path / "scheduler.log")
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        worker = start_process(
            [str(BIN / "dask"), "worker", "--scheduler-file", str(scheduler_file), "--nthreads", "1",
             "--nworkers", "1", "--dashboard-address", ":0", "--host", "127.0.0.1"],
            log=tmp_path / "worker.log", env=env, cwd=tmp_path,
        )
        from distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(1, timeout=120)

            result = run_cli(small_build_args(tmp_path / "build", "--dask-address", address), env=env)
            assert result.returncode == 0, result.stdout[-4000:]

            # The partitions ran on the cluster's worker, not in the build process.
            prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
        assert {"build_homes_partition", "export_homes_partition", "screen_homes_partition"} <= set(prefixes)
        manifest = read_manifest(tmp_path / "build")
        assert manifest["outputs"] == reference["outputs"]
        assert manifest["counts"] == reference["counts"]
    finally:
        if worker is not None:
            stop_process(worker)
        stop_process(scheduler)

