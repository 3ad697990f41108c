"""A temporary Prefect API server for one ``homeloop build``, tied to its life.

Without PREFECT_API_URL, Prefect would start a temporary server of its own. That
server sits in the terminal's process group, so Ctrl-C stops it while the flow
still has states and logs to send (minutes of connection retries), and a build
killed with SIGKILL leaves it running. So the build starts the server itself:

* in a session of its own: Ctrl-C goes to the build, which records the flow run
  as cancelled and then stops the server;
* with the parent-death signal set (Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)``,
  set by the server process itself before it loads anything): when the build
  dies, however it dies, the kernel kills the server. It then checks that its
  parent is still the build, closing the gap between start and ``prctl``.
  Elsewhere a watchdog thread polls the parent pid and exits when it changes.
  The kernel's signal is chosen on Linux because it needs no thread and no
  polling, and it fires even if the server is stuck.

The server is the one Prefect runs as its own temporary server (the ``create_app``
factory under uvicorn, UI and background services off), on 127.0.0.1 and a free
port. See docs/pipeline.md.

    python -m homeloop.flows.temporary_server PARENT_PID PORT   # what start() runs
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterator

from homeloop.core.errors import HomeLoopError

HOST = "127.0.0.1"
PR_SET_PDEATHSIG = 1
#: Seconds between the watchdog's looks at the parent pid (where prctl is missing).
WATCHDOG_INTERVAL_S = 0.5
#: Seconds a stopped server gets to exit before it is killed.
STOP_GRACE_S = 5.0
#: Attempts at a free port (another process may take the one handed out).
PORT_ATTEMPTS = 3
#: Environment of Prefect's own temporary server: no UI, no background services.
SERVER_ENV = {"PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"}


# --- in the server process -----------------------------------------------------------


def die_with_parent(parent: int) -> None:
    """End this process when ``parent`` ends (see the module docstring)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    else:
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(WATCHDOG_INTERVAL_S)
            os._exit(0)

        threading.Thread(target=watch, name="parent watchdog", daemon=True).start()
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(0)


def serve(parent: int, port: int) -> None:
    die_with_parent(parent)
    import uvicorn

    uvicorn.run("prefect.server.api.server:create_app", factory=True, host=HOST, port=port,
                log_level="error", lifespan="on")


# --- in the build process ------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def healthy(api_url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{api_url}/health", timeout=timeout) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _spawn(port: int, log: Path) -> subprocess.Popen:
    from prefect.settings import get_current_settings

    # The settings of this process (profile included) go to the server, as Prefect does.
    env = {**os.environ, **get_current_settings().to_environment_variables(exclude_unset=True), **SERVER_ENV}
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "homeloop.flows.temporary_server", str(os.getpid()), str(port)],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )


def _wait_until_up(proc: subprocess.Popen, api_url: str, timeout_s: float) -> bool:
    """True once the server answers; False when it exited (its port was taken)."""
    deadline = time.monotonic() + timeout_s
    while not healthy(api_url):
        if proc.poll() is not None:
            return False
        if time.monotonic() > deadline:
            raise HomeLoopError(f"the temporary Prefect server did not answer at {api_url} within {timeout_s:.0f} s; "
                                "start one with `make serve` and `. .prefect/env.sh`")
        time.sleep(0.2)
    return True


def start(timeout_s: float, while_starting: Callable[[], Any] | None = None) -> tuple[subprocess.Popen, str]:
    """Start the server; return its process and API URL once it answers. ``while_starting``
    runs once while the server loads, on the core this process would leave idle."""
    log = Path(tempfile.mkstemp(prefix="homeloop-prefect-server-", suffix=".log")[1])
    try:
        for _ in range(PORT_ATTEMPTS):
            port = free_port()
            api_url = f"http://{HOST}:{port}/api"
            proc = _spawn(port, log)
            try:
                if while_starting is not None:
                    while_starting()
                    while_starting = None
                up = _wait_until_up(proc, api_url, timeout_s)
            except BaseException:  # Ctrl-C, or no answer in time
                stop(proc)
                raise
            if up:
                return proc, api_url
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise HomeLoopError(f"the temporary Prefect server would not start ({tail[0]}); "
                            "start one with `make serve` and `. .prefect/env.sh`")
    finally:
        log.unlink(missing_ok=True)


def stop(proc: subprocess.Popen) -> None:
    """Stop the server: SIGTERM, then SIGKILL after a grace period."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def temporary_prefect_api(timeout_s: float, while_starting: Callable[[], Any] | None = None) -> Iterator[str]:
    """Point Prefect in this process at a temporary server for the block; yield its URL
    (``while_starting``: see :func:`start`).

    Prefect reads PREFECT_API_URL into a process-wide settings context (which its
    worker threads use) when first imported, so that context is refreshed here."""
    from prefect.context import refresh_global_settings_context

    proc, api_url = start(timeout_s, while_starting)
    # The server has no UI (and goes away with the build): no "View at" link to it.
    settings = {"PREFECT_API_URL": api_url, "PREFECT_UI_URL": ""}
    before = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    refresh_global_settings_context()
    try:
        yield api_url
    finally:
        try:
            drain_prefect_workers()
        finally:
            stop(proc)
            for name, value in before.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            refresh_global_settings_context()


def drain_prefect_workers(timeout_s: float = 5.0) -> None:
    """Send the logs and events Prefect still holds before its server goes away."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    for worker in (APILogWorker, EventsWorker):
        worker.drain_all(timeout=timeout_s)


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]))
