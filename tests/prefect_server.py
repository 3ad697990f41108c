"""What `make serve` starts, for the tests that run a deployment: a Prefect server on 127.0.0.1
serving the build, audit and evaluate deployments (``python -m homeloop.flows.local start``),
stopped as `make stop` stops it, with every process it started checked gone by its pid."""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from build_fixtures import BIN, free_port, run_cli

LOCAL = [str(BIN / "python"), "-m", "homeloop.flows.local"]


@dataclass(frozen=True)
class Served:
    api: str  # the server's API URL, for PREFECT_API_URL
    said: str  # what the start command printed
    state: Path  # the serve state folder: pid files, env.sh, logs
    folder: Path  # the served processes' working folder
    env: dict[str, str]

    def log(self) -> str:
        return (self.state / "serve.log").read_text()


@contextlib.contextmanager
def served_deployments(folder: Path, env: dict[str, str]) -> Iterator[Served]:
    """Start the server and the deployments; yield once the start command has returned. On exit,
    stop both as `make stop` does and check that the stop succeeded and no process outlives it."""
    from homeloop.pipeline.lock import pid_running

    port = free_port()
    state = folder / "state"
    try:
        started = run_cli(LOCAL + ["start", "--port", str(port), "--state", str(state)], env=env, timeout=480,
                          cwd=folder)
        logs = "".join(p.read_text()[-2000:] for p in state.glob("*.log"))
        assert started.returncode == 0, started.stdout[-3000:] + logs
        yield Served(f"http://127.0.0.1:{port}/api", started.stdout, state, folder, env)
    finally:
        pids = [int(p.read_text()) for p in (state / "server.pid", state / "serve.pid") if p.is_file()]
        stopped = run_cli(LOCAL + ["stop", "--state", str(state)], env=env, timeout=120, cwd=folder)
        for pid in pids:  # in case stop failed: nothing may outlive the tests
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
    assert stopped.returncode == 0, stopped.stdout
    assert pids and not [pid for pid in pids if pid_running(pid)]
