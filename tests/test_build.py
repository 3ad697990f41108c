"""The build as a user runs it: interrupted with Ctrl-C, killed half-way and resumed, started
twice into one folder, and on a Dask cluster started on its own. Each must give the bytes of an
uninterrupted in-process build."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from build_fixtures import (
    SMALL,
    lock_holder,
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

#: Further outcome records to wait for before killing the build: some plans done, most not.
KILL_AFTER_OUTCOMES = 3


#: Generous bound on how long a stopped build or its helpers may take to exit: a
#: guard against hanging, not a timing requirement.
EXIT_GUARD_S = 120


def outcome_records(out):
    folder = out / "homes" / ".outcomes"
    return sorted(folder.glob("[!.]*.json")) if folder.is_dir() else []


def start_build_until_homes(tmp_path, args, env, log_name: str, records: int = 1) -> subprocess.Popen:
    """Start ``homeloop build`` and return once its homes stage has recorded ``records`` more plans
    than the folder held before."""
    out = tmp_path / args[args.index("--out") + 1]
    before = set(outcome_records(out))
    build = start_process(args, log=tmp_path / log_name, env=env)
    wait_for(lambda: len(set(outcome_records(out)) - before) >= records, timeout=300,
             what=f"{records} new outcome records in {out}/homes/.outcomes",
             interval=0.05, alive=build, log=tmp_path / log_name)
    return build


def helpers_of(proc: subprocess.Popen) -> list[psutil.Process]:
    """Every process the build started (the Prefect server, Dask workers ...)."""
    children = psutil.Process(proc.pid).children(recursive=True)
    assert children, "the build started no helper process"
    return children


def assert_all_exit(processes: list[psutil.Process]) -> None:
    _, alive = psutil.wait_procs(processes, timeout=EXIT_GUARD_S)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE], [p.cmdline()[:4] for p in alive]


def test_a_build_stopped_by_ctrl_c_and_then_killed_resumes_to_the_same_outputs(tmp_path, tmp_path_factory):
    """One build stopped twice during its homes stage on a local Dask cluster, as users stop builds:

    1. Ctrl-C (SIGINT to the process group, as a terminal sends it): exit 130 with one line, the
       flow run cancelled, no helper process left, the lock given back;
    2. its rerun, SIGKILL to the build alone: its temporary Prefect server and Dask workers go with
       it (nothing else would stop them), and it leaves its lock;
    3. the next rerun takes over that lock, reuses the finished stages and the plans whose outcome
       was recorded, and writes the bytes of an uninterrupted build.
    """
    reference = reference_build(tmp_path_factory)
    env = subprocess_env(tmp_path_factory)
    out = tmp_path / "build"
    args = small_build_args(out, "--workers", "2")

    interrupted = start_build_until_homes(tmp_path, args, env, "first.log")
    try:
        helpers = helpers_of(interrupted)
        os.killpg(interrupted.pid, signal.SIGINT)
        assert interrupted.wait(timeout=EXIT_GUARD_S) == 130
        assert_all_exit(helpers)
    finally:
        stop_process(interrupted, first=signal.SIGKILL)
    log = (tmp_path / "first.log").read_text()
    assert log.rstrip().splitlines()[-1] == "interrupted; rerun the same command to resume"
    assert "Traceback" not in log and not [line for line in log.splitlines() if line.startswith("error:")]
    assert "Flow run" in log and "Finished in state Cancelled('interrupted" in log
    assert not (out / "manifest.json").exists()
    assert not (out / ".build.lock").exists()

    recorded = len(outcome_records(out))
    assert recorded < SMALL["homes"] - 1, "Ctrl-C came too late to leave plans for the rerun"
    killed = start_build_until_homes(tmp_path, args, env, "second.log",
                                     records=min(KILL_AFTER_OUTCOMES, SMALL["homes"] - 1 - recorded))
    try:
        helpers = helpers_of(killed)
        server = [p for p in helpers if "homeloop.flows.temporary_server" in p.cmdline()]
        assert len(server) == 1, [p.cmdline()[:4] for p in helpers]
        os.kill(killed.pid, signal.SIGKILL)
        assert killed.wait(timeout=EXIT_GUARD_S) == -signal.SIGKILL
        assert_all_exit(helpers)
    finally:
        stop_process(killed, first=signal.SIGKILL)
    assert not (out / "manifest.json").exists(), "the build finished before it could be interrupted"
    assert json.loads((out / ".build.lock").read_text())["pid"] == killed.pid
    done_before = {p.name: p.stat().st_mtime_ns for p in outcome_records(out)}
    assert len(done_before) > recorded

    rerun = run_cli(args, env=env)
    assert rerun.returncode == 0, rerun.stdout[-4000:]
    assert "Traceback" not in rerun.stdout
    assert f"taking over the lock of {out} from a build that is no longer running (pid {killed.pid}" in rerun.stdout
    assert not (out / ".build.lock").exists()
    # The stages finished before the kill are not run again ...
    for stage in ("source", "ingest", "audit", "features", "select"):
        assert f"{stage}: unchanged, reused" in rerun.stdout, stage
    assert "homes: unchanged" not in rerun.stdout
    # ... and neither are the plans whose outcome was recorded.
    after = {p.name: p.stat().st_mtime_ns for p in outcome_records(out)}
    assert {name: after.get(name) for name in done_before} == done_before

    manifest = read_manifest(out)
    assert manifest["outputs"] == reference["outputs"]
    assert manifest["counts"] == reference["counts"]
    assert partial_files(out) == []


def test_build_on_a_separate_dask_cluster_matches_the_local_build(tmp_path, tmp_path_factory):
    from distributed import Client

    from dask_cluster import running_cluster

    reference = reference_build(tmp_path_factory)
    env = subprocess_env(tmp_path_factory)
    with running_cluster(tmp_path, workers=1, env=env) as address, Client(address, timeout=60) as client:
        assert address.startswith("tcp://127.0.0.1:")
        result = run_cli(small_build_args(tmp_path / "build", "--dask-address", address), env=env)
        assert result.returncode == 0, result.stdout[-4000:]
        # The partitions ran on the cluster's worker, not in the build process.
        prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert {"build_homes_partition", "export_homes_partition", "screen_homes_partition"} <= set(prefixes)
    manifest = read_manifest(tmp_path / "build")
    assert manifest["outputs"] == reference["outputs"]
    assert manifest["counts"] == reference["counts"]


def test_a_second_build_into_the_same_folder_stops_at_once(tmp_path, tmp_path_factory):
    out = tmp_path / "build"
    out.mkdir()
    holder = lock_holder("homeloop.pipeline.lock:build_lock", out)
    try:
        assert holder.stdout.readline().strip() == "held"
        second = run_cli(small_build_args(out, "--workers", "1"), env=subprocess_env(tmp_path_factory))
        assert second.returncode == 2, second.stdout[-3000:]
        errors = [line for line in second.stdout.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "Traceback" not in second.stdout, second.stdout[-3000:]
        assert f"in use by another build (pid {holder.pid} on " in errors[0]
        assert "Flow run" not in second.stdout  # stopped before Prefect started
        assert sorted(p.name for p in out.iterdir()) == [".build.lock"]
        assert json.loads((out / ".build.lock").read_text())["pid"] == holder.pid
    finally:
        holder.stdin.close()
        holder.wait(timeout=EXIT_GUARD_S)
    assert holder.returncode == 0
    assert not (out / ".build.lock").exists()


def test_a_stale_lock_is_taken_over_with_a_warning(tmp_path):
    from homeloop.pipeline.lock import build_lock

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock = tmp_path / ".build.lock"
    lock.write_text(json.dumps({"pid": dead.pid, "host": os.uname().nodename, "started": 0}))
    warnings = []
    with build_lock(tmp_path, warn=warnings.append):
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert len(warnings) == 1 and f"pid {dead.pid}" in warnings[0] and "no longer running" in warnings[0]
    assert not lock.exists()


def test_a_lock_from_another_host_is_left_alone(tmp_path):
    from homeloop.core.errors import HomeLoopError
    from homeloop.pipeline.lock import build_lock

    lock = tmp_path / ".build.lock"
    lock.write_text(json.dumps({"pid": 1, "host": "some-other-host", "started": 0}))
    with pytest.raises(HomeLoopError, match="in use by another build \\(pid 1 on some-other-host"):
        with build_lock(tmp_path):
            pass
    assert json.loads(lock.read_text())["host"] == "some-other-host"


def test_a_build_that_stops_on_bad_input_gives_the_lock_back(tmp_path):
    from homeloop.core.errors import HomeLoopError
    from homeloop.pipeline.config import BuildConfig
    from homeloop.pipeline.stages import run_build

    # A source whose checks pass (columns, rows) but whose ingest keeps no plan: no residential unit.
    source = tmp_path / "offices.csv"
    good = (Path(__file__).parent / "fixtures" / "audit_good.csv").read_text()
    source.write_text(good.replace(",RESIDENTIAL,", ",COMMERCIAL,"))
    with pytest.raises(HomeLoopError, match=f"no plans in {source}"):
        run_build(BuildConfig(source=source, out=tmp_path / "build", workers=1, progress=False),
                  log=lambda line: None)
    assert not (tmp_path / "build" / ".build.lock").exists()
