"""A Dask cluster started apart for a test: a scheduler and worker processes on 127.0.0.1,
each in a process group of its own, stopped by that group when the test is done."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Iterator

from build_fixtures import BIN, start_process, stop_process, wait_for


@contextlib.contextmanager
def running_cluster(folder: Path, *, workers: int = 2, env: dict[str, str] | None = None) -> Iterator[str]:
    """Start ``dask scheduler`` and ``dask worker --nworkers workers``; yield the scheduler's
    address once every worker has joined."""
    from distributed import Client

    scheduler_file = folder / "scheduler.json"
    scheduler = start_process(
        [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0",
         "--scheduler-file", str(scheduler_file)],
        log=folder / "scheduler.log", env=env, cwd=folder,
    )
    worker = None
    try:
        wait_for(lambda: scheduler_file.is_file() and scheduler_file.stat().st_size > 0, timeout=120,
                 what="the Dask scheduler file", alive=scheduler, log=folder / "scheduler.log")
        address = json.loads(scheduler_file.read_text())["address"]
        worker = start_process(
            [str(BIN / "dask"), "worker", "--scheduler-file", str(scheduler_file), "--nthreads", "1",
             "--nworkers", str(workers), "--dashboard-address", ":0", "--host", "127.0.0.1"],
            log=folder / "worker.log", env=env, cwd=folder,
        )
        with Client(address, timeout=60) as client:
            client.wait_for_workers(workers, timeout=120)
        yield address
    finally:
        if worker is not None:
            stop_process(worker)
        stop_process(scheduler)
